// An output a kernel collected as a list (lower/assembly.h: each write's coordinates and value in
// the order the loops reached them, repeated coordinates included), sorted into its format.
#pragma once

#include "sparseflow/format.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

/// The tensor of `format` whose entries are the list's, repeated coordinates summed (in float64,
/// then rounded to the list's value type). `list` is in lower::listFormat(rank).
Tensor sortedFromList(const Tensor& list, const Format& format);

}  // namespace sparseflow::runtime
