// The direct conversion paths convert() tries before the general path through coordinates.
#pragma once

#include <optional>

#include "sparseflow/tensor.h"

namespace sparseflow::conversion {

// Each returns the tensor in `target` with storage identical, array by array, to what the general
// path (fromCoo(toCoo(tensor), target)) builds, or nullopt when the pair of formats is not its own
// or the source breaks its format's invariants (unsorted or repeated coordinates, sizes that do not
// match) or the result would trip one of the general path's guards (index width, memory): the
// general path then decides, with its own result or error. Values keep the source dtype.

/// csr → dcsr or coo: the columns and values copied in their order, the row level rebuilt.
std::optional<Tensor> csrToRowLists(const Tensor& tensor, const Format& target);
/// The same for a source the caller gives up (convertOwned): the columns (at the same index width)
/// and the values are taken over, not copied.
std::optional<Tensor> csrToRowListsReusing(const Tensor& tensor, const Format& target);
/// csr → bsr:RxC: blocks found per block row with a marker array, values scattered in place.
std::optional<Tensor> csrToBsr(const Tensor& tensor, const Format& target);
/// bsr:RxC → csr: the nonzeros of each block row's slices (zero fill and edge padding dropped).
std::optional<Tensor> bsrToCsr(const Tensor& tensor, const Format& target);
/// csr → ell[:K]: each row's entries in its K slots (K = the longest row when not given).
std::optional<Tensor> csrToEll(const Tensor& tensor, const Format& target);
/// ell:K → csr: the stored slots of each row.
std::optional<Tensor> ellToCsr(const Tensor& tensor, const Format& target);
/// csr → hyb[:K] (ell part + coo remainder): the first K entries of each row, the rest in coo.
std::optional<Tensor> csrToHyb(const Tensor& tensor, const Format& target);
/// hyb (ell part + coo remainder) → csr: each row's ell slots merged with its coo entries.
std::optional<Tensor> hybToCsr(const Tensor& tensor, const Format& target);
/// dense matrix → N:M through nm::compress.
std::optional<Tensor> denseToNM(const Tensor& tensor, const Format& target);
/// N:M matrix → dense through nm::decompress.
std::optional<Tensor> nmToDense(const Tensor& tensor, const Format& target);

}  // namespace sparseflow::conversion
