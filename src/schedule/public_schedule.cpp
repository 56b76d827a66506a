// sparseflow::Schedule (include/sparseflow/schedule.h): the public C++ builder, writing the
// canonical schedule text through the internal builder (same spelling as the parser reads).
#include "schedule/schedule.h"
#include "sparseflow/schedule.h"

namespace sparseflow {

Schedule::Schedule(std::string text) : text_(std::move(text)) {}
Schedule::Schedule(const char* text) : text_(text ? text : "") {}

Schedule& Schedule::add(const std::string& directive) {
  text_ += (text_.empty() ? "" : "; ") + directive;
  return *this;
}

Schedule& Schedule::reorder(const std::vector<std::string>& loops) {
  return add(schedule::Schedule().reorder(loops).toString());
}
Schedule& Schedule::split(const std::string& loop, const std::string& outer,
                          const std::string& inner, int64_t factor) {
  return add(schedule::Schedule().split(loop, outer, inner, factor).toString());
}
Schedule& Schedule::fuse(const std::string& outer, const std::string& inner,
                         const std::string& fused) {
  return add(schedule::Schedule().fuse(outer, inner, fused).toString());
}
Schedule& Schedule::parallel(const std::string& loop, bool atomic) {
  return add(schedule::Schedule().parallel(loop, atomic).toString());
}
Schedule& Schedule::vectorize(const std::string& loop) {
  return add(schedule::Schedule().vectorize(loop).toString());
}
Schedule& Schedule::unroll(const std::string& loop, int64_t factor) {
  return add(schedule::Schedule().unroll(loop, factor).toString());
}
Schedule& Schedule::precompute(const std::string& tensor, const std::string& loop) {
  return add(schedule::Schedule().precompute(tensor, loop).toString());
}
Schedule& Schedule::sparseReorder(const std::string& tensor,
                                  const std::vector<std::string>& indices) {
  return add(schedule::Schedule().sparseReorder(tensor, indices).toString());
}
Schedule& Schedule::sparseFuse(const std::string& tensor, const std::vector<std::string>& indices) {
  return add(schedule::Schedule().sparseFuse(tensor, indices).toString());
}
Schedule& Schedule::decompose(const std::string& tensor, int64_t ellWidth) {
  return add(schedule::Schedule().decompose(tensor, ellWidth).toString());
}
Schedule& Schedule::bind(const std::string& loop, const std::string& axis) {
  return add(schedule::Schedule().addRaw({schedule::Primitive::kBind, {loop, axis}}).toString());
}

}  // namespace sparseflow
