// The graph's text form: parse(print(g)) is g on several graphs (with propagated attributes), the
// builder's shape errors name operator and value, parser errors name line:column, and mutated
// texts give a graph or a clear error, never a crash.
#include <gtest/gtest.h>

#include <random>

#include "graph_test_util.h"
#include "sparseflow/error.h"

namespace sparseflow::graph {
namespace {

const char* const kMlp = R"(%0 = input "x" : f32[8, 512]
%1 = param "fc1.weight" : f32[2048, 512] {zero@0=[3, 7..9]}
%2 = param "fc1.bias" : f32[2048] {zero@0=[3, 8]}
%3 = linear(%0, %1, %2) : f32[8, 2048]
%4 = relu(%3) : f32[8, 2048]
%5 = param "fc2.weight" : f32[512, 2048] {nm=2:4@1}
%6 = linear(%4, %5) : f32[8, 512]
%7 = softmax(%6, axis=1) : f32[8, 512]
output %7
)";

const char* const kAttention = R"(%0 = input "h" : f32[2, 16, 64]
%1 = param "q.weight" : f32[64, 64] {zero@0=[0..15]}
%2 = linear(%0, %1) : f32[2, 16, 64]
%3 = reshape(%2, shape=[2, 16, 4, 16]) : f32[2, 16, 4, 16]
%4 = transpose(%3, perm=[0, 2, 1, 3]) : f32[2, 4, 16, 16]
%5 = transpose(%3, perm=[0, 2, 3, 1]) : f32[2, 4, 16, 16]
%6 = batch_matmul(%4, %5) : f32[2, 4, 16, 16]
%7 = input "mask" : f32[2, 1, 1, 16] {ge=-10000}
%8 = add(%6, %7) : f32[2, 4, 16, 16]
%9 = softmax(%8, axis=3) : f32[2, 4, 16, 16]
%10 = batch_matmul(%9, %4) : f32[2, 4, 16, 16]
%11 = reduce_max(%10, axis=1) : f32[2, 16, 16]
%12 = param "ln.gamma" : f32[16]
%13 = param "ln.beta" : f32[16] {ge=0}
%14 = layer_norm(%11, %12, %13, axis=2, eps=1e-12) : f32[2, 16, 16]
output %14, %11
)";

const char* const kMisc = R"(%0 = param "emb" : f16[100, 8] {block=[10, 4]:[[0, 1], [3, 0]]}
%1 = input "ids" : i32[4]
%2 = embedding(%0, %1) : f16[4, 8]
%3 = slice(%2, axis=1, start=2, end=6) : f16[4, 4]
%4 = concat(%2, %3, axis=1) : f16[4, 12]
%5 = gelu(%4)
%6 = silu(%5)
%7 = tanh(%6)
%8 = param "b" : f16[12] {zero@0=[0], ge=-0.25}
%9 = bias_add(%7, %8)
%10 = mul(%9, %9)
%11 = param "w" : f16[12, 3] {mask="101010101010101010101010101010101010"}
%12 = matmul(%10, %11)
%13 = reduce_sum(%12, axis=0)
%14 = input "small" : f64[2, 2] {mask="0110", zero@1=[0]}
%15 = relu(%14)
%16 = minimum(%15, %14)
%17 = maximum(%16, %14)
%18 = layer_norm(%17, eps=1.0)
output %13, %18
)";

// The functions, comparisons and pooling of vision models and attention masks.
const char* const kMasksAndPools = R"(%0 = input "x" : f32[2, 3, 7, 7] {zero@1=[1]}
%1 = avg_pool2d(%0, kernel=[3, 3], stride=[2, 2], padding=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0) : f32[2, 3, 4, 4]
%2 = sigmoid(%1)
%3 = exp(%2)
%4 = sin(%3)
%5 = cos(%4)
%6 = param "t" : f32[4] {ge=0.5}
%7 = greater(%5, %6)
%8 = less(%5, %6)
%9 = equal(%7, %8)
%10 = not(%9)
%11 = where(%10, %1, %5)
%12 = avg_pool2d(%11, kernel=[2, 2])
output %12
)";

void expectRoundTrip(const Graph& g) {
  const std::string text = print(g);
  SCOPED_TRACE(text);
  const Graph back = parseGraph(text);
  std::string why;
  EXPECT_TRUE(graphsEqual(g, back, &why)) << why;
  EXPECT_EQ(print(back), text);
}

TEST(GraphText, RoundTripsBeforeAndAfterPropagation) {
  for (const char* text : {kMlp, kAttention, kMisc, kMasksAndPools}) {
    Graph g = parseGraph(text);
    expectRoundTrip(g);
    EXPECT_TRUE(propagate(g).converged);
    expectRoundTrip(g);
    // At the fixpoint a further sweep changes nothing.
    const Graph before = g;
    EXPECT_EQ(propagate(g).iterations, 1);
    EXPECT_TRUE(graphsEqual(before, g));
  }
  Graph empty;
  expectRoundTrip(empty);
}

TEST(GraphText, PrintsTheDocumentedForm) {
  const Graph g = parseGraph(kMlp);
  EXPECT_EQ(print(g), kMlp);
  EXPECT_EQ(printNode(g, 7), "%7 = softmax(%6, axis=1) : f32[8, 512]");
}

TEST(GraphText, NamesWithOddBytesRoundTrip) {
  Graph g;
  g.addInput("a \"quoted\"\\name\n\xc3\xa9", {DType::kF32, {2}});
  expectRoundTrip(g);
  EXPECT_NE(print(g).find("\\x22quoted\\x22"), std::string::npos);
}

TEST(GraphText, EqualityFindsTheFirstDifference) {
  const Graph a = parseGraph(kMlp);
  Graph b = parseGraph(kMlp);
  Tesa t = b.node(4).tesa;
  t.lowerBound = 0.0;
  b.setTesa(4, t);
  std::string why;
  EXPECT_FALSE(graphsEqual(a, b, &why));
  EXPECT_NE(why.find("value %4 differs"), std::string::npos) << why;
}

/// The message of the error `text` raises, checked to be of `code`.
std::string errorOf(const std::string& text, ErrorCode code = ErrorCode::kParseError) {
  try {
    parseGraph(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(GraphText, ParseErrorsNameLineAndColumn) {
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 512]\n%1 = relu(%2)"),
            "<graph>:2:11: %2 is not defined");
  EXPECT_EQ(errorOf("%0 = foo(%1)"), "<graph>:1:6: unknown operator 'foo'");
  EXPECT_EQ(errorOf("%0 = input \"x\" : q7[2]").substr(0, 17), "<graph>:1:18: unk");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[99999999999999999999]"),
            "<graph>:1:22: a shape is out of range");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[2] junk"),
            "<graph>:1:25: unexpected text after the end of the statement");
  EXPECT_EQ(errorOf("\n\n  %0 = input \"x : f32[2]"),
            "<graph>:3:14: a name: missing closing quote");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[2]\n%0 = relu(%0)"),
            "<graph>:2:2: %0 is defined twice");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[2] {zero@0=[1], zero@0=[1]}"),
            "<graph>:1:38: attribute 'zero' given twice");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[2] {nm=2:4}"),
            "<graph>:1:32: expected '@' before the n:m axis, found '}'");
  EXPECT_EQ(errorOf("outputs %0"), "<graph>:1:1: expected '%N = ...' or 'output', found 'outputs'");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[4] {zero@0=[3..1]}"),
            "<graph>:1:34: bad index or range 3..1");
}

TEST(GraphText, BuilderErrorsNameOperatorValueAndPosition) {
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 5]\n%1 = param \"w\" : f32[4, 6]\n"
                    "%2 = linear(%0, %1)",
                    ErrorCode::kInvalidArgument),
            "<graph>:3:6: linear %2: dim 1 of %0 (input 'x') is 5 but dim 1 of %1 (param 'w') "
            "is 6");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 5]\n%1 = softmax(%0, axis=2)",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: softmax %1: axis 2 is outside a rank-2 tensor");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 5]\n%1 = layer_norm(%0, eps=0.0)",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: layer_norm %1: eps must be positive and finite, got 0");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 5]\n%1 = layer_norm(%0, eps=1)",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: layer_norm %1: attribute 'eps' must be a real number (1e-5, 1.0)");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 5]\n%1 = relu(%0) : f32[8, 4]",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:17: written type f32[8, 4] is not the inferred f32[8, 5]");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[4] {zero@0=[4]}", ErrorCode::kInvalidArgument),
            "<graph>:1:25: %0 (input 'x'): zero slice index 4 along dim 0 is outside its extent 4");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 6]\n%1 = reshape(%0, shape=[5, -1])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: reshape %1: cannot infer the -1 of the shape from 48 elements");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[8, 6]\n%1 = transpose(%0, perm=[0, 0])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: transpose %1: perm is not a permutation of 0..1");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[3]\n%1 = input \"y\" : f32[4]\n%2 = add(%0, %1)",
                    ErrorCode::kInvalidArgument),
            "<graph>:3:6: add %2: %0 (input 'x') and %1 (input 'y') do not broadcast: extents 3 "
            "and 4 at dim 0 of the result");
  const char* image = "%0 = input \"x\" : f32[1, 2, 5, 5]\n";
  EXPECT_EQ(errorOf(std::string(image) + "%1 = max_pool2d(%0, kernel=[2, 2], padding=[1, 1, 1])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: max_pool2d %1: padding must be 4 integers of at least 0");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = max_pool2d(%0, kernel=[3, 3], padding=[3, 0, 0, 0])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: max_pool2d %1: padding 3/0 would make windows of padding only along "
            "dim 2");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = max_pool2d(%0, stride=[1, 1])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: max_pool2d %1: max_pool2d needs kernel=[kh, kw]");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = max_pool2d(%0, kernel=[7, 2])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: max_pool2d %1: the window (7 with dilation) is larger than the padded "
            "input (5) along dim 2");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = avg_pool2d(%0, kernel=[2, 2], ceil_mode=2)",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: avg_pool2d %1: ceil_mode must be 0 or 1, not 2");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = avg_pool2d(%0, kernel=[2, 2], dilation=[2, 2])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: avg_pool2d %1: unknown attribute 'dilation'");
  EXPECT_EQ(errorOf(std::string(image) + "%1 = avg_pool2d(%0, stride=[1, 1])",
                    ErrorCode::kInvalidArgument),
            "<graph>:2:6: avg_pool2d %1: avg_pool2d needs kernel=[kh, kw]");
  EXPECT_EQ(errorOf("%0 = input \"x\" : f32[3]\n%1 = relu(%0, %0)", ErrorCode::kInvalidArgument),
            "<graph>:2:6: relu %1: takes 1 operands, got 2");
  EXPECT_EQ(
      errorOf("%0 = input \"x\" : f32[1048576, 1048576, 1048576]", ErrorCode::kInvalidArgument),
      "<graph>:1:18: input 'x': f32[1048576, 1048576, 1048576] has more than 2^50 elements");
}

/// One random edit of `text`: delete, insert, duplicate or swap a span.
std::string mutate(const std::string& text, std::mt19937_64& rng) {
  static const std::string kAlphabet = "%=0123456789[](){},:@.-\"x \nabcdefghijklmnopqrstuvwxyz#\\";
  std::string s = text;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t n = s.size();
    const size_t pos = n == 0 ? 0 : rng() % n;
    switch (rng() % 5) {
      case 0:
        if (n > 0) s.erase(pos, 1 + rng() % 4);
        break;
      case 1: s.insert(pos, 1, kAlphabet[rng() % kAlphabet.size()]); break;
      case 2: s.insert(pos, 1, static_cast<char>(rng() % 256)); break;
      case 3:
        if (n > 0) s.insert(pos, s.substr(rng() % n, 1 + rng() % 12));
        break;
      default:
        if (n > 1) std::swap(s[pos], s[rng() % n]);
        break;
    }
  }
  return s;
}

TEST(GraphText, MutatedTextGivesAGraphOrAClearError) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::string> corpus = {kMlp, kAttention, kMisc};
  for (const char* t : {kMlp, kAttention, kMisc}) corpus.push_back(print(testing::propagated(t)));
  int parsed = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::string text = mutate(corpus[static_cast<size_t>(i) % corpus.size()], rng);
    try {
      Graph g = parseGraph(text);
      ++parsed;
      // What parses prints, reads back the same, and propagates.
      const Graph back = parseGraph(print(g));
      std::string why;
      ASSERT_TRUE(graphsEqual(g, back, &why)) << why << "\n" << text;
      propagate(g);
    } catch (const Error& e) {
      const std::string message = e.what();
      ASSERT_EQ(message.rfind("<graph>:", 0), 0u) << message << "\n" << text;
      ASSERT_NE(e.code(), ErrorCode::kInternal) << message << "\n" << text;
    }
  }
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace sparseflow::graph
