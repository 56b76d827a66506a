// Public error type: every failure sparseflow reports to a C++ caller is a sparseflow::Error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace sparseflow {

/// Why an operation failed. Values are stable (they cross the C ABI): append only, never renumber.
enum class ErrorCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,  ///< a bad argument or input value (shape, format string, option)
  kParseError = 2,       ///< a malformed file or text; the message names file and line
  kIoError = 3,          ///< a file could not be opened, read or written
  kNotSupported = 4,     ///< valid request that sparseflow does not support (yet)
  kOutOfRange = 5,       ///< an index or coordinate outside its dimension
  kInvalidFormat = 6,    ///< storage that breaks its format's invariants (validate)
  kInternal = 7,         ///< a broken internal invariant: a sparseflow bug
  kCompileError = 8,     ///< the JIT compiler failed or is missing
  kOutOfMemory = 9,      ///< an allocation failed or a size would overflow
};

/// Stable name of a code ("invalid argument"...).
const char* errorCodeName(ErrorCode code);

/// An error with a code and a message that names the culprit (file and line, tensor, level...).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace sparseflow
