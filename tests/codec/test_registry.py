"""The format registry: every format package's entries are found and consistent."""

from __future__ import annotations

import pytest

from rigport.io_formats import registry
from rigport.io_formats.codec import FormatError


def test_keys_unique_and_extensions_lowercase():
    formats = registry.all_formats()
    keys = [f.key for f in formats]
    assert len(keys) == len(set(keys))
    assert {"urho3d.mdl", "urho3d.ani"} <= set(keys)
    for f in formats:
        assert f.extensions and all(e.startswith(".") and e == e.lower() for e in f.extensions)


def test_shared_extensions_are_sniffed():
    """Two formats on one extension must both tell their content apart."""
    by_ext: dict[str, list] = {}
    for f in registry.all_formats():
        for e in f.extensions:
            by_ext.setdefault(e, []).append(f)
    for ext, fs in by_ext.items():
        if len({f.kind for f in fs}) > 1 or len(fs) > 1:
            assert all(f.sniff is not None for f in fs), ext


def test_format_of_by_extension_and_unknown(tmp_path):
    assert registry.format_of("a/B.MDL").key == "urho3d.mdl"
    with pytest.raises(FormatError, match="unknown extension '.xyz'"):
        registry.format_of("thing.xyz")
    with pytest.raises(FormatError, match="unknown extension"):
        registry.format_of("model.mdl", kind="animation")
