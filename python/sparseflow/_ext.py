"""Loads the compiled core, _sparseflow, wherever this installation keeps it."""

try:  # pip install .: the module sits inside the package
    from . import _sparseflow as _C  # type: ignore[attr-defined]
except ImportError:
    try:  # development (make): the build's python/ folder is on sys.path via a .pth file
        import _sparseflow as _C  # type: ignore[no-redef]
    except ImportError as error:
        raise ImportError(
            "sparseflow's compiled module _sparseflow was not found. Build it with `make` (which "
            "points the project's .venv at build/python through a .pth file), put "
            "<build>/python on PYTHONPATH, or `pip install .` (docs/python.md)."
        ) from error

__all__ = ["_C"]
