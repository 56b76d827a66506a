// Node factories with light folding of integer constants, and the names of types and operators.
#include "ir/ir.h"

#include "support/check.h"

namespace sparseflow::ir {

const char* cppTypeName(ScalarType type) {
  switch (type) {
    case ScalarType::kBool: return "bool";
    case ScalarType::kI32: return "int32_t";
    case ScalarType::kI64: return "int64_t";
    case ScalarType::kF32: return "float";
    case ScalarType::kF64: return "double";
    case ScalarType::kU8: return "uint8_t";
  }
  return "?";
}

bool isFloat(ScalarType type) {
  return type == ScalarType::kF32 || type == ScalarType::kF64;
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
    case BinaryOp::kShr: return ">>";
    case BinaryOp::kBitAnd: return "&";
  }
  return "?";
}

const char* unaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kNot: return "not";
#define SF_IR_UNARY_NAME(Name, written, ...) \
  case UnaryOp::k##Name: return written;
      SF_ELEMENTWISE_FUNCTIONS(SF_IR_UNARY_NAME)
#undef SF_IR_UNARY_NAME
  }
  return "?";
}

const char* loopKindName(LoopKind kind) {
  switch (kind) {
    case LoopKind::kSerial: return "serial";
    case LoopKind::kParallel: return "parallel";
    case LoopKind::kVectorized: return "vectorized";
    case LoopKind::kUnrolled: return "unrolled";
  }
  return "?";
}

namespace {

const IntImm* asInt(const Expr& e) {
  return e->kind == ExprKind::kIntImm ? static_cast<const IntImm*>(e.get()) : nullptr;
}

bool isComparison(BinaryOp op) {
  return op == BinaryOp::kLt || op == BinaryOp::kLe || op == BinaryOp::kEq || op == BinaryOp::kNe ||
         op == BinaryOp::kAnd || op == BinaryOp::kOr;
}

/// The wider of two operand types (float beats integer, 64 bits beat 32).
ScalarType unify(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::kF64 || b == ScalarType::kF64) return ScalarType::kF64;
  if (a == ScalarType::kF32 || b == ScalarType::kF32) return ScalarType::kF32;
  return ScalarType::kI64;
}

}  // namespace

ScalarType binaryResultType(BinaryOp op, ScalarType a, ScalarType b) {
  return isComparison(op) ? ScalarType::kBool : unify(a, b);
}

Expr intImm(int64_t value, ScalarType type) {
  return std::make_shared<IntImm>(value, type);
}
Expr floatImm(double value, ScalarType type) {
  return std::make_shared<FloatImm>(value, type);
}
Expr var(const std::string& name, ScalarType type) {
  return std::make_shared<Var>(name, type);
}
Expr load(const Array& array, Expr index) {
  SF_ICHECK(index != nullptr) << "load of " << array.name << " without an index";
  return std::make_shared<Load>(array, std::move(index));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  SF_ICHECK(a && b) << "binary " << binaryOpName(op) << " with a null operand";
  const IntImm* x = asInt(a);
  const IntImm* y = asInt(b);
  const ScalarType type = isComparison(op) ? ScalarType::kBool : unify(a->type, b->type);
  if (x && y && !isComparison(op)) {
    switch (op) {
      case BinaryOp::kAdd: return intImm(x->value + y->value, type);
      case BinaryOp::kSub: return intImm(x->value - y->value, type);
      case BinaryOp::kMul: return intImm(x->value * y->value, type);
      default: break;
    }
  }
  if (op == BinaryOp::kAdd && x && x->value == 0) return b;
  if ((op == BinaryOp::kAdd || op == BinaryOp::kSub) && y && y->value == 0) return a;
  if (op == BinaryOp::kMul && x && x->value == 1) return b;
  if ((op == BinaryOp::kMul || op == BinaryOp::kDiv) && y && y->value == 1) return a;
  if (op == BinaryOp::kMul && ((x && x->value == 0) || (y && y->value == 0)) && !isFloat(type)) {
    return intImm(0, type);
  }
  return std::make_shared<Binary>(op, std::move(a), std::move(b), type);
}

Expr add(Expr a, Expr b) {
  return binary(BinaryOp::kAdd, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return binary(BinaryOp::kSub, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
  return binary(BinaryOp::kMul, std::move(a), std::move(b));
}
Expr div(Expr a, Expr b) {
  return binary(BinaryOp::kDiv, std::move(a), std::move(b));
}
Expr lt(Expr a, Expr b) {
  return binary(BinaryOp::kLt, std::move(a), std::move(b));
}

Expr unary(UnaryOp op, Expr a) {
  SF_ICHECK(a != nullptr) << "unary " << unaryOpName(op) << " of null";
  const ScalarType type = op == UnaryOp::kNot ? ScalarType::kBool : a->type;
  return std::make_shared<Unary>(op, std::move(a), type);
}

Expr select(Expr cond, Expr a, Expr b) {
  const ScalarType type = unify(a->type, b->type);
  return std::make_shared<Select>(std::move(cond), std::move(a), std::move(b), type);
}

Expr cast(Expr a, ScalarType type) {
  if (a->type == type) return a;
  if (const IntImm* x = asInt(a); x && !isFloat(type)) return intImm(x->value, type);
  return std::make_shared<Cast>(std::move(a), type);
}

bool declaresNames(const Block& b) {
  for (const Stmt& s : b.body) {
    if (s->kind == StmtKind::kLet) return true;
  }
  return false;
}

Stmt block(std::vector<Stmt> body) {
  std::vector<Stmt> flat;
  for (Stmt& s : body) {
    if (!s) continue;
    // A nested block that declares names is a scope and stays one (verify.h); any other is only
    // a list of statements, spliced in.
    if (s->kind == StmtKind::kBlock && !declaresNames(static_cast<const Block&>(*s))) {
      for (const Stmt& inner : static_cast<const Block&>(*s).body) flat.push_back(inner);
    } else {
      flat.push_back(std::move(s));
    }
  }
  return std::make_shared<Block>(std::move(flat));
}

Stmt blockWithPrefix(std::vector<Stmt> prefix, const Stmt& body) {
  if (body && body->kind == StmtKind::kBlock) {
    for (const Stmt& s : static_cast<const Block&>(*body).body) prefix.push_back(s);
  } else {
    prefix.push_back(body);
  }
  return block(std::move(prefix));
}

Stmt forLoop(const std::string& v, ScalarType type, Expr begin, Expr end, Stmt body, LoopKind kind,
             LoopAnnotations notes) {
  return std::make_shared<For>(v, type, std::move(begin), std::move(end), kind, std::move(body),
                               std::move(notes));
}
Stmt whileLoop(Expr cond, Stmt body) {
  return std::make_shared<While>(std::move(cond), std::move(body));
}
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise) {
  return std::make_shared<IfThenElse>(std::move(cond), std::move(then), std::move(otherwise));
}
Stmt let(const std::string& v, Expr value) {
  return std::make_shared<Let>(v, std::move(value));
}
Stmt assign(const std::string& v, UpdateOp op, Expr value) {
  return std::make_shared<Assign>(v, op, std::move(value));
}
Stmt store(const Array& array, Expr index, UpdateOp op, Expr value) {
  return std::make_shared<Store>(array, std::move(index), op, std::move(value));
}
Stmt allocate(const Array& array, Expr size, Stmt body, bool perThread) {
  return std::make_shared<Allocate>(array, std::move(size), std::move(body), perThread);
}
Stmt sortRange(const Array& array, Expr begin, Expr end) {
  return std::make_shared<Sort>(array, std::move(begin), std::move(end));
}
Stmt comment(const std::string& text) {
  return std::make_shared<Comment>(text);
}

}  // namespace sparseflow::ir
