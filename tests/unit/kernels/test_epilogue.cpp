// The epilogue registry: names round-trip, unknown names are refused, and every SIMD activation
// matches its float64 reference on every compiled target.
#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace sparseflow
