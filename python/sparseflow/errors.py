"""The exceptions sparseflow raises: one class per C++ ErrorCode, all under SparseFlowError.

Each also derives from the standard exception a Python caller would expect, so
``except ValueError`` catches a bad format string and ``except OSError`` a missing file.
Every instance raised from C++ has ``code``, the error code's stable name ("invalid argument").
"""

from ._ext import _C

SparseFlowError = _C.SparseFlowError
InvalidArgument = _C.InvalidArgument  # also ValueError
ParseError = _C.ParseError  # also ValueError
IoError = _C.IoError  # also OSError
NotSupported = _C.NotSupported  # also NotImplementedError
OutOfRange = _C.OutOfRange  # also ValueError, IndexError
InvalidFormat = _C.InvalidFormat  # also ValueError
InternalError = _C.InternalError  # also RuntimeError
CompileError = _C.CompileError  # also RuntimeError
OutOfMemory = _C.OutOfMemory  # also MemoryError

__all__ = [
    "SparseFlowError",
    "InvalidArgument",
    "ParseError",
    "IoError",
    "NotSupported",
    "OutOfRange",
    "InvalidFormat",
    "InternalError",
    "CompileError",
    "OutOfMemory",
]
