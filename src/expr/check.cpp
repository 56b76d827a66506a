// check(): binds a parsed statement to its tensors, infers extents and shapes, refuses what is
// inconsistent with a message that points into the text, and makes implicit reductions explicit.
#include <algorithm>
#include <set>
#include <utility>

#include "expr/diagnostics.h"
#include "expr/expr.h"
#include "expr/implicit_reductions.h"
#include "expr/lexer.h"
#include "expr/row_functions.h"
#include "expr/tree_walk.h"

namespace sparseflow::expr {
namespace {

// A tensor access: the lhs (node -1) or an Access node of the rhs.
struct Use {
  const Access* access = nullptr;
  SourceLocation location;
  int node = -1;
};

// Where an index got its extent first (located only for a message: that scans the text).
struct ExtentSource {
  int64_t extent = 0;
  const Use* use = nullptr;
  size_t position = 0;
};

std::string quote(const std::string& name) {
  return "'" + name + "'";
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class Checker {
 public:
  Checker(const Statement& statement, const std::map<std::string, TensorInfo>& bound,
          const std::map<std::string, std::string>& copies)
      : s_(statement), bound_(bound), copies_(copies) {}

  CheckedKernel run();

 private:
  [[noreturn]] void fail(SourceLocation at, const std::string& message,
                         ErrorCode code = ErrorCode::kInvalidArgument) const {
    failAt(code, s_.text, at, message);
  }
  SourceLocation indexAt(const Use& use, size_t position) const {
    return indexLocation(s_.text, use.location, position, use.access->indices[position]);
  }
  const Reduce& reduceAt(int node) const { return std::get<Reduce>(nodes_[node].expr->node); }

  void collect();
  void checkOutput() const;
  void checkUses() const;
  void checkBindings() const;
  void checkTensor(const Use& use, const TensorInfo& info) const;
  void checkParams() const;
  void checkReductions() const;
  void checkRowFunctions() const;
  ExprPtr expandRowFunctionsOf(const ExprPtr& rhs, CheckedKernel& k) const;
  void inferExtents();
  void addExtents(const Use& use, const std::vector<int64_t>& shape);
  void addCopiedExtents();

  const Statement& s_;
  const std::map<std::string, TensorInfo>& bound_;
  const std::map<std::string, std::string>& copies_;  // declared index copies (checked text)
  std::vector<FlatNode> nodes_;
  Use lhs_;
  std::vector<Use> uses_;                                       // rhs accesses in pre-order
  std::vector<int> reductions_;                                 // explicit Reduce nodes
  std::vector<int> rowFunctions_;                               // softmax, layernorm nodes
  std::vector<std::pair<std::string, SourceLocation>> params_;  // in pre-order
  std::map<std::string, ExtentSource> extents_;
  std::map<std::string, const Use*> firstUse_;  // of each rhs tensor
};

void Checker::collect() {
  lhs_ = {&s_.lhs, s_.lhsLocation, -1};
  for (size_t id = 0; id < nodes_.size(); ++id) {
    const Expr& e = *nodes_[id].expr;
    if (const auto* a = std::get_if<Access>(&e.node)) {
      uses_.push_back({a, e.location, static_cast<int>(id)});
    } else if (const auto* p = std::get_if<Param>(&e.node)) {
      params_.emplace_back(p->name, e.location);
    } else if (const auto* r = std::get_if<Reduce>(&e.node)) {
      (isRowFunction(r->op) ? rowFunctions_ : reductions_).push_back(static_cast<int>(id));
    }
  }
  // Bounding the names first keeps every later check small, however long the text.
  std::set<std::string> names(s_.lhs.indices.begin(), s_.lhs.indices.end());
  for (const Use& use : uses_) names.insert(use.access->indices.begin(), use.access->indices.end());
  for (const int node : reductions_) names.insert(reduceAt(node).index);
  for (const int node : rowFunctions_) names.insert(reduceAt(node).index);
  if (names.size() > static_cast<size_t>(kMaxDepth)) {
    fail(s_.lhsLocation, "the statement uses " + std::to_string(names.size()) +
                             " distinct index names (the limit is " + std::to_string(kMaxDepth) +
                             ")");
  }
  for (const Use& use : uses_) firstUse_.emplace(use.access->tensor, &use);
}

void Checker::checkOutput() const {
  if (s_.lhs.tensor.empty()) fail(s_.lhsLocation, "the output has no name");
  const auto& indices = s_.lhs.indices;
  for (size_t i = 0; i < indices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (indices[i] == indices[j]) {
        fail(indexAt(lhs_, i), "index " + quote(indices[i]) + " appears twice in the output " +
                                   quote(s_.lhs.tensor) + " (also at " +
                                   whereRelative(indexAt(lhs_, j), indexAt(lhs_, i)) + ")");
      }
    }
  }
  for (const Use& use : uses_) {
    if (use.access->tensor == s_.lhs.tensor) {
      fail(use.location, "the output " + quote(s_.lhs.tensor) +
                             " is also read on the right-hand side; '+=' adds into it instead");
    }
  }
}

void Checker::checkUses() const {
  for (const Use& use : uses_) {
    const auto& indices = use.access->indices;
    for (size_t i = 0; i < indices.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (indices[i] == indices[j]) {
          fail(indexAt(use, i),
               "index " + quote(indices[i]) + " appears twice in " + quote(use.access->tensor) +
                   " (reading a diagonal is not supported yet)",
               ErrorCode::kNotSupported);
        }
      }
    }
    const Use& earlier = *firstUse_.at(use.access->tensor);
    if (earlier.access->indices.size() != indices.size()) {
      fail(use.location, quote(use.access->tensor) + " is used with " +
                             std::to_string(indices.size()) + " indices here but with " +
                             std::to_string(earlier.access->indices.size()) + " at " +
                             whereRelative(earlier.location, use.location));
    }
  }
}

void Checker::checkTensor(const Use& use, const TensorInfo& info) const {
  const std::string& name = use.access->tensor;
  if (!isFloatType(info.dtype)) {
    fail(use.location,
         "tensor " + quote(name) + " has dtype " + dtypeName(info.dtype) +
             "; kernels compute on floating-point tensors only (f32, f64, f16, bf16)");
  }
  if (info.shape.size() != use.access->indices.size()) {
    fail(use.location, "tensor " + quote(name) + " has rank " + std::to_string(info.shape.size()) +
                           " but is used with " + std::to_string(use.access->indices.size()) +
                           " indices");
  }
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (info.shape[d] < 0) {
      fail(use.location, "tensor " + quote(name) + " has a negative extent (" +
                             std::to_string(info.shape[d]) + ") in dimension " + std::to_string(d));
    }
  }
}

void Checker::checkBindings() const {
  const auto output = bound_.find(s_.lhs.tensor);
  if (output != bound_.end()) checkTensor(lhs_, output->second);
  for (const Use& use : uses_) {
    const auto info = bound_.find(use.access->tensor);
    if (info == bound_.end()) {
      std::string known;
      size_t shown = 0;
      for (const auto& [name, unused] : bound_) {
        if (shown++ == 10) {
          known += ", ...";
          break;
        }
        known += (known.empty() ? "" : ", ") + name;
      }
      fail(use.location, "tensor " + quote(use.access->tensor) + " is not bound (" +
                             (known.empty() ? "no tensors are bound" : "bound: " + known) + ")");
    }
    checkTensor(use, info->second);
  }
}

void Checker::checkParams() const {
  for (const auto& [name, at] : params_) {
    if (name == s_.lhs.tensor) {
      fail(at, quote(name) + " is the output tensor; it cannot also be a parameter");
    }
    const auto tensor = firstUse_.find(name);
    if (tensor != firstUse_.end()) {
      fail(at, quote(name) + " is a tensor (read at " +
                   whereRelative(tensor->second->location, at) +
                   ") but is written here without indices");
    }
    if (bound_.count(name)) {
      fail(at, quote(name) + " is bound as a tensor but is written without indices; write " +
                   quote(name + "()") + " to read a scalar tensor");
    }
    if (extents_.count(name) || listed(s_.lhs.indices, name)) {
      fail(at, "parameter " + quote(name) + " has the name of an index; rename one of them");
    }
  }
}

void Checker::checkReductions() const {
  // The `k` of `sum(k, ...)`, and how messages name the reduction.
  const auto indexOf = [&](int node) {
    return indexLocation(s_.text, nodes_[node].expr->location, 0, reduceAt(node).index);
  };
  const auto named = [&](const Reduce& reduce) {
    return quote(std::string(reduceOpName(reduce.op)) + "(" + reduce.index + ", ...)");
  };
  for (size_t r = 0; r < reductions_.size(); ++r) {
    const Reduce& reduce = reduceAt(reductions_[r]);
    const SourceLocation at = indexOf(reductions_[r]);
    if (listed(s_.lhs.indices, reduce.index)) {
      fail(at, named(reduce) + " reduces " + quote(reduce.index) +
                   ", which is an index of the output " + quote(s_.lhs.tensor));
    }
    for (size_t q = 0; q < r; ++q) {
      if (reduceAt(reductions_[q]).index == reduce.index) {
        fail(at, "index " + quote(reduce.index) + " is reduced twice (also at " +
                     whereRelative(nodes_[reductions_[q]].expr->location, at) +
                     "); give one of the reductions another index name");
      }
    }
  }
  for (const int node : reductions_) {
    const Reduce& reduce = reduceAt(node);
    const SourceLocation where = nodes_[node].expr->location;
    bool used = false;
    for (const Use& use : uses_) {
      const auto& indices = use.access->indices;
      const auto found = std::find(indices.begin(), indices.end(), reduce.index);
      if (found == indices.end()) continue;
      if (contains(nodes_, node, use.node)) {
        used = true;
        continue;
      }
      fail(indexAt(use, static_cast<size_t>(found - indices.begin())),
           "index " + quote(reduce.index) + " of " + quote(use.access->tensor) +
               " is used outside the " + named(reduce) + " at " +
               whereRelative(where, use.location) + " that reduces it");
    }
    if (!used && !copies_.count(reduce.index)) {
      fail(indexOf(node), named(reduce) + " does not use " + quote(reduce.index) +
                              " in its body, so its extent is unknown");
    }
  }
}

void Checker::checkRowFunctions() const {
  for (const int node : rowFunctions_) {
    const Reduce& row = reduceAt(node);
    const SourceLocation at = indexLocation(s_.text, nodes_[node].expr->location, 0, row.index);
    const std::string named = quote(std::string(reduceOpName(row.op)) + "(" + row.index + ", ...)");
    if (!listed(s_.lhs.indices, row.index)) {
      fail(at, named + " normalizes over " + quote(row.index) +
                   ", which is not an index of the output " + quote(s_.lhs.tensor) +
                   " (the row it normalizes must be one the output keeps)");
    }
    const bool used = std::any_of(uses_.begin(), uses_.end(), [&](const Use& use) {
      return listed(use.access->indices, row.index) && contains(nodes_, node, use.node);
    });
    if (!used) fail(at, named + " does not use " + quote(row.index) + " in its body");
  }
}

/// The rhs with every softmax and layernorm written out (row_functions.h); the copies' indices get
/// the extents of the indices they copy.
ExprPtr Checker::expandRowFunctionsOf(const ExprPtr& rhs, CheckedKernel& k) const {
  if (rowFunctions_.empty()) return rhs;
  constexpr size_t kMaxNodes = size_t{1} << 16;
  if (expandedNodeCount(*rhs, kMaxNodes) > kMaxNodes) {
    fail(nodes_[rowFunctions_.front()].expr->location,
         "the right-hand side would have more than " + std::to_string(kMaxNodes) +
             " nodes with its row functions written out (softmax copies its argument four times, "
             "layernorm six); nest fewer of them");
  }
  std::set<std::string> taken(s_.lhs.indices.begin(), s_.lhs.indices.end());
  taken.insert(s_.lhs.tensor);
  for (const auto& [index, extent] : k.indexExtents) taken.insert(index);
  for (const Use& use : uses_) taken.insert(use.access->tensor);
  for (const auto& [name, at] : params_) taken.insert(name);
  for (const int node : reductions_) taken.insert(reduceAt(node).index);
  FreshIndexNames names(std::move(taken));
  ExprPtr expanded = expandRowFunctions(rhs, names);
  for (const auto& [copy, index] : names.origins()) k.indexExtents[copy] = k.indexExtents.at(index);
  for (const auto& [copy, index] : names.origins()) k.indexCopyOf[copy] = index;
  return expanded;
}

void Checker::addExtents(const Use& use, const std::vector<int64_t>& shape) {
  const auto& indices = use.access->indices;
  for (size_t d = 0; d < indices.size(); ++d) {
    const auto [it, inserted] = extents_.emplace(indices[d], ExtentSource{shape[d], &use, d});
    const ExtentSource& first = it->second;
    if (!inserted && first.extent != shape[d]) {
      const SourceLocation at = indexAt(use, d);
      fail(at, "index " + quote(indices[d]) + " of " + quote(use.access->tensor) + " has extent " +
                   std::to_string(shape[d]) + ", but " + quote(indices[d]) + " of " +
                   quote(first.use->access->tensor) + " (" +
                   whereRelative(indexAt(*first.use, first.position), at) + ") has extent " +
                   std::to_string(first.extent));
    }
  }
}

void Checker::inferExtents() {
  const auto output = bound_.find(s_.lhs.tensor);
  if (output != bound_.end()) addExtents(lhs_, output->second.shape);
  for (const Use& use : uses_) addExtents(use, bound_.at(use.access->tensor).shape);
  for (size_t i = 0; i < s_.lhs.indices.size(); ++i) {
    if (!extents_.count(s_.lhs.indices[i])) {
      fail(indexAt(lhs_, i), "output index " + quote(s_.lhs.indices[i]) + " of " +
                                 quote(s_.lhs.tensor) +
                                 " is not used on the right-hand side, and the output is not "
                                 "bound to give its extent");
    }
  }
}

/// Declared copies (`index j_2: copy of j` in checked text) take their index's extent; a copy that
/// its uses give an extent must agree with it.
void Checker::addCopiedExtents() {
  std::set<std::string> reduced;
  for (const int node : reductions_) reduced.insert(reduceAt(node).index);
  for (const auto& [copy, index] : copies_) {
    const auto origin = extents_.find(index);
    if (copy == index || origin == extents_.end() || !reduced.count(copy)) {
      fail(s_.lhsLocation, "index " + quote(copy) + " is declared a copy of " + quote(index) +
                               ", but " +
                               (copy == index              ? std::string("they are one index")
                                : origin == extents_.end() ? quote(index) + " has no extent here"
                                                           : quote(copy) + " is not reduced"));
    }
    const auto [it, inserted] = extents_.emplace(copy, origin->second);
    if (!inserted && it->second.extent != origin->second.extent) {
      fail(s_.lhsLocation, "index " + quote(copy) + " has extent " +
                               std::to_string(it->second.extent) + ", but the index " +
                               quote(index) + " it copies has extent " +
                               std::to_string(origin->second.extent));
    }
  }
}

CheckedKernel Checker::run() {
  if (s_.rhs == nullptr) fail(s_.lhsLocation, "the statement has no right-hand side");
  nodes_ = flatten(s_.rhs, s_.text, kMaxDepth);
  collect();
  checkOutput();
  checkUses();
  checkBindings();
  checkReductions();
  checkRowFunctions();
  inferExtents();
  addCopiedExtents();
  checkParams();

  CheckedKernel k;
  k.output = s_.lhs.tensor;
  k.freeIndices = s_.lhs.indices;
  for (const auto& [name, source] : extents_) k.indexExtents[name] = source.extent;
  bool anyF64 = false;
  for (const Use& use : uses_) {
    if (firstUse_.at(use.access->tensor) != &use) continue;
    k.inputs.push_back(use.access->tensor);
    const TensorInfo& info = bound_.at(use.access->tensor);
    k.tensors[use.access->tensor] = info;
    anyF64 = anyF64 || info.dtype == DType::kF64;
  }
  k.computeType = anyF64 ? DType::kF64 : DType::kF32;
  std::set<std::string> params;
  for (const auto& [name, at] : params_) {
    if (params.insert(name).second) k.params.push_back(name);
  }
  const auto output = bound_.find(s_.lhs.tensor);
  if (output != bound_.end()) {
    k.tensors[k.output] = output->second;
  } else {
    TensorInfo inferred;
    inferred.dtype = k.computeType;
    for (const std::string& index : s_.lhs.indices)
      inferred.shape.push_back(extents_.at(index).extent);
    k.tensors[k.output] = inferred;
  }

  // Implicit reductions: rhs indices that are neither output indices nor reduced explicitly, in
  // order of first appearance, each summed where its uses meet.
  std::set<std::string> explicitIndices;
  for (int node : reductions_) explicitIndices.insert(reduceAt(node).index);
  std::vector<std::string> implicitIndices;
  for (const Use& use : uses_) {
    for (const std::string& index : use.access->indices) {
      if (!listed(s_.lhs.indices, index) && !explicitIndices.count(index) &&
          !listed(implicitIndices, index)) {
        implicitIndices.push_back(index);
      }
    }
  }
  std::map<int, std::vector<std::string>> sites;
  for (const std::string& index : implicitIndices) {
    std::vector<int> nodes;
    for (const Use& use : uses_) {
      if (listed(use.access->indices, index)) nodes.push_back(use.node);
    }
    sites[implicitReductionSite(nodes_, nodes)].push_back(index);
  }
  k.statement = s_;
  k.indexCopyOf = copies_;
  k.statement.rhs = expandRowFunctionsOf(wrapImplicitReductions(s_.rhs, sites), k);
  // Each implicit sum adds a level; the result must still print as text that parses.
  for (const FlatNode& node : flatten(k.statement.rhs, s_.text, 2 * kMaxDepth)) {
    if (node.depth > kMaxDepth) {
      fail(s_.lhsLocation,
           "with its implicit reductions made explicit, the right-hand side is "
           "nested more than " +
               std::to_string(kMaxDepth) + " levels deep");
    }
    if (const auto* r = std::get_if<Reduce>(&node.expr->node))
      k.reductionIndices.push_back(r->index);
  }
  return k;
}

}  // namespace

CheckedKernel check(const Statement& statement, const std::map<std::string, TensorInfo>& tensors,
                    const std::map<std::string, std::string>& indexCopies) {
  return Checker(statement, tensors, indexCopies).run();
}

}  // namespace sparseflow::expr
