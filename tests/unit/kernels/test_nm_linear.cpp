// NMLinear (the 2:4 GEMM) against a float64 reference: every compiled SIMD target, dtype, x dtype,
// epilogue and batch size, odd shapes, forced tile plans, and the errors users can cause.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "kernels/nm_gemm/bf16_dot.h"
#include "kernels/nm_gemm/nm_gemm.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/nm_linear.h"
#include "support/half.h"
#include "unit/kernels/linear_testing.h"

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

using testing::expectError;
using testing::kLinearBatches;
using Case = testing::LinearCase;

/// Runs one case through NMLinear on fresh random x and compares with float64.
void checkCase(const Case& c, std::mt19937_64& rng, int32_t threads = 0) {
  SCOPED_TRACE(testing::describe(c));
  const std::vector<double> w = random24(c.out, c.in, c.wType, rng);
  const Tensor weights = fromDense({c.out, c.in}, w.data(), Format::parse("2:4", 2), c.wType);
  testing::checkLayer<NMLinear, NMLinearOptions>(c, weights, w, rng, threads);
}

template <typename F>
void forEachTarget(F body) {
  testing::forEachTarget([] { return kernels::nmGemmTargetName(); }, body);
}

TEST(NMLinear, EveryDtypeEpilogueAndBatchOnEveryTarget) {
  SF_SEEDED_RNG(rng);
  forEachTarget([&](bool best) {
    const std::vector<Epilogue> epilogues = Epilogue::all();
    size_t rotate = 0;
    for (DType wType : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64}) {
      std::vector<DType> xTypes = {DType::kF32};
      if (wType != DType::kF32) xTypes.push_back(wType);
      for (DType xType : xTypes) {
        // The full cross product on the default target; other targets see each batch size
        // with a rotating epilogue (their code is the same template at another width).
        for (const Epilogue& epilogue : epilogues) {
          for (int64_t batch : kLinearBatches) {
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

// NaN and ±inf in x, in the stored weights and in the bias, on every target, dtype and path
// (permute at batch 1 and 8, broadcast at 32, the bf16 dot path with bf16 x): the padding zeros of
// the 2:4 format contribute nothing (0 × inf was NaN: the kernel multiplies every slot), NaN
// propagates through the epilogue (relu(NaN) was 0).
TEST(NMLinear, NanAndInfAsTorchOnEveryTarget) {
  SF_SEEDED_RNG(rng);
  forEachTarget([&](bool) {
    for (DType wType : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64}) {
      std::vector<DType> xTypes = {DType::kF32};
      if (wType != DType::kF32) xTypes.push_back(wType);
      for (DType xType : xTypes) {
        for (int64_t batch : {1, 8, 32}) {
          for (const char* epilogue : {"relu", "bias+gelu_erf", "bias+silu"}) {
            for (bool specialX : {true, false}) {
              const Case c{37, 70, batch, wType, xType, Epilogue::parse(epilogue)};
              SCOPED_TRACE(testing::describe(c) + (specialX ? " x with NaN/inf" : ""));
              std::vector<double> w = random24(c.out, c.in, c.wType, rng);
              testing::plantWeightSpecials(w);
              const Tensor weights =
                  fromDense({c.out, c.in}, w.data(), Format::parse("2:4", 2), c.wType);
              const std::vector<float> bias = testing::specialBias(c, rng);
              const NMLinear layer(weights, bias, c.epilogue);
              testing::checkWithSpecials(
                  c, w, bias, /*structuralZeros=*/true, specialX, rng,
                  [&](const void* x, void* y) { layer.forward(x, c.xType, c.batch, y); });
            }
          }
        }
      }
    }
  });
}

TEST(NMLinear, OddAndLargerShapes) {
  SF_SEEDED_RNG(rng);
  testing::forOddShapes([&](const Case& c) { checkCase(c, rng); });
}

TEST(NMLinear, SingleAndTwoThreadsAgree) {
  SF_SEEDED_RNG(rng);
  testing::forThreadCounts([&](const Case& c, int32_t threads) { checkCase(c, rng, threads); });
}

/// Every instantiated tile path on every target (each has its own tile list: 16 accumulators
/// with AVX-512, 8 below): force plans (small chunks, small blocks, capped batch tiles).
TEST(NMGemm, ForcedPlansMatchTheDefault) {
  SF_SEEDED_RNG(rng);
  const int64_t out = 75, in = 333;
  const std::vector<double> w = random24(out, in, DType::kF32, rng);
  const Tensor weights = fromDense({out, in}, w.data(), Format::parse("2:4", 2));
  forEachTarget([&](bool) {
    const int32_t lanes = kernels::nmGemmLanes();
    const kernels::PackedNMWeights packed = kernels::packNMWeights(weights, lanes);
    for (int64_t batch : {1, 3, 5, 9, 17, 40, 70}) {
      const testing::RawGemmCase raw(w, out, in, batch, rng);
      for (auto path : {kernels::NMGemmPath::kPermute, kernels::NMGemmPath::kBroadcast}) {
        for (int64_t chunk : {int64_t{1}, int64_t{3}, int64_t{1000}}) {
          for (int64_t block : {int64_t{4}, int64_t{8}, int64_t{64}}) {
            // Batch tiles capped at 1, 2 and 4 vectors: every broadcast tile width.
            for (int32_t vectors : {1, 2, 4}) {
              if (path == kernels::NMGemmPath::kPermute && vectors != 4) continue;
              kernels::NMGemmPlan plan;
              plan.path = path;
              plan.lanes = lanes;
              plan.pairsPerBlock = block;
              plan.stepsPerChunk = chunk;
              plan.maxBatchVectors = vectors;
              plan.threads = 2;
              SCOPED_TRACE("batch " + std::to_string(batch) + " plan " + plan.toString());
              raw.check(
                  [&](const kernels::GemmArgs& args) { kernels::runNMGemm(packed, args, plan); });
            }
          }
        }
      }
    }
  });
}

/// The f64 kernel's blocking forced on every target (blocks of 4 to 64 pairs, k chunks of 1, 3
/// and all steps, batch chunks that split the batch, 1 and 2 threads) at batches that take every
/// tile height (8, 4, 2, 1 rows), f64 x (checked to 1e-12) and f32 x.
TEST(NMGemm, F64PlansMatchTheReference) {
  SF_SEEDED_RNG(rng);
  const int64_t out = 75, in = 333;
  const std::vector<double> w = random24(out, in, DType::kF64, rng);
  const Tensor weights = fromDense({out, in}, w.data(), Format::parse("2:4", 2), DType::kF64);
  forEachTarget([&](bool) {
    const kernels::PackedNMWeights packed =
        kernels::packNMWeights(weights, kernels::nmGemmF64Lanes());
    for (int64_t batch : {1, 3, 7, 15, 40}) {
      for (DType xType : {DType::kF64, DType::kF32}) {
        const testing::RawGemmCase raw(w, out, in, batch, rng, xType);
        // (k chunk, pairs per block): single steps in small blocks, odd chunks, whole rows in
        // a block past the 19 pairs; each with a batch chunk that splits the batch and one that
        // does not.
        for (auto [chunk, block] : {std::pair<int64_t, int64_t>{1, 4}, {3, 8}, {1000, 64}}) {
          for (int64_t batchChunk : {int64_t{6}, int64_t{256}}) {
            kernels::NMGemmF64Plan plan = kernels::chooseNMGemmF64Plan(packed, batch, 2);
            plan.pairsPerBlock = block;
            plan.stepsPerChunk = chunk;
            plan.batchChunk = batchChunk;
            plan.threads = chunk == 3 ? 1 : 2;
            SCOPED_TRACE("batch " + std::to_string(batch) + " x " + dtypeName(xType) + " plan " +
                         plan.toString());
            raw.check(
                [&](const kernels::GemmArgs& args) { kernels::runNMGemmF64(packed, args, plan); });
          }
        }
      }
    }
  });
}

/// bf16 weights with bf16 x: the Highway paths (which NMLinear no longer picks where the CPU has
/// AVX-512 BF16) and the bf16 dot path, forced, on every target; odd (in = 333: 21 steps, the
/// last one alone) and even (in = 320) step counts.
TEST(NMGemm, ForcedPlansWithBF16Operands) {
  SF_SEEDED_RNG(rng);
  const int64_t out = 75;
  int dotRuns = 0;
  for (int64_t in : {int64_t{333}, int64_t{320}}) {
    const std::vector<double> w = random24(out, in, DType::kBF16, rng);
    const Tensor weights = fromDense({out, in}, w.data(), Format::parse("2:4", 2), DType::kBF16);
    forEachTarget([&](bool) {
      const int32_t lanes = kernels::nmGemmLanes();
      const kernels::PackedNMWeights packed = kernels::packNMWeights(weights, lanes);
      const bool dot = kernels::bf16DotApplies(packed, DType::kBF16);
      EXPECT_EQ(dot, lanes == 16 && kernels::bf16DotSupported());
      EXPECT_FALSE(kernels::bf16DotApplies(packed, DType::kF32));
      for (int64_t batch : {1, 2, 3, 5, 8, 9, 17, 40, 70}) {
        const testing::RawGemmCase raw(w, out, in, batch, rng, DType::kBF16);
        for (auto path : {kernels::NMGemmPath::kPermute, kernels::NMGemmPath::kBroadcast,
                          kernels::NMGemmPath::kDotBF16}) {
          if (path == kernels::NMGemmPath::kDotBF16 && !dot) continue;
          for (int64_t block : {int64_t{4}, int64_t{8}, int64_t{64}}) {
            kernels::NMGemmPlan plan;
            plan.path = path;
            plan.lanes = lanes;
            plan.pairsPerBlock = block;
            plan.stepsPerChunk = 3;
            plan.maxBatchVectors = 2;
            plan.threads = 2;
            SCOPED_TRACE("in " + std::to_string(in) + " batch " + std::to_string(batch) + " plan " +
                         plan.toString());
            raw.check(
                [&](const kernels::GemmArgs& args) { kernels::runNMGemm(packed, args, plan); });
            if (path == kernels::NMGemmPath::kDotBF16) ++dotRuns;
          }
        }
      }
    });
  }
  if (kernels::bf16DotSupported()) {
    EXPECT_GT(dotRuns, 0) << "the bf16 dot path never ran on a CPU that has it";
  }
}

TEST(NMLinear, PicksTheBF16DotPathWhereItApplies) {
  std::mt19937_64 rng(4);
  const std::vector<double> w = random24(8, 64, DType::kBF16, rng);
  const NMLinear layer(fromDense({8, 64}, w.data(), Format::parse("2:4", 2), DType::kBF16), {},
                       Epilogue{});
  const bool dot = kernels::bf16DotSupported() && kernels::nmGemmLanes() == 16;
  for (int64_t batch : {1, 32}) {
    EXPECT_EQ(layer.describe(batch).find("bf16-dot") != std::string::npos, dot)
        << layer.describe(batch);
    EXPECT_EQ(layer.describe(batch, DType::kF32).find("bf16-dot"), std::string::npos)
        << "x in f32 keeps the f32 kernels: " << layer.describe(batch, DType::kF32);
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

TEST(NMLinear, RefusesWhatItCannotRun) {
  std::mt19937_64 rng(3);
  const std::vector<double> w = random24(4, 8, DType::kF32, rng);
  const Tensor csr = fromDense({4, 8}, w.data(), Format::parse("csr", 2));
  expectError([&] { NMLinear(csr, {}, Epilogue{}); }, ErrorCode::kNotSupported,
              "take weights in the '2:4' format");
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
  // More threads than OpenMP may start ended the process in the first forward.
  expectError([&] { NMLinear(ok, {}, Epilogue{}, NMLinearOptions{INT32_MAX}); },
              ErrorCode::kInvalidArgument, "threads is 2147483647; at most");
  expectError([&] { NMLinear(ok, {}, Epilogue{}, NMLinearOptions{-2}); },
              ErrorCode::kInvalidArgument, "threads must be >= 0, got -2");
  const NMLinear layer(ok, {}, Epilogue{});
  std::vector<uint16_t> x(8), y(4);
  expectError([&] { layer.forward(x.data(), DType::kBF16, 1, y.data()); },
              ErrorCode::kInvalidArgument, "x must be f32 or the weights' dtype f32, got bf16");
}

// kernels::runNMGemmPair (an MLP block of two 2:4 layers, the hidden activations kept in cache)
// against float64 on every target: f32 and bf16 weights, a batch ending in partial tiles (4, 2
// and 1 vectors wide), GELU with a bias first, a bias or none second (and a scale and clamp).
// Where it declines (a batch
// under two tiles per thread, x not finite, the scalar target, the bf16 dot path) it says so.
TEST(NMGemm, PairOfLayersMatchesFloat64OnEveryTarget) {
  SF_SEEDED_RNG(rng);
  const int64_t in = 40, hidden = 72, outs = 30;
  int ranF32 = 0;  // targets where the f32 pair ran (every SIMD target)
  forEachTarget([&](bool) {
    const int32_t lanes = kernels::nmGemmLanes();
    const int64_t batch = 2 * 2 * 4 * lanes + 3 * lanes - 5;
    for (DType wType : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(dtypeName(wType));
      const std::vector<double> w1 = random24(hidden, in, wType, rng);
      const std::vector<double> w2 = random24(outs, hidden, wType, rng);
      const auto p1 = kernels::packNMWeights(
          fromDense({hidden, in}, w1.data(), Format::parse("2:4", 2), wType), lanes);
      const auto p2 = kernels::packNMWeights(
          fromDense({outs, hidden}, w2.data(), Format::parse("2:4", 2), wType), lanes);
      std::uniform_real_distribution<float> u(-1, 1);
      std::vector<float> x(static_cast<size_t>(batch * in)), b1(hidden), b2(outs);
      for (float& e : x) e = u(rng);
      for (float& e : b1) e = u(rng);
      for (float& e : b2) e = u(rng);
      // 0: no second bias; 1: a second bias; 2: a second bias, scale 0.5 and clamp [-0.2, 0.3]
      // in the second layer's store (the graph executor's clip after a pair).
      for (int variant : {0, 1, 2}) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        const bool bias2 = variant > 0, clamp2 = variant == 2;
        std::vector<float> y(static_cast<size_t>(batch * outs), NAN);
        kernels::GemmArgs a1, a2;
        a1.x = x.data();
        a1.batch = batch;
        a1.bias = b1.data();
        a1.activation = Activation::kGeluErf;
        a2.batch = batch;
        a2.y = y.data();
        a2.bias = bias2 ? b2.data() : nullptr;
        if (clamp2) {
          a2.scale = 0.5;
          a2.clampLow = -0.2;
          a2.clampHigh = 0.3;
        }
        int64_t clamped = 0;
        if (!kernels::runNMGemmPair(p1, a1, p2, a2, 2)) {
          // Declined only where the layers' own paths are not the broadcast one.
          EXPECT_TRUE(std::string(kernels::nmGemmTargetName()) == "SCALAR" ||
                      kernels::bf16DotApplies(p1, DType::kF32))
              << kernels::nmGemmTargetName();
          continue;
        }
        ranF32 += wType == DType::kF32 && !bias2;
        for (int64_t n = 0; n < batch; ++n) {
          std::vector<double> h(static_cast<size_t>(hidden));
          for (int64_t f = 0; f < hidden; ++f) {
            double v = b1[f];
            for (int64_t k = 0; k < in; ++k) v += w1[f * in + k] * x[n * in + k];
            h[f] = v * 0.5 * std::erfc(-v / std::sqrt(2.0));
          }
          for (int64_t o = 0; o < outs; ++o) {
            double want = 0.0;
            for (int64_t f = 0; f < hidden; ++f) want += w2[o * hidden + f] * h[f];
            want = (clamp2 ? 0.5 * want : want) + (bias2 ? b2[o] : 0.0);
            if (clamp2) {
              clamped += want < -0.2 || want > 0.3;
              want = std::clamp(want, -0.2, 0.3);
            }
            ASSERT_NEAR(y[n * outs + o], want, 2e-5 * (1 + std::abs(want)))
                << "row " << n << " out " << o;
          }
        }
        if (clamp2) {
          EXPECT_GT(clamped, 0) << "the clamp never bites";
        }
        // Declined: too small a batch; a non-finite x.
        a1.batch = a2.batch = 8;
        EXPECT_FALSE(kernels::runNMGemmPair(p1, a1, p2, a2, 2));
        a1.batch = a2.batch = batch;
        x[5] = NAN;
        EXPECT_FALSE(kernels::runNMGemmPair(p1, a1, p2, a2, 2));
        x[5] = 0.5f;
        // Declined: finite inputs whose hidden values overflow, in any vector of a batch tile
        // (the hidden values' check runs several chains).
        for (int64_t row : {int64_t{0}, int64_t{lanes} + 1, 2 * int64_t{lanes} + 2,
                            3 * int64_t{lanes} + 3, batch - 1}) {
          SCOPED_TRACE("overflow in row " + std::to_string(row));
          const std::vector<float> saved(x.begin() + row * in, x.begin() + (row + 1) * in);
          std::fill(x.begin() + row * in, x.begin() + (row + 1) * in, 3e38f);
          EXPECT_FALSE(kernels::runNMGemmPair(p1, a1, p2, a2, 2));
          std::copy(saved.begin(), saved.end(), x.begin() + row * in);
        }
      }
    }
  });
  EXPECT_GE(ranF32, 1);
}

}  // namespace
}  // namespace sparseflow
