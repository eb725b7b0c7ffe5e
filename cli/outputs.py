"""Where ``roundtrip`` and ``convert`` write each input, and what they refuse.

One named input and an OUT that is no folder: OUT is the output file. Several
inputs or a folder: OUT is an existing folder, and each output keeps its
input's path relative to the walked folder (its member path, for a file in a
package), with ``--to``'s extension for its kind when converting. What cannot
be done is a usage error for a file named on the command line, and a skip with
the reason for a file a walk found.
"""

from __future__ import annotations

import os

from ..io_formats import registry
from ..io_formats.codec import FormatError
from . import UsageError, inputs, members, pairing


def kind_of(path: str) -> str:
    """The kind of a file's format: by content where several formats share its
    extension (and the file exists), else by extension; ``"other"`` when unknown."""
    ext = members.ext(path)
    kinds = {f.kind for f in registry.all_formats() if ext in f.extensions}
    if len(kinds) == 1:
        return kinds.pop()
    try:
        head = members.read_input(path)[: registry.SNIFF_BYTES]
        return registry.format_of(members.file_name(path), head).kind
    except (FormatError, UsageError):  # unreadable or not written yet: the command says why
        return "other"


def _label(path: str) -> str:
    try:
        head = members.read_input(path)[: registry.SNIFF_BYTES]
        return registry.format_of(members.file_name(path), head).label
    except (FormatError, UsageError):
        return members.ext(path)


NEEDS_MODEL = "{}: an animation needs --model MODEL for its skeleton"


def problem(command: str, src: str, out: str, model: str | None) -> str | None:
    """Why ``command`` cannot write ``src`` to ``out``, or None."""
    in_kind, out_kind = kind_of(src), kind_of(out)
    if in_kind == "package":
        return f"{src}: a package is not converted (its files are: PACKAGE.pak:NAME)"
    if "other" not in (in_kind, out_kind) and in_kind != out_kind:
        return f"{src}: a {in_kind} cannot be written as {members.ext(out)}"
    if command == "roundtrip" and members.ext(src) != members.ext(out):
        return (
            f"roundtrip writes the same format: {src} and {out} "
            "have different extensions (use convert)"
        )
    if in_kind == "animation" and not model:
        return NEEDS_MODEL.format(src)
    if os.path.abspath(out) == os.path.abspath(src):
        return f"{out}: the output would overwrite its input"
    return None


def _targets(to: list[str] | None) -> dict[str, str]:
    """``--to`` extensions by the kind of file they are for."""
    targets: dict[str, str] = {}
    for ext in to or []:
        ext = (ext if ext.startswith(".") else "." + ext).lower()
        kinds = {f.kind for f in registry.all_formats() if ext in f.extensions}
        if not kinds:
            raise UsageError(f"--to {ext}: unknown extension")
        for kind in kinds:
            targets.setdefault(kind, ext)
    return targets


def plan(
    command: str,
    paths: list[str],
    out: str,
    recursive: bool = False,
    model: str | None = None,
    to: list[str] | None = None,
) -> list[inputs.Task]:
    """The tasks of ``roundtrip``/``convert`` with their outputs; output folders
    are created below OUT, which must exist and be writable."""
    return plan_paired(command, paths, out, recursive, model, to)[0]


def _pair(tasks: list[inputs.Task], model: str | None) -> pairing.Pairing | None:
    """Each animation's model: ``--model`` for all, else the one ``pairing`` finds
    (None when there is no animation to pair)."""
    kinds = {t.item: kind_of(t.item) for t in tasks if not t.skip}
    if model:
        for task in tasks:
            if kinds.get(task.item) == "animation":
                task.model = model
        return None
    if "animation" not in kinds.values():
        return None
    found = pairing.pair([p for p, k in kinds.items() if k in ("model", "animation")])
    for task in tasks:
        if task.item in found.model:
            task.model = found.model[task.item]
    return found


def plan_paired(
    command: str,
    paths: list[str],
    out: str,
    recursive: bool = False,
    model: str | None = None,
    to: list[str] | None = None,
) -> tuple[list[inputs.Task], pairing.Pairing | None]:
    """:func:`plan`, and how the animations were paired with models (None with
    ``--model``, one input, or no animation)."""
    if model:
        inputs.expand([model])  # a usage error for an unknown extension
        if kind_of(model) != "model":
            raise UsageError(f"--model {model}: not a model")
    tasks = inputs.expand(paths, recursive)
    if (
        len(tasks) == 1
        and tasks[0].named
        and not os.path.isdir(out)
        and not out.endswith(("/", os.sep))
    ):
        inputs.check_output_file(out)
        tasks[0].output = out
        tasks[0].model = model
        reason = problem(command, tasks[0].item, out, model)
        if reason:
            raise UsageError(reason)
        return tasks, None
    inputs.check_output_folder(out)
    targets = _targets(to)
    if command == "convert" and not targets:
        raise UsageError(f"{out}: converting into a folder needs --to EXT (e.g. --to .dff)")
    found = _pair(tasks, model)
    anchor = inputs.common_anchor(tasks)
    seen: dict[str, str] = {}
    for task in tasks:
        if task.skip:
            continue
        name = inputs.relative_name(task, anchor)
        if command == "convert":
            kind = kind_of(task.item)
            if kind not in targets:
                task.skip = f"no --to extension for {_label(task.item)} files"
                continue
            name = os.path.splitext(name)[0] + targets[kind]
        task.output = os.path.join(out, name)
        reason = problem(command, task.item, task.output, task.model)
        if reason == NEEDS_MODEL.format(task.item) and found and task.item in found.unpaired:
            reason = f"{task.item}: unpaired: {found.unpaired[task.item]}"
        key = os.path.normcase(os.path.abspath(task.output))
        if not reason and key in seen:
            reason = f"its output {task.output} is also the output of {seen[key]}"
        if reason and task.named:
            raise UsageError(reason)
        task.skip = reason
        seen.setdefault(key, task.item)
        if not reason:
            os.makedirs(os.path.dirname(os.path.abspath(task.output)), exist_ok=True)
    return tasks, found
