// Read-only traversal of the loop IR: override the nodes you care about; the defaults visit every
// child. Dispatch comes from the node lists in ir.h.
#pragma once

#include "ir/ir.h"

namespace sparseflow::ir {

class Visitor {
 public:
  virtual ~Visitor() = default;
  void visit(const Expr& e);
  void visit(const Stmt& s);

#define SF_IR_VISIT(name) virtual void visit##name(const name& node);
  SF_IR_EXPR_LIST(SF_IR_VISIT)
  SF_IR_STMT_LIST(SF_IR_VISIT)
#undef SF_IR_VISIT
};

/// Rebuilding traversal: each visit returns the replacement node; the defaults rebuild a node
/// only when a child changed, and otherwise return the same node (so unchanged trees are shared).
class Mutator {
 public:
  virtual ~Mutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);

#define SF_IR_MUTATE_EXPR(name) virtual Expr mutate##name(const name& node, const Expr& self);
#define SF_IR_MUTATE_STMT(name) virtual Stmt mutate##name(const name& node, const Stmt& self);
  SF_IR_EXPR_LIST(SF_IR_MUTATE_EXPR)
  SF_IR_STMT_LIST(SF_IR_MUTATE_STMT)
#undef SF_IR_MUTATE_EXPR
#undef SF_IR_MUTATE_STMT
};

}  // namespace sparseflow::ir
