"""Every format module's menus, batch handlers and file handlers are consistent."""

from __future__ import annotations


def test_menus_batch_and_handlers(rigport_registered, blank_blend):
    bpy = blank_blend
    from rigport.io_formats import registry
    from rigport.operators import format_modules

    keys = {f.key for f in registry.all_formats()}
    modules = format_modules()
    assert modules, "no format module found"
    for module in modules:
        for idname, label in (*module.MENU_IMPORT, *module.MENU_EXPORT):
            category, name = idname.split(".")
            op = getattr(getattr(bpy.ops, category), name)
            assert op.get_rna_type().identifier, idname
            assert label
        for entry in module.BATCH:
            assert entry.key in keys, f"{module.__name__}: {entry.key} is not in the registry"
        handlers = [c for c in module.CLASSES if issubclass(c, bpy.types.FileHandler)]
        for h in handlers:
            assert h.bl_file_extensions and h.bl_import_operator
