// Names of the stable error codes.
#include "sparseflow/error.h"

namespace sparseflow {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kParseError: return "parse error";
    case ErrorCode::kIoError: return "i/o error";
    case ErrorCode::kNotSupported: return "not supported";
    case ErrorCode::kOutOfRange: return "out of range";
    case ErrorCode::kInvalidFormat: return "invalid format";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kCompileError: return "compile error";
    case ErrorCode::kOutOfMemory: return "out of memory";
  }
  return "unknown error";
}

}  // namespace sparseflow
