// Reading a CSR source in the direct paths: the check that its rows are what csr promises.
#pragma once

#include <omp.h>

#include <cstdint>

#include "convert/direct_common.h"

namespace sparseflow::conversion {

/// True when every row's coordinates strictly increase and lie in [0, cols) and the positions never
/// decrease. The general path would sort rows and sum repeats (or refuse coordinates outside the
/// shape), so a direct path that finds otherwise leaves the tensor to it.
template <typename Pos, typename Crd>
bool csrRowsAreOrdered(const Pos* pos, const Crd* crd, int64_t rows, int64_t cols) {
  // Positions first: a decreasing one would send the coordinate loop outside the arrays.
  for (int64_t r = 0; r < rows; ++r) {
    if (pos[r] > pos[r + 1]) return false;
  }
  unsigned bad = 0;
#pragma omp parallel for reduction(|                       \
                                   : bad) schedule(static) \
    num_threads(threadsFor(static_cast <int64_t>(pos[rows])))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t begin = pos[r], end = pos[r + 1];
    int64_t previous = -1;
    for (int64_t q = begin; q < end; ++q) {
      const int64_t c = crd[q];
      bad |= static_cast<unsigned>(c <= previous) | static_cast<unsigned>(c >= cols);
      previous = c;
    }
  }
  return bad == 0;
}

}  // namespace sparseflow::conversion
