// kernels::batchedGemm: many small products (attention's QKᵀ and PV shapes, and shapes around the
// register blocks: rows not a multiple of 4, columns below, at and past one and two vectors)
// against float64 on every SIMD target, with fresh random values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "hwy/targets.h"
#include "kernels/batched_gemm/batched_gemm.h"

namespace sparseflow {
namespace {

TEST(BatchedGemm, MatchesFloat64OnEveryTargetAndShape) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  struct Shape {
    int64_t batches, m, k, n;
  };
  const std::vector<Shape> shapes = {{24, 128, 32, 128}, {24, 128, 128, 32}, {3, 7, 5, 1},
                                     {2, 5, 1, 3},       {4, 9, 17, 17},     {2, 6, 3, 33},
                                     {1, 4, 8, 64},      {5, 13, 40, 47}};
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const Shape& s : shapes) {
      SCOPED_TRACE(std::to_string(s.batches) + " x " + std::to_string(s.m) + "x" +
                   std::to_string(s.k) + " by " + std::to_string(s.k) + "x" + std::to_string(s.n));
      std::vector<float> a(static_cast<size_t>(s.batches * s.m * s.k)),
          b(static_cast<size_t>(s.batches * s.k * s.n));
      for (float& v : a) v = static_cast<float>(u(rng));
      for (float& v : b) v = static_cast<float>(u(rng));
      std::vector<float> c(static_cast<size_t>(s.batches * s.m * s.n), NAN);  // all written
      kernels::batchedGemm(a.data(), b.data(), c.data(), s.batches, s.m, s.k, s.n);
      for (int64_t q = 0; q < s.batches; ++q) {
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            double want = 0, scale = 0;
            for (int64_t l = 0; l < s.k; ++l) {
              const double x = a[static_cast<size_t>((q * s.m + i) * s.k + l)];
              const double y = b[static_cast<size_t>((q * s.k + l) * s.n + j)];
              want += x * y;
              scale += std::fabs(x * y);
            }
            ASSERT_NEAR(c[static_cast<size_t>((q * s.m + i) * s.n + j)], want, 1e-6 * (1 + scale))
                << "batch " << q << " row " << i << " column " << j;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace sparseflow
