// What the linear-layer tests (NMLinear, DenseLinear) share: random operands rounded to a dtype,
// the float64 reference check, a loop over every compiled SIMD target, and error expectations.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/random_coo.h"
#include "hwy/targets.h"
#include "kernels/gemm_args.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/error.h"
#include "sparseflow/tensor.h"

/// Declares `std::mt19937_64 name` seeded fresh for this run, the seed traced on failure.
#define SF_SEEDED_RNG(name)                                       \
  const uint64_t name##Seed = ::sparseflow::testing::freshSeed(); \
  SCOPED_TRACE("seed " + std::to_string(name##Seed));             \
  std::mt19937_64 name(name##Seed)

namespace sparseflow::testing {

/// Random dense values in [-1, 1) rounded to `dtype`, as a buffer and as doubles.
inline std::pair<Buffer, std::vector<double>> randomDense(int64_t count, DType dtype,
                                                          std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Buffer buffer = Buffer::zeros(dtype, count);
  std::vector<double> exact(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    buffer.setValue(i, value(rng));
    exact[static_cast<size_t>(i)] = buffer.value(i);
  }
  return {std::move(buffer), std::move(exact)};
}

/// One forward() to check: W out × in in wType, x batch × in in xType.
struct LinearCase {
  int64_t out, in, batch;
  DType wType, xType;
  Epilogue epilogue;
};

inline std::string describe(const LinearCase& c) {
  return std::to_string(c.out) + "x" + std::to_string(c.in) + " batch " + std::to_string(c.batch) +
         " w " + dtypeName(c.wType) + " x " + dtypeName(c.xType) + " " + c.epilogue.toString();
}

/// out values in [-0.5, 0.5) of type T when the epilogue takes a bias, else none (T = double:
/// values f32 cannot hold, for layers with f64 weights, which must not round them).
template <typename T = float>
std::vector<T> randomBias(const LinearCase& c, std::mt19937_64& rng) {
  std::vector<T> bias;
  if (c.epilogue.bias) {
    std::uniform_real_distribution<T> value(T(-0.5), T(0.5));
    for (int64_t o = 0; o < c.out; ++o) bias.push_back(value(rng));
  }
  return bias;
}

/// Runs `forward(x, y)` on fresh random x (c.xType) and compares y with a float64 reference of
/// epilogue(x · Wᵀ + bias), `w` being W's exact values (out × in, row-major). f64 weights
/// accumulate in f64: their error allowed is 1e-12 of the terms' magnitude, not f32's 1e-5.
template <typename Bias>
void checkAgainstReference(const LinearCase& c, const std::vector<double>& w,
                           const std::vector<Bias>& bias, std::mt19937_64& rng,
                           const std::function<void(const void* x, void* y)>& forward) {
  auto [x, xExact] = randomDense(c.batch * c.in, c.xType, rng);
  Buffer y = Buffer::zeros(c.xType, c.batch * c.out);
  forward(x.data(), y.data());
  // The output is rounded to x's dtype: allow its half-ulp beside the accumulation error.
  const double outputEps = c.xType == DType::kBF16                            ? 1.0 / 256
                           : c.xType == DType::kF16                           ? 1.0 / 2048
                           : c.wType == DType::kF64 && c.xType == DType::kF32 ? 0x1p-24
                                                                              : 0.0;
  const double accumulationEps = c.wType == DType::kF64 ? 1e-12 : 1e-5;
  const double absoluteEps = c.wType == DType::kF64 ? 1e-13 : 1e-6;
  int64_t bad = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t o = 0; o < c.out; ++o) {
      double acc = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < c.in; ++i) {
        const double term =
            xExact[static_cast<size_t>(b * c.in + i)] * w[static_cast<size_t>(o * c.in + i)];
        acc += term;
        magnitude += std::abs(term);
      }
      if (c.epilogue.bias) acc += bias[static_cast<size_t>(o)];
      const double expect = activationReference(c.epilogue.activation, acc);
      const double got = y.value(b * c.out + o);
      const double tolerance =
          accumulationEps * (magnitude + 1.0) + outputEps * std::abs(expect) + absoluteEps;
      if (!(std::abs(got - expect) <= tolerance) && bad++ < 5) {
        ADD_FAILURE() << "y[" << b << "][" << o << "] = " << got << ", expected " << expect
                      << " (tolerance " << tolerance << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

/// Builds a `Layer` (DenseLinear, NMLinear) of `weights` (exact values `w`) with `threads` and
/// a random bias (f64 for f64 weights) and checks one forward against float64.
template <class Layer, class Options>
void checkLayer(const LinearCase& c, const Tensor& weights, const std::vector<double>& w,
                std::mt19937_64& rng, int32_t threads) {
  const auto run = [&](const auto& bias) {
    const Layer layer(weights, bias, c.epilogue, Options{threads});
    SCOPED_TRACE(layer.describe(c.batch));
    checkAgainstReference(c, w, bias, rng,
                          [&](const void* x, void* y) { layer.forward(x, c.xType, c.batch, y); });
  };
  if (c.wType == DType::kF64) {
    run(randomBias<double>(c, rng));
  } else {
    run(randomBias<float>(c, rng));
  }
}

/// Puts NaN, +inf and -inf into a few of the stored (nonzero) weights of w (out × in).
inline void plantWeightSpecials(std::vector<double>& w) {
  const double specials[] = {NAN, HUGE_VAL, -HUGE_VAL};
  int planted = 0;
  for (size_t k = 0; k < w.size() && planted < 3; k += 29) {
    if (w[k] != 0.0) w[k] = specials[planted++];
  }
}

/// A bias (when the epilogue takes one) with NaN and ±inf at a few outputs.
inline std::vector<float> specialBias(const LinearCase& c, std::mt19937_64& rng) {
  std::vector<float> bias = randomBias(c, rng);
  const float specials[] = {NAN, HUGE_VALF, -HUGE_VALF};
  for (size_t k = 1; k < bias.size(); k += 11) bias[k] = specials[(k / 11) % 3];
  return bias;
}

/// Runs `forward(x, y)` on random x (c.xType) holding NaN and ±inf at a few elements of every
/// row (when `specialX`), and compares y with the float64 reference of epilogue(x · Wᵀ + bias)
/// under torch's rules: NaN propagates; W's zeros are skipped when `structuralZeros` (the
/// padding of a sparse format contributes nothing, even beside an inf) and multiply as values
/// otherwise (a dense W: 0 × inf = NaN, as torch.mm).
inline void checkWithSpecials(const LinearCase& c, const std::vector<double>& w,
                              const std::vector<float>& bias, bool structuralZeros, bool specialX,
                              std::mt19937_64& rng,
                              const std::function<void(const void* x, void* y)>& forward) {
  auto [x, xExact] = randomDense(c.batch * c.in, c.xType, rng);
  if (specialX) {
    const double specials[] = {HUGE_VAL, NAN, -HUGE_VAL};
    for (int64_t b = 0; b < c.batch; ++b) {
      for (int64_t i = b % 5; i < c.in; i += 9) {
        const int64_t at = b * c.in + i;
        x.setValue(at, specials[(i / 9) % 3]);
        xExact[static_cast<size_t>(at)] = x.value(at);
      }
    }
  }
  Buffer y = Buffer::zeros(c.xType, c.batch * c.out);
  forward(x.data(), y.data());
  const double outputEps = c.xType == DType::kBF16  ? 1.0 / 256
                           : c.xType == DType::kF16 ? 1.0 / 2048
                                                    : 0.0;
  int64_t bad = 0, nonFinite = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t o = 0; o < c.out; ++o) {
      double acc = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < c.in; ++i) {
        const double wv = w[static_cast<size_t>(o * c.in + i)];
        if (wv == 0.0 && structuralZeros) continue;
        const double term = xExact[static_cast<size_t>(b * c.in + i)] * wv;
        acc += term;
        if (std::isfinite(term)) magnitude += std::abs(term);
      }
      if (c.epilogue.bias) acc += bias[static_cast<size_t>(o)];
      const double expect = activationReference(c.epilogue.activation, acc);
      const double got = y.value(b * c.out + o);
      bool same;
      if (std::isnan(expect) || std::isinf(expect)) {
        ++nonFinite;
        same = std::isnan(expect) ? std::isnan(got) : got == expect;
      } else {
        same = std::abs(got - expect) <=
               1e-5 * (magnitude + 1.0) + outputEps * std::abs(expect) + 1e-6;
      }
      if (!same && bad++ < 5)
        ADD_FAILURE() << "y[" << b << "][" << o << "] = " << got << ", expected " << expect;
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(nonFinite, 0) << "the specials should reach some outputs";
}

/// A raw GEMM call (no epilogue) on fresh random f32 x, with its float64 expectation x · Wᵀ.
class RawGemmCase {
 public:
  /// `w` is W's exact values, out × in row-major.
  RawGemmCase(const std::vector<double>& w, int64_t out, int64_t in, int64_t batch,
              std::mt19937_64& rng, DType xType = DType::kF32)
      : out_(out), batch_(batch), xType_(xType), expect_(static_cast<size_t>(batch * out), 0.0) {
    std::vector<double> exact;
    std::tie(x_, exact) = randomDense(batch * in, xType, rng);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < out; ++o) {
        for (int64_t i = 0; i < in; ++i) {
          expect_[static_cast<size_t>(b * out + o)] +=
              exact[static_cast<size_t>(b * in + i)] * w[static_cast<size_t>(o * in + i)];
        }
      }
    }
  }

  /// Runs `gemm(args)` into a y prefilled with garbage (f32; f64 when x is f64, checked to f64
  /// accuracy) and checks every value.
  void check(const std::function<void(const kernels::GemmArgs&)>& gemm) const {
    const bool f64 = xType_ == DType::kF64;
    Buffer y = Buffer::zeros(f64 ? DType::kF64 : DType::kF32, batch_ * out_);
    for (int64_t i = 0; i < batch_ * out_; ++i) y.setValue(i, -7.0);
    kernels::GemmArgs args;
    args.x = x_.data();
    args.xType = xType_;
    args.batch = batch_;
    args.y = y.data();
    args.yType = y.dtype();
    gemm(args);
    for (int64_t i = 0; i < batch_ * out_; ++i) {
      ASSERT_NEAR(y.value(i), expect_[static_cast<size_t>(i)], f64 ? 1e-12 : 1e-4) << "at " << i;
    }
  }

 private:
  int64_t out_, batch_;
  DType xType_;
  Buffer x_ = Buffer::zeros(DType::kF32, 0);
  std::vector<double> expect_;
};

/// Runs `body(best)` once per SIMD target compiled into the kernels and supported by this CPU;
/// `best` is true for the one dispatch picks by default (Highway lists the best first).
/// `dispatched()` names the target the kernel under test reports, for the trace.
template <typename F>
void forEachTarget(const std::function<const char*()>& dispatched, F body) {
  bool best = true;
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
#if HWY_ARCH_X86
  EXPECT_GE(targets.size(), 2u) << "x86 builds compile several SIMD targets; this CPU has "
                                << targets.size();
#endif
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target) + " (" + dispatched() + ")");
    body(best);
    best = false;
  }
  hwy::SetSupportedTargetsForTest(0);
}

/// The batch sizes every linear layer is checked at: GEMV, small, tile edges, large.
inline const std::vector<int64_t> kLinearBatches = {1, 2, 3, 7, 8, 32, 100, 512};

/// Odd and larger shapes (1×1, in not a multiple of 4 or of any SIMD width, several tiles) at
/// every batch size with f32 and bias+gelu_tanh: calls `check(case)` for each.
inline void forOddShapes(const std::function<void(const LinearCase&)>& check) {
  const Epilogue epilogue = Epilogue::parse("bias+gelu_tanh");
  struct Shape {
    int64_t out, in;
  };
  for (Shape s : {Shape{1, 1}, Shape{1, 4}, Shape{2, 3}, Shape{5, 17}, Shape{16, 8},
                  Shape{130, 515}, Shape{64, 256}, Shape{257, 1030}}) {
    for (int64_t batch : kLinearBatches) {
      check({s.out, s.in, batch, DType::kF32, DType::kF32, epilogue});
    }
  }
}

/// One bf16 shape at a GEMV, a tile and a tile-and-a-half batch, run with 1 and with 2 threads:
/// calls `check(case, threads)` for each.
inline void forThreadCounts(const std::function<void(const LinearCase&, int32_t)>& check) {
  for (int32_t threads : {1, 2}) {
    for (int64_t batch : {1, 8, 48}) {
      check({300, 200, batch, DType::kBF16, DType::kF32, Epilogue::parse("relu")}, threads);
    }
  }
}

/// Expects `f` to throw an Error with `code` whose message contains `text`.
inline void expectError(const std::function<void()>& f, ErrorCode code, const std::string& text) {
  try {
    f();
    FAIL() << "expected an error containing '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace sparseflow::testing
