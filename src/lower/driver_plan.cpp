// planDrivers (see driver_plan.h): rounds of checks until no input changes how it is read.
#include "lower/driver_plan.h"

#include <algorithm>
#include <optional>

#include "format/levels/level_impl.h"
#include "lower/level_iteration.h"
#include "lower/nest_builder.h"
#include "lower/presence.h"
#include "support/check.h"

namespace sparseflow::lower {
namespace {

/// The index each non-random-access level of `a` iterates, outermost first.
std::vector<std::string> iteratedIndices(const expr::Access& a, const Format& f) {
  std::vector<std::string> out;
  for (const LevelSpec& l : f.levels()) {
    if (levelIteration(l.type.kind).randomAccess()) continue;
    const std::string& index = a.indices[static_cast<size_t>(l.expr.dim)];
    if (out.empty() || out.back() != index) out.push_back(index);
  }
  return out;
}

/// The index of every level of `a` (dense ones too), outermost first, without repeats.
std::vector<std::string> levelIndices(const expr::Access& a, const Format& f) {
  std::vector<std::string> out;
  for (const LevelSpec& l : f.levels()) {
    const std::string& index = a.indices[static_cast<size_t>(l.expr.dim)];
    if (std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);
  }
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// True when two index sequences put some pair of shared indices in opposite orders.
bool discordant(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (size_t x = 0; x < a.size(); ++x) {
    for (size_t y = x + 1; y < a.size(); ++y) {
      auto bx = std::find(b.begin(), b.end(), a[x]), by = std::find(b.begin(), b.end(), a[y]);
      if (bx != b.end() && by != b.end() && by < bx) return true;
    }
  }
  return false;
}

/// `f` with its levels' dimensions renumbered so that they follow `order` (the indices of the
/// driver it must agree with); null when f is blocked or hybrid (no such copy is made).
std::optional<Format> concordantFormat(const Format& f, const expr::Access& a,
                                       const std::vector<std::string>& order) {
  if (f.isHybrid()) return std::nullopt;
  std::vector<int32_t> dims;
  for (const LevelSpec& l : f.levels()) {
    if (l.expr.op != LevelExpr::Op::kIdentity) return std::nullopt;
    dims.push_back(l.expr.dim);
  }
  auto rank = [&](int32_t dim) {
    const auto it = std::find(order.begin(), order.end(), a.indices[static_cast<size_t>(dim)]);
    return it - order.begin();
  };
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int32_t x, int32_t y) { return rank(x) < rank(y); });
  std::vector<LevelSpec> levels = f.levels();
  for (size_t l = 0; l < levels.size(); ++l) levels[l].expr.dim = dims[l];
  return Format(f.rank(), std::move(levels), f.posWidth(), f.crdWidth());
}

/// `f` as plain compressed levels in the order its dimensions first appear (the first one
/// dense): csr for coo, ell, bsr or n:m matrices. Such a copy co-iterates (ordered, unique
/// coordinates) and stays sparse. Hybrid formats have no single order: nullopt.
std::optional<Format> compressedCopy(const Format& f) {
  if (f.isHybrid()) return std::nullopt;
  std::vector<int32_t> dims;
  for (const LevelSpec& l : f.levels()) {
    if (std::find(dims.begin(), dims.end(), l.expr.dim) == dims.end()) dims.push_back(l.expr.dim);
  }
  if (static_cast<int32_t>(dims.size()) != f.rank()) return std::nullopt;
  std::string text = "levels[";
  for (size_t k = 0; k < dims.size(); ++k) {
    text += (k ? ", d" : "d") + std::to_string(dims[k]) + (k == 0 ? ":dense" : ":compressed");
  }
  const Format plain = Format::parse(text + "]", f.rank());
  return Format(f.rank(), plain.levels(), f.posWidth(), f.crdWidth());
}

class Planner {
 public:
  Planner(const expr::CheckedKernel& kernel, const Normalized& normalized,
          const std::map<std::string, Format>& bound)
      : kernel_(kernel), normalized_(normalized) {
    for (const std::string& input : kernel.inputs) {
      auto it = bound.find(input);
      plan_.formats[input] =
          it != bound.end()
              ? it->second
              : denseFormat(static_cast<int32_t>(kernel.tensors.at(input).shape.size()));
      plan_.densified[input] = false;
    }
  }

  /// sparse_reorder(tensor, order...): the input is read in a copy with its levels in `order`.
  /// sparse_fuse (`fuse`): the same with the levels as coordinates (one loop over the entries).
  void reorderLevels(const std::string& tensor, const std::vector<std::string>& order, bool fuse) {
    auto it = plan_.formats.find(tensor);
    const std::string primitive = fuse ? "sparse_fuse" : "sparse_reorder";
    const std::string what = primitive + "(" + tensor + "): ";
    SF_USER_CHECK(it != plan_.formats.end()) << what << tensor << " is not an input of the kernel";
    SF_USER_CHECK(!isDenseFormat(it->second))
        << what << tensor << " is dense; reorder() orders the loops over dense tensors";
    const expr::Access* access = nullptr;
    for (const Pass& pass : normalized_.passes) {
      for (const expr::Access* a : allAccesses(*pass.body)) {
        if (a->tensor == tensor && !access) access = a;
      }
    }
    SF_ICHECK(access != nullptr) << "no access to " << tensor;
    std::vector<std::string> sorted = order, indices = access->indices;
    std::sort(sorted.begin(), sorted.end());
    std::sort(indices.begin(), indices.end());
    SF_USER_CHECK(sorted == indices)
        << what << "name each index of " << tensor << " once (it is used as " << tensor << "("
        << join(access->indices) << "))";
    SF_CHECK_CODE(!it->second.isHybrid() && !blocked(it->second), ErrorCode::kNotSupported)
        << what << it->second.toString()
        << " has blocked or hybrid levels, which are not reordered";
    const Format start = fuse ? Format::parse("coo", it->second.rank())
                                    .withWidths(it->second.posWidth(), it->second.crdWidth())
                              : it->second;
    auto copy = concordantFormat(start, *access, order);
    SF_ICHECK(copy.has_value()) << what << "no copy";
    if (*copy == it->second) return;
    plan_.notes.push_back("input " + tensor + " (" + it->second.toString() + ") is read as " +
                          copy->toString() + " (" + primitive + ")");
    it->second = *copy;
  }

  DriverPlan run() {
    // A max over a sparse input counts its implicit zeros (the nest adds 0 to the max when a
    // reduction visited fewer entries than its extent): one unblocked driver whose absence makes
    // the body zero, whose output coordinates do not repeat (coo's rows do: a row's entries
    // would be split over several accumulators, each added into the output). Anything else
    // under a max is read as dense.
    for (const Pass& pass : normalized_.passes) {
      if (pass.op != expr::ReduceOp::kMax) continue;
      std::vector<const expr::Access*> drivers;
      for (const expr::Access* a : allAccesses(*pass.body)) {
        if (isDriver(a->tensor)) drivers.push_back(a);
      }
      const bool fillAware = drivers.size() == 1 && !blocked(plan_.formats[drivers[0]->tensor]) &&
                             !nonzeroWithout(pass, drivers) &&
                             reductionsInnermost(pass, *drivers[0]) &&
                             outputCoordinatesUnique(pass, *drivers[0]);
      for (const expr::Access* a : drivers) {
        if (!fillAware)
          densify(a->tensor,
                  "it appears in a max reduction with other sparse "
                  "operands, blocked levels, repeated output coordinates "
                  "(coo), or a value at its zeros that is not 0");
      }
    }
    bool changed = true;
    while (changed) {
      changed = false;
      for (const Pass& pass : normalized_.passes) {
        if (planPass(pass)) {
          changed = true;
          break;
        }
      }
    }
    return std::move(plan_);
  }

 private:
  const expr::CheckedKernel& kernel_;
  const Normalized& normalized_;
  DriverPlan plan_;

  /// The driver's levels walk the pass's output indices before any reduced one (a max keeps
  /// its accumulator inside every output loop).
  bool reductionsInnermost(const Pass& pass, const expr::Access& a) const {
    bool reducing = false;
    for (const std::string& index : levelIndices(a, plan_.formats.at(a.tensor))) {
      const bool output = std::find(pass.targetIndices.begin(), pass.targetIndices.end(), index) !=
                          pass.targetIndices.end();
      if (output && reducing) return false;
      reducing = reducing || !output;
    }
    return true;
  }

  /// The driver's levels over the pass's output indices never repeat a coordinate under one
  /// parent (each output element's reduction is visited in one run).
  bool outputCoordinatesUnique(const Pass& pass, const expr::Access& a) const {
    const Format& f = plan_.formats.at(a.tensor);
    for (int32_t l = 0; l < f.numLevels(); ++l) {
      const std::string& index = a.indices[static_cast<size_t>(f.level(l).expr.dim)];
      const bool output = std::find(pass.targetIndices.begin(), pass.targetIndices.end(), index) !=
                          pass.targetIndices.end();
      if (output && !f.level(l).type.props.unique) return false;
    }
    return true;
  }

  static bool blocked(const Format& f) {
    for (const LevelSpec& l : f.levels()) {
      if (l.expr.op != LevelExpr::Op::kIdentity) return true;
    }
    return false;
  }

  /// Is `f`'s level over `index` (as accessed by `a`) dense?
  static bool denseOver(const Format& f, const expr::Access& a, const std::string& index) {
    for (const LevelSpec& l : f.levels()) {
      if (a.indices[static_cast<size_t>(l.expr.dim)] == index)
        return format::levelImpl(l.type.kind).capabilities().allCoordinates;
    }
    return false;
  }

  bool isDriver(const std::string& tensor) const {
    auto it = plan_.formats.find(tensor);
    return it != plan_.formats.end() && !plan_.densified.at(tensor) && !isDenseFormat(it->second);
  }

  void densify(const std::string& tensor, const std::string& why) {
    if (plan_.densified[tensor]) return;
    plan_.notes.push_back("input " + tensor + " (" + plan_.formats[tensor].toString() +
                          ") is read as dense: " + why);
    plan_.densified[tensor] = true;
  }

  /// May the body be nonzero where none of `absent` has an entry (everything else present)?
  bool nonzeroWithout(const Pass& pass, const std::vector<const expr::Access*>& absent) const {
    const ir::Expr c = nonzeroCondition(*pass.body, [&](const expr::Access& a) {
      for (const expr::Access* x : absent) {
        if (x->tensor == a.tensor && x->indices == a.indices) return boolConstant(false);
      }
      return boolConstant(true);
    });
    return !isConstant(c, false);
  }

  /// One check of one pass; true when it changed how an input is read.
  bool planPass(const Pass& pass) {
    std::vector<const expr::Access*> drivers;
    for (const expr::Access* a : allAccesses(*pass.body)) {
      if (!isDriver(a->tensor)) continue;
      bool seen = false;
      for (const expr::Access* d : drivers)
        seen = seen || (d->tensor == a->tensor && d->indices == a->indices);
      if (!seen) drivers.push_back(a);
    }
    if (drivers.empty()) return false;
    const auto factors = factorAccesses(*pass.body);
    auto isFactor = [&](const expr::Access* a) {
      return std::find(factors.begin(), factors.end(), a) != factors.end();
    };
    // Level orders: a later driver that contradicts an earlier one is read in its order.
    for (size_t d = 1; d < drivers.size(); ++d) {
      const auto mine = levelIndices(*drivers[d], plan_.formats[drivers[d]->tensor]);
      for (size_t e = 0; e < d; ++e) {
        const auto theirs = levelIndices(*drivers[e], plan_.formats[drivers[e]->tensor]);
        if (!discordant(theirs, mine)) continue;
        const std::string& name = drivers[d]->tensor;
        if (auto copy = concordantFormat(plan_.formats[name], *drivers[d], theirs)) {
          plan_.notes.push_back("input " + name + " (" + plan_.formats[name].toString() +
                                ") is read as " + copy->toString() +
                                ", a copy in the level order of " + drivers[e]->tensor);
          plan_.formats[name] = *copy;
        } else {
          densify(name, "its level order contradicts " + drivers[e]->tensor + "'s");
        }
        return true;
      }
    }
    // Every index that drivers iterate: skipping the points where none of them has an entry must
    // not skip a nonzero; several drivers of one index are co-iterated.
    std::map<std::string, std::vector<const expr::Access*>> byIndex;
    std::vector<std::string> indexOrder;
    for (const expr::Access* a : drivers) {
      for (const std::string& index : iteratedIndices(*a, plan_.formats[a->tensor])) {
        if (!byIndex.count(index)) indexOrder.push_back(index);
        byIndex[index].push_back(a);
      }
    }
    for (const std::string& index : indexOrder) {
      const auto& group = byIndex[index];
      if (nonzeroWithout(pass, group)) {
        bool any = false;
        for (const expr::Access* a : group) {
          if (isFactor(a)) continue;
          // dcsr + csr: a compressed copy whose level over `index` is dense (csr) co-iterates.
          const Format& f = plan_.formats[a->tensor];
          if (auto copy = compressedCopy(f); group.size() == 1 && drivers.size() > 1 && copy &&
                                             *copy != f && denseOver(*copy, *a, index)) {
            plan_.notes.push_back("input " + a->tensor + " (" + f.toString() + ") is read as " +
                                  copy->toString() + ", a compressed copy dense along '" + index +
                                  "', where another operand is dense");
            plan_.formats[a->tensor] = *copy;
            any = true;
            continue;
          }
          densify(a->tensor, group.size() == 1 && drivers.size() > 1
                                 ? "the kernel may be nonzero where it has no entry along '" +
                                       index +
                                       "' (co-iterating it with a dense level is not "
                                       "implemented)"
                                 : "a zero of it does not make its term zero");
          any = true;
        }
        if (any) return true;
      }
      if (group.size() < 2) continue;
      for (size_t g = 0; g < group.size(); ++g) {
        const Format& f = plan_.formats[group[g]->tensor];
        for (const LevelSpec& l : f.levels()) {
          if (group[g]->indices[static_cast<size_t>(l.expr.dim)] != index) continue;
          const LevelIteration& it = levelIteration(l.type.kind);
          if (it.randomAccess()) continue;
          if (it.coIterable(l.type) && l.expr.op == LevelExpr::Op::kIdentity) continue;
          const expr::Access* other = group[g == 0 ? 1 : 0];
          const std::string& name = group[g]->tensor;
          if (auto copy = compressedCopy(f); copy && *copy != f) {
            plan_.notes.push_back("input " + name + " (" + f.toString() + ") is read as " +
                                  copy->toString() + ", a compressed copy: " + other->tensor +
                                  " also iterates index '" + index + "', and " + f.toString() +
                                  " levels do not co-iterate");
            plan_.formats[name] = *copy;
          } else {
            densify(name, other->tensor + " also iterates index '" + index + "' and " +
                              f.toString() + " cannot be co-iterated with it (that " +
                              "needs compressed levels with ordered, unique coordinates)");
          }
          return true;
        }
      }
    }
    return false;
  }
};

}  // namespace

DriverPlan planDrivers(const expr::CheckedKernel& kernel, const Normalized& normalized,
                       const std::map<std::string, Format>& bound,
                       const std::map<std::string, std::vector<std::string>>& levelOrders,
                       const std::map<std::string, std::vector<std::string>>& fused) {
  Planner planner(kernel, normalized, bound);
  for (const auto& [tensor, order] : levelOrders) planner.reorderLevels(tensor, order, false);
  for (const auto& [tensor, order] : fused) planner.reorderLevels(tensor, order, true);
  return planner.run();
}

}  // namespace sparseflow::lower
