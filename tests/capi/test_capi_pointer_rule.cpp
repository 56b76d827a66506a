// The 2:4 linear kernel through the C ABI with weight and bias arrays that are freed and
// reallocated (often at the same address) or rewritten between tensor handles: every run must
// use the arrays of the handles it is given (issue 12's "pointer rule": packed weights were kept
// by array address, so a new array at a freed one's address reused stale packed weights).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

constexpr int64_t kBatch = 3, kOut = 8, kIn = 16;
constexpr int64_t kSlots = kOut * (kIn / 4) * 2;

/// Caller-owned 2:4 weights (values and packed 2-bit offsets) and bias, in malloc'ed arrays so
/// that freeing and reallocating them tends to reuse the same addresses.
struct CallerArrays {
  float* values = static_cast<float*>(std::malloc(kSlots * sizeof(float)));
  uint8_t* meta = static_cast<uint8_t*>(std::malloc(kSlots * 2 / 8));
  float* bias = static_cast<float*>(std::malloc(kOut * sizeof(float)));
  CallerArrays() = default;
  CallerArrays(const CallerArrays&) = delete;
  CallerArrays& operator=(const CallerArrays&) = delete;
  ~CallerArrays() {
    std::free(values);
    std::free(meta);
    std::free(bias);
  }

  /// New random values, offsets and bias.
  void fill(std::mt19937_64& rng) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    static constexpr uint8_t kPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    std::memset(meta, 0, kSlots * 2 / 8);
    for (int64_t group = 0; group < kSlots / 2; ++group) {
      const auto& pair = kPairs[rng() % 6];
      for (int s = 0; s < 2; ++s) {
        const int64_t slot = group * 2 + s;
        values[slot] = value(rng);
        meta[slot / 4] |= static_cast<uint8_t>(pair[s] << (2 * (slot % 4)));
      }
    }
    for (int64_t o = 0; o < kOut; ++o) bias[o] = value(rng);
  }

  /// W as a dense float64 matrix.
  std::vector<double> denseW() const {
    std::vector<double> w(kOut * kIn, 0.0);
    for (int64_t slot = 0; slot < kSlots; ++slot) {
      const int64_t row = slot / (kIn / 2), group = (slot % (kIn / 2)) / 2;
      const int offset = (meta[slot / 4] >> (2 * (slot % 4))) & 3;
      w[row * kIn + group * 4 + offset] = values[slot];
    }
    return w;
  }
};

/// relu(x · Wᵀ + bias) in float64.
std::vector<double> reference(const CallerArrays& arrays, const std::vector<float>& x) {
  const std::vector<double> w = arrays.denseW();
  std::vector<double> y(kBatch * kOut);
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t o = 0; o < kOut; ++o) {
      double acc = arrays.bias[o];
      for (int64_t i = 0; i < kIn; ++i) acc += double(x[b * kIn + i]) * w[o * kIn + i];
      y[b * kOut + o] = acc > 0 ? acc : 0;
    }
  }
  return y;
}

/// Wraps the arrays in fresh tensor handles, runs the kernel and compares with float64.
void expectRunMatches(SparseFlowContext* context, const SparseFlowKernel* kernel,
                      const CallerArrays& arrays, const std::vector<float>& x, int round) {
  SCOPED_TRACE("round " + std::to_string(round));
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context, SPARSEFLOW_DTYPE_F32, kOut, kIn, "2:4",
                                           arrays.values, kSlots, arrays.meta, kSlots * 2 / 8,
                                           &raw));
  const TensorPtr W(raw);
  const int64_t biasShape[1] = {kOut}, xShape[2] = {kBatch, kIn};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, biasShape,
                                              arrays.bias, kOut, &raw));
  const TensorPtr bias(raw);
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 2, xShape, x.data(),
                                              kBatch * kIn, &raw));
  const TensorPtr X(raw);
  const char* names[3] = {"X", "W", "bias"};
  const SparseFlowTensor* tensors[3] = {X.get(), W.get(), bias.get()};
  ASSERT_SF_OK(
      sparseflow_kernel_run(context, kernel, names, tensors, 3, nullptr, nullptr, 0, &raw));
  const TensorPtr Y(raw);
  const std::vector<double> got = denseOf(Y.get()), want = reference(arrays, x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(got[k], want[k], 1e-5 * (1 + std::fabs(want[k]))) << "element " << k;
  }
}

// Failed on the old address-keyed cache (rounds 1, 17 and 21 reused stale packed weights).
TEST(CapiPointerRule, NewArraysAtFreedAddressesAreUsed) {
  ContextPtr context = makeContext(1);
  SparseFlowKernel* raw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(),
                                         "Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))",
                                         "W=2:4", nullptr, nullptr, &raw));
  std::unique_ptr<SparseFlowKernel, decltype(&sparseflow_kernel_destroy)> kernel(
      raw, &sparseflow_kernel_destroy);
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> x(kBatch * kIn);
  for (float& v : x) v = value(rng);
  for (int round = 0; round < 20; ++round) {
    CallerArrays arrays;  // freed at the end of the round; the next ones often land there
    arrays.fill(rng);
    expectRunMatches(context.get(), kernel.get(), arrays, x, round);
  }
  // The same arrays rewritten in place between two handles (each handle sees them unchanged).
  CallerArrays arrays;
  arrays.fill(rng);
  expectRunMatches(context.get(), kernel.get(), arrays, x, 20);
  arrays.fill(rng);
  expectRunMatches(context.get(), kernel.get(), arrays, x, 21);
}

}  // namespace
}  // namespace sparseflow_capi_test
