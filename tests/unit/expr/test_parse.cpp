// parse and toString: the kernels of DESIGN.md print back as written, precedence and literals
// survive a round trip, malformed text is refused at its exact line and column, and random trees
// print and re-parse identically.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "expr/expr.h"
#include "sparseflow/error.h"

namespace sparseflow::expr {
namespace {

// The message of the parse error `text` must raise.
std::string parseError(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParseError) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

// The first line of a message (without the excerpt).
std::string firstLine(const std::string& message) {
  return message.substr(0, message.find('\n'));
}

TEST(Parse, KernelsPrintBackAsWritten) {
  for (const char* kernel : {
           "y(i) = A(i,j) * x(j)",
           "C(i,j) = A(i,k) * B(k,j)",
           "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))",
           "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
           "C(i,j) += alpha * A(i,j) - B(i,j) / 2",
           "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
           "y(i) = max(j, abs(A(i,j)))",
           "s() = A(i,j) * A(i,j)",
           "y(i) = gelu_tanh(x(i)) + gelu(x(i)) * silu(x(i)) - sigmoid(tanh(x(i)))",
           "y(i) = sqrt(exp(log(x(i))))",
           "y(i) = minimum(maximum(x(i), 0), 6) + 2 * maximum(x(i), -alpha)",
       }) {
    const Statement s = parse(kernel);
    EXPECT_EQ(toString(s), kernel);
    EXPECT_EQ(s.text, kernel);
    EXPECT_TRUE(sameStatement(parse(toString(s)), s)) << kernel;
  }
}

TEST(Parse, TreeShape) {
  const Statement s = parse("C(i,j) += alpha * A(i,j) - B(i,j) / 2");
  EXPECT_EQ(s.lhs.tensor, "C");
  EXPECT_EQ(s.lhs.indices, (std::vector<std::string>{"i", "j"}));
  EXPECT_TRUE(s.accumulate);
  const auto& sub = std::get<Binary>(s.rhs->node);
  EXPECT_EQ(sub.op, BinaryOp::kSub);
  const auto& mul = std::get<Binary>(sub.lhs->node);
  EXPECT_EQ(mul.op, BinaryOp::kMul);
  EXPECT_EQ(std::get<Param>(mul.lhs->node).name, "alpha");
  EXPECT_EQ(std::get<Access>(mul.rhs->node).tensor, "A");
  const auto& div = std::get<Binary>(sub.rhs->node);
  EXPECT_EQ(div.op, BinaryOp::kDiv);
  EXPECT_EQ(std::get<Literal>(div.rhs->node).value, 2.0);

  const Statement scalar = parse("s() = t()");
  EXPECT_TRUE(scalar.lhs.indices.empty());
  EXPECT_TRUE(std::get<Access>(scalar.rhs->node).indices.empty());

  const Statement sddmm = parse("Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))");
  const auto& reduce = std::get<Reduce>(std::get<Binary>(sddmm.rhs->node).rhs->node);
  EXPECT_EQ(reduce.op, ReduceOp::kSum);
  EXPECT_EQ(reduce.index, "k");
  EXPECT_FALSE(reduce.implicit);
  EXPECT_EQ(std::get<Reduce>(parse("y(i) = max(j, A(i,j))").rhs->node).op, ReduceOp::kMax);
}

TEST(Parse, NumericLiterals) {
  const Statement s = parse("y(i) = 1e-3 * x(i) + 2.5E+2 * z(i) + .5 + 7. + 3e2 + 0.25");
  EXPECT_EQ(toString(s), "y(i) = 0.001 * x(i) + 250 * z(i) + 0.5 + 7 + 300 + 0.25");
  EXPECT_EQ(std::get<Literal>(parse("y() = 1e-3").rhs->node).value, 1e-3);
  EXPECT_EQ(std::get<Literal>(parse("y() = .5").rhs->node).value, 0.5);
  EXPECT_EQ(std::get<Literal>(parse("y() = 1.5e10").rhs->node).value, 1.5e10);
  EXPECT_EQ(std::get<Literal>(parse("y() = 5e-324").rhs->node).value, 5e-324);
  EXPECT_EQ(toString(parse("y() = 0.1")), "y() = 0.1");
}

TEST(Parse, UnaryMinusAndPrecedence) {
  // Left-associative: a - b - c is (a - b) - c and prints without parentheses.
  const Statement left = parse("y() = a - b - c");
  const auto& outer = std::get<Binary>(left.rhs->node);
  EXPECT_EQ(std::get<Param>(outer.rhs->node).name, "c");
  EXPECT_EQ(std::get<Binary>(outer.lhs->node).op, BinaryOp::kSub);
  EXPECT_EQ(toString(left), "y() = a - b - c");
  EXPECT_EQ(toString(parse("y() = a - (b - c)")), "y() = a - (b - c)");
  EXPECT_EQ(toString(parse("y() = a / (b * c)")), "y() = a / (b * c)");
  EXPECT_EQ(toString(parse("y() = (a * b) + c")), "y() = a * b + c");
  EXPECT_EQ(toString(parse("y() = (a + b) * c")), "y() = (a + b) * c");
  EXPECT_EQ(toString(parse("y() = a + b * c")), "y() = a + b * c");
  EXPECT_EQ(toString(parse("y() = ((a))")), "y() = a");

  const Statement neg = parse("y() = a * -b");
  const auto& mul = std::get<Binary>(neg.rhs->node);
  EXPECT_EQ(mul.op, BinaryOp::kMul);
  EXPECT_EQ(std::get<Unary>(mul.rhs->node).fn, UnaryFn::kNeg);
  EXPECT_EQ(toString(neg), "y() = a * -b");
  // Unary minus binds tighter than *: -a * b is (-a) * b.
  EXPECT_EQ(std::get<Binary>(parse("y() = -a * b").rhs->node).op, BinaryOp::kMul);
  EXPECT_EQ(toString(parse("y() = -(a * b)")), "y() = -(a * b)");
  EXPECT_EQ(toString(parse("y() = -(-a)")), "y() = - -a");
  EXPECT_EQ(toString(parse("y() = -(-(a + b))")), "y() = - -(a + b)");
  EXPECT_EQ(toString(parse("y() = -2")), "y() = -2");
  EXPECT_EQ(toString(parse("y(i) = -x(i) - -3")), "y(i) = -x(i) - -3");
}

TEST(Parse, NamesAndCalls) {
  EXPECT_EQ(std::get<Param>(parse("y() = relu").rhs->node).name, "relu");
  EXPECT_EQ(std::get<Param>(parse("y() = sum").rhs->node).name, "sum");
  EXPECT_EQ(std::get<Unary>(parse("y() = gelu_tanh(x())").rhs->node).fn, UnaryFn::kGeluTanh);
  EXPECT_EQ(unaryFnFromName("gelu"), UnaryFn::kGelu);
  EXPECT_EQ(unaryFnFromName("-"), std::nullopt);
  EXPECT_EQ(std::string(unaryFnName(UnaryFn::kNeg)), "-");
  for (UnaryFn fn :
       {UnaryFn::kAbs, UnaryFn::kSqrt, UnaryFn::kExp, UnaryFn::kLog, UnaryFn::kRelu, UnaryFn::kSilu,
        UnaryFn::kGelu, UnaryFn::kGeluTanh, UnaryFn::kSigmoid, UnaryFn::kTanh}) {
    EXPECT_EQ(unaryFnFromName(unaryFnName(fn)), fn);
  }
  EXPECT_EQ(toString(parse("out_1(i_0,J) = _t(i_0, J)")), "out_1(i_0,J) = _t(i_0,J)");
}

TEST(Parse, ClampIsMinimumOfMaximum) {
  // clamp(x, lo, hi) reads as minimum(maximum(x, lo), hi) and prints so; the bounds may be any
  // expression.
  const Statement s = parse("y(i) = clamp(A(i,j) * x(j), -1, beta + 1)");
  EXPECT_EQ(toString(s), "y(i) = minimum(maximum(A(i,j) * x(j), -1), beta + 1)");
  const auto& outer = std::get<Binary>(s.rhs->node);
  EXPECT_EQ(outer.op, BinaryOp::kMin);
  EXPECT_EQ(std::get<Binary>(outer.lhs->node).op, BinaryOp::kMax);
  EXPECT_TRUE(sameStatement(parse(toString(s)), s));
}

TEST(Parse, MultiLineTextKeepsLinesAndColumns) {
  const Statement s = parse("C(i,j) =\n  A(i,k)\r\n\t* B(k,j)\n");
  EXPECT_EQ(toString(s), "C(i,j) = A(i,k) * B(k,j)");
  const auto& mul = std::get<Binary>(s.rhs->node);
  EXPECT_EQ(s.lhsLocation.line, 1);
  EXPECT_EQ(s.lhsLocation.column, 1);
  EXPECT_EQ(mul.lhs->location.line, 2);
  EXPECT_EQ(mul.lhs->location.column, 3);
  EXPECT_EQ(s.rhs->location.line, 3);
  EXPECT_EQ(s.rhs->location.column, 2);
  EXPECT_EQ(mul.rhs->location.line, 3);
  EXPECT_EQ(mul.rhs->location.column, 4);

  EXPECT_EQ(parseError("C(i,j) =\n  A(i,k)\n  * * B(k,j)"),
            "line 3, column 5: expected an operand (a tensor, a number, a parameter, a function "
            "call or '('), found '*'\n  * * B(k,j)\n    ^");
}

TEST(Parse, ErrorsPointAtTheLineAndColumn) {
  // The format in full: message, the text line, a caret under the column.
  EXPECT_EQ(parseError("C(i,j) = A(i,k * B(k,j)"),
            "line 1, column 16: expected ')' after the indices of 'A', found '*'\n"
            "C(i,j) = A(i,k * B(k,j)\n"
            "               ^");
  const std::pair<const char*, const char*> cases[] = {
      {"y(i) = relu(A(i,j)",  // missing parenthesis
       "line 1, column 19: expected ')' after the argument of 'relu', found the end of the text"},
      {"y(i) = (x(i) + 1",
       "line 1, column 17: expected ')' to close the '(' at column 8, found the end of the text"},
      {"y(i) = x(i) x",  // trailing garbage
       "line 1, column 13: expected an operator or the end of the statement, found 'x'"},
      {"y(i) = x(i))",
       "line 1, column 12: expected an operator or the end of the statement, "
       "found ')'"},
      {"y(i) = = x(i)",
       "line 1, column 8: expected an operand (a tensor, a number, a parameter, "
       "a function call or '('), found '='"},
      {"y(i) = A(i,)", "line 1, column 12: expected an index name in 'A(...)', found ')'"},
      {"y(,) = x()", "line 1, column 3: expected an index name in 'y(...)', found ','"},
      {"y = x()",
       "line 1, column 3: expected '(' after the output 'y' (a scalar output is "
       "written 'y()'), found '='"},
      {"y(i) = softplus(x(i))",
       "line 1, column 8: unknown function 'softplus' (known: abs, sqrt, exp, log, relu, silu, "
       "gelu, gelu_tanh, sigmoid, tanh, minimum, maximum, clamp, sum, max, softmax, layernorm)"},
      {"y(i) = clamp(x(i), 0)",
       "line 1, column 21: expected ',' and the 3 arguments of 'clamp(x, low, high)', found ')'"},
      {"y(i) = minimum(x(i), 1, 2)",
       "line 1, column 23: expected ')' after the arguments of 'minimum', found ','"},
      {"y(i) = softmax(x(i))",  // softmax names the index it normalizes over first
       "line 1, column 17: expected ',' after the index of 'softmax(x, ...)', found '('"},
      {"y(i) = softmax(2, x(i))",
       "line 1, column 16: expected the index that 'softmax' normalizes over, found '2'"},
      {"y(i) = foo(2 * x(i))", "line 1, column 8: unknown function 'foo' (known: abs,"},
      {"y(i) = 2(i)",  // a number as a tensor name
       "line 1, column 9: expected an operator or the end of the statement, found '('"},
      {"2(i) = x(i)", "line 1, column 1: expected the name of the output tensor, found '2'"},
      {"+=", "line 1, column 1: expected the name of the output tensor, found '+='"},
      {"y(i) +=", "line 1, column 8: expected an operand"},
      {"y(i) = A(i,j",  // unterminated
       "line 1, column 13: expected ')' after the indices of 'A', found the end of the text"},
      {"", "line 1, column 1: expected the name of the output tensor, found the end of the text"},
      {"y(i) x(i)", "line 1, column 6: expected '=' or '+=' after the output 'y', found 'x'"},
      {"y(i) = x(i) += 1",
       "line 1, column 13: expected an operator or the end of the statement, found '+='"},
      {"y(i) = x(i) $ 2", "line 1, column 13: unexpected character '$'"},
      {"y(i) = x(i) \x01", "line 1, column 13: unexpected character '\\x01'"},
      {"y(i) = 1e+ * x(i)",
       "line 1, column 11: expected a digit in the exponent of the number "
       "'1e+', found ' '"},
      {"y(i) = 1e999", "line 1, column 8: the number '1e999' is out of the range of a double"},
      {"y(i) = sum(k)",
       "line 1, column 13: expected ',' after the index of 'sum(k, ...)', found "
       "')'"},
      {"y(i) = sum(2, x(i))",
       "line 1, column 12: expected the index that 'sum' reduces over, "
       "found '2'"},
      {"y(i) = exp(x(i), 2)",
       "line 1, column 16: expected ')' after the argument of 'exp', found ','"},
      {"y(i) = relu()", "line 1, column 13: expected an operand"},
      {"y(i) = A(i, 2)", "line 1, column 13: expected an index name in 'A(...)', found '2'"},
      {"y(i) = A(i, B(i))", "line 1, column 8: unknown function 'A'"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = parseError(text);
    EXPECT_EQ(message.rfind(expected, 0), 0u) << text << "\n" << message;
  }
}

TEST(Parse, DeepNestingIsRefusedNotACrash) {
  // The 257th '(' is at column 6 + 257.
  const std::string parens = "y() = " + std::string(10000, '(') + "x()";
  EXPECT_EQ(firstLine(parseError(parens)),
            "line 1, column 263: expression nested too deeply (the limit is 256 levels)");
  EXPECT_EQ(firstLine(parseError("y() = " + std::string(10000, '-') + "x()")),
            "line 1, column 263: expression nested too deeply (the limit is 256 levels)");
  std::string calls = "y() = ";
  for (int i = 0; i < 5000; ++i) calls += "relu(";
  EXPECT_NE(parseError(calls).find("nested too deeply"), std::string::npos);
  // Operator chains build deep trees without nesting: bounded too.
  std::string chain = "y() = x()";
  for (int i = 0; i < 100000; ++i) chain += " + x()";
  EXPECT_NE(parseError(chain).find("nested too deeply"), std::string::npos);
  // Just inside the limit is fine.
  const std::string ok = "y() = " + std::string(255, '(') + "x()" + std::string(255, ')');
  EXPECT_EQ(toString(parse(ok)), "y() = x()");
  // A chain of minus signs at the limit prints as text within the limit (a fuzzer finding:
  // printing it as -(-(...)) doubled the nesting).
  const Statement negs = parse("y() = " + std::string(255, '-') + "x()");
  EXPECT_TRUE(sameStatement(parse(toString(negs)), negs));
}

TEST(Parse, LongLinesAreCutInTheExcerpt) {
  const std::string text = "y(i) = " + std::string(5000, ' ') + "x(i) )";
  const std::string message = parseError(text);
  EXPECT_EQ(firstLine(message),
            "line 1, column 5013: expected an operator or the end of the statement, found ')'");
  EXPECT_LT(message.size(), 400u);
  const auto lines = message.substr(message.find('\n') + 1);
  const auto caret = lines.substr(lines.find('\n') + 1);
  EXPECT_EQ(lines[caret.size() - 1], ')') << message;
}

// Random trees over every node kind: printing then parsing gives the same tree and text.
class RandomTrees {
 public:
  explicit RandomTrees(uint64_t seed) : rng_(seed) {}

  Statement statement() {
    Statement s;
    s.lhs = access();
    s.accumulate = pick(2) == 1;
    s.rhs = expr(static_cast<int>(pick(7)));
    return s;
  }

 private:
  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }

  Access access() {
    static const char* const kTensors[] = {"A", "B", "x", "y_1", "Out", "_t"};
    static const char* const kIndices[] = {"i", "j", "k", "l", "i2", "sum"};
    Access a{kTensors[pick(6)], {}};
    for (uint64_t n = pick(4); n > 0; --n) a.indices.push_back(kIndices[pick(6)]);
    return a;
  }

  double literal() {
    static const double kValues[] = {0, 1, 2, 0.5, 1e-3, 1e300, 5e-324, 123456.789, 0.1, 1e22};
    switch (pick(3)) {
      case 0: return kValues[pick(10)];
      case 1: return std::uniform_real_distribution<double>(0, 1e6)(rng_);
      default: {
        // Any finite non-negative double, by its bits.
        for (;;) {
          uint64_t bits = rng_() & ~(uint64_t{1} << 63);
          double value;
          std::memcpy(&value, &bits, sizeof value);
          if (std::isfinite(value)) return value;
        }
      }
    }
  }

  ExprPtr expr(int depth) {
    const uint64_t kind = depth <= 0 ? pick(3) : 3 + pick(3);
    switch (kind) {
      case 0: return makeExpr(access());
      case 1: return makeExpr(Literal{literal()});
      case 2: {
        static const char* const kParams[] = {"alpha", "beta", "relu", "max", "e"};
        return makeExpr(Param{kParams[pick(5)]});
      }
      case 3: {
        const auto fn = static_cast<UnaryFn>(pick(static_cast<uint64_t>(UnaryFn::kTanh) + 1));
        return makeExpr(Unary{fn, expr(depth - 1 - static_cast<int>(pick(2)))});
      }
      case 4: {
        const auto op = static_cast<BinaryOp>(pick(6));  // minimum and maximum too
        ExprPtr lhs = expr(depth - 1 - static_cast<int>(pick(2)));
        return makeExpr(Binary{op, std::move(lhs), expr(depth - 1 - static_cast<int>(pick(2)))});
      }
      default: {
        static const char* const kIndices[] = {"i", "j", "k", "l"};
        // every reduction and row function (their text is the same shape)
        const auto op =
            static_cast<ReduceOp>(pick(static_cast<uint64_t>(ReduceOp::kLayerNorm) + 1));
        return makeExpr(Reduce{op, kIndices[pick(4)], expr(depth - 1 - static_cast<int>(pick(2)))});
      }
    }
  }

  std::mt19937_64 rng_;
};

TEST(Parse, RandomTreesPrintAndParseBackIdentically) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (RandomTrees(seed) reproduces the failure)");
  RandomTrees trees(seed);
  for (int n = 0; n < 4000; ++n) {
    const Statement s = trees.statement();
    const std::string text = toString(s);
    Statement again;
    try {
      again = parse(text);
    } catch (const Error& e) {
      FAIL() << "case " << n << ": " << text << "\ndoes not parse: " << e.what();
    }
    ASSERT_EQ(toString(again), text) << "case " << n;
    ASSERT_TRUE(sameStatement(again, s)) << "case " << n << ": " << text;
  }
}

}  // namespace
}  // namespace sparseflow::expr
