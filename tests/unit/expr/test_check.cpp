// check: extents and shapes are inferred, implicit reductions land where TACO puts them, and every
// inconsistency is refused with a message naming the tensor, the index and the place.
#include <gtest/gtest.h>

#include "expr/expr.h"
#include "sparseflow/error.h"

namespace sparseflow::expr {
namespace {

using Tensors = std::map<std::string, TensorInfo>;

TensorInfo t(std::vector<int64_t> shape, DType dtype = DType::kF32) {
  TensorInfo info;
  info.shape = std::move(shape);
  info.dtype = dtype;
  return info;
}

CheckedKernel checked(const std::string& text, const Tensors& tensors) {
  return check(parse(text), tensors);
}

// The message of the error that checking `text` must raise, with its code.
std::string checkError(const std::string& text, const Tensors& tensors,
                       ErrorCode code = ErrorCode::kInvalidArgument) {
  try {
    (void)checked(text, tensors);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    const std::string message = e.what();
    return message.substr(0, message.find('\n'));
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(Check, SpmvInfersExtentsAndOutput) {
  const CheckedKernel k = checked("y(i) = A(i,j) * x(j)", {{"A", t({4, 5})}, {"x", t({5})}});
  EXPECT_EQ(k.indexExtents, (std::map<std::string, int64_t>{{"i", 4}, {"j", 5}}));
  EXPECT_EQ(k.output, "y");
  EXPECT_EQ(k.inputs, (std::vector<std::string>{"A", "x"}));
  EXPECT_TRUE(k.params.empty());
  EXPECT_EQ(k.freeIndices, (std::vector<std::string>{"i"}));
  EXPECT_EQ(k.reductionIndices, (std::vector<std::string>{"j"}));
  EXPECT_EQ(k.tensors.at("y").shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(k.tensors.at("y").dtype, DType::kF32);
  EXPECT_EQ(k.tensors.at("A").shape, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(k.computeType, DType::kF32);
  EXPECT_EQ(toString(k.statement), "y(i) = sum(j, A(i,j) * x(j))");
  EXPECT_TRUE(std::get<Reduce>(k.statement.rhs->node).implicit);
}

TEST(Check, OutputShapeInference) {
  const CheckedKernel k = checked("C(i,j) = A(i,k) * B(k,j)", {{"A", t({3, 4})}, {"B", t({4, 5})}});
  EXPECT_EQ(k.tensors.at("C").shape, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(k.indexExtents.at("k"), 4);
  // A bound output gives the extent of an index the rhs does not use (a broadcast).
  const CheckedKernel b = checked("C(i,j) = x(i)", {{"C", t({3, 7}, DType::kF16)}, {"x", t({3})}});
  EXPECT_EQ(b.indexExtents.at("j"), 7);
  EXPECT_EQ(b.tensors.at("C").dtype, DType::kF16);
  EXPECT_TRUE(b.reductionIndices.empty());
  EXPECT_EQ(checkError("C(i,j) = x(i)", {{"x", t({3})}}),
            "line 1, column 5: output index 'j' of 'C' is not used on the right-hand side, and the "
            "output is not bound to give its extent");
  const CheckedKernel scalar = checked("s() = A(i,j) * A(i,j)", {{"A", t({2, 3})}});
  EXPECT_TRUE(scalar.tensors.at("s").shape.empty());
  EXPECT_EQ(toString(scalar.statement), "s() = sum(i, sum(j, A(i,j) * A(i,j)))");
  EXPECT_EQ(scalar.reductionIndices, (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(scalar.inputs, (std::vector<std::string>{"A"}));
}

TEST(Check, MismatchedExtentNamesBothTensorsAndColumns) {
  EXPECT_EQ(checkError("C(i,j) = A(i,k) * B(k,j)", {{"A", t({10, 20})}, {"B", t({30, 5})}}),
            "line 1, column 21: index 'k' of 'B' has extent 30, but 'k' of 'A' (column 14) has "
            "extent 20");
  // Across lines, and against a bound output.
  EXPECT_EQ(checkError("y(i) =\n  A(i,j) * x(j)", {{"y", t({3})}, {"A", t({4, 5})}, {"x", t({5})}}),
            "line 2, column 5: index 'i' of 'A' has extent 4, but 'i' of 'y' (line 1, column 3) "
            "has extent 3");
}

TEST(Check, RanksMustMatch) {
  EXPECT_EQ(checkError("y(i) = A(i,j) * x(j)", {{"A", t({4})}, {"x", t({5})}}),
            "line 1, column 8: tensor 'A' has rank 1 but is used with 2 indices");
  EXPECT_EQ(checkError("y(i) = A(i,j) * A(i)", {{"A", t({4, 4})}}),
            "line 1, column 17: 'A' is used with 1 indices here but with 2 at column 8");
  EXPECT_EQ(checkError("y(i) = x(i)", {{"y", t({4, 1})}, {"x", t({4})}}),
            "line 1, column 1: tensor 'y' has rank 2 but is used with 1 indices");
}

TEST(Check, UnboundAndNonFloatTensorsAreRefused) {
  EXPECT_EQ(checkError("y(i) = A(i,j) * x(j)", {{"A", t({4, 5})}, {"y", t({4})}}),
            "line 1, column 17: tensor 'x' is not bound (bound: A, y)");
  EXPECT_EQ(checkError("y(i) = x(i)", {}),
            "line 1, column 8: tensor 'x' is not bound (no tensors are bound)");
  EXPECT_EQ(checkError("y(i) = A(i,j) * x(j)", {{"A", t({4, 5}, DType::kI32)}, {"x", t({5})}}),
            "line 1, column 8: tensor 'A' has dtype i32; kernels compute on floating-point "
            "tensors only (f32, f64, f16, bf16)");
  EXPECT_EQ(checkError("y(i) = x(i)", {{"x", t({4})}, {"y", t({4}, DType::kI64)}}),
            "line 1, column 1: tensor 'y' has dtype i64; kernels compute on floating-point "
            "tensors only (f32, f64, f16, bf16)");
  EXPECT_EQ(checkError("y(i) = x(i)", {{"x", t({-1})}}),
            "line 1, column 8: tensor 'x' has a negative extent (-1) in dimension 0");
}

TEST(Check, ComputeType) {
  EXPECT_EQ(
      checked("y(i) = A(i,j) * x(j)", {{"A", t({4, 5}, DType::kF64)}, {"x", t({5})}}).computeType,
      DType::kF64);
  const CheckedKernel k =
      checked("y(i) = A(i,j) * x(j)", {{"A", t({4, 5}, DType::kF16)}, {"x", t({5}, DType::kBF16)}});
  EXPECT_EQ(k.computeType, DType::kF32);
  EXPECT_EQ(k.tensors.at("A").dtype, DType::kF16);
  const CheckedKernel d = checked("y(i) = x(i) * 2", {{"x", t({5}, DType::kF64)}});
  EXPECT_EQ(d.tensors.at("y").dtype, DType::kF64);  // an inferred output has the compute type
}

TEST(Check, ImplicitReductionPlacement) {
  const Tensors spmv = {{"A", t({4, 5})}, {"x", t({5})}, {"b", t({4})}};
  // Only around the product, not around the bias.
  const CheckedKernel k = checked("y(i) = A(i,j) * x(j) + b(i)", spmv);
  EXPECT_EQ(toString(k.statement), "y(i) = sum(j, A(i,j) * x(j)) + b(i)");
  const auto& add = std::get<Binary>(k.statement.rhs->node);
  EXPECT_EQ(add.op, BinaryOp::kAdd);
  const auto& sum = std::get<Reduce>(add.lhs->node);
  EXPECT_TRUE(sum.implicit);
  EXPECT_EQ(sum.index, "j");
  EXPECT_EQ(sum.op, ReduceOp::kSum);
  // The location of an implicit sum is that of the subexpression it wraps (the '*').
  EXPECT_EQ(add.lhs->location.column, 15);

  // MTTKRP: both sums around the whole product, k (first written) outermost.
  const CheckedKernel m = checked("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
                                  {{"B", t({2, 3, 4})}, {"C", t({3, 5})}, {"D", t({4, 5})}});
  EXPECT_EQ(toString(m.statement), "A(i,j) = sum(k, sum(l, B(i,k,l) * C(k,j) * D(l,j)))");
  EXPECT_EQ(m.reductionIndices, (std::vector<std::string>{"k", "l"}));
  const auto& outer = std::get<Reduce>(m.statement.rhs->node);
  EXPECT_TRUE(outer.implicit);
  EXPECT_TRUE(std::get<Reduce>(outer.body->node).implicit);
  EXPECT_EQ(m.tensors.at("A").shape, (std::vector<int64_t>{2, 5}));

  const Tensors ab = {{"A", t({4, 5})}, {"B", t({5, 4})}, {"x", t({5})}, {"b", t({4})}};
  const std::pair<const char*, const char*> cases[] = {
      {"y(i) = A(i,j) + b(i)", "y(i) = sum(j, A(i,j)) + b(i)"},
      {"y(i) = A(i,j) * b(i)", "y(i) = sum(j, A(i,j) * b(i))"},
      {"y(i) = relu(A(i,j) * x(j))", "y(i) = relu(sum(j, A(i,j) * x(j)))"},
      {"y(i) = relu(A(i,j)) * x(j)", "y(i) = sum(j, relu(A(i,j)) * x(j))"},
      {"y(i) = A(i,j) / b(i)", "y(i) = sum(j, A(i,j) / b(i))"},
      // A sum does not move out of a divisor: b / sum(A) is not sum(b / A).
      {"y(i) = b(i) / A(i,j)", "y(i) = b(i) / sum(j, A(i,j))"},
      {"y(i) = -(A(i,j) * x(j))", "y(i) = -sum(j, A(i,j) * x(j))"},
      {"y(i) = (A(i,j) + A(i,j)) * b(i)", "y(i) = sum(j, (A(i,j) + A(i,j)) * b(i))"},
      {"y() = A(j,i) * B(i,j)", "y() = sum(j, sum(i, A(j,i) * B(i,j)))"},
      {"y(i) = max(j, A(i,j) * x(k) * B(k,i))", "y(i) = max(j, sum(k, A(i,j) * x(k) * B(k,i)))"},
      {"y(i) = A(i,j) * x(j) - B(k,i) * x(k)",
       "y(i) = sum(j, A(i,j) * x(j)) - sum(k, B(k,i) * x(k))"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(toString(checked(text, ab).statement), expected) << text;
  }
}

TEST(Check, ExplicitReductions) {
  const Tensors sddmm = {{"M", t({4, 6})}, {"A", t({4, 3})}, {"B", t({6, 3})}};
  const CheckedKernel k = checked("Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", sddmm);
  EXPECT_EQ(toString(k.statement), "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))");
  EXPECT_EQ(k.reductionIndices, (std::vector<std::string>{"k"}));
  EXPECT_FALSE(std::get<Reduce>(std::get<Binary>(k.statement.rhs->node).rhs->node).implicit);
  // Nothing implicit: the checked statement shares the parsed tree.
  const Statement parsed = parse("Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))");
  EXPECT_EQ(check(parsed, sddmm).statement.rhs, parsed.rhs);

  const CheckedKernel mx = checked("y(i) = max(j, abs(A(i,j)))", {{"A", t({4, 5})}});
  EXPECT_EQ(mx.reductionIndices, (std::vector<std::string>{"j"}));
  EXPECT_EQ(mx.indexExtents.at("j"), 5);

  const CheckedKernel relu = checked("C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
                                     {{"A", t({2, 3})}, {"B", t({3, 4})}, {"b", t({4})}});
  EXPECT_EQ(relu.inputs, (std::vector<std::string>{"A", "B", "b"}));
  EXPECT_EQ(relu.tensors.at("C").shape, (std::vector<int64_t>{2, 4}));

  const Tensors a = {{"A", t({4, 4})}, {"B", t({4, 4})}};
  EXPECT_EQ(checkError("y(i) = sum(i, A(i,j))", a),
            "line 1, column 12: 'sum(i, ...)' reduces 'i', which is an index of the output 'y'");
  EXPECT_EQ(checkError("y(i) = sum(k, A(i,k)) + sum(k, B(i,k))", a),
            "line 1, column 29: index 'k' is reduced twice (also at column 8); give one of the "
            "reductions another index name");
  EXPECT_EQ(checkError("y(i) = sum(k, sum(k, A(i,k)))", a),
            "line 1, column 19: index 'k' is reduced twice (also at column 8); give one of the "
            "reductions another index name");
  EXPECT_EQ(checkError("y(i) = A(i,k) * sum(k, B(i,k))", a),
            "line 1, column 12: index 'k' of 'A' is used outside the 'sum(k, ...)' at column 17 "
            "that reduces it");
  EXPECT_EQ(checkError("y(i) = max(k, A(i,i))", a, ErrorCode::kNotSupported),
            "line 1, column 19: index 'i' appears twice in 'A' (reading a diagonal is not "
            "supported yet)");
  EXPECT_EQ(checkError("y(i) = max(k, A(i,j))", a),
            "line 1, column 12: 'max(k, ...)' does not use 'k' in its body, so its extent is "
            "unknown");
}

TEST(Check, SoftmaxIsWrittenOutWithMaxSumAndExp) {
  const Tensors spmm = {{"A", t({4, 3})}, {"B", t({3, 6})}, {"b", t({6})}};
  const CheckedKernel k = checked("C(i,j) = softmax(j, A(i,k) * B(k,j) + b(j))", spmm);
  // The implicit sum stays inside the softmax; every copy gets fresh names for j and k.
  EXPECT_EQ(toString(k.statement),
            "C(i,j) = exp(sum(k, A(i,k) * B(k,j)) + b(j) - max(j_1, sum(k_1, A(i,k_1) * "
            "B(k_1,j_1)) + b(j_1))) / sum(j_2, exp(sum(k_2, A(i,k_2) * B(k_2,j_2)) + b(j_2) - "
            "max(j_3, sum(k_3, A(i,k_3) * B(k_3,j_3)) + b(j_3))))");
  for (const char* copy : {"j_1", "j_2", "j_3"}) EXPECT_EQ(k.indexExtents.at(copy), 6) << copy;
  for (const char* copy : {"k_1", "k_2", "k_3"}) EXPECT_EQ(k.indexExtents.at(copy), 3) << copy;
  EXPECT_EQ(k.tensors.at("C").shape, (std::vector<int64_t>{4, 6}));
  // The written-out form checks again to itself, and a hand-written one is the same tree up to
  // the names of its indices.
  const CheckedKernel again = check(parse(toString(k.statement)), spmm);
  EXPECT_EQ(toString(again.statement), toString(k.statement));
  EXPECT_TRUE(sameUpToIndexRenaming(*again.statement.rhs, *k.statement.rhs, nullptr));
  const CheckedKernel byHand = checked(
      "C(i,j) = exp(A(i,k) * B(k,j) + b(j) - max(l, A(i,m) * B(m,l) + b(l))) / "
      "sum(n, exp(A(i,p) * B(p,n) + b(n) - max(q, A(i,r) * B(r,q) + b(q))))",
      spmm);
  std::map<std::string, std::string> renaming;
  EXPECT_TRUE(sameUpToIndexRenaming(*k.statement.rhs, *byHand.statement.rhs, &renaming));
  EXPECT_EQ(renaming.at("j_1"), "l");
  EXPECT_EQ(renaming.at("k_3"), "r");
  EXPECT_EQ(renaming.at("i"), "i");
  // Not the same up to renaming: another tensor, or two indices merged into one.
  const CheckedKernel other = checked("C(i,j) = softmax(j, A(i,k) * B(k,j) - b(j))", spmm);
  EXPECT_FALSE(sameUpToIndexRenaming(*k.statement.rhs, *other.statement.rhs, nullptr));
  EXPECT_FALSE(sameUpToIndexRenaming(*parse("y(i) = A(i,j) * B(j,k)").rhs,
                                     *parse("y(i) = A(i,j) * B(j,j)").rhs, nullptr));

  // Names already taken are skipped; nested softmaxes expand inside out.
  const CheckedKernel taken =
      checked("C(i,j) = softmax(j, A(i,j_1) * B(j_1,j))", {{"A", t({4, 3})}, {"B", t({3, 6})}});
  EXPECT_EQ(taken.indexExtents.at("j_2"), 6);
  EXPECT_EQ(taken.indexExtents.at("j_1_1"), 3);
  const CheckedKernel nested =
      checked("C(i,j) = softmax(j, softmax(j, B(i,j)))", {{"B", t({3, 6})}});
  EXPECT_EQ(nested.indexExtents.size(), 2u + 3u + 3u * 4u);

  EXPECT_EQ(checkError("y(i) = softmax(j, A(i,j))", {{"A", t({4, 4})}}),
            "line 1, column 16: 'softmax(j, ...)' normalizes over 'j', which is not an index of "
            "the output 'y' (the row it normalizes must be one the output keeps)");
  EXPECT_EQ(
      checkError("C(i,j) = softmax(j, A(i,i2)) * B(i2,j)", {{"A", t({4, 4})}, {"B", t({4, 4})}}),
      "line 1, column 18: 'softmax(j, ...)' does not use 'j' in its body");
  // Nested too deep to write out: refused before anything is built.
  std::string deep = "B(i,j)";
  for (int n = 0; n < 9; ++n) deep = "softmax(j, " + deep + ")";
  EXPECT_NE(checkError("C(i,j) = " + deep, {{"B", t({3, 6})}})
                .find("nodes with its row functions written out"),
            std::string::npos);
}

TEST(Check, LayerNormIsWrittenOutWithSumsAndSqrt) {
  const Tensors t2 = {{"A", t({4, 3})}, {"B", t({3, 6})}};
  const CheckedKernel k = checked("C(i,j) = layernorm(j, A(i,k) * B(k,j))", t2);
  // (x - mean) / sqrt(biased variance + 1e-5); the row's length is a count, known when it runs.
  EXPECT_EQ(toString(k.statement),
            "C(i,j) = (sum(k, A(i,k) * B(k,j)) - sum(j_1, sum(k_1, A(i,k_1) * B(k_1,j_1))) / "
            "sum(j_2, 1)) / sqrt(sum(j_3, (sum(k_2, A(i,k_2) * B(k_2,j_3)) - sum(j_4, sum(k_3, "
            "A(i,k_3) * B(k_3,j_4))) / sum(j_5, 1)) * (sum(k_2_1, A(i,k_2_1) * B(k_2_1,j_3)) - "
            "sum(j_6, sum(k_4, A(i,k_4) * B(k_4,j_6))) / sum(j_7, 1))) / sum(j_8, 1) + 1e-05)");
  for (const char* copy : {"j_1", "j_2", "j_3", "j_8"}) EXPECT_EQ(k.indexExtents.at(copy), 6);
  EXPECT_EQ(checkError("y(i) = layernorm(j, A(i,j))", {{"A", t({4, 4})}}),
            "line 1, column 18: 'layernorm(j, ...)' normalizes over 'j', which is not an index of "
            "the output 'y' (the row it normalizes must be one the output keeps)");
}

TEST(Check, OutputRules) {
  const Tensors xy = {{"x", t({4})}, {"y", t({4})}, {"A", t({4, 4})}};
  EXPECT_EQ(checkError("y(i) = y(i) * 2", xy),
            "line 1, column 8: the output 'y' is also read on the right-hand side; '+=' adds into "
            "it instead");
  EXPECT_EQ(checkError("y(i) += x(i) * y(i)", xy),
            "line 1, column 16: the output 'y' is also read on the right-hand side; '+=' adds into "
            "it instead");
  EXPECT_EQ(checkError("C(i,i) = A(i,i)", xy),
            "line 1, column 5: index 'i' appears twice in the output 'C' (also at column 3)");
  const CheckedKernel acc = checked("C(i,j) += alpha * A(i,j) - B(i,j) / 2",
                                    {{"A", t({2, 3})}, {"B", t({2, 3})}, {"C", t({2, 3})}});
  EXPECT_TRUE(acc.statement.accumulate);
  EXPECT_EQ(acc.params, (std::vector<std::string>{"alpha"}));
  EXPECT_TRUE(acc.reductionIndices.empty());
  EXPECT_EQ(acc.tensors.size(), 3u);
}

TEST(Check, ParamsMustNotShadowTensorsOrIndices) {
  const Tensors xa = {{"x", t({4})}, {"A", t({4, 4})}};
  const CheckedKernel k = checked("y(i) = alpha * x(i) + beta * alpha", xa);
  EXPECT_EQ(k.params, (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(checkError("y(i) = x(i) * x", xa),
            "line 1, column 15: 'x' is a tensor (read at column 8) but is written here without "
            "indices");
  EXPECT_EQ(checkError("y(i) = x(i) * A", xa),
            "line 1, column 15: 'A' is bound as a tensor but is written without indices; write "
            "'A()' to read a scalar tensor");
  EXPECT_EQ(checkError("y(i) = x(i) * i", xa),
            "line 1, column 15: parameter 'i' has the name of an index; rename one of them");
  EXPECT_EQ(checkError("y(i) = x(i) * y", xa),
            "line 1, column 15: 'y' is the output tensor; it cannot also be a parameter");
}

TEST(Check, ImplicitSumsMustNotNestTooDeeply) {
  // 256 levels after parsing; the implicit sum around A(i) would make 257.
  EXPECT_EQ(checkError("y() = " + std::string(255, '-') + "A(i)", {{"A", t({3})}}),
            "line 1, column 1: with its implicit reductions made explicit, the right-hand side is "
            "nested more than 256 levels deep");
  EXPECT_EQ(toString(checked("y() = " + std::string(254, '-') + "A(i)", {{"A", t({3})}}).statement)
                .substr(0, 9),
            "y() = - -");
}

TEST(Check, ErrorsCarryTheExcerpt) {
  try {
    (void)checked("y(i) = A(i,j) * x(j)", {{"A", t({4, 5})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "line 1, column 17: tensor 'x' is not bound (bound: A)\n"
              "y(i) = A(i,j) * x(j)\n"
              "                ^");
  }
  // A statement built without text still gets a located message, without the excerpt.
  Statement s;
  s.lhs = {"y", {"i"}};
  s.rhs = makeExpr(Access{"x", {"i"}}, {1, 8});
  try {
    (void)check(s, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "line 1, column 8: tensor 'x' is not bound (no tensors are bound)");
  }
  s.rhs = nullptr;
  EXPECT_THROW((void)check(s, {}), Error);
}

TEST(Check, CheckedStatementsParseAndCheckAgain) {
  const Tensors tensors = {{"A", t({4, 5})}, {"x", t({5})}, {"b", t({4})}, {"B", t({5, 4})}};
  for (const char* text : {"y(i) = A(i,j) * x(j) + b(i)", "y() = A(j,i) * B(i,j)",
                           "y(i) = relu(A(i,j) * x(j)) / b(i)"}) {
    const CheckedKernel first = checked(text, tensors);
    const std::string printed = toString(first.statement);
    const CheckedKernel second = checked(printed, tensors);
    EXPECT_EQ(toString(second.statement), printed);
    EXPECT_EQ(second.reductionIndices, first.reductionIndices);
    EXPECT_EQ(second.indexExtents, first.indexExtents);
    // Checking a checked statement again changes nothing.
    EXPECT_TRUE(sameStatement(check(first.statement, tensors).statement, first.statement));
  }
}

}  // namespace
}  // namespace sparseflow::expr
