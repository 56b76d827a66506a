// The index-notation tree: what `parse` makes of "C(i,j) = A(i,k) * B(k,j)" and what lowering
// reads. Nodes are immutable and shared; every node remembers where it was written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sparseflow/dtype.h"
#include "support/elementwise_functions.h"

namespace sparseflow::expr {

/// 1-based line and column in the kernel text.
struct SourceLocation {
  int line = 1;
  int column = 1;
};

/// The arithmetic operators, and the element-wise `minimum(a, b)` and `maximum(a, b)` (NaN when
/// either is NaN, as torch's); `clamp(x, lo, hi)` is read as `minimum(maximum(x, lo), hi)`.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMin, kMax };

/// Whether `op` is written as a call, `minimum(a, b)` / `maximum(a, b)`, not between its operands.
inline bool isCallOp(BinaryOp op) {
  return op == BinaryOp::kMin || op == BinaryOp::kMax;
}

/// Reductions: `sum(k, ...)` (also every implicit one) and `max(k, ...)`; and the row-wise
/// `softmax(j, ...)` and `layernorm(j, ...)`, which normalize over an output index instead of
/// reducing it: the parser and printer know them, `check` writes them out with sums, max, exp,
/// sqrt and divisions (row_functions.h), so no checked kernel holds one.
enum class ReduceOp { kSum, kMax, kSoftmax, kLayerNorm };

/// Whether `op` is a row-wise function (softmax, layernorm) rather than a reduction.
inline bool isRowFunction(ReduceOp op) {
  return op == ReduceOp::kSoftmax || op == ReduceOp::kLayerNorm;
}

/// The written name: "sum", "max", "softmax".
const char* reduceOpName(ReduceOp op);

/// Element-wise functions: kNeg (unary minus) and one enumerator per line of
/// support/elementwise_functions.h (kAbs, kSqrt, ..., kRelu, kSilu, kGelu = erf form, ...).
#define SF_EXPR_UNARY_FN(Name, ...) k##Name,
enum class UnaryFn { kNeg, SF_ELEMENTWISE_FUNCTIONS(SF_EXPR_UNARY_FN) };
#undef SF_EXPR_UNARY_FN

/// The written name of a function ("-" for kNeg).
const char* unaryFnName(UnaryFn fn);
/// The function a written name denotes ("relu" -> kRelu); nullopt for "-" and unknown names.
std::optional<UnaryFn> unaryFnFromName(std::string_view name);
/// The names a kernel may call, for error messages: "abs, sqrt, ..., tanh, sum, max".
std::string knownFunctionNames();
/// Whether f(0) = 0 (a structural zero of the operand stays one): true for kNeg.
bool zeroPreserving(UnaryFn fn);
/// f(x) in float64, by the formula generated code uses (support/elementwise_functions.h).
double evaluate(UnaryFn fn, double x);

/// The deepest nesting `parse` accepts (parentheses, calls, unary minus, operator chains), and the
/// most distinct index names `check` accepts: deeper text is refused instead of exhausting the
/// stack.
inline constexpr int kMaxDepth = 256;

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// A tensor read `A(i,k)`; a scalar tensor is `s()`.
struct Access {
  std::string tensor;
  std::vector<std::string> indices;
};
/// A numeric literal `2`, `0.5`, `1e-3`.
struct Literal {
  double value = 0;
};
/// A named scalar parameter: a bare identifier that is not a tensor, e.g. `alpha` in
/// `y(i) = alpha * A(i,j) * x(j)`.
struct Param {
  std::string name;
};
struct Unary {
  UnaryFn fn;
  ExprPtr operand;
};
struct Binary {
  BinaryOp op;
  ExprPtr lhs, rhs;
};
/// `sum(k, body)` / `max(k, body)`; `implicit` marks one that `check` inserted.
struct Reduce {
  ReduceOp op;
  std::string index;
  ExprPtr body;
  bool implicit = false;
};

struct Expr {
  std::variant<Access, Literal, Param, Unary, Binary, Reduce> node;
  SourceLocation location;
};

/// Makes a node: `makeExpr(Access{"A", {"i", "k"}})`.
template <typename Node>
ExprPtr makeExpr(Node node, SourceLocation location = {}) {
  return std::make_shared<const Expr>(Expr{std::move(node), location});
}

/// The same tree, ignoring source locations (the `implicit` flag of reductions counts).
bool sameTree(const Expr& a, const Expr& b);
/// The same tree up to a consistent renaming of indices (free and reduced alike, one to one),
/// ignoring locations and the `implicit` flag: `sum(k, A(i,k)*B(k,j))` and `sum(m, A(i,m)*B(m,l))`.
/// On success `renaming` maps each index of `a` to the one of `b` in its place.
bool sameUpToIndexRenaming(const Expr& a, const Expr& b,
                           std::map<std::string, std::string>* renaming);

/// `lhs = rhs` or `lhs += rhs`.
struct Statement {
  Access lhs;
  SourceLocation lhsLocation;
  bool accumulate = false;  ///< `+=`: add into the output's current values
  ExprPtr rhs;
  std::string text;  ///< the kernel text, for error messages
};

/// Parses one statement. Throws sparseflow::Error (kParseError) whose message starts with
/// "line L, column C: " and says what was expected, e.g. "line 1, column 14: expected ')' after
/// the indices of 'A', found '*'", followed by the text line and a caret under the column.
Statement parse(const std::string& text);

/// Prints back in the syntax `parse` reads (fully parenthesized where precedence needs it), so
/// parse(toString(s)) == s. Implicit reductions are printed as explicit `sum(k, ...)`.
std::string toString(const Expr& e);
std::string toString(const Statement& s);
/// The same lhs, operator and rhs tree (ignoring locations and text).
bool sameStatement(const Statement& a, const Statement& b);

/// What is known of a tensor named in a kernel.
struct TensorInfo {
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
};

/// A statement after checking against the bound tensors: every reduction explicit, every index
/// with its extent, every operand with its shape and dtype.
struct CheckedKernel {
  Statement statement;  ///< implicit reductions made explicit (Reduce with implicit = true)
  std::map<std::string, int64_t> indexExtents;
  std::map<std::string, TensorInfo> tensors;  ///< operands and the output
  std::string output;                         ///< the lhs tensor's name
  std::vector<std::string> inputs;            ///< rhs tensors, in order of first appearance
  std::vector<std::string> params;            ///< scalar parameters, in order of appearance
  std::vector<std::string> freeIndices;       ///< the lhs indices, in lhs order
  std::vector<std::string> reductionIndices;  ///< every reduced index, outermost first
  /// The fresh indices of written-out row functions (softmax, layernorm), each with the index it
  /// copies (and whose extent it has).
  std::map<std::string, std::string> indexCopyOf;
  DType computeType = DType::kF32;  ///< f64 if any operand is f64, else f32
};

/// Checks a statement against the tensors bound to it. The output's entry in `tensors` may be
/// missing: its shape is then inferred from the index extents and its dtype is the compute type.
/// Implicit reductions: an rhs index absent from the lhs and not bound by an explicit reduction
/// is summed over the smallest subexpression that holds all its uses, as in TACO and einsum
/// (`y(i) = A(i,j) * x(j) + b(i)` means `y(i) = sum(j, A(i,j) * x(j)) + b(i)`).
/// Errors (kInvalidArgument, kParseError for unknown functions) name the tensor, the index and
/// the place in the text: "line 1, column 18: index 'k' of 'B' has extent 30, but 'k' of 'A'
/// (column 9) has extent 20". Also refused: an lhs index repeated, an lhs index absent from the
/// rhs whose extent the bound output does not give (a broadcast `C(i,j) = x(i)` is fine when C is
/// bound), a tensor used with the wrong number of indices or with two different ranks, an
/// unbound input tensor, a reduction index that is also an lhs index or reduced twice, the output
/// read on the rhs, integer tensors as operands.
/// `indexCopies` (copy -> index) reads a kernel that check wrote out before (its text and its
/// CheckedKernel::indexCopyOf, as the checked stage prints them): a declared copy has the extent
/// of the index it copies and may be reduced without being used (layernorm's `sum(j_2, 1)`).
CheckedKernel check(const Statement& statement, const std::map<std::string, TensorInfo>& tensors,
                    const std::map<std::string, std::string>& indexCopies = {});

}  // namespace sparseflow::expr
