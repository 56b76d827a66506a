// Headerless 0-based coordinate text (CSparse "i j x" triplets, SNAP "i j" edge lists).
#pragma once

#include <string>
#include <string_view>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// Parses lines of 0-based integer coordinates followed by an optional value: "i j x" triplets
/// (CSparse's Matrix/ files) or "i j" pairs (SNAP edge lists, read as a pattern). Every line must
/// have the same token count; '#' and '%' comment lines and blank lines are skipped. The shape is
/// one past the largest coordinate in each dimension. A line with four tokens (CXSparse's complex
/// "i j re im") is refused with kNotSupported. Errors name the file and line.
RawTensor parseTriplets(std::string_view text, const std::string& name);
/// Maps the file and parses it.
RawTensor readTriplets(const std::string& path);

}  // namespace sparseflow::io
