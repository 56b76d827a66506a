// A graph with its weights: facts measured on the data, the reference evaluator's operators, and
// compaction (rows, columns and neurons proven zero or dead removed; outputs unchanged in float64).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/random_coo.h"
#include "graph/model/compact.h"
#include "graph/model/dense_ops.h"
#include "graph/model/evaluate.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"

namespace sparseflow::graph {
namespace {

using sparseflow::testing::freshSeed;

Tensor denseTensor(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  return fromDense(shape, values.data(), Format::parse("dense", static_cast<int32_t>(shape.size())),
                   DType::kF64);
}

std::vector<double> randomValues(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

DenseValue<double> randomInput(const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return DenseValue<double>{shape, randomValues(n, rng)};
}

/// Largest |a - b| over |b| + 1e-300, per element, across all outputs.
double maxRelativeDifference(const std::vector<DenseValue<double>>& a,
                             const std::vector<DenseValue<double>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t o = 0; o < a.size(); ++o) {
    EXPECT_EQ(a[o].shape, b[o].shape);
    for (size_t e = 0; e < a[o].data.size(); ++e) {
      const double scale = std::max(1.0, std::abs(b[o].data[e]));
      worst = std::max(worst, std::abs(a[o].data[e] - b[o].data[e]) / scale);
    }
  }
  return worst;
}

TEST(GraphModel, MeasuredFactsOfAWeight) {
  // 4 x 8: row 2 and columns 1, 5 zero; at most 2 of every 4 along a row; all values >= -0.5.
  std::vector<double> w = {1, 0, 2, 0, 0,    0, 3, 1,  //
                           0, 0, 1, 1, -0.5, 0, 0, 4,  //
                           0, 0, 0, 0, 0,    0, 0, 0,  //
                           1, 0, 0, 7, 2,    0, 0, 0};
  const Tesa t = measuredFacts(denseTensor({4, 8}, w));
  EXPECT_EQ(printTesa(t), "{zero@0=[2], zero@1=[1, 5], nm=2:4@1, ge=-0.5}");
  // Positive values with zeros stored implicitly: the bound is 0. A NaN or inf gives none.
  w[2] = NAN;
  EXPECT_EQ(printTesa(measuredFacts(denseTensor({4, 8}, w))),
            "{zero@0=[2], zero@1=[1, 5], nm=2:4@1}");
  const Tensor full = denseTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(printTesa(measuredFacts(full)), "{ge=1}");
}

TEST(GraphModel, CheckModelNamesTheParameter) {
  Model m;
  m.graph = parseGraph(
      "%0 = input \"x\" : f32[2, 3]\n%1 = param \"w\" : f32[4, 3]\n"
      "%2 = linear(%0, %1)\noutput %2\n");
  try {
    checkModel(m);
    FAIL() << "no data accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"w\" has no data"), std::string::npos) << e.what();
  }
  m.params["w"] = fromDense({4, 2}, std::vector<double>(8, 1).data(), Format::parse("dense", 2));
  EXPECT_THROW(checkModel(m), Error);  // shape
  m.params["w"] = fromDense({4, 3}, std::vector<double>(12, 1).data(), Format::parse("dense", 2));
  checkModel(m);
  m.params["v"] = m.params["w"];
  try {
    checkModel(m);
    FAIL() << "extra data accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"v\", which is not a parameter"), std::string::npos);
  }
  std::map<std::string, DenseValue<double>> inputs;
  m.params.erase("v");
  try {
    evaluateModel(m, inputs);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input \"x\" is not given"), std::string::npos);
  }
}

// Each operator of the reference evaluator against a value written out by hand.
TEST(GraphModel, ReferenceOperators) {
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[2, 3]
%1 = param "w" : f64[2, 3]
%2 = param "b" : f64[2]
%3 = linear(%0, %1, %2)
%4 = softmax(%3, axis=1)
%5 = transpose(%0, perm=[1, 0])
%6 = slice(%5, axis=0, start=1, end=3)
%7 = concat(%6, %6, axis=1)
%8 = reduce_max(%0, axis=1)
%9 = param "lim" : f64[3]
%10 = minimum(%0, %9)
%11 = layer_norm(%0)
%12 = reshape(%0, shape=[3, 2])
%13 = matmul(%0, %12)
%14 = layer_norm(%0, eps=0.5)
output %3, %4, %7, %8, %10, %11, %13, %14
)");
  m.params["w"] = denseTensor({2, 3}, {1, 0, -1, 2, 1, 0});
  m.params["b"] = denseTensor({2}, {0.5, -1});
  m.params["lim"] = denseTensor({3}, {0, 10, 2});
  std::map<std::string, DenseValue<double>> in = {{"x", {{2, 3}, {1, 2, 3, 4, 5, 6}}}};
  const auto out = evaluateModel(m, in);
  EXPECT_EQ(out[0].data, (std::vector<double>{-1.5, 3, -1.5, 12}));
  const double e = std::exp(4.5);
  EXPECT_NEAR(out[1].data[1], e / (1 + e), 1e-15);
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out[2].data, (std::vector<double>{2, 5, 2, 5, 3, 6, 3, 6}));
  EXPECT_EQ(out[3].data, (std::vector<double>{3, 6}));
  EXPECT_EQ(out[4].data, (std::vector<double>{0, 2, 2, 0, 5, 2}));
  const double s = 1 / std::sqrt(2.0 / 3 + 1e-5);
  EXPECT_NEAR(out[5].data[0], -s, 1e-15);
  EXPECT_NEAR(out[5].data[4], 0, 1e-15);
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]]
  EXPECT_EQ(out[6].data, (std::vector<double>{22, 28, 49, 64}));
  EXPECT_NEAR(out[7].data[0], -1 / std::sqrt(2.0 / 3 + 0.5), 1e-15);
}

// sqrt, div, where and max_pool2d against values written out by hand, with torch's answers at
// the edges: x / 0 = inf, 0 / 0 = NaN, sqrt of a negative NaN, a NaN cond picks a (true), NaN in a
// pooling window wins, padding never does.
TEST(GraphModel, SqrtDivWhereAndMaxPoolReferenceValues) {
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[2, 3]
%1 = param "d" : f64[3]
%2 = div(%0, %1)
%3 = sqrt(%0)
%4 = param "cond" : f64[3]
%5 = param "fill" : f64[1]
%6 = where(%4, %0, %5)
%7 = input "image" : f64[1, 1, 3, 3]
%8 = max_pool2d(%7, kernel=[2, 2], stride=[2, 2], padding=[1, 0, 0, 1])
output %2, %3, %6, %8
)");
  m.params["d"] = denseTensor({3}, {2, 0, 0});
  m.params["cond"] = denseTensor({3}, {1, 0, NAN});
  m.params["fill"] = denseTensor({1}, {-7});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, DenseValue<double>> in = {
      {"x", {{2, 3}, {4, 0, -1, 9, 5, 0}}},
      {"image", {{1, 1, 3, 3}, {1, -2, 3, -4, nan, -6, 7, -8, -9}}}};
  const auto out = evaluateModel(m, in);
  EXPECT_EQ(out[0].data[0], 2.0);
  EXPECT_TRUE(std::isnan(out[0].data[1]));  // 0 / 0
  EXPECT_EQ(out[0].data[2], -HUGE_VAL);     // -1 / 0
  EXPECT_EQ(out[0].data[4], HUGE_VAL);      // 5 / 0
  EXPECT_EQ(out[1].data[0], 2.0);
  EXPECT_EQ(out[1].data[1], 0.0);
  EXPECT_TRUE(std::isnan(out[1].data[2]));  // sqrt(-1)
  EXPECT_EQ(out[1].data[3], 3.0);
  EXPECT_EQ(out[2].data, (std::vector<double>{4, -7, -1, 9, -7, 0}));
  // Rows padded by one on top, columns by one on the right: windows {pad, row 0} x {0,1},
  // {pad, row 0} x {2, pad}, rows {1, 2} x {0, 1} (holds the NaN), rows {1, 2} x {2, pad}.
  ASSERT_EQ(out[3].shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(out[3].data[0], 1.0);
  EXPECT_EQ(out[3].data[1], 3.0);
  EXPECT_TRUE(std::isnan(out[3].data[2]));
  EXPECT_EQ(out[3].data[3], -6.0);
}

/// x [B, 16] -> linear(W1 [H, 16], b1) -> act -> linear(W2 [10, H], b2) -> (+ residual) ->
/// layer_norm: dead and zero hidden neurons planted at random, some by zero rows of W1 with zero
/// bias entries (forward), some by zero columns of W2 (backward).
struct PlantedMlp {
  Model model;
  std::vector<int64_t> deadNeurons;
};

PlantedMlp plantedMlp(std::mt19937_64& rng, const char* activation, int64_t hidden) {
  PlantedMlp p;
  const int64_t in = 16, out = 10, batch = 5;
  p.model.graph = parseGraph("%0 = input \"x\" : f64[" + std::to_string(batch) +
                             ", 16]\n"
                             "%1 = param \"fc1.weight\" : f64[" +
                             std::to_string(hidden) +
                             ", 16]\n"
                             "%2 = param \"fc1.bias\" : f64[" +
                             std::to_string(hidden) +
                             "]\n"
                             "%3 = linear(%0, %1, %2)\n"
                             "%4 = " +
                             activation +
                             "(%3)\n"
                             "%5 = param \"fc2.weight\" : f64[10, " +
                             std::to_string(hidden) +
                             "]\n"
                             "%6 = param \"fc2.bias\" : f64[10]\n"
                             "%7 = linear(%4, %5, %6)\n"
                             "%8 = layer_norm(%7)\n"
                             "output %8\n");
  std::vector<double> w1 = randomValues(hidden * in, rng), b1 = randomValues(hidden, rng);
  std::vector<double> w2 = randomValues(out * hidden, rng);
  std::bernoulli_distribution coin(0.4);
  for (int64_t h = 0; h < hidden; ++h) {
    if (!coin(rng)) continue;
    p.deadNeurons.push_back(h);
    if (coin(rng)) {  // forward: the neuron's pre-activation is zero
      for (int64_t i = 0; i < in; ++i) w1[static_cast<size_t>(h * in + i)] = 0;
      b1[static_cast<size_t>(h)] = 0;
    } else {  // backward: nothing reads it
      for (int64_t o = 0; o < out; ++o) w2[static_cast<size_t>(o * hidden + h)] = 0;
    }
  }
  p.model.params["fc1.weight"] = denseTensor({hidden, in}, w1);
  p.model.params["fc1.bias"] = denseTensor({hidden}, b1);
  p.model.params["fc2.weight"] =
      fromCoo(toCoo(denseTensor({out, hidden}, w2)), Format::parse("csr", 2), {DType::kF64});
  p.model.params["fc2.bias"] = denseTensor({out}, randomValues(out, rng));
  return p;
}

TEST(GraphModel, CompactionRemovesPlantedNeuronsAndKeepsTheOutputs) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const char* act : {"relu", "gelu", "silu", "tanh"}) {
    SCOPED_TRACE(act);
    const int64_t hidden = 24;
    const PlantedMlp p = plantedMlp(rng, act, hidden);
    CompactionReport report;
    const Model c = compact(p.model, &report);
    const int64_t kept = hidden - static_cast<int64_t>(p.deadNeurons.size());
    // Every planted neuron goes (one is kept if all were planted).
    const int64_t expectKept = std::max<int64_t>(kept, 1);
    EXPECT_EQ(c.params.at("fc1.weight").shape(), (std::vector<int64_t>{expectKept, 16}));
    EXPECT_EQ(c.params.at("fc1.bias").shape(), (std::vector<int64_t>{expectKept}));
    EXPECT_EQ(c.params.at("fc2.weight").shape(), (std::vector<int64_t>{10, expectKept}));
    EXPECT_EQ(c.params.at("fc2.weight").format().toString(), "csr");
    EXPECT_EQ(report.paramElementsBefore - report.paramElementsAfter,
              (hidden - expectKept) * (16 + 1 + 10));
    const std::map<std::string, DenseValue<double>> in = {{"x", randomInput({5, 16}, rng)}};
    EXPECT_LE(maxRelativeDifference(evaluateModel(c, in), evaluateModel(p.model, in)), 1e-12)
        << report.toString();
  }
}

// An operator nothing reads (a reshape of the hidden layer a tracer left behind) is dropped and
// does not pin the dimension it would have read.
TEST(GraphModel, CompactionDropsOperatorsNoOutputReads) {
  std::mt19937_64 rng(freshSeed());
  PlantedMlp p = plantedMlp(rng, "relu", 24);
  const std::string text = print(p.model.graph);
  const std::string withDeadReshape = text.substr(0, text.find("output")) +
                                      "%9 = reshape(%4, shape=[-1])\n" +
                                      text.substr(text.find("output"));
  Model m = p.model;
  m.graph = parseGraph(withDeadReshape);
  CompactionReport report;
  const Model c = compact(m, &report);
  const int64_t kept = std::max<int64_t>(24 - static_cast<int64_t>(p.deadNeurons.size()), 1);
  EXPECT_EQ(c.params.at("fc1.weight").shape()[0], kept) << report.toString();
  EXPECT_EQ(c.graph.size(), p.model.graph.size());  // the reshape is gone
  const std::map<std::string, DenseValue<double>> in = {{"x", randomInput({5, 16}, rng)}};
  EXPECT_LE(maxRelativeDifference(evaluateModel(c, in), evaluateModel(p.model, in)), 1e-12);
}

// A residual add links the hidden dimension to x's: x is a graph input, so nothing is removed
// there, and the model still equals the original.
TEST(GraphModel, CompactionKeepsDimensionsLinkedToInputsAndOutputs) {
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[3, 4]
%1 = param "w" : f64[4, 4]
%2 = linear(%0, %1)
%3 = add(%2, %0)
%4 = param "v" : f64[2, 4]
%5 = linear(%3, %4)
output %5
)");
  std::mt19937_64 rng(freshSeed());
  std::vector<double> w = randomValues(16, rng);
  for (int64_t i = 0; i < 4; ++i) w[static_cast<size_t>(4 + i)] = 0;  // row 1 zero
  std::vector<double> v = randomValues(8, rng);
  v[2] = v[6] = 0;  // column 2 of v zero: row 2 of w dead, but x's column 2 is an input
  m.params["w"] = denseTensor({4, 4}, w);
  m.params["v"] = denseTensor({2, 4}, v);
  CompactionReport report;
  const Model c = compact(m, &report);
  EXPECT_EQ(c.params.at("w").shape(), (std::vector<int64_t>{4, 4})) << report.toString();
  EXPECT_EQ(c.params.at("v").shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(report.removed.empty());
  const std::map<std::string, DenseValue<double>> in = {{"x", randomInput({3, 4}, rng)}};
  EXPECT_LE(maxRelativeDifference(evaluateModel(c, in), evaluateModel(m, in)), 1e-12);
}

// A feature dimension carried through two transposes and a matmul (attention's value path): zero
// columns of the output projection make the matching rows of the value projection removable.
TEST(GraphModel, CompactionThroughTransposeAndBatchedMatmul) {
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[6, 8]
%1 = param "wv" : f64[8, 8]
%2 = linear(%0, %1)
%3 = transpose(%2, perm=[1, 0])
%4 = param "a" : f64[6, 6]
%5 = matmul(%3, %4)
%6 = transpose(%5, perm=[1, 0])
%7 = param "wo" : f64[4, 8]
%8 = linear(%6, %7)
output %8
)");
  std::mt19937_64 rng(freshSeed());
  std::vector<double> wo = randomValues(32, rng);
  for (int64_t o = 0; o < 4; ++o)
    wo[static_cast<size_t>(o * 8 + 3)] = wo[static_cast<size_t>(o * 8 + 6)] = 0;
  m.params["wv"] = denseTensor({8, 8}, randomValues(64, rng));
  m.params["a"] = denseTensor({6, 6}, randomValues(36, rng));
  m.params["wo"] = denseTensor({4, 8}, wo);
  CompactionReport report;
  const Model c = compact(m, &report);
  EXPECT_EQ(c.params.at("wv").shape(), (std::vector<int64_t>{6, 8})) << report.toString();
  EXPECT_EQ(c.params.at("wo").shape(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(c.params.at("a").shape(), (std::vector<int64_t>{6, 6}));
  const std::map<std::string, DenseValue<double>> in = {{"x", randomInput({6, 8}, rng)}};
  EXPECT_LE(maxRelativeDifference(evaluateModel(c, in), evaluateModel(m, in)), 1e-12);
  // The compacted graph prints and parses back.
  EXPECT_TRUE(graphsEqual(parseGraph(print(c.graph)), c.graph));
}

}  // namespace
}  // namespace sparseflow::graph

namespace sparseflow::graph {
namespace {

/// Element (i0, i1, i2, i3) of a row-major [2, 3, 4, 5] array.
size_t at4(int64_t a, int64_t b, int64_t c, int64_t d) {
  return static_cast<size_t>(((a * 3 + b) * 4 + c) * 5 + d);
}

// The parallel, row-wise dense operators against plain loops on rank-4 values: a transpose,
// a broadcast add, a reduction over a middle axis, a softmax over a middle axis, a batched matmul.
TEST(GraphModel, DenseOperatorsAgainstPlainLoops) {
  std::mt19937_64 rng(freshSeed());
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[2, 3, 4, 5]
%1 = input "y" : f64[2, 1, 1, 5]
%2 = transpose(%0, perm=[2, 0, 3, 1])
%3 = add(%0, %1)
%4 = reduce_sum(%0, axis=2)
%5 = softmax(%0, axis=1)
%6 = input "z" : f64[2, 3, 5, 2]
%7 = batch_matmul(%0, %6)
output %2, %3, %4, %5, %7
)");
  const DenseValue<double> x = randomInput({2, 3, 4, 5}, rng), y = randomInput({2, 1, 1, 5}, rng);
  const DenseValue<double> z = randomInput({2, 3, 5, 2}, rng);
  const auto out = evaluateModel<double>(m, {{"x", x}, {"y", y}, {"z", z}});
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t c = 0; c < 4; ++c) {
        for (int64_t d = 0; d < 5; ++d) {
          const double v = x.data[at4(a, b, c, d)];
          // transpose: out[c, a, d, b] of shape [4, 2, 5, 3]
          EXPECT_EQ(out[0].data[static_cast<size_t>(((c * 2 + a) * 5 + d) * 3 + b)], v);
          EXPECT_EQ(out[1].data[at4(a, b, c, d)], v + y.data[static_cast<size_t>(a * 5 + d)]);
          double z1 = 0, max = -1e300;
          for (int64_t bb = 0; bb < 3; ++bb) max = std::max(max, x.data[at4(a, bb, c, d)]);
          for (int64_t bb = 0; bb < 3; ++bb) z1 += std::exp(x.data[at4(a, bb, c, d)] - max);
          EXPECT_NEAR(out[3].data[at4(a, b, c, d)], std::exp(v - max) / z1, 1e-15);
        }
      }
      for (int64_t d = 0; d < 5; ++d) {
        double sum = 0;
        for (int64_t c = 0; c < 4; ++c) sum += x.data[at4(a, b, c, d)];
        EXPECT_NEAR(out[2].data[static_cast<size_t>((a * 3 + b) * 5 + d)], sum, 1e-14);
      }
      for (int64_t c = 0; c < 4; ++c) {
        for (int64_t j = 0; j < 2; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < 5; ++d) {
            acc += x.data[at4(a, b, c, d)] *
                   z.data[static_cast<size_t>(((a * 3 + b) * 5 + d) * 2 + j)];
          }
          EXPECT_NEAR(out[4].data[static_cast<size_t>(((a * 3 + b) * 4 + c) * 2 + j)], acc, 1e-14);
        }
      }
    }
  }
}

}  // namespace
}  // namespace sparseflow::graph

namespace sparseflow::graph {
namespace {

// conv2d against the convolution written out per output element (stride 2, padding 1, dilation
// 2, two groups), and compaction of a small CNN: filters of conv1 that are zero with their bias
// go, with the matching input channels of conv2; the output is unchanged.
TEST(GraphModel, Conv2dAndItsCompaction) {
  std::mt19937_64 rng(freshSeed());
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f64[2, 4, 7, 6]
%1 = param "w" : f64[6, 2, 3, 2]
%2 = param "b" : f64[6]
%3 = conv2d(%0, %1, %2, stride=[2, 1], padding=[1, 1], dilation=[2, 2], groups=2)
output %3
)");
  const std::vector<double> wv = randomValues(6 * 2 * 3 * 2, rng), bv = randomValues(6, rng);
  m.params["w"] = denseTensor({6, 2, 3, 2}, wv);
  m.params["b"] = denseTensor({6}, bv);
  const DenseValue<double> x = randomInput({2, 4, 7, 6}, rng);
  const auto out = evaluateModel<double>(m, {{"x", x}});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 6, 3, 6}));
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t o = 0; o < 6; ++o) {
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 6; ++j) {
          double want = bv[static_cast<size_t>(o)];
          for (int64_t c = 0; c < 2; ++c) {
            for (int64_t r = 0; r < 3; ++r) {
              for (int64_t s = 0; s < 2; ++s) {
                const int64_t yi = i * 2 - 1 + 2 * r, xj = j - 1 + 2 * s, ch = (o / 3) * 2 + c;
                if (yi < 0 || yi >= 7 || xj < 0 || xj >= 6) continue;
                want += wv[static_cast<size_t>(((o * 2 + c) * 3 + r) * 2 + s)] *
                        x.data[static_cast<size_t>(((n * 4 + ch) * 7 + yi) * 6 + xj)];
              }
            }
          }
          EXPECT_NEAR(out[0].data[static_cast<size_t>(((n * 6 + o) * 3 + i) * 6 + j)], want, 1e-13);
        }
      }
    }
  }
  Model cnn;
  cnn.graph = parseGraph(R"(%0 = input "x" : f64[2, 3, 8, 8]
%1 = param "c1.weight" : f64[8, 3, 3, 3]
%2 = param "c1.bias" : f64[8]
%3 = conv2d(%0, %1, %2, padding=[1, 1])
%4 = relu(%3)
%5 = param "c2.weight" : f64[5, 8, 3, 3]
%6 = conv2d(%4, %5, stride=[2, 2])
output %6
)");
  std::vector<double> w1 = randomValues(8 * 27, rng), b1 = randomValues(8, rng);
  for (int64_t o : {1, 4, 5}) {
    std::fill_n(w1.begin() + o * 27, 27, 0.0);
    b1[static_cast<size_t>(o)] = 0;
  }
  cnn.params["c1.weight"] = denseTensor({8, 3, 3, 3}, w1);
  cnn.params["c1.bias"] = denseTensor({8}, b1);
  cnn.params["c2.weight"] = denseTensor({5, 8, 3, 3}, randomValues(5 * 72, rng));
  CompactionReport report;
  const Model c = compact(cnn, &report);
  EXPECT_EQ(c.params.at("c1.weight").shape(), (std::vector<int64_t>{5, 3, 3, 3}))
      << report.toString();
  EXPECT_EQ(c.params.at("c2.weight").shape(), (std::vector<int64_t>{5, 5, 3, 3}));
  const std::map<std::string, DenseValue<double>> in = {{"x", randomInput({2, 3, 8, 8}, rng)}};
  EXPECT_LE(maxRelativeDifference(evaluateModel(c, in), evaluateModel(cnn, in)), 1e-12);
}

}  // namespace
}  // namespace sparseflow::graph

namespace sparseflow::graph {
namespace {

// The executor's in-place element-wise path gives what the allocating one gives (a broadcast
// add, a minimum with NaN, relu), and refuses what is not element-wise.
TEST(GraphModel, InPlaceElementwiseEqualsTheAllocatingOperator) {
  std::mt19937_64 rng(freshSeed());
  const Graph g = parseGraph(R"(%0 = input "x" : f64[3, 4, 5]
%1 = input "y" : f64[4, 1]
%2 = add(%0, %1)
%3 = minimum(%0, %1)
%4 = relu(%0)
%5 = softmax(%0, axis=2)
output %2, %3, %4, %5
)");
  DenseValue<double> x = randomInput({3, 4, 5}, rng);
  x.data[7] = NAN;
  const DenseValue<double> y = randomInput({4, 1}, rng);
  for (ValueId v : {2, 3, 4}) {
    const Node& node = g.node(v);
    std::vector<const DenseValue<double>*> operands = {&x};
    if (node.inputs.size() > 1) operands.push_back(&y);
    const DenseValue<double> want = evaluateOp<double>(g, node, operands);
    DenseValue<double> target = x;
    operands[0] = &target;
    ASSERT_TRUE(evaluateInPlace<double>(node, target, operands)) << opName(node.op);
    ASSERT_EQ(target.shape, want.shape);
    for (size_t i = 0; i < want.data.size(); ++i) {
      if (std::isnan(want.data[i])) {
        EXPECT_TRUE(std::isnan(target.data[i])) << opName(node.op) << " " << i;
      } else {
        EXPECT_EQ(target.data[i], want.data[i]) << opName(node.op) << " " << i;
      }
    }
  }
  DenseValue<double> target = x;
  EXPECT_FALSE(evaluateInPlace<double>(g.node(5), target, {&target}));
  EXPECT_EQ(target.data.size(), x.data.size());
}

}  // namespace
}  // namespace sparseflow::graph
