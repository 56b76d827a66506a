// DenseLinear (our dense GEMM/GEMV, NMLinear's baseline) against a float64 reference: every dtype,
// x dtype, epilogue and batch size on every compiled SIMD target, odd shapes, thread counts,
// forced tile plans, the plan rules, and the errors users can cause.
#include <gtest/gtest.h>

#include <random>
#include <type_traits>

#include "kernels/dense_gemm/dense_gemm.h"
#include "kernels/dense_gemm/dense_gemv_rows.h"
#include "sparseflow/build.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/error.h"
#include "sparseflow/nm_linear.h"
#include "unit/kernels/linear_testing.h"

namespace sparseflow {
namespace {

using testing::expectError;
using testing::kLinearBatches;
using testing::randomDense;
using Case = testing::LinearCase;

/// Runs one case through DenseLinear on fresh random W and x and compares with float64.
void checkCase(const Case& c, std::mt19937_64& rng, int32_t threads = 0) {
  SCOPED_TRACE(testing::describe(c));
  const std::vector<double> w = randomDense(c.out * c.in, c.wType, rng).second;
  const Tensor weights = fromDense({c.out, c.in}, w.data(), Format::parse("dense", 2), c.wType);
  testing::checkLayer<DenseLinear, DenseLinearOptions>(c, weights, w, rng, threads);
}

/// Every dtype × x dtype × epilogue × batch on `out` × `in` (the full cross product when
/// `everyEpilogue`, else each batch with a rotating epilogue).
void checkEveryDtype(int64_t out, int64_t in, bool everyEpilogue, std::mt19937_64& rng) {
  const std::vector<Epilogue> epilogues = Epilogue::all();
  size_t rotate = 0;
  for (DType wType : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64}) {
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

TEST(DenseLinear, EveryDtypeEpilogueAndBatchOnEveryTarget) {
  SF_SEEDED_RNG(rng);
  // in = 70: not a multiple of any SIMD width; out = 37: not a multiple of any panel. The full
  // cross product on the default target; other targets see each batch size with a rotating
  // epilogue (their code is the same template at another width).
  testing::forEachTarget([] { return kernels::denseGemmTargetName(); },
                         [&](bool best) { checkEveryDtype(37, 70, best, rng); });
}

// A dense W's zeros are values: 0 × inf is NaN, as torch.mm; NaN in x, W or the bias
// propagates through the epilogue on every target (relu(NaN) was 0).
TEST(DenseLinear, NanAndInfAsTorchOnEveryTarget) {
  SF_SEEDED_RNG(rng);
  testing::forEachTarget(
      [] { return "dense"; },
      [&](bool) {
        for (DType wType : {DType::kF32, DType::kBF16, DType::kF64}) {
          for (int64_t batch : {1, 8, 32}) {
            for (const char* epilogue : {"relu", "bias+gelu_tanh"}) {
              for (bool specialX : {true, false}) {
                const Case c{37, 70, batch, wType, DType::kF32, Epilogue::parse(epilogue)};
                SCOPED_TRACE(testing::describe(c) + (specialX ? " x with NaN/inf" : ""));
                std::vector<double> w = randomDense(c.out * c.in, c.wType, rng).second;
                for (size_t k = 0; k < w.size(); k += 7) w[k] = 0.0;  // zeros beside the infs
                testing::plantWeightSpecials(w);
                const Tensor weights =
                    fromDense({c.out, c.in}, w.data(), Format::parse("dense", 2), c.wType);
                const std::vector<float> bias = testing::specialBias(c, rng);
                const DenseLinear layer(weights, bias, c.epilogue);
                testing::checkWithSpecials(
                    c, w, bias, /*structuralZeros=*/false, specialX, rng,
                    [&](const void* x, void* y) { layer.forward(x, c.xType, c.batch, y); });
              }
            }
          }
        }
      });
}

TEST(DenseLinear, OddAndLargerShapes) {
  SF_SEEDED_RNG(rng);
  testing::forOddShapes([&](const Case& c) { checkCase(c, rng); });
}

TEST(DenseLinear, SingleAndTwoThreadsAgree) {
  SF_SEEDED_RNG(rng);
  testing::forThreadCounts([&](const Case& c, int32_t threads) { checkCase(c, rng, threads); });
}

/// Every register tile height with tiny, small and whole k chunks, batch chunks and blocks (the
/// plan rules never pick some of these) on one shape and weight dtype, against float64.
void checkForcedPlans(int64_t out, int64_t in, DType wType, std::mt19937_64& rng) {
  const int32_t lanes = kernels::denseGemmLanes(wType);
  const std::vector<double> w = randomDense(out * in, wType, rng).second;
  const Tensor weights = fromDense({out, in}, w.data(), Format::parse("dense", 2), wType);
  const kernels::PackedDenseWeights packed = kernels::packDenseWeights(weights, 2 * lanes);
  const DType xType = wType == DType::kF64 ? DType::kF64 : DType::kF32;
  for (int64_t batch : {1, 5, 9, 17, 40}) {
    const testing::RawGemmCase raw(w, out, in, batch, rng, xType);
    struct Chunks {
      int64_t k, batch, panels;
      int32_t threads;
    };
    for (int32_t rows : {1, 2, 3, 4, 5, 6}) {
      for (Chunks chunks : {Chunks{1, 1, 1, 1}, Chunks{7, 6, 2, 2}, Chunks{1000, 1000, 8, 2}}) {
        kernels::DenseGemmPlan plan;
        plan.lanes = lanes;
        plan.panelWidth = 2 * lanes;
        plan.tileRows = rows;
        plan.kChunk = chunks.k;
        plan.batchChunk = chunks.batch;
        plan.panelsPerBlock = chunks.panels;
        plan.threads = chunks.threads;
        SCOPED_TRACE("batch " + std::to_string(batch) + " plan " + plan.toString());
        raw.check(
            [&](const kernels::GemmArgs& args) { kernels::runDenseGemm(packed, args, plan); });
      }
    }
  }
}

TEST(DenseGemm, ForcedPlansMatchTheReference) {
  SF_SEEDED_RNG(rng);
  const int64_t out = 75, in = 333;
  // f16 weights (accumulated in f32) and f64 weights (f64 throughout, checked to 1e-12).
  for (DType wType : {DType::kF16, DType::kF64}) {
    SCOPED_TRACE(dtypeName(wType));
    checkForcedPlans(out, in, wType, rng);
  }
}

TEST(DenseGemmPlan, ALongKWhosePanelFitsAnEighthOfL2IsOneChunk) {
  support::CacheSizes caches;
  caches.l1d = 48 << 10;
  caches.l2 = 2 << 20;
  // AVX-512 f32 panels (32 outputs, 128 bytes a step): the L1 chunk is 192 steps.
  EXPECT_EQ(kernels::chooseDenseGemmPlan({4096, 384, 1536}, 16, caches, 2).kChunk, 1536);
  EXPECT_EQ(kernels::chooseDenseGemmPlan({4096, 3072, 768}, 16, caches, 2).kChunk, 768);
  // Two chunks' worth of k, and a panel over an eighth of L2, keep the L1 chunk.
  EXPECT_EQ(kernels::chooseDenseGemmPlan({4096, 1536, 384}, 16, caches, 2).kChunk, 192);
  EXPECT_EQ(kernels::chooseDenseGemmPlan({4096, 768, 3072}, 16, caches, 2).kChunk, 192);
  // A smaller L2 (1 MiB: an eighth is 128 KiB, under 1536 steps of 128 bytes).
  caches.l2 = 1 << 20;
  EXPECT_EQ(kernels::chooseDenseGemmPlan({4096, 384, 1536}, 16, caches, 2).kChunk, 192);
}

TEST(DenseGemmPlan, GemvStreamsGemmChunksFitTheCaches) {
  support::CacheSizes caches;
  caches.l1d = 32 << 10;
  caches.l2 = 512 << 10;
  // f32 accumulators (4 bytes) and the f64 layers' (8 bytes).
  for (auto [lanes, bytes] : {std::pair{4, 4}, {8, 4}, {16, 4}, {2, 8}, {4, 8}, {8, 8}}) {
    for (int64_t batch : {1, 3, 6, 7, 8, 32, 100, 512, 4096}) {
      for (int64_t in : {1, 70, 4096, 11008}) {
        const kernels::DenseGemmPlan plan =
            kernels::chooseDenseGemmPlan({batch, 4096, in}, lanes, caches, 2, bytes);
        SCOPED_TRACE(plan.toString() + " accumulators of " + std::to_string(bytes) + " bytes");
        EXPECT_EQ(plan.panelWidth, 2 * lanes);
        EXPECT_GE(plan.kChunk, 1);
        EXPECT_LE(plan.kChunk, in) << "never past the matrix";
        EXPECT_GE(plan.batchChunk, std::min<int64_t>(batch, plan.tileRows));
        if (batch <= plan.tileRows) {
          // One register tile: the weights stream once, start to end.
          EXPECT_EQ(plan.kChunk, in);
          EXPECT_EQ(plan.batchChunk, batch);
          continue;
        }
        EXPECT_EQ(plan.batchChunk % plan.tileRows, 0);
        EXPECT_LE(plan.batchChunk, batch + plan.tileRows - 1) << "never past the batch";
        if (in >= 4096) {
          EXPECT_LE(plan.kChunk * plan.panelWidth * bytes, caches.l1d / 2);
          EXPECT_LE(plan.kChunk * plan.batchChunk * bytes, caches.l2 / 2 + plan.kChunk * bytes * 6);
        }
      }
    }
  }
  // Large layers get several blocks per thread for dynamic balancing; tiny ones one thread.
  EXPECT_EQ(kernels::chooseDenseGemmPlan({1, 37, 70}, 8, caches, 2).threads, 1);
  EXPECT_EQ(kernels::chooseDenseGemmPlan({8, 256, 256}, 8, caches, 2).threads, 2);
  for (int32_t threads : {1, 2, 8}) {
    const kernels::DenseGemmPlan plan =
        kernels::chooseDenseGemmPlan({1, 4096, 4096}, 8, caches, threads);
    const int64_t blocks = (4096 / 16 + plan.panelsPerBlock - 1) / plan.panelsPerBlock;
    EXPECT_GE(blocks, 4 * threads) << plan.toString();
  }
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
  // 8 outputs padded to one panel of 2 × lanes, 64 inputs, 2 bytes each.
  EXPECT_EQ(layer.weightBytes(), 2 * kernels::denseGemmLanes() * 64 * 2);
  EXPECT_NE(layer.describe(1).find("gemv"), std::string::npos) << layer.describe(1);
  EXPECT_NE(layer.describe(512).find("gemm"), std::string::npos) << layer.describe(512);
  EXPECT_EQ(layer.describe(1).find(kernels::denseGemmTargetName()), 0u) << layer.describe(1);
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
  // More threads than OpenMP may start ended the process in the first forward.
  expectError([&] { DenseLinear(ok, {}, Epilogue{}, DenseLinearOptions{INT32_MAX}); },
              ErrorCode::kInvalidArgument, "threads is 2147483647; at most");
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

namespace sparseflow {
namespace {

/// y = relu(x · Wᵀ + bias) in float64 (x batch × in, W out × in).
std::vector<double> reluLayerReference(const std::vector<double>& x, const std::vector<double>& w,
                                       const std::vector<double>& bias, int64_t batch, int64_t out,
                                       int64_t in) {
  std::vector<double> y(static_cast<size_t>(batch * out));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out; ++o) {
      double v = bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < in; ++k)
        v += x[static_cast<size_t>(n * in + k)] * w[static_cast<size_t>(o * in + k)];
      y[static_cast<size_t>(n * out + o)] = v > 0 ? v : 0;
    }
  }
  return y;
}

/// One layer type: a call's bias (EpilogueOperands::bias) replaces the one it was built with, for
/// that call only; a layer without a bias refuses one.
template <class Layer, typename T>
void checkPerCallBias(std::mt19937_64& rng) {
  constexpr DType kType = std::is_same_v<T, double> ? DType::kF64 : DType::kF32;
  const int64_t out = 24, in = 32;
  std::vector<double> w = randomDense(out * in, kType, rng).second;
  static const int kKeep[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  for (int64_t g = 0; g < out * in; g += 4) {  // 2:4 for both layers
    const int* keep = kKeep[g / 4 % 6];
    for (int t = 0; t < 4; ++t) {
      if (t != keep[0] && t != keep[1]) w[static_cast<size_t>(g + t)] = 0;
    }
  }
  const Tensor packed =
      fromDense({out, in}, w.data(),
                Format::parse(std::is_same_v<Layer, NMLinear> ? "2:4" : "dense", 2), kType);
  const std::vector<double> built = randomDense(out, kType, rng).second,
                            given = randomDense(out, kType, rng).second;
  const std::vector<T> builtT(built.begin(), built.end()), givenT(given.begin(), given.end());
  const Layer layer(packed, LayerBias(builtT), Epilogue::parse("bias+relu"));
  for (int64_t batch : {int64_t{1}, int64_t{5}, int64_t{40}}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::vector<double> x = randomDense(batch * in, kType, rng).second;
    const std::vector<T> xT(x.begin(), x.end());
    std::vector<T> y(static_cast<size_t>(batch * out));
    EpilogueOperands more;
    more.bias = givenT.data();
    for (const auto* bias : {&given, &built}) {
      layer.forward(xT.data(), kType, batch, y.data(), more);
      const std::vector<double> want = reluLayerReference(x, w, *bias, batch, out, in);
      for (size_t e = 0; e < y.size(); ++e)
        ASSERT_NEAR(y[e], want[e], 1e-5 * (1 + std::abs(want[e]))) << "element " << e;
      more.bias = nullptr;  // the next call: the layer's own bias again
    }
  }
  const Layer noBias(packed, LayerBias(std::vector<T>{}), Epilogue::parse("relu"));
  std::vector<T> x(static_cast<size_t>(in)), y(static_cast<size_t>(out));
  EpilogueOperands more;
  more.bias = givenT.data();
  expectError([&] { noBias.forward(x.data(), kType, 1, y.data(), more); },
              ErrorCode::kInvalidArgument, "the layer's epilogue has none");
  more.bias = y.data();  // a bias in y's memory: read after rows of y were stored
  expectError([&] { layer.forward(x.data(), kType, 1, y.data(), more); },
              ErrorCode::kInvalidArgument, "this call's bias overlaps y");
}

TEST(LinearLayers, ACallsBiasReplacesTheLayersForThatCall) {
  SF_SEEDED_RNG(rng);
  checkPerCallBias<DenseLinear, float>(rng);
  checkPerCallBias<DenseLinear, double>(rng);
  checkPerCallBias<NMLinear, float>(rng);
  checkPerCallBias<NMLinear, double>(rng);
}

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

// The GEMV from unpacked row-major weights (what dense_linear runs for one row of x): shapes
// below, at and above a vector and a block of 64 outputs, f32 and f64, on every target, plain,
// with bias + gelu + scale + a residual before the activation, and with relu + clamp + a residual
// after it, also on x holding NaN and inf; against the float64 dot product and epilogue.
TEST(DenseGemvRows, MatchesFloat64OnEveryTarget) {
  SF_SEEDED_RNG(rng);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  testing::forEachTarget(
      [] { return kernels::denseGemmTargetName(); },
      [&](bool) {
        for (DType type : {DType::kF32, DType::kF64}) {
          const bool f64 = type == DType::kF64;
          auto round = [&](double v) {
            return f64 ? v : static_cast<double>(static_cast<float>(v));
          };
          for (const auto& [out, in] :
               {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {64, 70}, {130, 1000}}) {
            for (int variant = 0; variant < 4; ++variant) {
              SCOPED_TRACE(std::string(dtypeName(type)) + " " + std::to_string(out) + " x " +
                           std::to_string(in) + " variant " + std::to_string(variant));
              std::vector<double> w(static_cast<size_t>(out * in)), x(static_cast<size_t>(in)),
                  bias(static_cast<size_t>(out)), r(static_cast<size_t>(out));
              for (auto* v : {&w, &x, &bias, &r}) {
                for (double& e : *v) e = round(value(rng));
              }
              if (variant == 3 && in > 3) {
                x[1] = std::nan("");
                x[3] = HUGE_VAL;
              }
              std::vector<float> wf(w.begin(), w.end()), xf(x.begin(), x.end()),
                  bf(bias.begin(), bias.end()), rf(r.begin(), r.end()),
                  yf(static_cast<size_t>(out), -7.0f);
              std::vector<double> yd(static_cast<size_t>(out), -7.0);
              kernels::GemmArgs args;
              args.x = f64 ? static_cast<const void*>(x.data()) : xf.data();
              args.xType = type;
              args.batch = 1;
              args.y = f64 ? static_cast<void*>(yd.data()) : yf.data();
              args.yType = type;
              if (variant == 1) {
                if (f64) {
                  args.biasF64 = bias.data();
                } else {
                  args.bias = bf.data();
                }
                args.activation = Activation::kGeluErf;
                args.scale = 0.5;
                args.residual = f64 ? static_cast<const void*>(r.data()) : rf.data();
              } else if (variant == 2) {
                args.activation = Activation::kRelu;
                args.clampHigh = 0.3;
                args.residual = f64 ? static_cast<const void*>(r.data()) : rf.data();
                args.residualAfterActivation = true;
              }
              kernels::runDenseGemvRows(f64 ? static_cast<const void*>(w.data()) : wf.data(), type,
                                        out, in, args, 2);
              for (int64_t o = 0; o < out; ++o) {
                double acc = 0, magnitude = 0;
                for (int64_t k = 0; k < in; ++k) {
                  acc += w[static_cast<size_t>(o * in + k)] * x[static_cast<size_t>(k)];
                  magnitude +=
                      std::abs(w[static_cast<size_t>(o * in + k)] * x[static_cast<size_t>(k)]);
                }
                const double want =
                    args.epilogueF64(acc, variant == 1 ? bias[static_cast<size_t>(o)] : 0.0, o);
                const double got = f64 ? yd[static_cast<size_t>(o)] : yf[static_cast<size_t>(o)];
                if (std::isnan(want)) {
                  ASSERT_TRUE(std::isnan(got)) << "output " << o << ": " << got;
                } else {
                  ASSERT_NEAR(got, want, (f64 ? 1e-12 : 1e-5) * (1 + magnitude + std::abs(want)))
                      << "output " << o;
                }
              }
            }
          }
        }
      });
}

}  // namespace
}  // namespace sparseflow
