// Check macros: SF_USER_CHECK for bad input (throws sparseflow::Error), SF_ICHECK for invariants.
#pragma once

#include <sstream>
#include <string>

#include "sparseflow/error.h"

namespace sparseflow::detail {

/// Collects a message with operator<< and throws it as an Error when the statement ends.
class ErrorBuilder {
 public:
  ErrorBuilder(ErrorCode code, const char* file, int line, const char* condition)
      : code_(code) {
    if (code == ErrorCode::kInternal) {
      stream_ << "internal error at " << file << ":" << line << ": check '" << condition
              << "' failed: ";
    }
  }
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  // Throwing from a destructor is deliberate: the builder lives only inside the macro's statement.
  ~ErrorBuilder() noexcept(false) { throw Error(code_, stream_.str()); }

  template <typename T>
  ErrorBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  ErrorCode code_;
  std::ostringstream stream_;
};

}  // namespace sparseflow::detail

/// Bad user input: `SF_USER_CHECK(n >= 0) << "tensor " << name << ": negative size";`
#define SF_USER_CHECK(cond) SF_CHECK_CODE(cond, ::sparseflow::ErrorCode::kInvalidArgument)

/// As SF_USER_CHECK with a chosen ErrorCode.
#define SF_CHECK_CODE(cond, code) \
  if (cond) {                     \
  } else                          \
    ::sparseflow::detail::ErrorBuilder(code, __FILE__, __LINE__, #cond)

/// Unconditional error with a code: `SF_FAIL(kNotSupported) << "...";`. The `for (;;)` tells the
/// compiler that control never continues past it (the builder throws when the statement ends).
#define SF_FAIL(code_name) \
  for (;;)                 \
  ::sparseflow::detail::ErrorBuilder(::sparseflow::ErrorCode::code_name, __FILE__, __LINE__, "")

/// Internal invariant; failing it is a sparseflow bug (still an Error, never an abort).
#define SF_ICHECK(cond) SF_CHECK_CODE(cond, ::sparseflow::ErrorCode::kInternal)
