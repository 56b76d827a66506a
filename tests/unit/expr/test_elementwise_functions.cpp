// The element-wise function list (support/elementwise_functions.h) against torch's float64 values
// at finite points (the NaN/inf cases are tests/e2e/test_nan_semantics.cpp's), and the names and
// properties every stage derives from it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/ir.h"

namespace sparseflow {
namespace {

const double kNaN = std::nan("");

TEST(ElementwiseFunctions, FormulasGiveTorchsFloat64Values) {
  // torch 1.13, float64: torch.abs, ..., F.silu, F.gelu, F.gelu(approximate="tanh"), ...
  const std::vector<double> x = {-3.0, -0.5, 0.25, 1.0, 2.5};
  const std::map<std::string, std::vector<double>> torch = {
      {"abs", {3.0, 0.5, 0.25, 1.0, 2.5}},
      {"sqrt", {kNaN, kNaN, 0.5, 1.0, 1.5811388300841898}},
      {"exp",
       {0.049787068367863944, 0.6065306597126334, 1.2840254166877414, 2.718281828459045,
        12.182493960703473}},
      {"log", {kNaN, kNaN, -1.3862943611198906, 0.0, 0.9162907318741551}},
      {"relu", {0.0, 0.0, 0.25, 1.0, 2.5}},
      {"silu",
       {-0.14227761953270035, -0.1887703343990727, 0.14054412522144952, 0.7310585786300049,
        2.3103545499468914}},
      {"gelu",
       {-0.00404969409489031, -0.15426876936299344, 0.14967658142073093, 0.841344746068543,
        2.4844758366855597}},
      {"gelu_tanh",
       {-0.0036373920817729943, -0.15428599017485606, 0.149675350701685, 0.8411919906082768,
        2.484915733910001}},
      {"sigmoid",
       {0.04742587317756678, 0.3775406687981454, 0.5621765008857981, 0.7310585786300049,
        0.9241418199787566}},
      {"tanh",
       {-0.9950547536867305, -0.46211715726000974, 0.24491866240370913, 0.7615941559557649,
        0.9866142981514303}},
  };
  int listed = 0;
#define SF_COUNT(...) ++listed;
  SF_ELEMENTWISE_FUNCTIONS(SF_COUNT)
#undef SF_COUNT
  ASSERT_EQ(torch.size(), static_cast<size_t>(listed)) << "a function without torch values here";
  for (const auto& [name, want] : torch) {
    SCOPED_TRACE(name);
    const auto fn = expr::unaryFnFromName(name);
    ASSERT_TRUE(fn.has_value());
    EXPECT_EQ(expr::unaryFnName(*fn), name);
    for (size_t k = 0; k < x.size(); ++k) {
      const double got = expr::evaluate(*fn, x[k]);
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(got)) << "x = " << x[k];
      } else {
        EXPECT_NEAR(got, want[k], 4e-16 * std::max(1.0, std::fabs(want[k]))) << "x = " << x[k];
      }
    }
    // f(0) = 0 exactly when the list says so (the presence analysis relies on it).
    EXPECT_EQ(expr::evaluate(*fn, 0.0) == 0.0, expr::zeroPreserving(*fn));
  }
  EXPECT_EQ(expr::evaluate(expr::UnaryFn::kNeg, 2.0), -2.0);
  EXPECT_TRUE(expr::zeroPreserving(expr::UnaryFn::kNeg));
}

TEST(ElementwiseFunctions, EveryStageNamesThemFromTheOneList) {
  EXPECT_EQ(expr::knownFunctionNames(),
            "abs, sqrt, exp, log, relu, silu, gelu, gelu_tanh, sigmoid, tanh, minimum, maximum, "
            "clamp, sum, max, softmax, layernorm");
  EXPECT_FALSE(expr::unaryFnFromName("-").has_value());
  EXPECT_FALSE(expr::unaryFnFromName("softmax").has_value());
  // The IR's enumerators follow the parser's, one per line, so lowering maps them by name.
#define SF_SAME_NAME(Name, written, ...)                        \
  EXPECT_STREQ(ir::unaryOpName(ir::UnaryOp::k##Name), written); \
  EXPECT_STREQ(expr::unaryFnName(expr::UnaryFn::k##Name), written);
  SF_ELEMENTWISE_FUNCTIONS(SF_SAME_NAME)
#undef SF_SAME_NAME
}

}  // namespace
}  // namespace sparseflow
