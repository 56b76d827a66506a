// Recognizers for the format shapes that have fast paths (CSR/CSC, COO, BSR).
#pragma once

#include "sparseflow/format.h"

namespace sparseflow::format {

/// [dense dR, compressed dC] with identity expressions and a unique, ordered compressed level,
/// for a matrix: CSR (rowDim 0) or CSC (rowDim 1).
bool isCompressedRows(const Format& f, int32_t& rowDim);
/// compressed(nu) then singletons, identity expressions in dimension order.
bool isCooShaped(const Format& f);
/// bsr:RxC: [dense d0/R, compressed d1/C, dense d0%R, dense d1%C]; sets the block shape.
bool isBlockedRows(const Format& f, int64_t& blockRows, int64_t& blockCols);
/// The matrix n:m format `N:M` ([dense d0, nm(N,M) d1], any index width); sets N and M when given.
bool isMatrixNM(const Format& f, int32_t* n = nullptr, int32_t* m = nullptr);

}  // namespace sparseflow::format
