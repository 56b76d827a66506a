// The weight-stationary loop that the 2:4 GEMM's permute-style paths share: blocks of row pairs
// handed to threads dynamically, each block's batch rows in tiles of 8, 4, 2 and 1.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace sparseflow::kernels {

/// For every block of `blockPairs` pairs [p0, p1) (threads share them dynamically): calls
/// tile(std::integral_constant<int, BB>, p0, p1, b, tileRows) for batch rows b.. in tiles of
/// BB = 8, 4, 2 or 1, where tileRows (row stride 2 × blockPairs floats) receives their sums, then
/// finish(tileRows of row 0, p0, p1).
template <typename Tile, typename Finish>
void forEachPairBlock(int64_t pairs, int64_t blockPairs, int64_t batch, int32_t threads,
                      const Tile& tile, const Finish& finish) {
  blockPairs = std::max<int64_t>(blockPairs, 1);
  const int64_t blocks = (pairs + blockPairs - 1) / blockPairs;
  const int64_t tileStride = 2 * blockPairs;
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> rows(static_cast<size_t>(batch * tileStride));
#pragma omp for schedule(dynamic, 1)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t p0 = blk * blockPairs;
      const int64_t p1 = std::min(pairs, p0 + blockPairs);
      for (int64_t b = 0; b < batch;) {
        const int64_t rest = batch - b;
        float* tb = rows.data() + b * tileStride;
        if (rest >= 8) {
          tile(std::integral_constant<int, 8>{}, p0, p1, b, tb), b += 8;
        } else if (rest >= 4) {
          tile(std::integral_constant<int, 4>{}, p0, p1, b, tb), b += 4;
        } else if (rest >= 2) {
          tile(std::integral_constant<int, 2>{}, p0, p1, b, tb), b += 2;
        } else {
          tile(std::integral_constant<int, 1>{}, p0, p1, b, tb), b += 1;
        }
      }
      finish(rows.data(), p0, p1);
    }
  }
}

}  // namespace sparseflow::kernels
