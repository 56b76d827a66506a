// Formats as MLIR 16 `#sparse_tensor.encoding` attributes (dimLevelType, dimOrdering, bit widths).
#pragma once

#include <optional>
#include <string>

#include "sparseflow/format.h"

namespace sparseflow::codegen::mlir {

/// The attribute text for `tensor`'s format, e.g. `#sparse_tensor.encoding<{ dimLevelType = [
/// "dense", "compressed" ], pointerBitWidth = 32, indexBitWidth = 32 }>`; nullopt for dense
/// row-major (a plain tensor type). Throws kNotSupported naming the tensor and format for what
/// MLIR 16 cannot express: blocked levels, ragged, fixed and n:m levels, hybrid formats.
std::optional<std::string> encodingAttr(const std::string& tensor, const Format& format);

/// True when the format stores some level sparsely (not all dense).
bool hasSparseLevel(const Format& format);

/// A readable alias for an encoding: "CSR" for csr, "CSC_I64" for csc@i64, "ENC" otherwise.
std::string encodingAliasBase(const Format& format);

}  // namespace sparseflow::codegen::mlir
