// The row-wise functions' meaning: `softmax(j, e)` written out with exp, max, sum and a division,
// `layernorm(j, e)` with sums, sqrt and divisions, which is what check() puts in a checked
// kernel, so the later stages see only reductions (and the providers recognize the same tree
// however the user spelled it).
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

/// The epsilon layernorm adds to the variance (torch.nn.functional.layer_norm's default).
inline constexpr double kLayerNormEpsilon = 1e-5;

/// `layernorm(j, e)` as
///   (e - sum(j1, e1) / n) / sqrt(sum(j2, (e2 - sum(j3, e3) / n) * (e2' - sum(j4, e4) / n)) / n
///                                + 1e-5)
/// (the biased variance about the mean, as torch.nn.functional.layer_norm without weights),
/// where n is the row's length counted as `sum(j5, 1)` (extents are known only when the kernel
/// runs); each copy renamed as for softmax (e2' is e2 with its reductions renamed). A count
/// does not use its index, which text may not write (check refuses such a sum): the written-out
/// form is check's alone.
ExprPtr expandLayerNorm(const std::string& index, const ExprPtr& body, FreshIndexNames& names);

/// The nodes `rhs` has once every row function is expanded (softmax copies its body four times,
/// layernorm six), or `limit` + 1 when that is more than `limit`.
size_t expandedNodeCount(const Expr& rhs, size_t limit);

/// `rhs` with every row function expanded, innermost first.
ExprPtr expandRowFunctions(const ExprPtr& rhs, FreshIndexNames& names);

}  // namespace sparseflow::expr
