// Attention through the executor's strided batched products: the heads split and merged by
// reshapes and transposes (as torch's capture and as ONNX exports spell them), the scores' scale,
// additive mask and softmax, all taken over by one step per product; against the float64
// evaluator, with the steps that remain written out. Spellings the plan must leave alone (a value
// read twice, an intermediate that is an output, the mask added before the scale) still match.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/random_coo.h"
#include "graph/exec/executor.h"
#include "graph/model/evaluate.h"
#include "graph/parser.h"
#include "sparseflow/build.h"

namespace sparseflow::graph {
namespace {

using sparseflow::testing::freshSeed;

/// Builds `text` with random f32 parameters and inputs (the input named "mask" gets 0, -8 or
/// finfo(f32).min per element: masked keys, skipped where they end a row; the parameter "scale"
/// a value in [0.1, 0.6)), runs it by rule and by measurement, and checks every output against
/// float64.
std::vector<StepReport> runAgainstFloat64(const std::string& text, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Model m;
  m.graph = parseGraph(text);
  std::map<std::string, DenseValue<double>> in64;
  std::map<std::string, DenseValue<float>> in32;
  for (const Node& node : m.graph.nodes()) {
    if (node.op != OpKind::kInput && node.op != OpKind::kParam) continue;
    std::vector<double> v(static_cast<size_t>(numElements(node.type.shape)));
    for (double& x : v) {
      const double r = u(rng);
      x = static_cast<float>(node.name == "mask"    ? (r < -0.2  ? -8.0
                                                       : r > 0.7 ? -3.4e38
                                                                 : 0.0)
                             : node.name == "scale" ? 0.35 + r / 4
                                                    : r);
    }
    if (node.op == OpKind::kParam) {
      m.params[node.name] = fromDense(node.type.shape, v.data(),
                                      Format::parse("dense", node.type.rank()), DType::kF32);
    } else {
      in64[node.name] = {node.type.shape, v};
      in32[node.name] = {node.type.shape, std::vector<float>(v.begin(), v.end())};
    }
  }
  const auto expect = evaluateModel(m, in64);
  std::vector<StepReport> steps;
  for (bool measure : {false, true}) {
    SCOPED_TRACE(measure ? "measured" : "by rule");
    SpecializeOptions options;
    options.measure = measure;
    options.measureReps = 1;
    const Executor e = Executor::build(m, options);
    const auto got = e.run(in32);
    EXPECT_EQ(got.size(), expect.size());
    for (size_t o = 0; o < got.size() && o < expect.size(); ++o) {
      EXPECT_EQ(got[o].shape, expect[o].shape);
      for (size_t i = 0; i < got[o].data.size(); ++i) {
        EXPECT_NEAR(got[o].data[i], expect[o].data[i],
                    1e-4 * std::max(1.0, std::abs(expect[o].data[i])))
            << "output " << o << " element " << i << "\n"
            << e.describe();
        if (std::abs(got[o].data[i] - expect[o].data[i]) >
            1e-4 * std::max(1.0, std::abs(expect[o].data[i]))) {
          return {};
        }
      }
    }
    steps = e.steps();
  }
  return steps;
}

std::vector<std::string> whats(const std::vector<StepReport>& steps) {
  std::vector<std::string> w;
  for (const StepReport& s : steps) w.push_back(s.what);
  return w;
}

// torch's capture (make_fx of a Hugging Face BERT layer): heads split by view + permute, batch
// and heads merged for bmm, the scores scaled, masked, soft-maxed, the context permuted back.
// B=2, T=19 (not a multiple of a vector), H=3, D=8.
TEST(GraphAttention, TorchSpellingIsTwoStridedSteps) {
  const auto steps = runAgainstFloat64(R"(%0 = input "x" : f32[38, 24]
%1 = input "mask" : f32[2, 1, 1, 19]
%2 = param "q.weight" : f32[24, 24]
%3 = param "k.weight" : f32[24, 24]
%4 = param "v.weight" : f32[24, 24]
%5 = param "scale" : f32[1]
%6 = linear(%0, %2)
%7 = linear(%0, %3)
%8 = linear(%0, %4)
%9 = reshape(%6, shape=[2, 19, 3, 8])
%10 = transpose(%9, perm=[0, 2, 1, 3])
%11 = reshape(%7, shape=[2, 19, 3, 8])
%12 = transpose(%11, perm=[0, 2, 3, 1])
%13 = reshape(%10, shape=[6, 19, 8])
%14 = reshape(%12, shape=[6, 8, 19])
%15 = batch_matmul(%13, %14)
%16 = reshape(%15, shape=[2, 3, 19, 19])
%17 = mul(%16, %5)
%18 = add(%17, %1)
%19 = softmax(%18, axis=3)
%20 = reshape(%19, shape=[6, 19, 19])
%21 = reshape(%8, shape=[2, 19, 3, 8])
%22 = transpose(%21, perm=[0, 2, 1, 3])
%23 = reshape(%22, shape=[6, 19, 8])
%24 = batch_matmul(%20, %23)
%25 = reshape(%24, shape=[2, 3, 19, 8])
%26 = transpose(%25, perm=[0, 2, 1, 3])
%27 = reshape(%26, shape=[38, 24])
output %27
)",
                                       freshSeed());
  const std::vector<std::string> want = {
      "linear %6", "linear %7", "linear %8",
      "batch_matmul %15 + reshape %9 + transpose %10 + reshape %11 + transpose %12 + reshape %13 + "
      "reshape %14 + reshape %16 + mul %17 + add %18 + softmax %19 + reshape %20",
      "batch_matmul %24 + reshape %21 + transpose %22 + reshape %23 + reshape %25 + transpose %26 "
      "+ "
      "reshape %27"};
  EXPECT_EQ(whats(steps), want);
  // The two products run as one batchedAttention (the scores never stored; the first step
  // empty), masked keys skipped.
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[3].provider, "batched_attention") << steps[3].why;
  EXPECT_EQ(steps[4].provider, "batched_attention") << steps[4].why;
}

// An ONNX export's spelling: 4-d products, the key transposed by perm [0, 2, 3, 1], the mask
// added to the scaled scores (operand order reversed), the context transposed and reshaped.
TEST(GraphAttention, OnnxSpellingFourDimensionalProducts) {
  const auto steps = runAgainstFloat64(R"(%0 = input "q" : f32[3, 21, 32]
%1 = input "k" : f32[3, 21, 32]
%2 = input "v" : f32[3, 21, 32]
%3 = input "mask" : f32[3, 1, 1, 21]
%4 = param "scale" : f32[1]
%5 = reshape(%0, shape=[3, 21, 2, 16])
%6 = transpose(%5, perm=[0, 2, 1, 3])
%7 = reshape(%1, shape=[3, 21, 2, 16])
%8 = transpose(%7, perm=[0, 2, 3, 1])
%9 = batch_matmul(%6, %8)
%10 = mul(%4, %9)
%11 = add(%3, %10)
%12 = softmax(%11, axis=3)
%13 = reshape(%2, shape=[3, 21, 2, 16])
%14 = transpose(%13, perm=[0, 2, 1, 3])
%15 = batch_matmul(%12, %14)
%16 = transpose(%15, perm=[0, 2, 1, 3])
%17 = reshape(%16, shape=[3, 21, 32])
output %17
)",
                                       freshSeed());
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].what,
            "batch_matmul %9 + reshape %5 + transpose %6 + reshape %7 + transpose %8 + mul %10 + "
            "add %11 + softmax %12");
  EXPECT_NE(steps[0].why.find("softmax"), std::string::npos) << steps[0].why;
  EXPECT_EQ(steps[1].provider, "batched_attention") << steps[1].why;
}

// What the plan must not take: the probabilities are also an output (materialized by their own
// step), the mask is added before the scale (the scale stays a step: scale then add is fused,
// not add then scale), and a product whose operands are one value.
TEST(GraphAttention, ValuesReadElsewhereStayAndTheEpilogueKeepsItsOrder) {
  const auto steps = runAgainstFloat64(R"(%0 = input "q" : f32[4, 9, 20]
%1 = input "k" : f32[4, 20, 9]
%2 = input "mask" : f32[4, 9, 9]
%3 = param "scale" : f32[1]
%4 = batch_matmul(%0, %1)
%5 = add(%4, %2)
%6 = mul(%5, %3)
%7 = softmax(%6, axis=2)
%8 = transpose(%0, perm=[0, 2, 1])
%9 = batch_matmul(%7, %0)
%10 = batch_matmul(%8, %9)
%11 = transpose(%10, perm=[0, 2, 1])
%12 = input "s" : f32[6, 6]
%13 = matmul(%12, %12)
output %11, %7, %13
)",
                                       freshSeed());
  const std::vector<std::string> want = {"batch_matmul %4 + add %5",
                                         "mul %6",
                                         "softmax %7",
                                         "batch_matmul %9",
                                         "batch_matmul %10 + transpose %8 + transpose %11",
                                         "matmul %13"};
  EXPECT_EQ(whats(steps), want);
  for (const StepReport& r : steps) EXPECT_NE(r.provider, "batched_attention") << r.what;
}

}  // namespace
}  // namespace sparseflow::graph
