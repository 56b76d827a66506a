// Kernel::run's caches of derived data (the 2:4 layer's packed weights and bias) follow the
// contents of the inputs, never their addresses: changed in place, freed and reallocated at the
// same address, or caller memory changed behind the library's back, the result is always fresh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "common/random_coo.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

constexpr int64_t kBatch = 5, kOut = 24, kIn = 64;

std::vector<double> randomValues(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

/// relu(X W^T + bias) in float64 from the tensors' own values.
std::vector<double> reference(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const std::vector<double> xd = toDense(x), wd = toDense(w), bd = toDense(bias);
  std::vector<double> y(static_cast<size_t>(kBatch * kOut));
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t o = 0; o < kOut; ++o) {
      double sum = bd[static_cast<size_t>(o)];
      for (int64_t i = 0; i < kIn; ++i) {
        sum += xd[static_cast<size_t>(b * kIn + i)] * wd[static_cast<size_t>(o * kIn + i)];
      }
      y[static_cast<size_t>(b * kOut + o)] = std::max(sum, 0.0);
    }
  }
  return y;
}

void expectNear(const Tensor& y, const std::vector<double>& expect, const char* round) {
  const std::vector<double> got = toDense(y);
  ASSERT_EQ(got.size(), expect.size()) << round;
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_NEAR(got[k], expect[k], 1e-4 * (1 + std::fabs(expect[k]))) << round << ", element " << k;
  }
}

Tensor pruned24(std::mt19937_64& rng) {
  std::vector<double> w = randomValues(kOut * kIn, rng);
  Tensor dense = fromDense({kOut, kIn}, w.data(), Format::parse("dense", 2), DType::kF32);
  return nm::sparsify(dense, {2, 4}).compressed;
}

Tensor denseTensor(const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v = randomValues(n, rng);
  const auto rank = static_cast<int32_t>(shape.size());
  return fromDense(shape, v.data(), Format::parse("dense", rank), DType::kF32);
}

class DerivedCaches : public ::testing::TestWithParam<bool> {};

TEST_P(DerivedCaches, TheTwoFourLayerNeverRunsOnStaleWeightsOrBias) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  KernelOptions options;
  options.formats = {{"W", "2:4"}};
  options.handTuned = GetParam();
  Kernel k = Kernel::compile("Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))", options);
  Tensor x = denseTensor({kBatch, kIn}, rng);
  Tensor w = pruned24(rng);
  Tensor bias = denseTensor({kOut}, rng);
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &bias}}), reference(x, w, bias), "first");

  // The weights' values doubled in place (same buffer, same address).
  float* wv = w.mutableValues().as<float>();
  for (int64_t i = 0; i < w.values().size(); ++i) wv[i] *= 2;
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &bias}}), reference(x, w, bias), "in place");

  // Fresh bias and weight tensors, allocated after the old ones are freed: the allocator often
  // hands out the same addresses.
  for (int round = 0; round < 10; ++round) {
    bias = denseTensor({kOut}, rng);
    w = pruned24(rng);
    expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &bias}}), reference(x, w, bias), "fresh");
  }

  // Caller memory viewed without a copy and changed without any accessor call.
  std::vector<float> biasMemory(kOut);
  for (float& v : biasMemory) v = static_cast<float>(rng() % 100) / 50.0f;
  Tensor viewed({kOut}, DType::kF32, Format::parse("dense", 1), std::vector<LevelStorage>(1),
                Buffer::view(DType::kF32, biasMemory.data(), kOut));
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &viewed}}), reference(x, w, viewed), "view");
  for (float& v : biasMemory) v = -v;
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &viewed}}), reference(x, w, viewed),
             "view changed");

  // A writer outside the library (a Python array, a C pointer) holding the weights open.
  std::shared_ptr<void> writer = w.values().openExternalWriter();
  float* raw = static_cast<float*>(const_cast<void*>(w.values().data()));
  raw[0] += 3;
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &bias}}), reference(x, w, bias), "external");
  raw[1] -= 3;
  writer.reset();
  expectNear(k.run({{"X", &x}, {"W", &w}, {"bias", &bias}}), reference(x, w, bias),
             "external released");
}

INSTANTIATE_TEST_SUITE_P(HandTunedAndGenerated, DerivedCaches, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "handTuned" : "generated"; });

}  // namespace
}  // namespace sparseflow
