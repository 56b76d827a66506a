// NMLinear (the 2:4 GEMM) against a float64 reference: every compiled SIMD target, dtype, x dtype,
// epilogue and batch size, odd shapes, forced tile plans, and the errors users can cause.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "common/random_coo.h"
#include "hwy/targets.h"
#include "kernels/nm_gemm/nm_gemm.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/nm_linear.h"
#include "support/half.h"

namespace sparseflow {
namespace {

/// Dense 2:4 weights: per group of 4 columns 0, 1 or 2 random nonzeros (mostly 2), values in
/// [-1, 1), rounded to `dtype`. Returns the values as doubles (what the kernel must see).
std::vector<double> random24(int64_t out, int64_t in, DType dtype, std::mt19937_64& rng) {
  std::vector<double> w(static_cast<size_t>(out * in), 0.0);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 3), howMany(0, 9);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t g = 0; g * 4 < in; ++g) {
      const int count = howMany(rng) == 0 ? 0 : (howMany(rng) == 0 ? 1 : 2);
      for (int c = 0; c < count; ++c) {
        const int64_t col = g * 4 + pick(rng);
        if (col >= in) continue;
        Buffer one = Buffer::zeros(dtype, 1);
        one.setValue(0, value(rng));
        w[static_cast<size_t>(o * in + col)] = one.value(0);
      }
    }
  }
  return w;
}

/// Random dense values rounded to `dtype`, as a buffer and as doubles.
std::pair<Buffer, std::vector<double>> randomDense(int64_t count, DType dtype,
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

struct Case {
  int64_t out, in, batch;
  DType wType, xType;
  Epilogue epilogue;
};

std::string describe(const Case& c) {
  return std::to_string(c.out) + "x" + std::to_string(c.in) + " batch " + std::to_string(c.batch) +
         " w " + dtypeName(c.wType) + " x " + dtypeName(c.xType) + " " + c.epilogue.toString();
}

/// Runs one case through NMLinear and compares with float64; returns the number of mismatches.
void checkCase(const Case& c, std::mt19937_64& rng, int32_t threads = 0) {
  SCOPED_TRACE(describe(c));
  const std::vector<double> w = random24(c.out, c.in, c.wType, rng);
  const Tensor weights = fromDense({c.out, c.in}, w.data(), Format::parse("2:4", 2), c.wType);
  std::vector<float> bias;
  if (c.epilogue.bias) {
    std::uniform_real_distribution<float> value(-0.5f, 0.5f);
    for (int64_t o = 0; o < c.out; ++o) bias.push_back(value(rng));
  }
  const NMLinear layer(weights, bias, c.epilogue, NMLinearOptions{threads});
  auto [x, xExact] = randomDense(c.batch * c.in, c.xType, rng);
  Buffer y = Buffer::zeros(c.xType, c.batch * c.out);
  layer.forward(x.data(), c.xType, c.batch, y.data());

  // The output is rounded to x's dtype: allow its half-ulp beside f32 accumulation error.
  const double outputEps = c.xType == DType::kBF16  ? 1.0 / 256
                           : c.xType == DType::kF16 ? 1.0 / 2048
                                                    : 0.0;
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
      const double tolerance = 1e-5 * (magnitude + 1.0) + outputEps * std::abs(expect) + 1e-6;
      if (!(std::abs(got - expect) <= tolerance) && bad++ < 5) {
        ADD_FAILURE() << "y[" << b << "][" << o << "] = " << got << ", expected " << expect
                      << " (tolerance " << tolerance << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

/// Runs `body(best)` once per SIMD target compiled into the kernels and supported by this CPU;
/// `best` is true for the one dispatch picks by default (Highway lists the best first).
template <typename F>
void forEachTarget(F body) {
  bool best = true;
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
#if HWY_ARCH_X86
  EXPECT_GE(targets.size(), 2u) << "x86 builds compile several SIMD targets; this CPU has "
                                << targets.size();
#endif
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target) + " (" +
                 kernels::nmGemmTargetName() + ")");
    body(best);
    best = false;
  }
  hwy::SetSupportedTargetsForTest(0);
}

const std::vector<int64_t> kBatches = {1, 2, 3, 7, 8, 32, 100, 512};

TEST(NMLinear, EveryDtypeEpilogueAndBatchOnEveryTarget) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  forEachTarget([&](bool best) {
    const std::vector<Epilogue> epilogues = Epilogue::all();
    size_t rotate = 0;
    for (DType wType : {DType::kF32, DType::kBF16, DType::kF16}) {
      std::vector<DType> xTypes = {DType::kF32};
      if (wType != DType::kF32) xTypes.push_back(wType);
      for (DType xType : xTypes) {
        // The full cross product on the default target; other targets see each batch size
        // with a rotating epilogue (their code is the same template at another width).
        for (const Epilogue& epilogue : epilogues) {
          for (int64_t batch : kBatches) {
            const Epilogue& e = best ? epilogue : epilogues[rotate++ % epilogues.size()];
            // in = 70: not a multiple of the SIMD width nor of 4 (a partial last group).
            checkCase({37, 70, batch, wType, xType, e}, rng);
          }
          if (!best) break;
        }
      }
    }
  });
}

TEST(NMLinear, OddAndLargerShapes) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Epilogue epilogue = Epilogue::parse("bias+gelu_tanh");
  struct Shape {
    int64_t out, in;
  };
  for (Shape s : {Shape{1, 1}, Shape{1, 4}, Shape{2, 3}, Shape{5, 17}, Shape{130, 515},
                  Shape{64, 256}, Shape{257, 1030}}) {
    for (int64_t batch : kBatches) {
      checkCase({s.out, s.in, batch, DType::kF32, DType::kF32, epilogue}, rng);
    }
  }
}

TEST(NMLinear, SingleAndTwoThreadsAgree) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int32_t threads : {1, 2}) {
    for (int64_t batch : {1, 8, 48}) {
      checkCase({300, 200, batch, DType::kBF16, DType::kF32, Epilogue::parse("relu")}, rng,
                threads);
    }
  }
}

/// Every instantiated tile path: force plans (small chunks, small blocks) on one shape.
TEST(NMGemm, ForcedPlansMatchTheDefault) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t out = 75, in = 333;
  const int32_t lanes = kernels::nmGemmLanes();
  const std::vector<double> w = random24(out, in, DType::kF32, rng);
  const Tensor weights = fromDense({out, in}, w.data(), Format::parse("2:4", 2));
  const kernels::PackedNMWeights packed = kernels::packNMWeights(weights, lanes);
  for (int64_t batch : {1, 3, 5, 9, 17, 40, 70}) {
    auto [x, xExact] = randomDense(batch * in, DType::kF32, rng);
    std::vector<double> expect(static_cast<size_t>(batch * out), 0.0);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t o = 0; o < out; ++o) {
        for (int64_t i = 0; i < in; ++i) {
          expect[static_cast<size_t>(b * out + o)] +=
              xExact[static_cast<size_t>(b * in + i)] * w[static_cast<size_t>(o * in + i)];
        }
      }
    }
    for (auto path : {kernels::NMGemmPath::kPermute, kernels::NMGemmPath::kBroadcast}) {
      for (int64_t chunk : {int64_t{1}, int64_t{3}, int64_t{1000}}) {
        for (int64_t block : {int64_t{4}, int64_t{8}, int64_t{64}}) {
          kernels::NMGemmPlan plan;
          plan.path = path;
          plan.lanes = lanes;
          plan.pairsPerBlock = block;
          plan.stepsPerChunk = chunk;
          plan.maxBatchVectors = 4;
          plan.threads = 2;
          SCOPED_TRACE("batch " + std::to_string(batch) + " plan " + plan.toString());
          std::vector<float> y(static_cast<size_t>(batch * out), -7.0f);
          kernels::NMGemmArgs args;
          args.x = x.data();
          args.batch = batch;
          args.y = y.data();
          kernels::runNMGemm(packed, args, plan);
          for (size_t i = 0; i < y.size(); ++i) {
            ASSERT_NEAR(y[i], expect[i], 1e-4) << "at " << i;
          }
        }
      }
    }
  }
}

TEST(NMLinear, DescribesItsPlan) {
  std::mt19937_64 rng(1);
  const std::vector<double> w = random24(8, 64, DType::kF32, rng);
  const NMLinear layer(fromDense({8, 64}, w.data(), Format::parse("2:4", 2)), {}, Epilogue{});
  EXPECT_NE(layer.describe(1).find("permute"), std::string::npos) << layer.describe(1);
  EXPECT_NE(layer.describe(512).find("broadcast"), std::string::npos) << layer.describe(512);
  // 8 rows × 64 columns: 256 f32 values (2 of every 4) + 2 bits each, padded to 4 row pairs.
  EXPECT_EQ(layer.weightBytes(), 8 * 64 / 2 * 4 + 8 * 64 / 2 / 4);
}

TEST(NMLinear, TensorForwardChecksShapes) {
  std::mt19937_64 rng(2);
  const std::vector<double> w = random24(6, 12, DType::kF32, rng);
  const NMLinear layer(fromDense({6, 12}, w.data(), Format::parse("2:4", 2)), {}, Epilogue{});
  std::vector<double> xs(3 * 12, 0.5);
  const Tensor x = fromDense({3, 12}, xs.data(), Format::parse("dense", 2));
  const Tensor y = layer.forward(x);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 6}));
  for (int64_t o = 0; o < 6; ++o) {
    double expect = 0;
    for (int64_t i = 0; i < 12; ++i) expect += 0.5 * w[static_cast<size_t>(o * 12 + i)];
    EXPECT_NEAR(y.values().value(o), expect, 1e-5);
  }
  const Tensor wrong = fromDense({3, 6}, xs.data(), Format::parse("dense", 2));
  try {
    (void)layer.forward(wrong);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x has 6 columns but the weights have 12"),
              std::string::npos)
        << e.what();
  }
}

void expectError(const std::function<void()>& f, ErrorCode code, const std::string& text) {
  try {
    f();
    FAIL() << "expected an error containing '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(NMLinear, RefusesWhatItCannotRun) {
  std::mt19937_64 rng(3);
  const std::vector<double> w = random24(4, 8, DType::kF32, rng);
  const Tensor csr = fromDense({4, 8}, w.data(), Format::parse("csr", 2));
  expectError([&] { NMLinear(csr, {}, Epilogue{}); }, ErrorCode::kNotSupported,
              "take weights in the '2:4' format");
  const Tensor f64 = fromDense({4, 8}, w.data(), Format::parse("2:4", 2), DType::kF64);
  expectError([&] { NMLinear(f64, {}, Epilogue{}); }, ErrorCode::kNotSupported,
              "f32, bf16 or f16 weights, got f64");
  const Tensor ok = fromDense({4, 8}, w.data(), Format::parse("2:4", 2));
  expectError([&] { NMLinear(ok, {}, Epilogue::parse("bias+relu")); }, ErrorCode::kInvalidArgument,
              "needs bias, but 0 bias values were given");
  expectError(
      [&] {
        NMLinear(ok, {1.0f, 2.0f}, Epilogue::parse("bias"));
      },
      ErrorCode::kInvalidArgument, "bias has 2 values, the weights have 4");
  expectError(
      [&] {
        NMLinear(ok, {1, 2, 3, 4}, Epilogue::parse("relu"));
      },
      ErrorCode::kInvalidArgument, "takes no bias");
  const NMLinear layer(ok, {}, Epilogue{});
  std::vector<uint16_t> x(8), y(4);
  expectError([&] { layer.forward(x.data(), DType::kBF16, 1, y.data()); },
              ErrorCode::kInvalidArgument, "x must be f32 or the weights' dtype f32, got bf16");
}

}  // namespace
}  // namespace sparseflow
