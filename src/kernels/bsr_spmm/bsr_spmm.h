// The hand-tuned BSR SpMM C (+)= act(A·B + bias), optionally followed by a softmax or layer norm
// over each row: A in bsr:RxC (blocks of R rows by C columns, row-major, over a compressed level
// of block columns per block row), B and C dense row-major of the same type (f32 or f64). Each
// block row of C is held in registers, R rows over a panel of B's columns, so one load of a row
// of B's panel serves R rows of the output (the CSR kernel loads it once per entry). The
// pipeline's bsr_spmm provider runs it instead of generated code.
#pragma once

#include <cstdint>

#include "kernels/csr_spmm/csr_spmm.h"

namespace sparseflow::kernels {

/// The block shape the kernel has register tiles for: R in {1, 2, 4, 8, 16}, any C >= 1.
bool bsrSpmmSupports(int64_t blockRows, int64_t blockCols);

/// C (+)= act(A·B + bias) with A in bsr:RxC: `args.pos` has one entry per block row plus one,
/// `args.crd` the block column of each block, `args.vals` R·C values per block (row-major, zero
/// fill and the edge's padding included); `args.rows` and `args.inner` are A's true extents
/// (padding rows are not written, padding columns read no row of B). The epilogue, `overwrite`,
/// `row` and `threads` mean what they do for csrSpmm.
void bsrSpmm(const CsrSpmmArgs& args, int64_t blockRows, int64_t blockCols);
void bsrSpmm(const CsrSpmmArgsF64& args, int64_t blockRows, int64_t blockCols);

}  // namespace sparseflow::kernels
