// DenseLinear (our dense GEMM/GEMV, NMLinear's baseline) against a float64 reference: every dtype,
// x dtype, epilogue and batch size, odd shapes, thread counts, and the errors users can cause.
#include <gtest/gtest.h>

#include <random>

#include "sparseflow/build.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/error.h"
#include "unit/kernels/linear_testing.h"

namespace sparseflow {
namespace {

using testing::checkAgainstReference;
using testing::expectError;
using testing::kLinearBatches;
using testing::randomBias;
using testing::randomDense;
using Case = testing::LinearCase;

/// Runs one case through DenseLinear on fresh random W and x and compares with float64.
void checkCase(const Case& c, std::mt19937_64& rng, int32_t threads = 0) {
  SCOPED_TRACE(testing::describe(c));
  const std::vector<double> w = randomDense(c.out * c.in, c.wType, rng).second;
  const Tensor weights = fromDense({c.out, c.in}, w.data(), Format::parse("dense", 2), c.wType);
  const std::vector<float> bias = randomBias(c, rng);
  const DenseLinear layer(weights, bias, c.epilogue, DenseLinearOptions{threads});
  SCOPED_TRACE(layer.describe(c.batch));
  checkAgainstReference(c, w, bias, rng,
                        [&](const void* x, void* y) { layer.forward(x, c.xType, c.batch, y); });
}

/// Every dtype × x dtype × epilogue × batch on `out` × `in` (the full cross product when
/// `everyEpilogue`, else each batch with a rotating epilogue).
void checkEveryDtype(int64_t out, int64_t in, bool everyEpilogue, std::mt19937_64& rng) {
  const std::vector<Epilogue> epilogues = Epilogue::all();
  size_t rotate = 0;
  for (DType wType : {DType::kF32, DType::kBF16, DType::kF16}) {
    std::vector<DType> xTypes = {DType::kF32};
    if (wType != DType::kF32) xTypes.push_back(wType);
    for (DType xType : xTypes) {
      for (const Epilogue& epilogue : epilogues) {
        for (int64_t batch : kLinearBatches) {
          const Epilogue& e = everyEpilogue ? epilogue : epilogues[rotate++ % epilogues.size()];
          checkCase({out, in, batch, wType, xType, e}, rng);
        }
        if (!everyEpilogue) break;
      }
    }
  }
}

TEST(DenseLinear, EveryDtypeEpilogueAndBatch) {
  SF_SEEDED_RNG(rng);
  // in = 70: not a multiple of any SIMD width; out = 37: not a multiple of any panel.
  checkEveryDtype(37, 70, true, rng);
}

TEST(DenseLinear, OddAndLargerShapes) {
  SF_SEEDED_RNG(rng);
  testing::forOddShapes([&](const Case& c) { checkCase(c, rng); });
}

TEST(DenseLinear, SingleAndTwoThreadsAgree) {
  SF_SEEDED_RNG(rng);
  testing::forThreadCounts([&](const Case& c, int32_t threads) { checkCase(c, rng, threads); });
}

TEST(DenseLinear, ReportsItsShapeAndBytes) {
  std::mt19937_64 rng(1);
  const std::vector<double> w = randomDense(8 * 64, DType::kF32, rng).second;
  const DenseLinear layer(fromDense({8, 64}, w.data(), Format::parse("dense", 2), DType::kBF16), {},
                          Epilogue::parse("silu"));
  EXPECT_EQ(layer.outFeatures(), 8);
  EXPECT_EQ(layer.inFeatures(), 64);
  EXPECT_EQ(layer.weightType(), DType::kBF16);
  EXPECT_EQ(layer.epilogue(), Epilogue::parse("silu"));
  EXPECT_GE(layer.weightBytes(), 8 * 64 * 2);
  EXPECT_FALSE(layer.describe(1).empty());
  // An empty batch is no work and needs no pointers.
  EXPECT_NO_THROW(layer.forward(nullptr, DType::kF32, 0, nullptr));
}

TEST(DenseLinear, TensorForwardChecksShapes) {
  std::mt19937_64 rng(2);
  const std::vector<double> w = randomDense(6 * 12, DType::kF32, rng).second;
  const DenseLinear layer(fromDense({6, 12}, w.data(), Format::parse("dense", 2)), {}, Epilogue{});
  std::vector<double> xs(3 * 12, 0.5);
  const Tensor x = fromDense({3, 12}, xs.data(), Format::parse("dense", 2));
  const Tensor y = layer.forward(x);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 6}));
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t o = 0; o < 6; ++o) {
      double expect = 0;
      for (int64_t i = 0; i < 12; ++i) expect += 0.5 * w[static_cast<size_t>(o * 12 + i)];
      EXPECT_NEAR(y.values().value(b * 6 + o), expect, 1e-5);
    }
  }
  const Tensor wrong = fromDense({3, 6}, xs.data(), Format::parse("dense", 2));
  expectError([&] { (void)layer.forward(wrong); }, ErrorCode::kInvalidArgument,
              "x has 6 columns but the weights have 12");
  const Tensor csr = fromDense({3, 12}, xs.data(), Format::parse("csr", 2));
  expectError([&] { (void)layer.forward(csr); }, ErrorCode::kInvalidArgument,
              "x must be a dense row-major 2-d tensor");
}

TEST(DenseLinear, RefusesWhatItCannotRun) {
  std::mt19937_64 rng(3);
  const std::vector<double> w = randomDense(4 * 8, DType::kF32, rng).second;
  const Tensor csr = fromDense({4, 8}, w.data(), Format::parse("csr", 2));
  expectError([&] { DenseLinear(csr, {}, Epilogue{}); }, ErrorCode::kNotSupported,
              "takes weights in the 'dense' format; got 'csr");
  const Tensor f64 = fromDense({4, 8}, w.data(), Format::parse("dense", 2), DType::kF64);
  expectError([&] { DenseLinear(f64, {}, Epilogue{}); }, ErrorCode::kNotSupported,
              "f32, bf16 or f16 weights, got f64");
  const Tensor vector = fromDense({8}, w.data(), Format::parse("dense", 1));
  expectError([&] { DenseLinear(vector, {}, Epilogue{}); }, ErrorCode::kInvalidArgument,
              "dense weights must be 2-d (out_features × in_features), got 1-d");
  const Tensor cube = fromDense({2, 2, 8}, w.data(), Format::parse("dense", 3));
  expectError([&] { DenseLinear(cube, {}, Epilogue{}); }, ErrorCode::kInvalidArgument,
              "dense weights must be 2-d (out_features × in_features), got 3-d");
  const Tensor ok = fromDense({4, 8}, w.data(), Format::parse("dense", 2));
  expectError([&] { DenseLinear(ok, {}, Epilogue::parse("bias+relu")); },
              ErrorCode::kInvalidArgument, "needs bias, but 0 bias values were given");
  expectError(
      [&] {
        DenseLinear(ok, {1.0f, 2.0f}, Epilogue::parse("bias"));
      },
      ErrorCode::kInvalidArgument, "bias has 2 values, the weights have 4");
  expectError(
      [&] {
        DenseLinear(ok, {1, 2, 3, 4}, Epilogue::parse("relu"));
      },
      ErrorCode::kInvalidArgument, "takes no bias");
  expectError([&] { DenseLinear(ok, {}, Epilogue{}, DenseLinearOptions{-1}); },
              ErrorCode::kInvalidArgument, "threads must be >= 0, got -1");
  const DenseLinear layer(ok, {}, Epilogue{});
  std::vector<uint16_t> x(8), y(4);
  expectError([&] { layer.forward(x.data(), DType::kBF16, 1, y.data()); },
              ErrorCode::kInvalidArgument, "x must be f32 or the weights' dtype f32, got bf16");
  expectError([&] { layer.forward(x.data(), DType::kF32, -1, y.data()); },
              ErrorCode::kInvalidArgument, "batch must be >= 0, got -1");
  expectError([&] { layer.forward(nullptr, DType::kF32, 1, y.data()); },
              ErrorCode::kInvalidArgument, "x and y must not be null");
}

}  // namespace
}  // namespace sparseflow
