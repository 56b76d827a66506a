// The loop IR (stage II): immutable expression and statement nodes, listed once in X-macros
// that generate the kind enums, the visitor, the mutator and the printer's dispatch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/elementwise_functions.h"

namespace sparseflow::ir {

/// Scalar types of IR values and array elements.
enum class ScalarType { kBool, kI32, kI64, kF32, kF64, kU8 };
/// The C++ spelling: "bool", "int32_t", "int64_t", "float", "double", "uint8_t".
const char* cppTypeName(ScalarType type);
bool isFloat(ScalarType type);

#define SF_IR_EXPR_LIST(X) \
  X(IntImm)                \
  X(FloatImm)              \
  X(Var)                   \
  X(Load)                  \
  X(Binary)                \
  X(Unary)                 \
  X(Select)                \
  X(Cast)

#define SF_IR_STMT_LIST(X) \
  X(Block)                 \
  X(For)                   \
  X(While)                 \
  X(IfThenElse)            \
  X(Let)                   \
  X(Assign)                \
  X(Store)                 \
  X(Allocate)              \
  X(Sort)                  \
  X(Comment)

enum class ExprKind {
#define SF_IR_ENUM(name) k##name,
  SF_IR_EXPR_LIST(SF_IR_ENUM)
};
enum class StmtKind { SF_IR_STMT_LIST(SF_IR_ENUM) };
#undef SF_IR_ENUM

struct ExprNode;
struct StmtNode;
using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

struct ExprNode {
  ExprKind kind;
  ScalarType type;
  ExprNode(ExprKind k, ScalarType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};
struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

/// An array the kernel reads or writes: a name in the generated code and its element type.
struct Array {
  std::string name;
  ScalarType element = ScalarType::kF64;
  bool operator==(const Array&) const = default;
};

/// kShr and kBitAnd are for integers (packed n:m offsets); kAnd and kOr for bools.
enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kMin,
  kMax,
  kLt,
  kLe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kShr,
  kBitAnd
};
/// Element-wise functions the generated code has: kNeg, one per line of
/// support/elementwise_functions.h (the kernel language's), and kNot for bools.
#define SF_IR_UNARY_OP(Name, ...) k##Name,
enum class UnaryOp { kNeg, SF_ELEMENTWISE_FUNCTIONS(SF_IR_UNARY_OP) kNot };
#undef SF_IR_UNARY_OP
const char* binaryOpName(BinaryOp op);
const char* unaryOpName(UnaryOp op);

struct IntImm : ExprNode {
  int64_t value;
  IntImm(int64_t v, ScalarType t) : ExprNode(ExprKind::kIntImm, t), value(v) {}
};
struct FloatImm : ExprNode {
  double value;
  FloatImm(double v, ScalarType t) : ExprNode(ExprKind::kFloatImm, t), value(v) {}
};
struct Var : ExprNode {
  std::string name;
  Var(std::string n, ScalarType t) : ExprNode(ExprKind::kVar, t), name(std::move(n)) {}
};
struct Load : ExprNode {
  Array array;
  Expr index;
  Load(Array a, Expr i)
      : ExprNode(ExprKind::kLoad, a.element), array(std::move(a)), index(std::move(i)) {}
};
struct Binary : ExprNode {
  BinaryOp op;
  Expr a, b;
  Binary(BinaryOp o, Expr x, Expr y, ScalarType t)
      : ExprNode(ExprKind::kBinary, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
struct Unary : ExprNode {
  UnaryOp op;
  Expr a;
  Unary(UnaryOp o, Expr x, ScalarType t) : ExprNode(ExprKind::kUnary, t), op(o), a(std::move(x)) {}
};
struct Select : ExprNode {
  Expr cond, a, b;
  Select(Expr c, Expr x, Expr y, ScalarType t)
      : ExprNode(ExprKind::kSelect, t), cond(std::move(c)), a(std::move(x)), b(std::move(y)) {}
};
struct Cast : ExprNode {
  Expr a;
  Cast(Expr x, ScalarType t) : ExprNode(ExprKind::kCast, t), a(std::move(x)) {}
};

struct Block : StmtNode {
  std::vector<Stmt> body;
  explicit Block(std::vector<Stmt> b) : StmtNode(StmtKind::kBlock), body(std::move(b)) {}
};

/// How a loop runs: the schedule's annotations, honoured by code generation.
enum class LoopKind { kSerial, kParallel, kVectorized, kUnrolled };
const char* loopKindName(LoopKind kind);

/// What a schedule may say of a loop beyond its kind.
struct LoopAnnotations {
  std::string label;          ///< the loop's name in schedules: its index ("i", "j_blk", "i0")
  int64_t unroll = 0;         ///< kUnrolled: the factor
  std::string reduction;      ///< an accumulator privatized per thread/lane ("acc0"), or ""
  bool atomicStores = false;  ///< kParallel: stores to shared memory inside are atomic
  /// Set by lowering: different iterations write different output elements (the loop walks an
  /// output index without repeats), so running them in parallel cannot race.
  bool disjointWrites = false;
  /// Set by precompute(): the loop's updates of an output go to this zeroed workspace (one per
  /// thread when the loop runs in parallel), added into the output after the loop.
  std::string workspace;
  /// The loop runs under `#pragma omp critical` (one thread at a time): a workspace's combine.
  bool critical = false;
  /// Set by bind(): the GPU grid axis its iterations map to ("blockIdx.x", "threadIdx.y"...).
  /// Only the CUDA backend runs such loops; the C++ backend refuses them.
  std::string gpuAxis;
  bool operator==(const LoopAnnotations&) const = default;
};

/// `for (var = begin; var < end; ++var)`.
struct For : StmtNode {
  std::string var;
  ScalarType varType;
  Expr begin, end;
  LoopKind loopKind;
  Stmt body;
  LoopAnnotations notes;
  For(std::string v, ScalarType t, Expr b, Expr e, LoopKind k, Stmt s, LoopAnnotations n)
      : StmtNode(StmtKind::kFor),
        var(std::move(v)),
        varType(t),
        begin(std::move(b)),
        end(std::move(e)),
        loopKind(k),
        body(std::move(s)),
        notes(std::move(n)) {}
};
struct While : StmtNode {
  Expr cond;
  Stmt body;
  While(Expr c, Stmt s) : StmtNode(StmtKind::kWhile), cond(std::move(c)), body(std::move(s)) {}
};
struct IfThenElse : StmtNode {
  Expr cond;
  Stmt then, otherwise;  ///< otherwise may be null
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(StmtKind::kIfThenElse),
        cond(std::move(c)),
        then(std::move(t)),
        otherwise(std::move(e)) {}
};
/// Declares a local scalar: `type var = value;` (mutable: Assign may update it).
struct Let : StmtNode {
  std::string var;
  Expr value;
  Let(std::string v, Expr x) : StmtNode(StmtKind::kLet), var(std::move(v)), value(std::move(x)) {}
};

/// How a store combines with what is there: `=`, `+=`, or max.
enum class UpdateOp { kSet, kAdd, kMax };
/// `var = value`, `var += value` or `var = max(var, value)`.
struct Assign : StmtNode {
  std::string var;
  UpdateOp op;
  Expr value;
  Assign(std::string v, UpdateOp o, Expr x)
      : StmtNode(StmtKind::kAssign), var(std::move(v)), op(o), value(std::move(x)) {}
};
/// `array[index] op= value`.
struct Store : StmtNode {
  Array array;
  Expr index;
  UpdateOp op;
  Expr value;
  Store(Array a, Expr i, UpdateOp o, Expr x)
      : StmtNode(StmtKind::kStore),
        array(std::move(a)),
        index(std::move(i)),
        op(o),
        value(std::move(x)) {}
};
/// A zero-filled scratch array of `size` elements, alive for `body` (a dense workspace).
/// `perThread`: when body is a parallel loop, each thread gets its own array for all the
/// iterations it runs (a workspace that every iteration leaves zeroed again).
struct Allocate : StmtNode {
  Array array;
  Expr size;
  Stmt body;
  bool perThread;
  Allocate(Array a, Expr n, Stmt s, bool t)
      : StmtNode(StmtKind::kAllocate),
        array(std::move(a)),
        size(std::move(n)),
        body(std::move(s)),
        perThread(t) {}
};
/// Sorts array[begin, end) in increasing order (the coordinates a workspace collected).
struct Sort : StmtNode {
  Array array;
  Expr begin, end;
  Sort(Array a, Expr b, Expr e)
      : StmtNode(StmtKind::kSort), array(std::move(a)), begin(std::move(b)), end(std::move(e)) {}
};
struct Comment : StmtNode {
  std::string text;
  explicit Comment(std::string t) : StmtNode(StmtKind::kComment), text(std::move(t)) {}
};

// Factories: the only way nodes are made. Arithmetic folds integer constants (0 + x, 1 * x).
Expr intImm(int64_t value, ScalarType type = ScalarType::kI64);
Expr floatImm(double value, ScalarType type);
Expr var(const std::string& name, ScalarType type);
Expr load(const Array& array, Expr index);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr unary(UnaryOp op, Expr a);
Expr select(Expr cond, Expr a, Expr b);
Expr cast(Expr a, ScalarType type);

/// True when a Let is directly in `b`: the block is a scope (verify.h), never spliced into another.
bool declaresNames(const Block& b);

/// A list of statements. A nested block that declares names (a Let directly in it) stays a block:
/// it is a scope (verify.h); other nested blocks are spliced in.
Stmt block(std::vector<Stmt> body);
/// One scope holding `prefix` then the statements of `body` (a loop body, whose scope it
/// replaces: a transform that moves a body under new declarations).
Stmt blockWithPrefix(std::vector<Stmt> prefix, const Stmt& body);
Stmt forLoop(const std::string& var, ScalarType type, Expr begin, Expr end, Stmt body,
             LoopKind kind = LoopKind::kSerial, LoopAnnotations notes = {});
Stmt whileLoop(Expr cond, Stmt body);
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise = nullptr);
Stmt let(const std::string& var, Expr value);
Stmt assign(const std::string& var, UpdateOp op, Expr value);
Stmt store(const Array& array, Expr index, UpdateOp op, Expr value);
Stmt allocate(const Array& array, Expr size, Stmt body, bool perThread = false);
Stmt sortRange(const Array& array, Expr begin, Expr end);
Stmt comment(const std::string& text);

/// Prints the IR as indented pseudo-C (what `kernel.ir` shows; stable, used by tests, read back by
/// ir/parser.h).
std::string toString(const Expr& e);
std::string toString(const Stmt& s);
/// The label a loop over `var` has unless the text says otherwise: the index of `v_<index>`, else
/// the variable's own name.
std::string defaultLoopLabel(const std::string& var);

/// The type binary(op, a, b) gives its result: bool for comparisons, else the wider operand type.
ScalarType binaryResultType(BinaryOp op, ScalarType a, ScalarType b);

}  // namespace sparseflow::ir
