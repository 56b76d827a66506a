// The C ABI's n:m entry points: sparsify's impact report and the 2:4 linear layer against a
// float64 loop, with the errors a C caller can cause; linked against libsparseflow.so only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

/// A dense f32 out × in matrix in [-1, 1) (no zeros), from a fixed seed.
std::vector<float> randomMatrix(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> m(static_cast<size_t>(rows * cols));
  for (float& v : m) {
    do v = value(rng);
    while (v == 0.0f);
  }
  return m;
}

float bf16ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

/// Truncates to bf16 (exact for the values the tests then use).
uint16_t floatToBf16(float f) {
  uint32_t word;
  std::memcpy(&word, &f, 4);
  return static_cast<uint16_t>(word >> 16);
}

double activation(const std::string& name, double v) {
  if (name == "relu") return v > 0 ? v : 0;
  if (name == "silu") return v / (1 + std::exp(-v));
  if (name == "gelu") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  if (name == "gelu_tanh") {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

/// The layer in float64: y = act(x · Wᵀ + b) over the pruned weights.
std::vector<double> reference(const std::vector<double>& w, const std::vector<float>& bias,
                              const std::vector<double>& x, int64_t batch, int64_t out, int64_t in,
                              const std::string& act) {
  std::vector<double> y(static_cast<size_t>(batch * out));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias.empty() ? 0.0 : bias[o];
      for (int64_t k = 0; k < in; ++k) acc += x[b * in + k] * w[o * in + k];
      y[b * out + o] = activation(act, acc);
    }
  }
  return y;
}

/// Dense f32 weights → 2:4 tensor, with the impact and the pruned weights as doubles.
struct Pruned {
  TensorPtr compressed;
  sparseflow_nm_impact impact{};
  std::vector<double> dense;
};

Pruned prune24(SparseFlowContext* context, const std::vector<float>& w, int64_t out, int64_t in) {
  Pruned p;
  const int64_t shape[2] = {out, in};
  SparseFlowTensor* raw = nullptr;
  EXPECT_EQ(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 2, shape, w.data(),
                                           out * in, &raw),
            SPARSEFLOW_STATUS_OK);
  TensorPtr dense(raw);
  EXPECT_EQ(sparseflow_nm_sparsify(context, dense.get(), "2:4", &raw, &p.impact),
            SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  p.compressed.reset(raw);
  p.dense = denseOf(p.compressed.get());
  return p;
}

TEST(CapiSparsify, ImpactMatchesAFloat64Count) {
  ContextPtr context = makeContext();
  const int64_t out = 6, in = 10;  // a partial last group
  const std::vector<float> w = randomMatrix(out, in, 7);
  Pruned p = prune24(context.get(), w, out, in);
  double maxError = 0, sumError = 0, sumSquares = 0, sumErrorSquares = 0, kept = 0, total = 0;
  int64_t keptCount = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double e = std::fabs(w[i] - p.dense[i]);
    maxError = std::max(maxError, e);
    sumError += e;
    sumErrorSquares += e * e;
    sumSquares += static_cast<double>(w[i]) * w[i];
    total += std::fabs(w[i]);
    if (p.dense[i] != 0) kept += std::fabs(w[i]), ++keptCount;
  }
  EXPECT_EQ(p.impact.total, out * in);
  EXPECT_EQ(p.impact.kept, keptCount);
  EXPECT_EQ(keptCount, out * (2 + 2 + 2));  // groups 0..3, 4..7, 8..9
  EXPECT_DOUBLE_EQ(p.impact.max_abs_error, maxError);
  EXPECT_NEAR(p.impact.mean_abs_error, sumError / (out * in), 1e-12);
  EXPECT_NEAR(p.impact.relative_frobenius_error, std::sqrt(sumErrorSquares / sumSquares), 1e-12);
  EXPECT_NEAR(p.impact.kept_magnitude_fraction, kept / total, 1e-12);
}

TEST(CapiSparsify, Errors) {
  ContextPtr context = makeContext();
  std::vector<float> w = randomMatrix(2, 8, 1);
  const int64_t shape[2] = {2, 8};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              w.data(), 16, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), dense.get(), "4:2", &raw, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "sparseflow_nm_sparsify", "4:2");
  EXPECT_EQ(raw, nullptr);
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'impact' is null");
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), dense.get(), nullptr, &raw, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'pattern' is null");
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), nullptr, "2:4", &raw, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'dense' is null");
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(nullptr, dense.get(), "2:4", &raw, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'context' is null");
  w[9] = std::numeric_limits<float>::quiet_NaN();  // row 1, column 1
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "row 1", "column 1");
  EXPECT_EQ(raw, nullptr);
}

struct LayerCase {
  int64_t out, in, batch;
  const char* epilogue;
  const char* activation;
  bool bias;
};

TEST(CapiLinear, MatchesAFloat64LoopForEveryEpilogue) {
  const std::vector<LayerCase> cases = {
      {8, 16, 1, "none", "none", false},
      {8, 16, 3, "bias+gelu", "gelu", true},
      {24, 36, 5, "relu", "relu", false},
      {16, 64, 17, "bias+silu", "silu", true},
      {40, 48, 33, "gelu_tanh", "gelu_tanh", false},
      {7, 9, 2, "bias", "none", true},
  };
  for (int32_t threads : {1, 2}) {
    ContextPtr context = makeContext(threads);
    for (const LayerCase& c : cases) {
      SCOPED_TRACE(std::to_string(c.out) + "x" + std::to_string(c.in) + " batch " +
                   std::to_string(c.batch) + " " + c.epilogue + " threads " +
                   std::to_string(threads));
      Pruned w = prune24(context.get(), randomMatrix(c.out, c.in, c.out * 131 + c.in), c.out, c.in);
      std::vector<float> bias;
      if (c.bias) bias = randomMatrix(1, c.out, 99);
      SparseFlowLinear* raw = nullptr;
      ASSERT_SF_OK(sparseflow_linear_create(context.get(), w.compressed.get(),
                                            c.bias ? bias.data() : nullptr,
                                            static_cast<int64_t>(bias.size()), c.epilogue, &raw));
      LinearPtr layer(raw);
      const std::vector<float> x = randomMatrix(c.batch, c.in, c.batch);
      std::vector<float> y(static_cast<size_t>(c.batch * c.out), -1.0f);
      ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, c.batch, x.data(),
                                         c.batch * c.in, y.data(), c.batch * c.out));
      const std::vector<double> expected =
          reference(w.dense, bias, std::vector<double>(x.begin(), x.end()), c.batch, c.out, c.in,
                    c.activation);
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << "element " << i;
      }
    }
  }
}

TEST(CapiLinear, Bf16WeightsWithF32AndBf16Inputs) {
  ContextPtr context = makeContext(1);
  const int64_t out = 16, in = 32, batch = 4;
  const std::vector<float> w32 = randomMatrix(out, in, 5);
  std::vector<uint16_t> w16(w32.size());
  for (size_t i = 0; i < w32.size(); ++i) w16[i] = floatToBf16(w32[i]);
  const int64_t shape[2] = {out, in};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_BF16, 2, shape,
                                              w16.data(), out * in, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  TensorPtr compressed(raw);
  const std::vector<double> pruned = denseOf(compressed.get());
  SparseFlowLinear* layerRaw = nullptr;
  ASSERT_SF_OK(
      sparseflow_linear_create(context.get(), compressed.get(), nullptr, 0, nullptr, &layerRaw));
  LinearPtr layer(layerRaw);
  sparseflow_dtype dtype = -1;
  ASSERT_SF_OK(sparseflow_linear_get_weight_dtype(layer.get(), &dtype));
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_BF16);

  const std::vector<float> x32 = randomMatrix(batch, in, 11);
  std::vector<uint16_t> x16(x32.size());
  std::vector<double> xExact(x32.size());
  for (size_t i = 0; i < x32.size(); ++i) {
    x16[i] = floatToBf16(x32[i]);
    xExact[i] = bf16ToFloat(x16[i]);
  }
  const std::vector<double> expected = reference(pruned, {}, xExact, batch, out, in, "none");
  std::vector<uint16_t> y16(static_cast<size_t>(batch * out));
  ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_BF16, batch, x16.data(),
                                     batch * in, y16.data(), batch * out));
  for (size_t i = 0; i < y16.size(); ++i) {
    EXPECT_NEAR(bf16ToFloat(y16[i]), expected[i], 1e-5 + std::fabs(expected[i]) / 128) << i;
  }
  std::vector<double> x32Exact(x32.begin(), x32.end());
  const std::vector<double> expected32 = reference(pruned, {}, x32Exact, batch, out, in, "none");
  std::vector<float> y32(static_cast<size_t>(batch * out));
  ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x32.data(),
                                     batch * in, y32.data(), batch * out));
  for (size_t i = 0; i < y32.size(); ++i) {
    EXPECT_NEAR(y32[i], expected32[i], 1e-5 * (1 + std::fabs(expected32[i]))) << i;
  }
}

// f64 weights: the layer accumulates in f64 (results to 1e-12, not f32's 1e-5), with f64 and f32
// inputs, batch 1 (a GEMV) and 9.
TEST(CapiLinear, F64WeightsAccumulateInF64) {
  ContextPtr context = makeContext(2);
  const int64_t out = 20, in = 44;
  const std::vector<float> w32 = randomMatrix(out, in, 21);
  std::vector<double> w64(w32.size());
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> tweak(-1e-9, 1e-9);  // not representable in f32
  for (size_t i = 0; i < w32.size(); ++i) w64[i] = w32[i] + tweak(rng);
  const int64_t shape[2] = {out, in};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F64, 2, shape,
                                              w64.data(), out * in, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  TensorPtr compressed(raw);
  const std::vector<double> pruned = denseOf(compressed.get());
  const std::vector<float> bias = randomMatrix(1, out, 7);
  SparseFlowLinear* layerRaw = nullptr;
  ASSERT_SF_OK(sparseflow_linear_create(context.get(), compressed.get(), bias.data(), out,
                                        "bias+gelu", &layerRaw));
  LinearPtr layer(layerRaw);
  sparseflow_dtype dtype = -1;
  ASSERT_SF_OK(sparseflow_linear_get_weight_dtype(layer.get(), &dtype));
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_F64);
  for (int64_t batch : {1, 9}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::vector<double> x(static_cast<size_t>(batch * in));
    for (double& v : x) v = tweak(rng) * 1e9;
    const std::vector<double> expected = reference(pruned, bias, x, batch, out, in, "gelu");
    std::vector<double> y(static_cast<size_t>(batch * out));
    ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F64, batch, x.data(),
                                       batch * in, y.data(), batch * out));
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR(y[i], expected[i], 1e-12 * (1 + std::fabs(expected[i]))) << i;
    }
    const std::vector<float> x32(x.begin(), x.end());
    const std::vector<double> expected32 = reference(
        pruned, bias, std::vector<double>(x32.begin(), x32.end()), batch, out, in, "gelu");
    std::vector<float> y32(static_cast<size_t>(batch * out));
    ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x32.data(),
                                       batch * in, y32.data(), batch * out));
    for (size_t i = 0; i < y32.size(); ++i) {
      ASSERT_NEAR(y32[i], expected32[i], 1e-6 * (1 + std::fabs(expected32[i]))) << i;
    }
  }
}

TEST(CapiLinear, AttributesAndTheLayerOutlivesItsWeights) {
  ContextPtr context = makeContext(3);
  const int64_t out = 12, in = 20;
  auto w = std::make_unique<Pruned>(prune24(context.get(), randomMatrix(out, in, 3), out, in));
  // Rewrap the compressed arrays as caller memory, then free them after creating the layer.
  const void* values = nullptr;
  const uint8_t* meta = nullptr;
  int64_t valueCount = 0, metaBytes = 0;
  ASSERT_SF_OK(sparseflow_tensor_get_values(w->compressed.get(), &values, &valueCount));
  ASSERT_SF_OK(sparseflow_tensor_get_metadata(w->compressed.get(), 1, &meta, &metaBytes));
  auto callerValues = std::make_unique<std::vector<float>>(
      static_cast<const float*>(values), static_cast<const float*>(values) + valueCount);
  auto callerMeta = std::make_unique<std::vector<uint8_t>>(meta, meta + metaBytes);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, out, in, "2:4",
                                           callerValues->data(), valueCount, callerMeta->data(),
                                           metaBytes, &raw));
  TensorPtr weights(raw);
  const std::vector<float> bias(out, 0.25f);
  SparseFlowLinear* layerRaw = nullptr;
  ASSERT_SF_OK(sparseflow_linear_create(context.get(), weights.get(), bias.data(), out, "bias+relu",
                                        &layerRaw));
  LinearPtr layer(layerRaw);
  const std::vector<double> pruned = w->dense;
  weights.reset();
  callerValues.reset();
  callerMeta.reset();
  w.reset();
  sparseflow_context_destroy(context.release());  // the layer copied what it needs

  int64_t outFeatures = 0, inFeatures = 0, bytes = 0;
  int32_t threads = 0;
  ASSERT_SF_OK(sparseflow_linear_get_out_features(layer.get(), &outFeatures));
  ASSERT_SF_OK(sparseflow_linear_get_in_features(layer.get(), &inFeatures));
  ASSERT_SF_OK(sparseflow_linear_get_threads(layer.get(), &threads));
  ASSERT_SF_OK(sparseflow_linear_get_weight_bytes(layer.get(), &bytes));
  EXPECT_EQ(outFeatures, out);
  EXPECT_EQ(inFeatures, in);
  EXPECT_EQ(threads, 3);
  EXPECT_GT(bytes, 0);
  size_t size = 0;
  ASSERT_SF_OK(sparseflow_linear_get_epilogue(layer.get(), nullptr, 0, &size));
  std::string epilogue(size, '\0');
  ASSERT_SF_OK(sparseflow_linear_get_epilogue(layer.get(), epilogue.data(), size, nullptr));
  EXPECT_STREQ(epilogue.c_str(), "bias+relu");
  char plan[256];
  ASSERT_SF_OK(sparseflow_linear_describe(layer.get(), 5, plan, sizeof plan, nullptr));
  EXPECT_NE(std::string(plan).find("threads=3"), std::string::npos) << plan;

  const int64_t batch = 5;
  const std::vector<float> x = randomMatrix(batch, in, 8);
  std::vector<float> y(static_cast<size_t>(batch * out));
  ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x.data(), batch * in,
                                     y.data(), batch * out));
  const std::vector<double> expected =
      reference(pruned, bias, std::vector<double>(x.begin(), x.end()), batch, out, in, "relu");
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(y[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << i;
  }
  // An empty batch does nothing and may pass null arrays.
  ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, 0, nullptr, 0, nullptr, 0));
}

TEST(CapiLinear, CreateErrors) {
  ContextPtr context = makeContext();
  const int64_t out = 4, in = 8;
  Pruned w = prune24(context.get(), randomMatrix(out, in, 2), out, in);
  const std::vector<float> bias(out, 1.0f);
  SparseFlowLinear* raw = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), nullptr, 0, "bias+gelu", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "sparseflow_linear_create", "needs bias");
  EXPECT_EQ(raw, nullptr);
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), bias.data(), out, "relu", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "takes no bias");
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), bias.data(), 3, "bias", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'bias_count' is 3", "4 output features");
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), nullptr, 4, "bias", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'bias' is null");
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), bias.data(), -1, "bias", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'bias_count' is negative");
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), nullptr, 0, "bogus", &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "bogus", "relu");
  EXPECT_SF_ERROR(sparseflow_linear_create(context.get(), nullptr, nullptr, 0, "none", &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'weights' is null");
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), w.compressed.get(), nullptr, 0, "none", nullptr),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'layer' is null");
  // Weights that are not 2:4 are refused with their format named.
  SparseFlowTensor* csrRaw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), w.compressed.get(), "csr", &csrRaw));
  TensorPtr csr(csrRaw);
  EXPECT_SF_ERROR(sparseflow_linear_create(context.get(), csr.get(), nullptr, 0, "none", &raw),
                  SPARSEFLOW_STATUS_NOT_SUPPORTED, "got 'csr'");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiLinear, RunErrors) {
  ContextPtr context = makeContext();
  const int64_t out = 4, in = 8, batch = 2;
  Pruned w = prune24(context.get(), randomMatrix(out, in, 2), out, in);
  SparseFlowLinear* raw = nullptr;
  ASSERT_SF_OK(
      sparseflow_linear_create(context.get(), w.compressed.get(), nullptr, 0, "none", &raw));
  LinearPtr layer(raw);
  std::vector<float> x(batch * in, 1.0f), y(batch * out);
  std::vector<double> x64(batch * in, 1.0), y64(batch * out);
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x.data(), 15, y.data(), 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "sparseflow_linear_run", "'x_count' is 15",
      "16 elements");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x.data(), 16, y.data(), 9),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'y_count' is 9", "8 elements");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, nullptr, 16, y.data(), 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'x' is null");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batch, x.data(), 16, nullptr, 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'y' is null");
  EXPECT_SF_ERROR(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F64, batch, x64.data(), 16,
                                        y64.data(), 8),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "f32 or the weights' dtype");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_I32, batch, x.data(), 16, y.data(), 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'dtype'");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, -1, x.data(), 16, y.data(), 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'batch' is negative");
  EXPECT_SF_ERROR(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, INT64_MAX / 2, x.data(),
                                        16, y.data(), 8),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "2^63");
  EXPECT_SF_ERROR(
      sparseflow_linear_run(nullptr, SPARSEFLOW_DTYPE_F32, batch, x.data(), 16, y.data(), 8),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'layer' is null");
  int64_t features = 0;
  EXPECT_SF_ERROR(sparseflow_linear_get_in_features(layer.get(), nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'in_features' is null");
  EXPECT_SF_ERROR(sparseflow_linear_get_out_features(nullptr, &features),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'layer' is null");
  char small[2];
  EXPECT_SF_ERROR(sparseflow_linear_get_epilogue(layer.get(), small, sizeof small, nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "too small", "epilogue");
  EXPECT_SF_ERROR(sparseflow_linear_describe(layer.get(), -3, nullptr, 0, nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'batch' is negative");
}

}  // namespace
}  // namespace sparseflow_capi_test
