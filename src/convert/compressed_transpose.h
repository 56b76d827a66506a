// Direct CSR↔CSC conversion (a parallel counting sort), the fast path of convert().
#pragma once

#include <optional>

#include "sparseflow/tensor.h"

namespace sparseflow::conversion {

/// Converts between the compressed-rows shapes (csr ↔ csc, and a change of index widths) without
/// going through coordinates; nullopt when source or target is another format.
std::optional<Tensor> convertCompressed(const Tensor& tensor, const Format& target);

}  // namespace sparseflow::conversion
