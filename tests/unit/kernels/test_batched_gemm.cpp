// kernels::batchedGemm: many small products (attention's QKᵀ and PV shapes, and shapes around the
// register blocks: rows not a multiple of 4, columns below, at and past one and two vectors)
// against float64 on every SIMD target, with fresh random values; and the strided problem
// (attention's heads read in place from [batch, tokens, heads, dim], a transposed key, a transposed
// output, the scale, the broadcast mask and the softmax) against its definition in float64.
#include <gtest/gtest.h>

#include <algorithm>
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

/// The strided problem by its definition, in float64.
std::vector<double> reference(const kernels::BatchedGemmProblem& p, int64_t batches) {
  auto at = [&](const auto& v, int64_t q, int64_t r, int64_t c) {
    int64_t offset = r * v.row + c * v.col;
    for (int64_t d = static_cast<int64_t>(p.batchShape.size()) - 1; d >= 0; --d) {
      offset += (q % p.batchShape[static_cast<size_t>(d)]) * v.batch[static_cast<size_t>(d)];
      q /= p.batchShape[static_cast<size_t>(d)];
    }
    return offset;
  };
  std::vector<double> out(static_cast<size_t>(batches * p.m * p.n));
  for (int64_t q = 0; q < batches; ++q) {
    for (int64_t i = 0; i < p.m; ++i) {
      double* row = out.data() + (q * p.m + i) * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < p.k; ++l)
          s += double(p.a.data[at(p.a, q, i, l)]) * double(p.b.data[at(p.b, q, l, j)]);
        row[j] = s * p.scale + (p.add.data ? double(p.add.data[at(p.add, q, i, j)]) : 0.0);
      }
      if (p.softmax) {
        const double mx = *std::max_element(row, row + p.n);
        double sum = 0;
        for (int64_t j = 0; j < p.n; ++j) sum += row[j] = std::exp(row[j] - mx);
        for (int64_t j = 0; j < p.n; ++j) row[j] /= sum;
      }
    }
  }
  return out;
}

TEST(BatchedGemm, StridedHeadsTransposedOperandsAndTheScoresEpilogue) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t B = 3, T = 37, H = 4, D = 24;  // tokens not a multiple of a vector or of 4 rows
  std::vector<float> q(B * T * H * D), k(q.size()), mask(B * T);
  for (float& v : q) v = u(rng);
  for (float& v : k) v = u(rng);
  for (float& v : mask) v = u(rng) < -0.5f ? -1e4f : 0.0f;  // padded keys
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    // Scores [B, H, T, T] = softmax(Q Kᵀ * scale + mask), Q and K heads of [B, T, H, D] in place.
    kernels::BatchedGemmProblem s;
    s.batchShape = {B, H};
    s.m = T;
    s.k = D;
    s.n = T;
    s.a = {q.data(), {T * H * D, D}, H * D, 1};
    s.b = {k.data(), {T * H * D, D}, 1, H * D};  // Kᵀ: packed per product
    std::vector<float> scores(B * H * T * T, NAN);
    s.c = {scores.data(), {H * T * T, T * T}, T, 1};
    s.scale = 0.2f;
    s.add = {mask.data(), {T, 0}, 0, 1};
    s.softmax = true;
    kernels::batchedGemm(s);
    const std::vector<double> want = reference(s, B * H);
    for (size_t e = 0; e < want.size(); ++e) ASSERT_NEAR(scores[e], want[e], 1e-5) << "score " << e;
    // Context = P V written as [B, T, H, D] (rows strided), and again transposed (col stride not
    // 1).
    kernels::BatchedGemmProblem c;
    c.batchShape = {B, H};
    c.m = T;
    c.k = T;
    c.n = D;
    c.a = {scores.data(), {H * T * T, T * T}, T, 1};
    c.b = {k.data(), {T * H * D, D}, H * D, 1};
    std::vector<float> context(B * T * H * D, NAN), transposed(B * H * D * T, NAN);
    c.c = {context.data(), {T * H * D, D}, H * D, 1};
    kernels::batchedGemm(c);
    kernels::BatchedGemmProblem ct = c;
    ct.c = {transposed.data(), {H * D * T, D * T}, 1, T};
    kernels::batchedGemm(ct);
    const std::vector<double> ref = reference(c, B * H);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t d = 0; d < D; ++d) {
            const double w = ref[static_cast<size_t>(((b * H + h) * T + t) * D + d)];
            ASSERT_NEAR(context[static_cast<size_t>(((b * T + t) * H + h) * D + d)], w, 1e-5);
            ASSERT_NEAR(transposed[static_cast<size_t>(((b * H + h) * D + d) * T + t)], w, 1e-5);
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A key padding mask (Hugging Face adds finfo(f32).min at padded keys): the masked columns are
// skipped in QKᵀ and its softmax and come out as exact zeros, and PV reads only the live rows of
// V, the same as computing everything: batches padded after 0 (all masked), 5, 17 and no keys,
// with a NaN in a padded key of one batch (then that batch is computed whole, NaN and all);
// and the same through batchedAttention, which never stores the scores.
TEST(BatchedGemm, MaskedKeysAreSkippedExactly) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t B = 5, T = 23, H = 2, D = 16;
  const std::vector<int64_t> lengths = {0, 5, 17, 23, 9};
  std::vector<float> q(B * T * H * D), k(q.size()), v(q.size()), mask(B * T);
  for (float& e : q) e = u(rng);
  for (float& e : k) e = u(rng);
  for (float& e : v) e = u(rng);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) mask[b * T + t] = t < lengths[b] ? 0.0f : -3.4028235e38f;
  }
  k[((4 * T + 20) * H + 1) * D + 3] = NAN;  // batch 4, key 20 (padded), head 1
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    kernels::BatchedGemmProblem s;
    s.batchShape = {B, H};
    s.m = T;
    s.k = D;
    s.n = T;
    s.a = {q.data(), {T * H * D, D}, H * D, 1};
    s.b = {k.data(), {T * H * D, D}, 1, H * D};
    std::vector<float> scores(B * H * T * T, NAN);
    s.c = {scores.data(), {H * T * T, T * T}, T, 1};
    s.scale = 0.25f;
    s.add = {mask.data(), {T, 0}, 0, 1};
    s.softmax = true;
    s.skipMaskedColumns = true;
    std::vector<int32_t> live(B * H, -1);
    s.liveColumns = live.data();
    kernels::batchedGemm(s);
    const std::vector<int32_t> wantLive = {T, T, 5, 5, 17, 17, T, T, 9, T};  // batch 4 head 1: NaN
    EXPECT_EQ(live, wantLive);
    const std::vector<double> want = reference(s, B * H);
    for (size_t e = 0; e < want.size(); ++e) {
      if (std::isnan(want[e])) {
        ASSERT_TRUE(std::isnan(scores[e])) << "score " << e;
      } else {
        ASSERT_NEAR(scores[e], want[e], 1e-6) << "score " << e;
      }
    }
    kernels::BatchedGemmProblem c;
    c.batchShape = {B, H};
    c.m = T;
    c.k = T;
    c.n = D;
    c.a = {scores.data(), {H * T * T, T * T}, T, 1};
    c.b = {v.data(), {T * H * D, D}, H * D, 1};
    std::vector<float> context(B * T * H * D, NAN);
    c.c = {context.data(), {T * H * D, D}, H * D, 1};
    c.liveInner = live.data();
    kernels::batchedGemm(c);
    // The same in one pass, the scores never stored (batchedAttention).
    std::vector<float> fused(B * T * H * D, NAN);
    kernels::BatchedGemmProblem cf = c;
    cf.liveInner = nullptr;
    cf.c.data = fused.data();
    kernels::BatchedGemmProblem sf = s;
    sf.liveColumns = nullptr;
    sf.c.data = nullptr;
    kernels::batchedAttention(sf, cf);
    const std::vector<double> ref = reference(c, B * H);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t d = 0; d < D; ++d) {
            const double w = ref[static_cast<size_t>(((b * H + h) * T + t) * D + d)];
            for (const std::vector<float>* out : {&context, &fused}) {
              const float got = (*out)[static_cast<size_t>(((b * T + t) * H + h) * D + d)];
              if (std::isnan(w)) {
                ASSERT_TRUE(std::isnan(got));
              } else {
                ASSERT_NEAR(got, w, 1e-5)
                    << (out == &fused ? "fused " : "") << b << " " << h << " " << t << " " << d;
              }
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace sparseflow
