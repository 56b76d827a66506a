// The epilogue registry: names round-trip, unknown names are refused, and every SIMD activation
// matches its float64 reference on every compiled target.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "hwy/targets.h"
#include "kernels/epilogue_apply.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/error.h"

namespace sparseflow {
namespace {

TEST(Epilogue, NamesRoundTrip) {
  const std::vector<Epilogue> all = Epilogue::all();
  EXPECT_EQ(all.size(), 2 * allActivations().size());
  for (const Epilogue& e : all) EXPECT_EQ(Epilogue::parse(e.toString()), e) << e.toString();
  EXPECT_EQ(Epilogue::parse("gelu"), (Epilogue{false, Activation::kGeluErf}));
  EXPECT_EQ(Epilogue::parse("bias+gelu").toString(), "bias+gelu_erf");
  EXPECT_EQ(Epilogue::parse("none"), Epilogue{});
  EXPECT_EQ(std::string(activationName(Activation::kSilu)), "silu");
}

TEST(Epilogue, UnknownNamesListTheKnownOnes) {
  for (const char* bad : {"swish", "bias+", "bias+none", "", "relu+bias"}) {
    try {
      (void)Epilogue::parse(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("is not known (known: none, bias, gelu, relu"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Epilogue, SimdActivationsMatchTheReferenceOnEveryTarget) {
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i) xs.push_back(static_cast<float>(i) * 0.005f);
  for (float v : {-1e10f, -100.0f, -88.5f, -30.0f, 30.0f, 88.5f, 100.0f, 1e10f, 0.0f, -0.0f}) {
    xs.push_back(v);
  }
  std::vector<float> bias(xs.size());
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = (i % 3 == 0) ? 0.25f : -0.125f;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (Activation a : allActivations()) {
      for (bool withBias : {false, true}) {
        SCOPED_TRACE(std::string(hwy::TargetName(target)) + " " + activationName(a) +
                     (withBias ? " with bias" : ""));
        // Odd counts exercise the vector tail.
        for (size_t count : {xs.size(), size_t{1}, size_t{7}, size_t{17}}) {
          std::vector<float> y(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(count));
          kernels::applyEpilogueF32(a, y.data(), withBias ? bias.data() : nullptr,
                                    static_cast<int64_t>(count));
          for (size_t i = 0; i < count; ++i) {
            const double in = static_cast<double>(xs[i]) + (withBias ? bias[i] : 0.0);
            const double expect = activationReference(a, static_cast<float>(in));
            const double tolerance = 2e-6 * std::max(1.0, std::abs(expect)) + 2e-7 * std::abs(in);
            ASSERT_NEAR(y[i], expect, tolerance) << "x = " << in;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// NaN and ±inf in the input or the bias, as torch: relu(NaN) is NaN (vmaxps returned 0),
// silu/gelu(-inf) are NaN (the clamped exp gave -inf and 0), NaN never becomes a number.
TEST(Epilogue, SimdActivationsFollowTorchAtNanAndInfOnEveryTarget) {
  const float nan = std::nanf(""), inf = HUGE_VALF;
  // torch 1.13 at [NaN, inf, -inf] per activation (none, relu, silu, gelu_erf, gelu_tanh).
  const std::map<Activation, std::vector<double>> torch = {
      {Activation::kNone, {NAN, HUGE_VAL, -HUGE_VAL}}, {Activation::kRelu, {NAN, HUGE_VAL, 0}},
      {Activation::kSilu, {NAN, HUGE_VAL, NAN}},       {Activation::kGeluErf, {NAN, HUGE_VAL, NAN}},
      {Activation::kGeluTanh, {NAN, HUGE_VAL, NAN}},
  };
  // Sixteen lanes of specials among ordinary values, then a tail; the bias adds its own.
  std::vector<float> xs = {nan, inf,  -inf, 1e30f,  -1e30f, -0.0f, 0.0f, 3.0f, -3.0f, 0.5f,
                           nan, -inf, inf,  -87.9f, 88.9f,  -1.0f, 2.0f, -inf, nan};
  std::vector<float> bias(xs.size(), 0.5f);
  bias[7] = nan;
  bias[8] = inf;
  bias[9] = -inf;
  bias[16] = -inf;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const auto& [a, special] : torch) {
      for (bool withBias : {false, true}) {
        SCOPED_TRACE(std::string(hwy::TargetName(target)) + " " + activationName(a) +
                     (withBias ? " with bias" : ""));
        std::vector<float> y = xs;
        kernels::applyEpilogueF32(a, y.data(), withBias ? bias.data() : nullptr,
                                  static_cast<int64_t>(y.size()));
        for (size_t i = 0; i < xs.size(); ++i) {
          const float in = withBias ? xs[i] + bias[i] : xs[i];
          double expect = activationReference(a, in);
          if (!withBias && i < 3) {  // torch's own values pin the reference
            EXPECT_TRUE(std::isnan(special[i]) ? std::isnan(expect) : expect == special[i]);
          }
          if (std::isnan(expect)) {
            EXPECT_TRUE(std::isnan(y[i])) << "x = " << in << ": got " << y[i];
          } else if (std::isinf(expect)) {
            EXPECT_EQ(y[i], expect) << "x = " << in;
          } else {
            EXPECT_NEAR(y[i], expect, 2e-6 * std::max(1.0, std::abs(expect))) << "x = " << in;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

/// softmax in float64 by the formula the kernel language writes out: exp(x - max) / sum, where
/// the max is NaN when any element is NaN.
std::vector<double> softmaxReference(const std::vector<double>& x) {
  double m = -INFINITY;
  bool nan = false;
  for (double v : x) {
    nan = nan || std::isnan(v);
    m = v > m ? v : m;
  }
  if (nan) m = NAN;
  std::vector<double> e(x.size());
  double sum = 0;
  for (size_t t = 0; t < x.size(); ++t) sum += e[t] = std::exp(x[t] - m);
  for (double& v : e) v /= sum;
  return e;
}

TEST(Epilogue, SoftmaxRowsMatchTheFormulaOnEveryTarget) {
  // Rows of every length around the vector widths, values far apart (no exp overflows: the max
  // is subtracted first), and rows with NaN, ±inf and all -inf, as torch.softmax gives them.
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  std::uniform_real_distribution<double> u(-30, 30);
  std::vector<std::vector<double>> rows;
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<double> row(static_cast<size_t>(n));
    for (double& v : row) v = static_cast<float>(u(rng));
    rows.push_back(row);
  }
  rows.push_back({1000, 999, -1000, 3});
  rows.push_back(std::vector<double>(40, 88.5));
  const double inf = HUGE_VAL;
  for (const std::vector<double>& special :
       {std::vector<double>{1, NAN, 2},
        {inf, 1, 2},
        {-inf, 1, 2},
        {-inf, -inf, -inf},
        {inf, inf},
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NAN, 0}}) {
    rows.push_back(special);
  }
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const std::vector<double>& row : rows) {
      SCOPED_TRACE("row of " + std::to_string(row.size()));
      const std::vector<double> want = softmaxReference(row);
      std::vector<float> f(row.begin(), row.end());
      std::vector<double> d = row;
      // Three copies of the row: the rows after the first start unaligned.
      std::vector<float> three;
      for (int r = 0; r < 3; ++r) three.insert(three.end(), f.begin(), f.end());
      kernels::applyRowEpilogue(kernels::RowEpilogue::kSoftmax, three.data(), 3,
                                static_cast<int64_t>(row.size()));
      kernels::applyRowEpilogue(kernels::RowEpilogue::kSoftmax, d.data(), 1,
                                static_cast<int64_t>(row.size()));
      for (size_t t = 0; t < row.size(); ++t) {
        for (int r = 0; r < 3; ++r) {
          const float got = three[r * row.size() + t];
          if (std::isnan(want[t])) {
            EXPECT_TRUE(std::isnan(got)) << "element " << t;
          } else {
            // f32's rounding of x - max (up to 60 here) is relative 6e-8 of it in the exponent.
            EXPECT_NEAR(got, want[t], 1e-5 * want[t] + 1e-30) << "element " << t;
          }
        }
        if (std::isnan(want[t])) {
          EXPECT_TRUE(std::isnan(d[t])) << "f64 element " << t;
        } else {
          EXPECT_NEAR(d[t], want[t], 1e-15) << "f64 element " << t;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

/// layer_norm in float64: (x - mean) / sqrt(mean((x - mean)^2) + 1e-5).
std::vector<double> layerNormReference(const std::vector<double>& x) {
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y;
  for (double v : x) y.push_back((v - mean) / std::sqrt(var + 1e-5));
  return y;
}

TEST(Epilogue, LayerNormRowsMatchTheFormulaOnEveryTarget) {
  // Rows of every length around the vector widths, rows of one repeated value (normalized to 0:
  // the mean's rounding must not show, amplified by 1/sqrt(1e-5)), a large offset with a small
  // spread, and rows with NaN or ±inf (NaN throughout).
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  std::uniform_real_distribution<double> u(-3, 3);
  std::vector<std::vector<double>> rows;
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<double> row(static_cast<size_t>(n));
    for (double& v : row) v = static_cast<float>(u(rng));
    rows.push_back(row);
    rows.push_back(std::vector<double>(static_cast<size_t>(n), static_cast<float>(u(rng))));
  }
  std::vector<double> offset(48);
  for (double& v : offset) v = static_cast<float>(1000 + u(rng));
  rows.push_back(offset);
  const double inf = HUGE_VAL;
  for (const std::vector<double>& special :
       {std::vector<double>{1, NAN, 2},
        {inf, 1, 2},
        {-inf, 1, 2},
        {inf, -inf},
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, inf, 0}}) {
    rows.push_back(special);
  }
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const std::vector<double>& row : rows) {
      SCOPED_TRACE("row of " + std::to_string(row.size()) + " starting " + std::to_string(row[0]));
      const std::vector<double> want = layerNormReference(row);
      std::vector<float> f(row.begin(), row.end());
      std::vector<double> d = row;
      kernels::applyRowEpilogue(kernels::RowEpilogue::kLayerNorm, f.data(), 1,
                                static_cast<int64_t>(row.size()));
      kernels::applyRowEpilogue(kernels::RowEpilogue::kLayerNorm, d.data(), 1,
                                static_cast<int64_t>(row.size()));
      for (size_t t = 0; t < row.size(); ++t) {
        if (std::isnan(want[t])) {
          EXPECT_TRUE(std::isnan(f[t]) && std::isnan(d[t])) << "element " << t;
          continue;
        }
        // f32 rounds each value and the mean: relative 1e-7 of the row's magnitude, over its
        // standard deviation (the 1000-offset row: ~1e-4 / 1.7).
        EXPECT_NEAR(f[t], want[t], 2e-4 * (1 + std::abs(want[t]))) << "element " << t;
        EXPECT_NEAR(d[t], want[t], 1e-10) << "f64 element " << t;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A model's layer norm (kernels::layerNormRows): any eps (BERT's 1e-12), a scale and a shift per
// column, several rows in parallel, widths below and around a vector, against float64 on every
// target.
TEST(RowEpilogue, LayerNormRowsWithScaleShiftAndEpsMatchFloat64) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-3, 3);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (int64_t cols : {1, 3, 15, 16, 17, 384}) {
      for (double eps : {1e-5, 1e-12}) {
        const int64_t rows = 200;  // 200 x 384 is enough to run in parallel
        std::vector<double> x(static_cast<size_t>(rows * cols)), gamma(static_cast<size_t>(cols)),
            beta(static_cast<size_t>(cols));
        for (double& v : x) v = static_cast<float>(u(rng));
        for (double& v : gamma) v = static_cast<float>(u(rng));
        for (double& v : beta) v = static_cast<float>(u(rng));
        std::vector<float> y(x.begin(), x.end()), g(gamma.begin(), gamma.end()),
            b(beta.begin(), beta.end());
        kernels::layerNormRows(y.data(), rows, cols, static_cast<float>(eps), g.data(), b.data());
        for (int64_t r = 0; r < rows; ++r) {
          double mean = 0, var = 0;
          for (int64_t c = 0; c < cols; ++c) mean += x[static_cast<size_t>(r * cols + c)] / cols;
          for (int64_t c = 0; c < cols; ++c) {
            const double d = x[static_cast<size_t>(r * cols + c)] - mean;
            var += d * d / cols;
          }
          for (int64_t c = 0; c < cols; ++c) {
            const size_t i = static_cast<size_t>(r * cols + c);
            const double want = (x[i] - mean) / std::sqrt(var + static_cast<float>(eps)) *
                                    gamma[static_cast<size_t>(c)] +
                                beta[static_cast<size_t>(c)];
            ASSERT_NEAR(y[i], want, 1e-4 * (1 + std::abs(want)))
                << "row " << r << " of " << cols << ", eps " << eps;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace sparseflow
