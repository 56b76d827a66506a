// Every propagation rule on a two- or three-operator graph with the expected attributes written
// out, and SparTA's chain through two linear layers (forward and backward).
#include <gtest/gtest.h>

#include <cmath>

#include "graph_test_util.h"
#include "sparseflow/error.h"
#include "support/elementwise_functions.h"

namespace sparseflow::graph {
namespace {

using testing::propagated;
using testing::tesaOf;

/// Two linear layers with a relu between them; the attributes of W1, b1 and W2 are given.
std::string twoLayers(const std::string& w1, const std::string& b1, const std::string& w2) {
  return "%0 = input \"x\" : f32[8, 6]\n"
         "%1 = param \"fc1.weight\" : f32[4, 6] " +
         w1 +
         "\n"
         "%2 = param \"fc1.bias\" : f32[4] " +
         b1 +
         "\n"
         "%3 = linear(%0, %1, %2)\n"
         "%4 = relu(%3)\n"
         "%5 = param \"fc2.weight\" : f32[3, 4] " +
         w2 +
         "\n"
         "%6 = param \"fc2.bias\" : f32[3]\n"
         "%7 = linear(%4, %5, %6)\n"
         "output %7\n";
}

// SparTA §4: a zero row o of W1 with a zero bias entry o gives a zero column o of the activation,
// which stays zero after relu and makes column o of W2 dead.
TEST(GraphRules, SpartaForwardChain) {
  const Graph g = propagated(twoLayers("{zero@0=[2]}", "{zero@0=[2]}", ""));
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[2]}");
  EXPECT_EQ(tesaOf(g, 4), "{zero@1=[2], ge=0}");
  EXPECT_EQ(tesaOf(g, 5), "{dead@1=[2]}");
  EXPECT_EQ(tesaOf(g, 7), "");
  EXPECT_EQ(tesaOf(g, 0), "");
  // A zero row of W1 alone is not enough: the bias still reaches the column.
  const Graph h = propagated(twoLayers("{zero@0=[2]}", "", ""));
  EXPECT_EQ(tesaOf(h, 3), "");
  EXPECT_EQ(tesaOf(h, 5), "");
}

// ... and backward: a zero column o of W2 leaves column o of the activation unused, so row o of W1
// and bias entry o are removable.
TEST(GraphRules, SpartaBackwardChain) {
  const Graph g = propagated(twoLayers("", "", "{zero@1=[1, 3]}"));
  EXPECT_EQ(tesaOf(g, 4), "{dead@1=[1, 3], ge=0}");
  EXPECT_EQ(tesaOf(g, 3), "{dead@1=[1, 3]}");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[1, 3]}");
  EXPECT_EQ(tesaOf(g, 2), "{dead@0=[1, 3]}");
  EXPECT_EQ(tesaOf(g, 0), "");
}

// Both at once: the facts of either direction reach the other end.
TEST(GraphRules, SpartaBothWays) {
  const Graph g = propagated(twoLayers("{zero@0=[0]}", "{zero@0=[0]}", "{zero@1=[3]}"));
  EXPECT_EQ(tesaOf(g, 4), "{zero@1=[0], dead@1=[3], ge=0}");
  EXPECT_EQ(tesaOf(g, 5), "{zero@1=[3], dead@1=[0]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[0], dead@0=[3]}");
}

TEST(GraphRules, LinearWithoutBiasKeepsZeroRowsOfX) {
  const Graph g = propagated(R"(%0 = input "x" : f32[3, 4] {zero@0=[0], zero@1=[3]}
%1 = param "w" : f32[2, 4] {zero@0=[1], zero@1=[0]}
%2 = linear(%0, %1)
output %2
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[0], zero@1=[1]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[1], zero@1=[0], dead@1=[3]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[0], zero@1=[3], dead@1=[0]}");
}

TEST(GraphRules, Matmul) {
  const Graph g = propagated(R"(%0 = input "a" : f32[4, 5] {zero@0=[1], zero@1=[2]}
%1 = input "b" : f32[5, 3] {zero@1=[0]}
%2 = matmul(%0, %1)
output %2
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[1], zero@1=[0]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@1=[0], dead@0=[2]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[1], zero@1=[2]}");
}

TEST(GraphRules, BatchMatmulZeroBatch) {
  const Graph g = propagated(R"(%0 = input "a" : f32[2, 4, 5] {zero@0=[1]}
%1 = input "b" : f32[2, 5, 3]
%2 = batch_matmul(%0, %1)
output %2
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[1]}");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[1]}");
}

TEST(GraphRules, EmbeddingKeepsZeroColumnsOfTheTable) {
  const Graph g = propagated(R"(%0 = param "table" : f32[10, 4] {zero@1=[3], ge=0}
%1 = input "ids" : i64[2, 5]
%2 = embedding(%0, %1)
%3 = slice(%2, axis=2, start=0, end=2)
output %3
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@2=[3], dead@2=[2, 3], ge=0}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@1=[3], dead@1=[2, 3], ge=0}");
}

TEST(GraphRules, ReluKeepsZerosAndBoundsBelow) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 8] {zero@0=[1], zero@1=[0, 5], nm=2:4@1}
%1 = relu(%0)
output %1
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[1], zero@1=[0, 5], nm=2:4@1, ge=0}");
}

TEST(GraphRules, SmoothActivationsKeepZerosAndBound) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@1=[3]}
%1 = gelu(%0)
%2 = silu(%0)
%3 = tanh(%0)
%4 = input "p" : f32[4, 6] {ge=0.5}
%5 = gelu(%4)
%6 = tanh(%4)
%7 = gelu_tanh(%0)
%8 = gelu_tanh(%4)
output %1, %2, %3, %5, %6, %7, %8
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@1=[3], ge=-0.17}");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[3], ge=-0.28}");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[3], ge=-1}");
  EXPECT_EQ(tesaOf(g, 5), "{ge=0}");
  EXPECT_EQ(g.node(6).tesa.lowerBound, std::tanh(0.5));
  // The tanh form dips lower (-0.170041 at -0.7525) than the erf form's -0.16997.
  EXPECT_EQ(tesaOf(g, 7), "{zero@1=[3], ge=-0.171}");
  EXPECT_EQ(tesaOf(g, 8), "{ge=0}");
  double lowest = 0;
  for (double x = -3; x < 0; x += 1e-4)
    lowest = std::min(lowest, support::elementwise::GeluTanh<double>(x));
  EXPECT_GE(lowest, *g.node(7).tesa.lowerBound);
}

TEST(GraphRules, AddKeepsCommonZerosAndPassesDeadSlices) {
  const Graph g = propagated(R"(%0 = input "a" : f32[4, 6] {zero@1=[1, 2], ge=1}
%1 = param "b" : f32[6] {zero@0=[2, 4], ge=0.5}
%2 = add(%0, %1)
%3 = slice(%2, axis=1, start=0, end=3)
output %3
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[2], dead@1=[3..5], ge=1.5}");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[2], ge=1.5}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@1=[1, 2], dead@1=[3..5], ge=1}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[2, 4], dead@0=[3..5], ge=0.5}");
}

TEST(GraphRules, BiasAddIsABroadcastAdd) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 3] {zero@0=[1], zero@1=[0, 2]}
%1 = param "b" : f32[3] {zero@0=[2]}
%2 = bias_add(%0, %1)
output %2
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[2]}");
}

TEST(GraphRules, MulKeepsZerosOfEither) {
  const Graph g = propagated(R"(%0 = input "a" : f32[3, 6] {zero@1=[1]}
%1 = input "b" : f32[3, 6] {zero@1=[4]}
%2 = mul(%0, %1)
output %2
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[1, 4]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@1=[1], dead@1=[4]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@1=[4], dead@1=[1]}");
}

// The Graph Challenge's clip at 32: minimum keeps a zero of x where the other operand is never
// negative (and zeros common to both), maximum only the common zeros; bounds combine.
TEST(GraphRules, DivKeepsTheNumeratorsZerosOnly) {
  // a / b: a's zero column 1 stays zero, b's zero column 4 does not (x / 0 is inf); positive
  // over a positive denominator. Backward: the quotient's dead column 5 is dead in both, and b
  // is dead where a is zero (the quotient is zero there whatever b holds), not the reverse.
  const Graph g = propagated(R"(%0 = input "a" : f32[4, 6] {zero@1=[1], ge=0}
%1 = param "b" : f32[6] {zero@0=[4], ge=0.5}
%2 = div(%0, %1)
%3 = slice(%2, axis=1, start=0, end=5)
output %3
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[1], dead@1=[5], ge=0}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@1=[1], dead@1=[5], ge=0}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[4], dead@0=[1, 5], ge=0.5}");
  // b over a: b's zeros are the quotient's; a negative numerator bound gives none.
  const Graph h = propagated(R"(%0 = input "a" : f32[4, 6] {zero@1=[1]}
%1 = param "b" : f32[6] {zero@0=[4], ge=-1}
%2 = div(%1, %0)
output %2
)");
  EXPECT_EQ(tesaOf(h, 2), "{zero@1=[4]}");
  EXPECT_EQ(tesaOf(h, 0), "{zero@1=[1], dead@1=[4]}");
}

TEST(GraphRules, SqrtKeepsZerosAndIsNonNegative) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@0=[2]}
%1 = sqrt(%0)
%2 = input "p" : f32[4, 6] {ge=4}
%3 = sqrt(%2)
%4 = slice(%1, axis=0, start=0, end=3)
output %4, %3
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[2], dead@0=[3], ge=0}");
  EXPECT_EQ(tesaOf(g, 3), "{ge=2}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[2], dead@0=[3]}");
}

TEST(GraphRules, MaxPoolKeepsZeroImagesAndChannelsAndPassesDeadOnes) {
  // Channel 2 and image 1 all zero pool to zeros (padding never wins); the bound holds; the
  // spatial facts are dropped. Channel 3 dead after the pooling is dead before it.
  const Graph g =
      propagated(R"(%0 = input "x" : f32[2, 4, 6, 6] {zero@0=[1], zero@1=[2], zero@3=[5], ge=-1}
%1 = max_pool2d(%0, kernel=[3, 3], stride=[2, 2], padding=[1, 1, 1, 1])
%2 = slice(%1, axis=1, start=0, end=3)
output %2
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[1], zero@1=[2], dead@1=[3], ge=-1}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[1], zero@1=[2], zero@3=[5], dead@1=[3], ge=-1}");
}

TEST(GraphRules, FunctionsThatMoveZeroKeepNoZeroAndSinKeepsThem) {
  // sigmoid(0) = 0.5, exp(0) = 1, cos(0) = 1, not(0) = 1: x's zero rows are no zeros of theirs;
  // sigmoid and exp map the bound (increasing), cos and sin are within [-1, 1], sin keeps zeros.
  // Dead rows (3, sliced off) pass back through each.
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@0=[2], ge=0}
%1 = sigmoid(%0)
%2 = exp(%0)
%3 = cos(%0)
%4 = sin(%0)
%5 = not(%0)
%6 = input "y" : f32[4, 6] {zero@0=[2]}
%7 = exp(%6)
%8 = slice(%1, axis=0, start=0, end=3)
output %8, %2, %3, %4, %5, %7
)");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[3], ge=0.5}");
  EXPECT_EQ(tesaOf(g, 2), "{ge=1}");
  EXPECT_EQ(tesaOf(g, 3), "{ge=-1}");
  EXPECT_EQ(tesaOf(g, 4), "{zero@0=[2], ge=-1}");
  EXPECT_EQ(tesaOf(g, 5), "{ge=0}");
  EXPECT_EQ(tesaOf(g, 7), "{ge=0}");
}

TEST(GraphRules, ComparisonsAreZeroWhereTheirOperandsZerosAndBoundsSaySo) {
  // a > b is 0 where both are 0 (column 1), or where a is 0 and b is never negative; a < b is
  // b > a; a == b is 0 where one is 0 and the other positive by its bound. Dead columns pass back.
  const Graph g = propagated(R"(%0 = input "a" : f32[3, 6] {zero@1=[1, 2]}
%1 = input "b" : f32[3, 6] {zero@1=[1, 4]}
%2 = greater(%0, %1)
%3 = less(%0, %1)
%4 = input "p" : f32[6] {zero@0=[3], ge=0}
%5 = greater(%0, %4)
%6 = less(%4, %0)
%7 = input "q" : f32[3, 6] {ge=0.5}
%8 = equal(%0, %7)
%9 = equal(%0, %1)
%10 = slice(%2, axis=1, start=0, end=5)
output %10, %3, %5, %6, %8, %9
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[1], dead@1=[5], ge=0}");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[1], ge=0}");
  EXPECT_EQ(tesaOf(g, 5), "{zero@1=[1, 2], ge=0}");
  EXPECT_EQ(tesaOf(g, 6), "{zero@1=[1, 2], ge=0}");
  EXPECT_EQ(tesaOf(g, 8), "{zero@1=[1, 2], ge=0}");
  EXPECT_EQ(tesaOf(g, 9), "{ge=0}");
}

TEST(GraphRules, AvgPoolKeepsZeroPlanesAndCountedPaddingLowersTheBound) {
  // As max_pool2d: zero images and channels stay zero, dead channels pass back; the bound 1
  // holds without padding or when padding is not counted, and falls to 0 when padded zeros count.
  const Graph g = propagated(R"(%0 = input "x" : f32[2, 4, 6, 6] {zero@1=[2], ge=1}
%1 = avg_pool2d(%0, kernel=[2, 2])
%2 = avg_pool2d(%0, kernel=[3, 3], stride=[2, 2], padding=[1, 1, 1, 1])
%3 = avg_pool2d(%0, kernel=[3, 3], stride=[2, 2], padding=[1, 1, 1, 1], count_include_pad=0)
%4 = slice(%1, axis=1, start=0, end=3)
output %4, %2, %3
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@1=[2], dead@1=[3], ge=1}");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[2], ge=0}");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[2], ge=1}");
}

TEST(GraphRules, WhereKeepsWhatBothBranchesOrTheFalseBranchMakeZero) {
  // Column 1: a and b both zero. Column 3: cond false (zero) and b zero. Column 4: a zero but b
  // not, cond unknown: not a zero. Backward: the result's dead column 5 in all three; a is also
  // dead where cond is false (columns 2 and 3: never picked).
  const Graph g = propagated(R"(%0 = param "cond" : f32[6] {zero@0=[2, 3]}
%1 = input "a" : f32[4, 6] {zero@1=[1, 4], ge=-2}
%2 = input "b" : f32[4, 6] {zero@1=[1, 3], ge=-1}
%3 = where(%0, %1, %2)
%4 = slice(%3, axis=1, start=0, end=5)
output %4
)");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[1, 3], dead@1=[5], ge=-2}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@1=[1, 4], dead@1=[2, 3, 5], ge=-2}");
  EXPECT_EQ(tesaOf(g, 2), "{zero@1=[1, 3], dead@1=[5], ge=-1}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[2, 3], dead@0=[5]}");
}

TEST(GraphRules, MinimumAndMaximumKeepWhatTheirBoundsAllow) {
  const Graph g = propagated(R"(%0 = input "x" : f32[3, 6] {zero@1=[1, 2]}
%1 = relu(%0)
%2 = param "ymax" : f32[1] {ge=32}
%3 = minimum(%1, %2)
%4 = input "y" : f32[3, 6] {zero@1=[2, 5]}
%5 = minimum(%4, %1)
%6 = param "lo" : f32[6] {zero@0=[1, 5]}
%7 = maximum(%4, %6)
%8 = maximum(%3, %6)
%9 = slice(%8, axis=1, start=0, end=4)
output %3, %5, %7, %9
)");
  EXPECT_EQ(tesaOf(g, 3), "{zero@1=[1, 2], ge=0}");
  EXPECT_EQ(tesaOf(g, 5), "{zero@1=[2, 5]}");  // relu(x) >= 0 keeps every zero of y
  EXPECT_EQ(tesaOf(g, 7), "{zero@1=[5]}");
  EXPECT_EQ(tesaOf(g, 8), "{zero@1=[1], dead@1=[4, 5], ge=0}");
  EXPECT_EQ(tesaOf(g, 6), "{zero@0=[1, 5]}");
}

// conv2d: filter o with a zero bias entry gives a zero output channel (forward); a zero input
// channel of every filter leaves that input channel dead, and a dead output channel its filter and
// bias entry (backward); with groups the channel facts stop at the group boundaries.
TEST(GraphRules, Conv2dChannels) {
  const Graph g = propagated(R"(%0 = input "x" : f32[2, 4, 9, 9] {zero@0=[1]}
%1 = param "w1" : f32[6, 4, 3, 3] {zero@0=[2], zero@1=[3]}
%2 = param "b1" : f32[6] {zero@0=[2, 5]}
%3 = conv2d(%0, %1, %2, stride=[2, 2], padding=[1, 1])
%4 = relu(%3)
%5 = param "w2" : f32[3, 6, 1, 1] {zero@1=[4]}
%6 = conv2d(%4, %5)
%7 = param "w3" : f32[4, 3, 3, 3] {zero@1=[1]}
%8 = conv2d(%6, %7, groups=1, dilation=[2, 2])
%9 = slice(%8, axis=1, start=0, end=2)
output %9
)");
  EXPECT_EQ(printNode(g, 3),
            "%3 = conv2d(%0, %1, %2, dilation=[1, 1], groups=1, padding=[1, 1], stride=[2, 2]) : "
            "f32[2, 6, 5, 5] {zero@1=[2], dead@1=[4]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[1], dead@1=[3]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[2], zero@1=[3], dead@0=[4]}");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[2, 5], dead@0=[4]}");
  EXPECT_EQ(tesaOf(g, 5), "{zero@1=[4], dead@0=[1], dead@1=[2]}");
  EXPECT_EQ(tesaOf(g, 6), "{dead@1=[1]}");
  EXPECT_EQ(tesaOf(g, 7), "{zero@1=[1], dead@0=[2, 3]}");
  EXPECT_EQ(printNode(g, 8).substr(0, 70),
            "%8 = conv2d(%6, %7, dilation=[2, 2], groups=1, padding=[0, 0], stride=");
  // Groups: channel facts do not cross them; a bias-free conv keeps zero images.
  const Graph h = propagated(R"(%0 = input "x" : f32[2, 4, 5, 5] {zero@0=[0], zero@1=[1]}
%1 = param "w" : f32[4, 2, 3, 3] {zero@1=[0]}
%2 = conv2d(%0, %1, groups=2)
output %2
)");
  EXPECT_EQ(tesaOf(h, 2), "{zero@0=[0]}");
  EXPECT_EQ(tesaOf(h, 0), "{zero@0=[0], zero@1=[1]}");
  EXPECT_EQ(tesaOf(h, 1), "{zero@1=[0]}");
  // Shapes and attributes are checked, naming the operator.
  EXPECT_THROW(parseGraph("%0 = input \"x\" : f32[1, 3, 4, 4]\n%1 = param \"w\" : f32[2, 3, 5, "
                          "5]\n%2 = conv2d(%0, %1)"),
               Error);
  EXPECT_THROW(parseGraph("%0 = input \"x\" : f32[1, 3, 4, 4]\n%1 = param \"w\" : f32[2, 3, 1, "
                          "1]\n%2 = conv2d(%0, %1, groups=2)"),
               Error);
  EXPECT_TRUE(graphsEqual(parseGraph(print(g)), g));
}

TEST(GraphRules, BoundsThatOverflowAreDropped) {
  const Graph g = propagated(R"(%0 = input "a" : f32[2] {ge=1e308}
%1 = mul(%0, %0)
%2 = add(%0, %0)
%3 = reduce_sum(%0, axis=0)
output %1, %2, %3
)");
  EXPECT_EQ(tesaOf(g, 1), "");
  EXPECT_EQ(tesaOf(g, 2), "");
  EXPECT_EQ(tesaOf(g, 3), "");
}

TEST(GraphRules, MasksCombineInAddAndMul) {
  const Graph g = propagated(R"(%0 = input "a" : f32[2, 2] {mask="1001"}
%1 = input "b" : f32[2, 2] {mask="1100"}
%2 = add(%0, %1)
%3 = mul(%0, %1)
output %2, %3
)");
  EXPECT_EQ(tesaOf(g, 2), "{mask=\"1101\"}");
  EXPECT_EQ(tesaOf(g, 3), "{mask=\"1000\"}");
  const Graph blocks =
      propagated(R"(%0 = input "a" : f32[4, 4] {block=[2, 2]:[[0, 0], [1, 1]], nm=1:4@1}
%1 = input "b" : f32[4, 4] {block=[2, 2]:[[0, 0]], nm=2:4@1}
%2 = add(%0, %1)
%3 = mul(%0, %1)
output %2, %3
)");
  EXPECT_EQ(tesaOf(blocks, 2), "{nm=3:4@1, block=[2, 2]:[[0, 0]]}");
  EXPECT_EQ(tesaOf(blocks, 3), "{nm=1:4@1, block=[2, 2]:[[0, 0], [1, 1]]}");
}

TEST(GraphRules, SoftmaxDestroysZerosAndMixesItsAxis) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@0=[0], zero@1=[1]}
%1 = softmax(%0, axis=1)
%2 = slice(%1, axis=0, start=0, end=2)
output %2
)");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[2, 3], ge=0}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[0], zero@1=[1], dead@0=[2, 3]}");
  const Graph h = propagated(R"(%0 = input "x" : f32[4, 6]
%1 = softmax(%0, axis=-1)
%2 = slice(%1, axis=1, start=0, end=2)
output %2
)");
  EXPECT_EQ(tesaOf(h, 1), "{dead@1=[2..5], ge=0}");
  EXPECT_EQ(tesaOf(h, 0), "");
}

TEST(GraphRules, LayerNormDestroysZerosButGammaAndBetaKeepTheirs) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@1=[1]}
%1 = layer_norm(%0)
%2 = param "gamma" : f32[6] {zero@0=[1, 2]}
%3 = param "beta" : f32[6] {zero@0=[2]}
%4 = layer_norm(%0, %2, %3, axis=1)
output %1, %4
)");
  EXPECT_EQ(tesaOf(g, 1), "");
  EXPECT_EQ(tesaOf(g, 4), "{zero@1=[2]}");
}

TEST(GraphRules, LayerNormPassesDeadRowsAndFeedsGammaAndBeta) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6]
%1 = param "gamma" : f32[6]
%2 = param "beta" : f32[6]
%3 = layer_norm(%0, %1, %2, axis=-1)
%4 = slice(%3, axis=1, start=0, end=2)
%5 = slice(%4, axis=0, start=1, end=4)
output %5
)");
  EXPECT_EQ(tesaOf(g, 3), "{dead@0=[0], dead@1=[2..5]}");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[2..5]}");
  EXPECT_EQ(tesaOf(g, 2), "{dead@0=[2..5]}");
  EXPECT_EQ(tesaOf(g, 0), "{dead@0=[0]}");
}

TEST(GraphRules, TransposePermutesEveryFact) {
  const Graph g = propagated(
      R"(%0 = input "x" : f32[4, 6] {zero@0=[1], zero@1=[2], nm=2:4@1, block=[2, 3]:[[0, 1], [1, 0]]}
%1 = transpose(%0, perm=[1, 0])
%2 = slice(%1, axis=0, start=0, end=3)
output %2
)");
  EXPECT_EQ(tesaOf(g, 1),
            "{zero@0=[2], zero@1=[1], dead@0=[3..5], nm=2:4@0, block=[3, 2]:[[0, 1], [1, 0]]}");
  EXPECT_EQ(tesaOf(g, 0),
            "{zero@0=[1], zero@1=[2], dead@1=[3..5], nm=2:4@1, block=[2, 3]:[[0, 1], [1, 0]]}");
}

TEST(GraphRules, SliceShiftsZerosAndLeavesTheRestDead) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@0=[3], zero@1=[1, 4]}
%1 = slice(%0, axis=1, start=2, end=6)
output %1
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[3], zero@1=[2]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[3], zero@1=[1, 4], dead@1=[0, 1]}");
}

TEST(GraphRules, ConcatUnitesAlongItsAxisAndIntersectsAcross) {
  const Graph g = propagated(R"(%0 = input "a" : f32[2, 3] {zero@0=[1], zero@1=[0]}
%1 = input "b" : f32[2, 2] {zero@0=[1], zero@1=[1]}
%2 = concat(%0, %1, axis=1)
%3 = slice(%2, axis=1, start=0, end=3)
output %3
)");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[1], zero@1=[0, 4], dead@1=[3, 4]}");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[1], zero@1=[1], dead@1=[0, 1]}");
  EXPECT_EQ(tesaOf(g, 0), "{zero@0=[1], zero@1=[0]}");
}

TEST(GraphRules, ReshapeSplitsMergesAndDropsWhatItCannotMap) {
  // Splitting 8 columns into 2 heads of 4: a head whose columns are all zero is a zero head.
  const Graph heads = propagated(R"(%0 = input "x" : f32[2, 8] {zero@0=[1], zero@1=[4..7]}
%1 = reshape(%0, shape=[2, 2, -1])
output %1
)");
  EXPECT_EQ(tesaOf(heads, 1), "{zero@0=[1], zero@1=[1]}");
  EXPECT_EQ(printNode(heads, 1),
            "%1 = reshape(%0, shape=[2, 2, 4]) : f32[2, 2, 4] {zero@0=[1], zero@1=[1]}");
  // Merging [2, 3] into 6: every merged index with a zero component.
  const Graph merged = propagated(R"(%0 = input "x" : f32[2, 3, 4] {zero@1=[1], zero@2=[0]}
%1 = reshape(%0, shape=[6, 4])
output %1
)");
  EXPECT_EQ(tesaOf(merged, 1), "{zero@0=[1, 4], zero@1=[0]}");
  // [6, 4] -> [4, 6] shares no dimension boundary: nothing is carried.
  const Graph dropped = propagated(R"(%0 = input "x" : f32[6, 4] {zero@0=[1], ge=0}
%1 = reshape(%0, shape=[4, 6])
output %1
)");
  EXPECT_EQ(tesaOf(dropped, 1), "{ge=0}");
  // Backward: a dead head is dead columns of the merged operand.
  const Graph back = propagated(R"(%0 = input "x" : f32[2, 8]
%1 = reshape(%0, shape=[2, 2, 4])
%2 = slice(%1, axis=1, start=0, end=1)
output %2
)");
  EXPECT_EQ(tesaOf(back, 0), "{dead@1=[4..7]}");
}

TEST(GraphRules, ReductionsKeepTheOtherAxesZeros) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6] {zero@0=[1], zero@1=[2], ge=0.5}
%1 = reduce_sum(%0, axis=1)
%2 = reduce_max(%0, axis=0)
output %1, %2
)");
  EXPECT_EQ(tesaOf(g, 1), "{zero@0=[1], ge=3}");
  EXPECT_EQ(tesaOf(g, 2), "{zero@0=[2], ge=0.5}");
  const Graph back = propagated(R"(%0 = input "x" : f32[4, 6]
%1 = reduce_sum(%0, axis=0)
%2 = slice(%1, axis=0, start=0, end=4)
output %2
)");
  EXPECT_EQ(tesaOf(back, 0), "{dead@1=[4, 5]}");
}

TEST(GraphRules, ValuesWithoutUsesAreWhollyDead) {
  const Graph g = propagated(R"(%0 = input "x" : f32[4, 6]
%1 = relu(%0)
%2 = tanh(%0)
output %2
)");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[0..3], ge=0}");
  EXPECT_EQ(tesaOf(g, 0), "");
}

TEST(GraphRules, FixpointReachesAcrossABranch) {
  // The dead column found at the end travels back through the add to both branches; x stays
  // needed, since the first linear still reads its column 0.
  const Graph g = propagated(R"(%0 = input "x" : f32[2, 4]
%1 = param "w" : f32[4, 4]
%2 = linear(%0, %1)
%3 = relu(%2)
%4 = add(%3, %0)
%5 = param "w2" : f32[3, 4] {zero@1=[0]}
%6 = linear(%4, %5)
output %6
)");
  EXPECT_EQ(tesaOf(g, 4), "{dead@1=[0]}");
  EXPECT_EQ(tesaOf(g, 3), "{dead@1=[0], ge=0}");
  EXPECT_EQ(tesaOf(g, 1), "{dead@0=[0]}");
  EXPECT_EQ(tesaOf(g, 0), "");
}

}  // namespace
}  // namespace sparseflow::graph
