// The graph executor: specialized models (each linear layer one sparseflow kernel with its bias and
// activation fused, the weight in dense, csr or 2:4) against the float64 reference evaluator on
// random models, and the Graph Challenge sparse DNN's expected categories.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "common/random_coo.h"
#include "graph/exec/executor.h"
#include "graph/import/graph_challenge.h"
#include "graph/model/compact.h"
#include "graph/model/evaluate.h"
#include "graph/parser.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/graph.h"
#include "sparseflow/io.h"

namespace sparseflow::graph {
namespace {

using sparseflow::testing::freshSeed;

std::vector<double> randomValues(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<float>(u(rng));
  return v;
}

Tensor f32Tensor(const std::vector<int64_t>& shape, const std::vector<double>& values,
                 const char* format = "dense") {
  return fromDense(shape, values.data(), Format::parse(format, static_cast<int32_t>(shape.size())),
                   DType::kF32);
}

SpecializeOptions byRule() {
  SpecializeOptions options;
  options.measure = false;
  return options;
}

/// Keeps the 2 largest of every 4 along rows (an exact 2:4 weight).
void pruneTo24(std::vector<double>& w) {
  for (size_t g = 0; g + 4 <= w.size(); g += 4) {
    std::vector<size_t> idx = {g, g + 1, g + 2, g + 3};
    std::sort(idx.begin(), idx.end(),
              [&](size_t a, size_t b) { return std::abs(w[a]) > std::abs(w[b]); });
    w[idx[2]] = w[idx[3]] = 0;
  }
}

// A small transformer-like block: three linear layers (2:4, 90% sparse, dense weights), relu /
// gelu / silu fused, a residual add, layer norm and a softmax on dense values. Every choice of
// format (by rule and by measurement) matches float64 within the f32 bound.
TEST(GraphExecutor, SpecializedModelMatchesFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f32[3, 7, 64]
%1 = param "fc1.weight" : f32[128, 64]
%2 = param "fc1.bias" : f32[128]
%3 = linear(%0, %1, %2)
%4 = gelu(%3)
%5 = param "fc2.weight" : f32[64, 128]
%6 = linear(%4, %5)
%7 = param "fc2.bias" : f32[64]
%8 = bias_add(%6, %7)
%9 = relu(%8)
%10 = add(%9, %0)
%11 = layer_norm(%10)
%12 = param "head.weight" : f32[16, 64]
%13 = linear(%11, %12)
%14 = silu(%13)
%15 = softmax(%14, axis=2)
output %15, %10
)");
  std::vector<double> w1 = randomValues(128 * 64, rng);
  pruneTo24(w1);
  std::vector<double> w2 = randomValues(64 * 128, rng);
  std::bernoulli_distribution keep(0.1);
  for (double& v : w2) v = keep(rng) ? v : 0;
  m.params["fc1.weight"] = f32Tensor({128, 64}, w1);
  m.params["fc1.bias"] = f32Tensor({128}, randomValues(128, rng));
  m.params["fc2.weight"] = f32Tensor({64, 128}, w2);
  m.params["fc2.bias"] = f32Tensor({64}, randomValues(64, rng));
  m.params["head.weight"] = f32Tensor({16, 64}, randomValues(64 * 16, rng));
  std::vector<double> x = randomValues(21 * 64, rng);
  const std::map<std::string, DenseValue<double>> in64 = {{"x", {{3, 7, 64}, x}}};
  const std::map<std::string, DenseValue<float>> in32 = {
      {"x", {{3, 7, 64}, std::vector<float>(x.begin(), x.end())}}};
  const auto expect = evaluateModel(m, in64);
  for (bool measure : {false, true}) {
    SCOPED_TRACE(measure ? "measured" : "by rule");
    SpecializeOptions options;
    options.measure = measure;
    options.measureReps = 2;
    const Executor e = Executor::build(m, options);
    const auto& steps = e.steps();
    // 3 kernels (the residual add %10 in the second's store), layer_norm, softmax
    ASSERT_EQ(steps.size(), 5u) << e.describe();
    EXPECT_EQ(steps[0].what, "linear %3 + gelu %4");
    EXPECT_EQ(steps[1].what, "linear %6 + bias_add %8 + relu %9 + add %10");
    EXPECT_EQ(steps[3].what, "linear %13 + silu %14");
    if (!measure) {
      EXPECT_EQ(steps[0].format, "2:4") << e.describe();
      EXPECT_EQ(steps[0].provider, "nm_linear");
      EXPECT_EQ(steps[1].format, "csr");
      EXPECT_EQ(steps[1].provider, "csr_spmm");
      EXPECT_EQ(steps[3].format, "dense");
    } else {
      EXPECT_EQ(steps[0].candidateMs.size(), 3u) << e.describe();
      EXPECT_EQ(steps[1].candidateMs.size(), 2u);
    }
    const auto got = e.run(in32);
    ASSERT_EQ(got.size(), 2u);
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].shape, expect[o].shape);
      for (size_t i = 0; i < got[o].data.size(); ++i) {
        ASSERT_NEAR(got[o].data[i], expect[o].data[i],
                    2e-4 * std::max(1.0, std::abs(expect[o].data[i])))
            << "output " << o << " element " << i << "\n"
            << e.describe();
      }
    }
  }
}

// Rows of X that are zero (after a relu, whole tokens or images) skip the kernel and get the
// epilogue of the bias; the others are computed (through X in csr when X is mostly zeros): the
// same values as float64 in every format.
TEST(GraphExecutor, ZeroRowsOfTheActivationsSkipTheKernel) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f32[40, 32]
%1 = param "w" : f32[24, 32]
%2 = param "b" : f32[24]
%3 = linear(%0, %1, %2)
%4 = gelu(%3)
output %4
)");
  std::vector<double> w = randomValues(24 * 32, rng);
  pruneTo24(w);
  m.params["w"] = f32Tensor({24, 32}, w);
  m.params["b"] = f32Tensor({24}, randomValues(24, rng));
  std::vector<double> x = randomValues(40 * 32, rng);
  std::bernoulli_distribution zero(0.6);
  for (int64_t r = 0; r < 40; ++r) {
    if (r == 0 || zero(rng)) std::fill_n(x.begin() + r * 32, 32, 0.0);
  }
  // Half the cases: also 95% of the remaining entries zero, so X goes the sparse-input path (X in
  // csr against W^T) instead of the weight's kernel.
  if (std::bernoulli_distribution(0.5)(rng)) {
    std::bernoulli_distribution drop(0.95);
    for (double& v : x) v = drop(rng) ? 0.0 : v;
  }
  const auto expect = evaluateModel<double>(m, {{"x", {{40, 32}, x}}});
  for (const char* format : {"2:4", "csr", "dense"}) {
    SpecializeOptions options = byRule();
    options.formats["w"] = format;
    const Executor e = Executor::build(m, options);
    const auto got = e.run({{"x", {{40, 32}, std::vector<float>(x.begin(), x.end())}}});
    for (size_t i = 0; i < got[0].data.size(); ++i) {
      ASSERT_NEAR(got[0].data[i], expect[0].data[i],
                  1e-5 * std::max(1.0, std::abs(expect[0].data[i])))
          << format << " element " << i;
    }
  }
}

// Two csr layers in a row (an MLP block, GELU between) run as one csrLinearPair step, two 2:4
// layers as one runNMGemmPair step, the first step empty; the same as float64 on dense inputs and
// on inputs with zero rows (the pair then runs its two steps one after the other). After a relu
// they stay two steps. A clip after the second layer (minimum and maximum by one-element
// constants) is clamped inside the pair kernel.
TEST(GraphExecutor, MlpBlockRunsAsOnePair) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(0.15);
  const std::string clipText = R"(%8 = param "hi" : f32[1]
%9 = minimum(%7, %8)
%10 = param "lo" : f32[1]
%11 = maximum(%9, %10)
output %11
)";
  for (const char* format : {"csr", "2:4"}) {
    for (const auto& [act, clipped] :
         {std::pair{"gelu", false}, std::pair{"relu", false}, std::pair{"gelu", true}}) {
      SCOPED_TRACE(std::string(format) + " " + act + (clipped ? " clipped" : ""));
      Model m;
      m.graph = parseGraph(std::string(R"(%0 = input "x" : f32[3, 100, 48]
%1 = param "fc1.weight" : f32[96, 48]
%2 = param "fc1.bias" : f32[96]
%3 = linear(%0, %1, %2)
%4 = )") + act + R"((%3)
%5 = param "fc2.weight" : f32[40, 96]
%6 = param "fc2.bias" : f32[40]
%7 = linear(%4, %5, %6)
)" + (clipped ? clipText : "output %7\n"));
      if (clipped) {
        m.params["hi"] = f32Tensor({1}, {0.5});
        m.params["lo"] = f32Tensor({1}, {-0.25});
      }
      for (const char* w : {"fc1.weight", "fc2.weight"}) {
        const auto& shape = m.graph.node(w == std::string("fc1.weight") ? 1 : 5).type.shape;
        std::vector<double> v = randomValues(shape[0] * shape[1], rng);
        if (std::string(format) == "csr") {
          for (double& e : v) e = keep(rng) ? e : 0.0;
        } else {
          pruneTo24(v);
        }
        m.params[w] = f32Tensor(shape, v);
      }
      m.params["fc1.bias"] = f32Tensor({96}, randomValues(96, rng));
      m.params["fc2.bias"] = f32Tensor({40}, randomValues(40, rng));
      SpecializeOptions options = byRule();
      options.formats = {{"fc1.weight", format}, {"fc2.weight", format}};
      const Executor e = Executor::build(m, options);
      const auto& steps = e.steps();
      ASSERT_EQ(steps.size(), 2u) << e.describe();
      const std::string pairName =
          std::string(format) == "csr" ? "csr_linear_pair" : "nm_linear_pair";
      const bool paired = std::string(act) == "gelu";
      EXPECT_EQ(steps[0].provider == pairName, paired) << e.describe();
      EXPECT_EQ(steps[1].provider == pairName, paired) << e.describe();
      if (clipped) {
        EXPECT_NE(steps[1].what.find("maximum"), std::string::npos) << e.describe();
      }
      for (bool zeroRows : {false, true}) {
        std::vector<double> x = randomValues(3 * 100 * 48, rng);
        for (int64_t r = 0; r < 300 && zeroRows; r += 2) std::fill_n(x.begin() + r * 48, 48, 0.0);
        const auto expect = evaluateModel<double>(m, {{"x", {{3, 100, 48}, x}}});
        const auto got = e.run({{"x", {{3, 100, 48}, std::vector<float>(x.begin(), x.end())}}});
        ASSERT_EQ(got[0].shape, expect[0].shape);
        if (clipped) {  // both bounds bite
          EXPECT_GT(std::count(expect[0].data.begin(), expect[0].data.end(), 0.5), 0);
          EXPECT_GT(std::count(expect[0].data.begin(), expect[0].data.end(), -0.25), 0);
        }
        for (size_t i = 0; i < got[0].data.size(); ++i) {
          ASSERT_NEAR(got[0].data[i], expect[0].data[i],
                      1e-4 * std::max(1.0, std::abs(expect[0].data[i])))
              << (zeroRows ? "zero rows, " : "") << "element " << i;
        }
      }
    }
  }
}

// A residual add after a layer (a transformer's `x + W·h + b`, before a layer_norm) runs in the
// layer's kernel (R in its store) for dense, csr and 2:4 weights: with the layer's input as R,
// with a computed R, after an activation, on inputs with zero rows (the csr sparse-input path
// takes R; the zero-row gathering is skipped); against float64. A value computed after the layer
// stays an add of its own, and a residual stops the MLP pair.
TEST(GraphExecutor, ResidualAddsRunInTheLayersKernel) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(0.2);
  Model m;
  m.graph = parseGraph(R"(%0 = input "x" : f32[2, 40, 48]
%1 = param "attn.weight" : f32[48, 48]
%2 = param "attn.bias" : f32[48]
%3 = linear(%0, %1, %2)
%4 = add(%3, %0)
%5 = layer_norm(%4)
%6 = param "fc1.weight" : f32[96, 48]
%7 = param "fc1.bias" : f32[96]
%8 = linear(%5, %6, %7)
%9 = gelu(%8)
%10 = param "fc2.weight" : f32[48, 96]
%11 = linear(%9, %10)
%12 = add(%5, %11)
%13 = relu(%12)
%14 = param "head.weight" : f32[48, 48]
%15 = linear(%13, %14)
%16 = relu(%15)
%17 = add(%16, %4)
%18 = param "late.weight" : f32[48, 48]
%19 = linear(%17, %18)
%20 = relu(%0)
%21 = add(%19, %20)
output %21
)");
  for (const char* format : {"dense", "csr", "2:4"}) {
    SCOPED_TRACE(format);
    for (const char* w :
         {"attn.weight", "fc1.weight", "fc2.weight", "head.weight", "late.weight"}) {
      const ValueId id = [&] {
        for (ValueId v = 0; v < m.graph.size(); ++v)
          if (m.graph.node(v).name == w) return v;
        return ValueId{-1};
      }();
      const auto& shape = m.graph.node(id).type.shape;
      std::vector<double> v = randomValues(shape[0] * shape[1], rng);
      if (std::string(format) == "csr") {
        for (double& e : v) e = keep(rng) ? e : 0.0;
      } else if (std::string(format) == "2:4") {
        pruneTo24(v);
      }
      m.params[w] = f32Tensor(shape, v);
    }
    m.params["attn.bias"] = f32Tensor({48}, randomValues(48, rng));
    m.params["fc1.bias"] = f32Tensor({96}, randomValues(96, rng));
    SpecializeOptions options = byRule();
    for (const char* w : {"attn.weight", "fc1.weight", "fc2.weight", "head.weight", "late.weight"})
      options.formats[w] = format;
    const Executor e = Executor::build(m, options);
    const auto& steps = e.steps();
    ASSERT_EQ(steps.size(), 9u) << e.describe();
    EXPECT_EQ(steps[0].what, "linear %3 + add %4") << e.describe();
    EXPECT_EQ(steps[3].what, "linear %11 + add %12");
    EXPECT_EQ(steps[4].what, "relu %13");
    EXPECT_EQ(steps[5].what, "linear %15 + relu %16 + add %17");
    EXPECT_EQ(steps[6].what, "linear %19");  // %20 is computed after the layer
    EXPECT_EQ(steps[8].what, "add %21");
    for (size_t s : {size_t{2}, size_t{3}})
      EXPECT_EQ(steps[s].provider.find("pair"), std::string::npos) << e.describe();
    for (bool zeroRows : {false, true}) {
      std::vector<double> x = randomValues(2 * 40 * 48, rng);
      // Most rows zero, the rest at 4% (under the sparse-input path's 12%: csr X against Wᵀ, R
      // bound there too).
      std::bernoulli_distribution few(0.04);
      for (int64_t r = 0; r < 80 && zeroRows; ++r) {
        for (int64_t k = 0; k < 48; ++k) {
          if (r % 5 != 0 || !few(rng)) x[static_cast<size_t>(r * 48 + k)] = 0.0;
        }
      }
      const auto expect = evaluateModel<double>(m, {{"x", {{2, 40, 48}, x}}});
      const auto got = e.run({{"x", {{2, 40, 48}, std::vector<float>(x.begin(), x.end())}}});
      ASSERT_EQ(got[0].shape, expect[0].shape);
      for (size_t i = 0; i < got[0].data.size(); ++i) {
        // Five f32 layers and a layer_norm (which scales rounding by 1/std) deep: 5e-4.
        ASSERT_NEAR(got[0].data[i], expect[0].data[i],
                    5e-4 * std::max(1.0, std::abs(expect[0].data[i])))
            << (zeroRows ? "zero rows, " : "") << "element " << i;
      }
    }
  }
}

// A layer whose result gets a residual does not pair with the next layer (the pair kernels take
// no residual): `fc2(gelu(fc1(x)) + x)` with csr and 2:4 weights runs as two steps, against
// float64.
TEST(GraphExecutor, ALayerWithAResidualDoesNotPair) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(0.2);
  for (const char* format : {"csr", "2:4"}) {
    SCOPED_TRACE(format);
    Model m;
    m.graph = parseGraph(R"(%0 = input "x" : f32[300, 48]
%1 = param "fc1.weight" : f32[48, 48]
%2 = linear(%0, %1)
%3 = gelu(%2)
%4 = add(%3, %0)
%5 = param "fc2.weight" : f32[40, 48]
%6 = linear(%4, %5)
output %6
)");
    for (const auto& [w, rows] : {std::pair{"fc1.weight", 48}, std::pair{"fc2.weight", 40}}) {
      std::vector<double> v = randomValues(rows * 48, rng);
      if (std::string(format) == "csr") {
        for (double& e : v) e = keep(rng) ? e : 0.0;
      } else {
        pruneTo24(v);
      }
      m.params[w] = f32Tensor({rows, 48}, v);
    }
    SpecializeOptions options = byRule();
    options.formats = {{"fc1.weight", format}, {"fc2.weight", format}};
    const Executor e = Executor::build(m, options);
    ASSERT_EQ(e.steps().size(), 2u) << e.describe();
    EXPECT_EQ(e.steps()[0].what, "linear %2 + gelu %3 + add %4");
    for (const auto& step : e.steps())
      EXPECT_EQ(step.provider.find("pair"), std::string::npos) << e.describe();
    const std::vector<double> x = randomValues(300 * 48, rng);
    const auto expect = evaluateModel<double>(m, {{"x", {{300, 48}, x}}});
    const auto got = e.run({{"x", {{300, 48}, std::vector<float>(x.begin(), x.end())}}});
    for (size_t i = 0; i < got[0].data.size(); ++i) {
      ASSERT_NEAR(got[0].data[i], expect[0].data[i],
                  1e-4 * std::max(1.0, std::abs(expect[0].data[i])))
          << "element " << i;
    }
  }
}

// The executor keeps its own copy of the weights: writing into the model's tensors after the
// build changes nothing it computes (were the arrays shared, the weight's kernel would see the new
// values and the transposed sparse-input path the old ones).
TEST(GraphExecutor, WeightsAreCopiedAtBuild) {
  Model m;
  m.graph = parseGraph(
      "%0 = input \"x\" : f32[4, 8]\n%1 = param \"w\" : f32[3, 8]\n"
      "%2 = linear(%0, %1)\noutput %2\n");
  for (const char* format : {"dense", "csr"}) {
    SCOPED_TRACE(format);
    m.params["w"] = f32Tensor({3, 8}, std::vector<double>(24, 0.5), format);
    SpecializeOptions options = byRule();
    options.formats["w"] = format;
    const Executor e = Executor::build(m, options);
    const DenseValue<float> x{{4, 8}, std::vector<float>(32, 1.0f)};
    const auto before = e.run({{"x", x}});
    float* w = m.params["w"].mutableValues().as<float>();
    for (int i = 0; i < 24; ++i) w[i] = 7.0f;
    EXPECT_EQ(e.run({{"x", x}})[0].data, before[0].data);
    EXPECT_EQ(before[0].data, std::vector<float>(12, 4.0f));
  }
}

TEST(GraphExecutor, BadInputsNameTheInput) {
  Model m;
  m.graph = parseGraph(
      "%0 = input \"x\" : f32[2, 4]\n%1 = param \"w\" : f32[3, 4]\n"
      "%2 = linear(%0, %1)\noutput %2\n");
  m.params["w"] = f32Tensor({3, 4}, std::vector<double>(12, 0.5));
  const Executor e = Executor::build(m, byRule());
  EXPECT_THROW(e.run({}), Error);
  try {
    e.run({{"x", {{4, 2}, std::vector<float>(8, 1)}}});
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("input \"x\" must be f32[2, 4]"), std::string::npos)
        << err.what();
  }
  const auto y = e.run({{"x", {{2, 4}, std::vector<float>(8, 1)}}});
  EXPECT_EQ(y[0].data, std::vector<float>(6, 2.0f));
}

const std::string kDnnDir = std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/dnn_data";

std::string dnnFile(const std::string& name) {
  return kDnnDir + "/" + name;
}

// The Graph Challenge sparse DNN (LAGraph's test subset): 30 RadiX-Net layers of 1024 neurons,
// Y = min(relu(Y W + b), 32) with b = -0.3, on 1200 MNIST-derived images; the rows still nonzero
// after the last layer are the expected categories (LAGraph: they converge within 27 layers).
TEST(GraphExecutor, GraphChallengeSparseDnnCategories) {
  const int layers = 30;
  GraphChallengeOptions options;
  options.layers = layers;
  options.rows = 1200;
  const Model m = graphChallengeModel(kDnnDir, options);
  ASSERT_EQ(m.params.at("W6").numStored(), 32768) << "the symmetric layer 6 must be expanded";
  try {
    options.layers = 31;
    graphChallengeModel(kDnnDir, options);
    FAIL() << "a missing layer file was not noticed";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("n1024-l31.mtx is missing"), std::string::npos)
        << err.what();
  }

  const Executor e = Executor::build(m, byRule());
  ASSERT_EQ(e.steps().size(), static_cast<size_t>(layers)) << e.describe();  // clip fused
  EXPECT_EQ(e.steps()[0].format, "csr");
  EXPECT_EQ(e.steps()[0].what, "matmul %4 + bias_add %5 + relu %6 + minimum %7");
  const Tensor images = read(dnnFile("sparse-images-1024_subset.mtx"));
  const std::vector<double> dense = toDense(images);
  const auto out = e.run({{"Y0", {{1200, 1024}, std::vector<float>(dense.begin(), dense.end())}}});
  std::set<int64_t> categories;
  for (int64_t r = 0; r < 1200; ++r) {
    for (int64_t j = 0; j < 1024; ++j) {
      if (out[0].data[static_cast<size_t>(r * 1024 + j)] != 0) {
        categories.insert(r);
        break;
      }
    }
  }
  const Coo expected = toCoo(read(dnnFile("neuron1024-l120-categories_subset.mtx")));
  std::set<int64_t> expect;
  for (int64_t q = 0; q < expected.numEntries(); ++q)
    expect.insert(expected.coords[static_cast<size_t>(2 * q)]);
  EXPECT_EQ(expect.size(), 19u);
  EXPECT_EQ(categories, expect);
}

// The public API (include/sparseflow/graph.h) as a C++ user calls it: text and weights in,
// compaction summary, the executor's steps and outputs.
TEST(GraphModelApi, CompactAndRunFromThePublicHeader) {
  std::mt19937_64 rng(freshSeed());
  std::vector<double> w1 = randomValues(8 * 4, rng), b1 = randomValues(8, rng);
  for (int64_t i = 0; i < 4; ++i) w1[static_cast<size_t>(3 * 4 + i)] = 0;  // neuron 3 never fires
  b1[3] = 0;
  const std::vector<double> w2 = randomValues(2 * 8, rng);
  std::map<std::string, Tensor> params = {
      {"w1", f32Tensor({8, 4}, w1)}, {"b1", f32Tensor({8}, b1)}, {"w2", f32Tensor({2, 8}, w2)}};
  const GraphModel model = GraphModel::fromText(R"(%0 = input "x" : f32[3, 4]
%1 = param "w1" : f32[8, 4]
%2 = param "b1" : f32[8]
%3 = linear(%0, %1, %2)
%4 = relu(%3)
%5 = param "w2" : f32[2, 8]
%6 = linear(%4, %5)
output %6
)",
                                                params, "mlp.sfg");
  EXPECT_NE(model.annotatedText().find("zero@0=[3]"), std::string::npos) << model.annotatedText();
  CompactionSummary summary;
  const GraphModel small = model.compacted(&summary);
  ASSERT_EQ(summary.removed.size(), 3u) << summary.text;
  EXPECT_EQ(small.params().at("w1").shape(), (std::vector<int64_t>{7, 4}));
  ModelExecutorOptions options;
  options.measure = false;
  const ModelExecutor run = ModelExecutor::build(small, options);
  ASSERT_EQ(run.steps().size(), 2u);
  EXPECT_EQ(run.steps()[0].what, "linear %3 + relu %4");
  DenseArray x{{3, 4}, {}};
  for (int i = 0; i < 12; ++i) x.data.push_back(static_cast<float>(std::sin(i)));
  const std::vector<DenseArray> y = run.run({{"x", x}});
  ASSERT_EQ(y.size(), 1u);
  ASSERT_EQ(y[0].shape, (std::vector<int64_t>{3, 2}));
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t o = 0; o < 2; ++o) {
      double want = 0;
      for (int64_t h = 0; h < 8; ++h) {
        double a = b1[static_cast<size_t>(h)];
        for (int64_t i = 0; i < 4; ++i)
          a += w1[static_cast<size_t>(h * 4 + i)] * x.data[static_cast<size_t>(r * 4 + i)];
        want += w2[static_cast<size_t>(o * 8 + h)] * std::max(0.0, a);
      }
      EXPECT_NEAR(y[0].data[static_cast<size_t>(r * 2 + o)], want, 1e-5);
    }
  }
  EXPECT_THROW(GraphModel::fromText("%0 = input \"x\" : f32[2]\n%1 = param \"w\" : f32[2]\n", {}),
               Error);
}

}  // namespace
}  // namespace sparseflow::graph
