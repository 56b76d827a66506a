// Schedule (include/sparseflow/schedule.h): the C++ builder and printing; what the compiler asks
// of a schedule; applySchedule's dispatch to one file per primitive.
#include "schedule/schedule.h"

#include "schedule/primitives.h"
#include "support/check.h"

namespace sparseflow {

using schedule::Directive;
using schedule::Primitive;

const char* schedulePrimitiveName(SchedulePrimitive p) {
  switch (p) {
    case Primitive::kReorder: return "reorder";
    case Primitive::kSplit: return "split";
    case Primitive::kFuse: return "fuse";
    case Primitive::kParallel: return "parallel";
    case Primitive::kVectorize: return "vectorize";
    case Primitive::kUnroll: return "unroll";
    case Primitive::kPrecompute: return "precompute";
    case Primitive::kBind: return "bind";
    case Primitive::kSparseReorder: return "sparse_reorder";
    case Primitive::kSparseFuse: return "sparse_fuse";
    case Primitive::kDecompose: return "decompose";
  }
  return "?";
}

std::string ScheduleDirective::toString() const {
  std::string text = std::string(schedulePrimitiveName(primitive)) + "(";
  for (size_t k = 0; k < loops.size(); ++k) text += (k ? ", " : "") + loops[k];
  if (primitive == Primitive::kSplit || primitive == Primitive::kUnroll ||
      primitive == Primitive::kDecompose) {
    text += ", " + std::to_string(factor);
  }
  if (atomic) text += ", atomic";
  return text + ")";
}

std::string Schedule::toString() const {
  std::string text;
  for (const Directive& d : directives_) text += (text.empty() ? "" : "; ") + d.toString();
  return text;
}

Schedule::Schedule(const std::string& text) : Schedule(parse(text)) {}
Schedule::Schedule(const char* text) : Schedule(parse(text ? text : "")) {}

Schedule& Schedule::reorder(std::vector<std::string> loops) {
  directives_.push_back({Primitive::kReorder, std::move(loops)});
  return *this;
}
Schedule& Schedule::split(const std::string& loop, const std::string& outer,
                          const std::string& inner, int64_t factor) {
  SF_USER_CHECK(factor > 0) << "split(" << loop << "): the factor must be positive, got " << factor;
  directives_.push_back({Primitive::kSplit, {loop, outer, inner}, factor});
  return *this;
}
Schedule& Schedule::fuse(const std::string& outer, const std::string& inner,
                         const std::string& fused) {
  directives_.push_back({Primitive::kFuse, {outer, inner, fused}});
  return *this;
}
Schedule& Schedule::parallel(const std::string& loop, bool atomic) {
  Directive d{Primitive::kParallel, {loop}};
  d.atomic = atomic;
  directives_.push_back(d);
  return *this;
}
Schedule& Schedule::vectorize(const std::string& loop) {
  directives_.push_back({Primitive::kVectorize, {loop}});
  return *this;
}
Schedule& Schedule::unroll(const std::string& loop, int64_t factor) {
  SF_USER_CHECK(factor > 0) << "unroll(" << loop << "): the factor must be positive, got "
                            << factor;
  directives_.push_back({Primitive::kUnroll, {loop}, factor});
  return *this;
}

Schedule& Schedule::precompute(const std::string& tensor, const std::string& loop) {
  directives_.push_back({Primitive::kPrecompute, {tensor, loop}});
  return *this;
}

Schedule& Schedule::sparseReorder(const std::string& tensor, std::vector<std::string> indices) {
  indices.insert(indices.begin(), tensor);
  directives_.push_back({Primitive::kSparseReorder, std::move(indices)});
  return *this;
}

Schedule& Schedule::sparseFuse(const std::string& tensor, std::vector<std::string> indices) {
  indices.insert(indices.begin(), tensor);
  directives_.push_back({Primitive::kSparseFuse, std::move(indices)});
  return *this;
}

Schedule& Schedule::decompose(const std::string& tensor, int64_t ellWidth) {
  SF_USER_CHECK(ellWidth > 0) << "decompose(" << tensor << "): the ELL width must be positive, got "
                              << ellWidth;
  directives_.push_back({Primitive::kDecompose, {tensor}, ellWidth});
  return *this;
}

Schedule& Schedule::bind(const std::string& loop, const std::string& axis) {
  directives_.push_back({Primitive::kBind, {loop, axis}});
  return *this;
}

Schedule& Schedule::add(ScheduleDirective d) {
  directives_.push_back(std::move(d));
  return *this;
}

}  // namespace sparseflow

namespace sparseflow::schedule {

std::map<std::string, int64_t> decompositions(const Schedule& s) {
  std::map<std::string, int64_t> out;
  for (const Directive& d : s.directives()) {
    if (d.primitive == Primitive::kDecompose) out[d.loops[0]] = d.factor;
  }
  return out;
}

Schedule withoutDecompositions(const Schedule& s) {
  Schedule out;
  for (const Directive& d : s.directives()) {
    if (d.primitive != Primitive::kDecompose) out.add(d);
  }
  return out;
}

std::vector<std::string> requestedOrder(const Schedule& s) {
  std::vector<std::string> order;
  for (const Directive& d : s.directives()) {
    if (d.primitive == Primitive::kReorder) order = d.loops;
  }
  return order;
}

namespace {

/// The (tensor, indices...) directives of one primitive: tensor → indices (the last one wins).
std::map<std::string, std::vector<std::string>> tensorOrders(const std::vector<Directive>& list,
                                                             Primitive primitive) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Directive& d : list) {
    if (d.primitive == primitive)
      out[d.loops[0]] = std::vector<std::string>(d.loops.begin() + 1, d.loops.end());
  }
  return out;
}

}  // namespace

std::map<std::string, std::vector<std::string>> sparseLevelOrders(const Schedule& s) {
  return tensorOrders(s.directives(), Primitive::kSparseReorder);
}

std::map<std::string, std::vector<std::string>> sparseFusions(const Schedule& s) {
  return tensorOrders(s.directives(), Primitive::kSparseFuse);
}

bool hasParallel(const Schedule& s) {
  for (const Directive& d : s.directives()) {
    if (d.primitive == Primitive::kParallel || d.primitive == Primitive::kBind) return true;
  }
  return false;
}

ir::Stmt applySchedule(const ir::Stmt& body, const Schedule& schedule,
                       const std::vector<DenseOutput>& outputs) {
  ir::Stmt s = body;
  for (const Directive& d : schedule.directives()) {
    switch (d.primitive) {
      case Primitive::kReorder:
      case Primitive::kSparseReorder:
      case Primitive::kSparseFuse:
      case Primitive::kDecompose: break;  // honoured by lowering / Kernel::compile
      case Primitive::kSplit: s = applySplit(s, d); break;
      case Primitive::kFuse: s = applyFuse(s, d); break;
      case Primitive::kParallel: s = applyParallel(s, d); break;
      case Primitive::kVectorize: s = applyVectorize(s, d); break;
      case Primitive::kUnroll: s = applyUnroll(s, d); break;
      case Primitive::kPrecompute: s = applyPrecompute(s, d, outputs); break;
      case Primitive::kBind: s = applyBind(s, d); break;
    }
  }
  return s;
}

}  // namespace sparseflow::schedule
