// The row-wise functions' meaning: `softmax(j, e)` written out with exp, max, sum and a division,
// which is what check() puts in a checked kernel, so the later stages see only reductions (and
// the providers recognize the same tree however the user spelled it).
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>

#include "expr/expr.h"

namespace sparseflow::expr {

/// Index names no other name of the kernel has: "j_1", "j_2", ... for copies of "j".
class FreshIndexNames {
 public:
  explicit FreshIndexNames(std::set<std::string> taken) : taken_(std::move(taken)) {}
  /// A new name for a copy of `index`.
  std::string copyOf(const std::string& index);
  /// Each name made, with the index it copies (its extent is that index's).
  const std::map<std::string, std::string>& origins() const { return origins_; }

 private:
  std::set<std::string> taken_;
  std::map<std::string, std::string> origins_;
};

/// `softmax(j, e)` as exp(e - max(j1, e1)) / sum(j2, exp(e2 - max(j3, e3))): e1, e2, e3 are
/// copies of `body` with j and every index it reduces renamed to fresh names (the max taken
/// first, as torch.softmax does, so no exp overflows). `body` holds no softmax.
ExprPtr expandSoftmax(const std::string& index, const ExprPtr& body, FreshIndexNames& names);

/// The nodes `rhs` has once every softmax is expanded (each copies its body four times), or
/// `limit` + 1 when that is more than `limit`.
size_t expandedNodeCount(const Expr& rhs, size_t limit);

/// `rhs` with every softmax expanded, innermost first.
ExprPtr expandRowFunctions(const ExprPtr& rhs, FreshIndexNames& names);

}  // namespace sparseflow::expr
