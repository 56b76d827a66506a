// A row of a sparse operand times a panel of a dense one, recognized in the loop IR so that the C++
// emitter calls the prelude's micro-kernel (sf_row_panel) instead of writing the two loops out:
//
//   for q in [begin, end):            // the entries of a row (serial)
//     let ... (q)                     // e.g. k = crd[q]
//     for j in [0, W):                // W fixed over the entries: sf_row_panel<W> for
//                                     // extent versioning's constants, else sf_row_panel_n
//       out[offset + j] += s(q) * B[base(q) + j]
//
// The micro-kernel holds out[offset .. offset + W) in vector registers across the whole q loop.
// Written out, GCC turned the W sums into W scalar registers (16 scalar FMAs per entry at W = 16)
// or a load-add-store chain through memory: a generated CSR SpMM at 16 columns ran 2.45x the
// hand-tuned kernel; the micro-kernel runs a row 3x faster (/tmp microbenchmark, one thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sparseflow::codegen {

/// The widest row (elements) the micro-kernel takes: 8 AVX-512 registers of f32.
inline constexpr int64_t kRowPanelMaxWidth = 128;

struct RowPanel {
  ir::Array out;               ///< the array the row is summed into
  ir::Expr offset;             ///< the row's first element (invariant in the q loop)
  int64_t width = 0;           ///< W for sf_row_panel<W>, else 0 (sf_row_panel_n of `extent`)
  ir::Expr extent;             ///< W as an expression
  std::vector<ir::Stmt> lets;  ///< the q loop's lets, in order (they may use q)
  ir::Expr scalar;             ///< s(q), after the lets
  ir::Array panel;             ///< B
  ir::Expr base;               ///< base(q), after the lets
};

/// The q loop's parts when `loop` has exactly the shape above (a serial loop, only lets and the
/// inner loop in its body, the inner loop serial (an unroll or vectorize a schedule asked for is
/// kept), nothing else stored or read back from `out`, B of out's element type).
std::optional<RowPanel> matchRowPanel(const ir::For& loop);

}  // namespace sparseflow::codegen
