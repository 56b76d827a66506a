// parse(): recursive descent over the tokens, with a bound on nesting so that no text can exhaust
// the stack. Precedence from low to high: + -, then * /, then unary minus, then operands.
#include <algorithm>
#include <utility>

#include "expr/diagnostics.h"
#include "expr/expr.h"
#include "expr/lexer.h"

namespace sparseflow::expr {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text), lexer_(text) { advance(); }

  Statement statement();

 private:
  // A subtree and its depth (a leaf has depth 1), so that operator chains are bounded too.
  struct Parsed {
    ExprPtr expr;
    int depth = 1;
  };

  Parsed sum(int nesting);
  Parsed product(int nesting);
  Parsed unary(int nesting);
  Parsed primary(int nesting);
  Parsed call(const Token& name, int nesting);
  /// `minimum(a, b)`, `maximum(a, b)`, `clamp(x, lo, hi)` (= minimum(maximum(x, lo), hi)).
  Parsed minMaxCall(const Token& name, int nesting);
  Parsed reduction(const Token& name, ReduceOp op, int nesting);
  std::vector<std::string> indices(const Token& name, bool output);

  void advance() { current_ = lexer_.next(); }
  [[noreturn]] void fail(SourceLocation at, const std::string& message) const {
    failAt(ErrorCode::kParseError, text_, at, message);
  }
  // "expected <what>, found <the current token>" at the current token.
  [[noreturn]] void expected(const std::string& what) const {
    fail(current_.location, "expected " + what + ", found " + describe(current_));
  }
  void enter(const Token& at, int nesting) const;
  void checkDepth(const Token& at, int depth) const;

  const std::string& text_;
  Lexer lexer_;
  Token current_;
};

std::string name(const Token& token) {
  return std::string(token.text);
}

void Parser::enter(const Token& at, int nesting) const {
  if (nesting > kMaxDepth) {
    fail(at.location,
         "expression nested too deeply (the limit is " + std::to_string(kMaxDepth) + " levels)");
  }
}

void Parser::checkDepth(const Token& at, int depth) const {
  if (depth > kMaxDepth) {
    fail(at.location,
         "expression nested too deeply (the limit is " + std::to_string(kMaxDepth) + " levels)");
  }
}

Statement Parser::statement() {
  Statement s;
  s.text = text_;
  if (current_.kind != TokenKind::kIdentifier) expected("the name of the output tensor");
  const Token output = current_;
  s.lhsLocation = output.location;
  advance();
  if (current_.kind != TokenKind::kLParen) {
    expected("'(' after the output '" + name(output) + "' (a scalar output is written '" +
             name(output) + "()')");
  }
  advance();
  s.lhs = Access{name(output), indices(output, /*output=*/true)};
  if (current_.kind == TokenKind::kAssign) {
    s.accumulate = false;
  } else if (current_.kind == TokenKind::kPlusAssign) {
    s.accumulate = true;
  } else {
    expected("'=' or '+=' after the output '" + name(output) + "'");
  }
  advance();
  s.rhs = sum(0).expr;
  if (current_.kind != TokenKind::kEnd) expected("an operator or the end of the statement");
  return s;
}

Parser::Parsed Parser::sum(int nesting) {
  Parsed left = product(nesting);
  while (current_.kind == TokenKind::kPlus || current_.kind == TokenKind::kMinus) {
    const Token op = current_;
    advance();
    Parsed right = product(nesting);
    const int depth = std::max(left.depth, right.depth) + 1;
    checkDepth(op, depth);
    const BinaryOp kind = op.kind == TokenKind::kPlus ? BinaryOp::kAdd : BinaryOp::kSub;
    left = {makeExpr(Binary{kind, std::move(left.expr), std::move(right.expr)}, op.location),
            depth};
  }
  return left;
}

Parser::Parsed Parser::product(int nesting) {
  Parsed left = unary(nesting);
  while (current_.kind == TokenKind::kStar || current_.kind == TokenKind::kSlash) {
    const Token op = current_;
    advance();
    Parsed right = unary(nesting);
    const int depth = std::max(left.depth, right.depth) + 1;
    checkDepth(op, depth);
    const BinaryOp kind = op.kind == TokenKind::kStar ? BinaryOp::kMul : BinaryOp::kDiv;
    left = {makeExpr(Binary{kind, std::move(left.expr), std::move(right.expr)}, op.location),
            depth};
  }
  return left;
}

Parser::Parsed Parser::unary(int nesting) {
  if (current_.kind != TokenKind::kMinus) return primary(nesting);
  const Token minus = current_;
  enter(minus, nesting + 1);
  advance();
  Parsed operand = unary(nesting + 1);
  checkDepth(minus, operand.depth + 1);
  return {makeExpr(Unary{UnaryFn::kNeg, std::move(operand.expr)}, minus.location),
          operand.depth + 1};
}

Parser::Parsed Parser::primary(int nesting) {
  const Token first = current_;
  switch (first.kind) {
    case TokenKind::kNumber: advance(); return {makeExpr(Literal{first.number}, first.location), 1};
    case TokenKind::kLParen: {
      enter(first, nesting + 1);
      advance();
      Parsed inner = sum(nesting + 1);
      if (current_.kind != TokenKind::kRParen) {
        expected("')' to close the '(' at " + whereRelative(first.location, current_.location));
      }
      advance();
      return inner;
    }
    case TokenKind::kIdentifier: {
      advance();
      if (current_.kind != TokenKind::kLParen) {
        return {makeExpr(Param{name(first)}, first.location), 1};
      }
      if (first.text == "sum") return reduction(first, ReduceOp::kSum, nesting);
      if (first.text == "max") return reduction(first, ReduceOp::kMax, nesting);
      if (first.text == "softmax") return reduction(first, ReduceOp::kSoftmax, nesting);
      if (first.text == "layernorm") return reduction(first, ReduceOp::kLayerNorm, nesting);
      if (unaryFnFromName(first.text)) return call(first, nesting);
      if (first.text == "minimum" || first.text == "maximum" || first.text == "clamp")
        return minMaxCall(first, nesting);
      advance();
      return {makeExpr(Access{name(first), indices(first, /*output=*/false)}, first.location), 1};
    }
    default: expected("an operand (a tensor, a number, a parameter, a function call or '(')");
  }
}

Parser::Parsed Parser::call(const Token& fn, int nesting) {
  enter(fn, nesting + 1);
  advance();  // (
  Parsed argument = sum(nesting + 1);
  if (current_.kind != TokenKind::kRParen) {
    expected("')' after the argument of '" + name(fn) + "'");
  }
  advance();
  checkDepth(fn, argument.depth + 1);
  return {makeExpr(Unary{*unaryFnFromName(fn.text), std::move(argument.expr)}, fn.location),
          argument.depth + 1};
}

Parser::Parsed Parser::minMaxCall(const Token& fn, int nesting) {
  enter(fn, nesting + 1);
  advance();  // (
  const bool clamp = fn.text == "clamp";
  const size_t count = clamp ? 3 : 2;
  std::vector<Parsed> args;
  while (true) {
    args.push_back(sum(nesting + 1));
    if (args.size() == count || current_.kind != TokenKind::kComma) break;
    advance();
  }
  if (args.size() != count || current_.kind != TokenKind::kRParen) {
    expected(args.size() < count ? "',' and the " + std::to_string(count) + " arguments of '" +
                                       name(fn) + (clamp ? "(x, low, high)'" : "(a, b)'")
                                 : "')' after the arguments of '" + name(fn) + "'");
  }
  advance();
  int depth = 0;
  for (const Parsed& a : args) depth = std::max(depth, a.depth);
  checkDepth(fn, depth + (clamp ? 2 : 1));
  if (!clamp) {
    const BinaryOp op = fn.text == "minimum" ? BinaryOp::kMin : BinaryOp::kMax;
    return {makeExpr(Binary{op, std::move(args[0].expr), std::move(args[1].expr)}, fn.location),
            depth + 1};
  }
  ExprPtr low = makeExpr(Binary{BinaryOp::kMax, std::move(args[0].expr), std::move(args[1].expr)},
                         fn.location);
  return {makeExpr(Binary{BinaryOp::kMin, std::move(low), std::move(args[2].expr)}, fn.location),
          depth + 2};
}

Parser::Parsed Parser::reduction(const Token& op, ReduceOp kind, int nesting) {
  enter(op, nesting + 1);
  advance();  // (
  if (current_.kind != TokenKind::kIdentifier) {
    expected("the index that '" + name(op) + "' " +
             (isRowFunction(kind) ? "normalizes" : "reduces") + " over");
  }
  std::string index = name(current_);
  advance();
  if (current_.kind != TokenKind::kComma) {
    expected("',' after the index of '" + name(op) + "(" + index + ", ...)'");
  }
  advance();
  Parsed body = sum(nesting + 1);
  if (current_.kind != TokenKind::kRParen) {
    expected("')' to close '" + name(op) + "(" + index + ", ...' at " +
             whereRelative(op.location, current_.location));
  }
  advance();
  checkDepth(op, body.depth + 1);
  return {makeExpr(Reduce{kind, std::move(index), std::move(body.expr)}, op.location),
          body.depth + 1};
}

// After `name(`: the index names up to and including `)`. On the right-hand side, text that is
// not an index list (a number, a call, an expression) means `name` was meant as a function.
std::vector<std::string> Parser::indices(const Token& tensor, bool output) {
  std::vector<std::string> result;
  if (current_.kind == TokenKind::kRParen) {
    advance();
    return result;
  }
  const auto unknownFunction = [&] {
    fail(tensor.location,
         "unknown function '" + name(tensor) + "' (known: " + knownFunctionNames() + ")");
  };
  for (;;) {
    if (current_.kind != TokenKind::kIdentifier) {
      const bool expression = current_.kind == TokenKind::kNumber ||
                              current_.kind == TokenKind::kLParen ||
                              current_.kind == TokenKind::kMinus;
      if (!output && result.empty() && expression) unknownFunction();
      expected("an index name in '" + name(tensor) + "(...)'");
    }
    result.push_back(name(current_));
    advance();
    if (current_.kind == TokenKind::kComma) {
      advance();
      continue;
    }
    if (current_.kind == TokenKind::kRParen) {
      advance();
      return result;
    }
    if (!output && current_.kind == TokenKind::kLParen) unknownFunction();
    expected("')' after the indices of '" + name(tensor) + "'");
  }
}

}  // namespace

Statement parse(const std::string& text) {
  return Parser(text).statement();
}

}  // namespace sparseflow::expr
