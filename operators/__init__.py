"""Operators (the bpy side): options and execute(); parsing lives in io_formats."""
