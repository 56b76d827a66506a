// The CSR SpMM micro-kernel against a float64 reference, on every SIMD target this CPU runs:
// widths around the vector and panel sizes, empty rows, one or two threads, added into C or
// overwriting it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "hwy/targets.h"
#include "kernels/csr_spmm/csr_spmm.h"
#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {
namespace {

struct RandomCsr {
  int64_t rows, inner;
  std::vector<int32_t> pos, crd;
  std::vector<float> vals;
};

/// About `density` of each row filled, every fifth row empty (sorted, distinct columns).
RandomCsr randomCsr(int64_t rows, int64_t inner, double density, std::mt19937& rng) {
  RandomCsr a{rows, inner, {0}, {}, {}};
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < inner && i % 5 != 4; ++k) {
      if (u(rng) < density) {
        a.crd.push_back(static_cast<int32_t>(k));
        a.vals.push_back(value(rng));
      }
    }
    a.pos.push_back(static_cast<int32_t>(a.crd.size()));
  }
  return a;
}

/// C += A·B, or C = A·B with `overwrite` (C then starts as NaN: every element must be written
/// and none read).
/// With `specials`, B and C hold NaN and ±inf at some elements (as A's values may): they
/// propagate as IEEE says through every stored entry, and a B row reached by no entry
/// contributes nothing (structural zeros are not multiplied).
void checkProduct(const RandomCsr& a, int64_t cols, int threads, std::mt19937& rng,
                  bool overwrite = false, bool specials = false) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>(a.inner * cols)), c(static_cast<size_t>(a.rows * cols));
  for (float& x : b) x = value(rng);
  for (float& x : c) x = value(rng);  // the product is added to what C holds
  if (specials) {
    const float nan = std::nanf(""), inf = HUGE_VALF;
    for (size_t e = 3; e < b.size(); e += 17) b[e] = e % 3 == 0 ? nan : (e % 3 == 1 ? inf : -inf);
    for (size_t e = 5; e < c.size(); e += 41) c[e] = e % 2 ? inf : nan;
  }
  std::vector<double> want(c.begin(), c.end());
  if (overwrite) {
    std::fill(c.begin(), c.end(), std::nanf(""));
    std::fill(want.begin(), want.end(), 0.0);
  }
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int32_t q = a.pos[i]; q < a.pos[i + 1]; ++q) {
      for (int64_t j = 0; j < cols; ++j) {
        want[i * cols + j] += static_cast<double>(a.vals[q]) * b[a.crd[q] * cols + j];
      }
    }
  }
  CsrSpmmArgs args;
  args.rows = a.rows;
  args.cols = cols;
  args.pos = a.pos.data();
  args.crd = a.crd.data();
  args.vals = a.vals.data();
  args.b = b.data();
  args.c = c.data();
  args.threads = threads;
  args.overwrite = overwrite;
  csrSpmm(args);
  for (size_t e = 0; e < c.size(); ++e) {
    const int64_t row = static_cast<int64_t>(e) / cols;
    const double scale = 1.0 + (a.pos[row + 1] - a.pos[row]);
    if (std::isnan(want[e]) || std::isinf(want[e])) {
      ASSERT_TRUE(std::isnan(want[e]) ? std::isnan(c[e]) : c[e] == want[e])
          << "got " << c[e] << ", want " << want[e] << " at row " << row;
      continue;
    }
    ASSERT_NEAR(c[e], want[e], 1e-5 * scale)
        << "row " << row << " column " << static_cast<int64_t>(e) % cols << " of " << a.rows << "x"
        << cols << ", target " << csrSpmmTargetName() << ", threads " << threads
        << (overwrite ? ", overwrite" : ", add");
  }
}

TEST(CsrSpmm, MatchesFloat64OnEveryTarget) {
  const auto seed =
      static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const int64_t panel = csrSpmmPanelColumns();
    for (int64_t cols : {int64_t{1},  int64_t{2},  int64_t{3},   int64_t{4},   int64_t{5},
                         int64_t{8},  int64_t{12}, int64_t{15},  int64_t{16},  int64_t{31},
                         int64_t{32}, int64_t{33}, panel - 1,    panel,        panel + 1,
                         panel + 2,   panel + 7,   int64_t{100}, int64_t{128}, int64_t{130}}) {
      checkProduct(randomCsr(37, 23, 0.3, rng), cols, 1, rng);
      checkProduct(randomCsr(37, 23, 0.3, rng), cols, 1, rng, true);
    }
    // Work past the fork threshold: rows in parallel.
    checkProduct(randomCsr(300, 200, 0.3, rng), 64, 2, rng);
    checkProduct(randomCsr(300, 200, 0.3, rng), 130, 2, rng, true);
    checkProduct(randomCsr(301, 150, 0.05, rng), 33, 2, rng);
    // No entries at all, and a single row.
    checkProduct(randomCsr(10, 8, 0.0, rng), 16, 2, rng);
    checkProduct(randomCsr(10, 8, 0.0, rng), 16, 2, rng, true);
    checkProduct(randomCsr(1, 500, 0.9, rng), 7, 1, rng);
  }
  hwy::SetSupportedTargetsForTest(0);
}

enum class BiasMode { kNone, kPerColumn, kPerRow };

/// C (+)= act(A·B + bias) against float64: the epilogue applies to the product alone (added into
/// C's old values without `overwrite`).
/// `bOffset` >= 0 places B that many floats past a 64-byte boundary (numpy's arrays are 16-byte
/// aligned: rows that straddle cache lines take the kernel's shifted path); -1 leaves it where
/// the vector put it.
void checkFused(const RandomCsr& a, int64_t cols, int threads, std::mt19937& rng, bool overwrite,
                Activation activation, BiasMode biasMode, int64_t bOffset = -1) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> bStorage(static_cast<size_t>(a.inner * cols + 32));
  float* bData = bStorage.data();
  if (bOffset >= 0) {
    while (reinterpret_cast<uintptr_t>(bData) % 64 != 0) ++bData;
    bData += bOffset;
  }
  std::span<float> b(bData, static_cast<size_t>(a.inner * cols));
  std::vector<float> c(static_cast<size_t>(a.rows * cols));
  std::vector<float> bias(static_cast<size_t>(biasMode == BiasMode::kPerRow ? a.rows : cols));
  for (float& x : b) x = value(rng);
  for (float& x : c) x = value(rng);
  for (float& x : bias) x = value(rng);
  std::vector<double> want(static_cast<size_t>(a.rows * cols));
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double acc = 0;
      for (int32_t q = a.pos[i]; q < a.pos[i + 1]; ++q)
        acc += static_cast<double>(a.vals[q]) * b[a.crd[q] * cols + j];
      if (biasMode == BiasMode::kPerRow) acc += bias[i];
      if (biasMode == BiasMode::kPerColumn) acc += bias[j];
      const double old = overwrite ? 0.0 : c[i * cols + j];
      want[i * cols + j] = old + activationReference(activation, acc);
    }
  }
  if (overwrite) std::fill(c.begin(), c.end(), std::nanf(""));
  CsrSpmmArgs args;
  args.rows = a.rows;
  args.cols = cols;
  args.pos = a.pos.data();
  args.crd = a.crd.data();
  args.vals = a.vals.data();
  args.b = b.data();
  args.c = c.data();
  args.threads = threads;
  args.overwrite = overwrite;
  args.activation = activation;
  args.bias = biasMode == BiasMode::kNone ? nullptr : bias.data();
  args.biasPerRow = biasMode == BiasMode::kPerRow;
  csrSpmm(args);
  for (size_t e = 0; e < c.size(); ++e) {
    const int64_t row = static_cast<int64_t>(e) / cols;
    const double scale = 1.0 + (a.pos[row + 1] - a.pos[row]) + std::abs(want[e]);
    ASSERT_NEAR(c[e], want[e], 2e-5 * scale)
        << activationName(activation) << ", bias " << static_cast<int>(biasMode) << ", row " << row
        << " column " << static_cast<int64_t>(e) % cols << " of " << a.rows << "x" << cols
        << ", target " << csrSpmmTargetName() << ", threads " << threads
        << (overwrite ? ", overwrite" : ", add");
  }
}

// The fused epilogue (every activation; no bias, a bias per column, per row) on every target,
// in register panels, scalar tails and the one-column path, stored and added.
TEST(CsrSpmm, FusedEpilogueMatchesFloat64OnEveryTarget) {
  const auto seed =
      static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (Activation activation : allActivations()) {
      for (BiasMode bias : {BiasMode::kNone, BiasMode::kPerColumn, BiasMode::kPerRow}) {
        for (int64_t cols : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{12}, int64_t{33},
                             csrSpmmPanelColumns() + 3}) {
          for (bool overwrite : {true, false}) {
            checkFused(randomCsr(70, 23, 0.3, rng), cols, 1, rng, overwrite, activation, bias);
          }
        }
      }
      checkFused(randomCsr(300, 200, 0.3, rng), 64, 2, rng, true, activation, BiasMode::kPerColumn);
      checkFused(randomCsr(3000, 200, 0.05, rng), 1, 2, rng, true, activation, BiasMode::kPerRow);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// B at every offset from a cache line (the shifted path for whole-vector widths), every
// activation and bias mode, stored and added, on every target.
TEST(CsrSpmm, MisalignedBMatchesFloat64OnEveryTarget) {
  const auto seed =
      static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (int64_t offset = 0; offset < 16; ++offset) {
      for (int64_t cols : {int64_t{16}, int64_t{32}, int64_t{48}, int64_t{64}, int64_t{128},
                           int64_t{256}, int64_t{20}}) {
        for (bool overwrite : {true, false}) {
          const Activation act = offset % 3 == 0   ? Activation::kNone
                                 : offset % 3 == 1 ? Activation::kRelu
                                                   : Activation::kSilu;
          const BiasMode bias = static_cast<BiasMode>((offset + cols) % 3);
          checkFused(randomCsr(40, 23, 0.3, rng), cols, 1, rng, overwrite, act, bias, offset);
        }
      }
    }
    checkFused(randomCsr(400, 300, 0.2, rng), 64, 2, rng, true, Activation::kRelu,
               BiasMode::kPerColumn, 4);
  }
  hwy::SetSupportedTargetsForTest(0);
}

// NaN and ±inf in A, B and C on every target, in panels and scalar tails, added and
// overwritten.
TEST(CsrSpmm, NanAndInfPropagateOnEveryTarget) {
  std::mt19937 rng(11);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (int64_t cols : {int64_t{5}, int64_t{33}, csrSpmmPanelColumns() + 3}) {
      for (bool overwrite : {false, true}) {
        RandomCsr a = randomCsr(37, 23, 0.3, rng);
        const float nan = std::nanf(""), inf = HUGE_VALF;
        for (size_t q = 2; q < a.vals.size(); q += 19) a.vals[q] = q % 2 ? inf : nan;
        checkProduct(a, cols, 1, rng, overwrite, /*specials=*/true);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// csrLinear, Y (+)= act(X · Wᵀ + b) with W csr [outs, inner] and X [batch, inner], on every
// target: batches around the tile (two vectors) and the 4 x 4 transposition blocks, inner and
// outs not multiples of 4 or 32, stored (Y starts as NaN) and added, with and without the bias
// and GELU, one and two threads; f32 and f64 against float64.
TEST(CsrLinear, MatchesFloat64OnEveryTarget) {
  const auto seed =
      static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  struct Shape {
    int64_t batch, inner, outs;
    int threads;
  };
  const std::vector<Shape> shapes = {{1, 7, 5, 1},    {3, 33, 10, 1},   {17, 70, 41, 1},
                                     {32, 64, 16, 2}, {45, 129, 37, 2}, {300, 96, 150, 2}};
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const Shape& s : shapes) {
      const RandomCsr w = randomCsr(s.outs, s.inner, 0.3, rng);
      std::vector<float> x(static_cast<size_t>(s.batch * s.inner)), bias(s.outs);
      for (float& e : x) e = value(rng);
      for (float& e : bias) e = value(rng);
      for (bool overwrite : {true, false}) {
        for (bool fused : {false, true}) {
          SCOPED_TRACE(std::to_string(s.batch) + "x" + std::to_string(s.inner) + " -> " +
                       std::to_string(s.outs) + (overwrite ? " stored" : " added") +
                       (fused ? " bias+gelu" : ""));
          std::vector<float> y(static_cast<size_t>(s.batch * s.outs));
          for (float& e : y) e = overwrite ? std::nanf("") : value(rng);
          std::vector<double> y64(y.begin(), y.end());
          CsrSpmmArgs a;
          a.rows = s.outs;
          a.cols = s.batch;
          a.inner = s.inner;
          a.pos = w.pos.data();
          a.crd = w.crd.data();
          a.vals = w.vals.data();
          a.b = x.data();
          a.c = y.data();
          a.threads = s.threads;
          a.overwrite = overwrite;
          if (fused) {
            a.bias = bias.data();
            a.activation = Activation::kGeluErf;
          }
          csrLinear(a);
          const std::vector<double> x64(x.begin(), x.end()), v64(w.vals.begin(), w.vals.end());
          const std::vector<double> b64(bias.begin(), bias.end());
          CsrSpmmArgsF64 a64;
          a64.rows = s.outs;
          a64.cols = s.batch;
          a64.inner = s.inner;
          a64.pos = w.pos.data();
          a64.crd = w.crd.data();
          a64.vals = v64.data();
          a64.b = x64.data();
          a64.c = y64.data();
          a64.threads = s.threads;
          a64.overwrite = overwrite;
          if (fused) {
            a64.bias = b64.data();
            a64.activation = Activation::kGeluErf;
          }
          std::vector<double> before = y64;
          csrLinear(a64);
          for (int64_t n = 0; n < s.batch; ++n) {
            for (int64_t o = 0; o < s.outs; ++o) {
              double want = 0;
              for (int32_t p = w.pos[o]; p < w.pos[o + 1]; ++p) {
                want += double(w.vals[p]) * double(x[static_cast<size_t>(n * s.inner + w.crd[p])]);
              }
              if (fused) {
                want += bias[o];
                want = want * 0.5 * std::erfc(-want / std::sqrt(2.0));
              }
              const size_t e = static_cast<size_t>(n * s.outs + o);
              if (!overwrite) want += before[e];
              ASSERT_NEAR(y[e], want, 1e-5 * (1 + std::abs(want))) << "row " << n << " out " << o;
              ASSERT_NEAR(y64[e], want, 1e-12 * (1 + std::abs(want))) << "f64 row " << n;
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// csrLinearPair (an MLP block whose hidden activations stay in cache) against float64 on every
// target: batches of one row, of a partial tile and of several tiles; the first layer with bias
// and GELU, the second with and without its bias, stored (Z starts as NaN) and added; with and
// without a scale and clamps in the tile.
TEST(CsrLinearPair, MatchesFloat64OnEveryTarget) {
  const auto seed =
      static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int64_t inner = 45, hidden = 70, outs = 23;
  const RandomCsr w1 = randomCsr(hidden, inner, 0.3, rng), w2 = randomCsr(outs, hidden, 0.2, rng);
  std::vector<float> b1(hidden), b2(outs);
  for (float& e : b1) e = value(rng);
  for (float& e : b2) e = value(rng);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (int64_t batch : {int64_t{1}, int64_t{13}, int64_t{100}}) {
      std::vector<float> x(static_cast<size_t>(batch * inner));
      for (float& e : x) e = value(rng);
      // `extras`: the first layer scaled by 0.75 and clamped to [-0.1, 0.3] after its GELU, the
      // second clamped to [-0.2, 0.4] (the tile's scale and clamp, in both halves).
      for (bool extras : {false, true}) {
        // float64 by the definition: h = gelu(x W1ᵀ + b1), z = h W2ᵀ (+ b2).
        std::vector<double> h(static_cast<size_t>(batch * hidden));
        for (int64_t n = 0; n < batch; ++n) {
          for (int64_t o = 0; o < hidden; ++o) {
            double v = 0;
            for (int32_t p = w1.pos[o]; p < w1.pos[o + 1]; ++p)
              v += double(w1.vals[p]) * x[static_cast<size_t>(n * inner + w1.crd[p])];
            v = (extras ? 0.75 * v : v) + b1[o];
            v = v * 0.5 * std::erfc(-v / std::sqrt(2.0));
            h[static_cast<size_t>(n * hidden + o)] = extras ? std::clamp(v, -0.1, 0.3) : v;
          }
        }
        for (bool bias2 : {false, true}) {
          for (bool overwrite : {true, false}) {
            SCOPED_TRACE("batch " + std::to_string(batch) + (bias2 ? " b2" : "") +
                         (overwrite ? " stored" : " added") + (extras ? " scale, clamps" : ""));
            std::vector<float> z(static_cast<size_t>(batch * outs));
            for (float& e : z) e = overwrite ? std::nanf("") : value(rng);
            const std::vector<float> before = z;
            CsrSpmmArgs first, second;
            first.rows = hidden;
            first.cols = batch;
            first.inner = inner;
            first.pos = w1.pos.data();
            first.crd = w1.crd.data();
            first.vals = w1.vals.data();
            first.b = x.data();
            first.bias = b1.data();
            first.activation = Activation::kGeluErf;
            first.threads = 2;
            second.rows = outs;
            second.cols = batch;
            second.inner = hidden;
            second.pos = w2.pos.data();
            second.crd = w2.crd.data();
            second.vals = w2.vals.data();
            second.c = z.data();
            second.bias = bias2 ? b2.data() : nullptr;
            second.overwrite = overwrite;
            if (extras) {
              first.scale = 0.75f;
              first.clampLow = -0.1f;
              first.clampHigh = 0.3f;
              second.clampLow = -0.2f;
              second.clampHigh = 0.4f;
            }
            csrLinearPair(first, second);
            for (int64_t n = 0; n < batch; ++n) {
              for (int64_t o = 0; o < outs; ++o) {
                double want = bias2 ? b2[o] : 0.0;
                for (int32_t p = w2.pos[o]; p < w2.pos[o + 1]; ++p)
                  want += double(w2.vals[p]) * h[static_cast<size_t>(n * hidden + w2.crd[p])];
                if (extras) want = std::clamp(want, -0.2, 0.4);
                const size_t e = static_cast<size_t>(n * outs + o);
                if (!overwrite) want += before[e];
                ASSERT_NEAR(z[e], want, 1e-5 * (1 + std::abs(want))) << "row " << n << " out " << o;
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
}  // namespace sparseflow::kernels
