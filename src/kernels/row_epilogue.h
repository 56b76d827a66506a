// The row-wise epilogues a kernel applies to each complete row of its output after the
// element-wise epilogue: a softmax or a layer normalization over the row (the kernel language's
// `softmax(j, ...)` and `layernorm(j, ...)`).
#pragma once

namespace sparseflow::kernels {

enum class RowEpilogue {
  kNone,
  kSoftmax,    ///< exp(y - max) / sum(exp(y - max))
  kLayerNorm,  ///< (y - mean) / sqrt(biased variance + 1e-5), no weights
};

/// "softmax", "layernorm" ("none").
inline const char* rowEpilogueName(RowEpilogue row) {
  switch (row) {
    case RowEpilogue::kNone: return "none";
    case RowEpilogue::kSoftmax: return "softmax";
    case RowEpilogue::kLayerNorm: return "layernorm";
  }
  return "?";
}

}  // namespace sparseflow::kernels
