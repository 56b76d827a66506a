// validate(): structural checks level by level, then a census of the values.
#include "sparseflow/validate.h"

#include <cmath>

#include "format/levels/level_impl.h"
#include "support/check.h"

namespace sparseflow {

std::string ValidationReport::toString() const {
  return std::to_string(stored) + " stored values, " + std::to_string(zeroCount) + " zeros, " +
         std::to_string(nanCount) + " NaN, " + std::to_string(infCount) + " Inf";
}

ValidationReport validate(const Tensor& tensor) {
  ValidationReport report;
  if (tensor.isHybrid()) {
    for (const Tensor& part : tensor.parts()) {
      ValidationReport r = validate(part);
      report.stored += r.stored, report.nanCount += r.nanCount;
      report.infCount += r.infCount, report.zeroCount += r.zeroCount;
    }
    return report;
  }
  const Format& f = tensor.format();
  int64_t positions = 1;
  for (int32_t l = 0; l < f.numLevels(); ++l) {
    const std::string where = format::describeLevel(f, l);
    const LevelSpec& spec = f.level(l);
    const auto& impl = format::levelImpl(spec.type.kind);
    const auto caps = impl.capabilities();
    const LevelStorage& s = tensor.level(l);
    auto checkIndexType = [&](const Buffer& b, int32_t width, const char* name, bool used) {
      if (!used) return;
      DType want = width == 64 ? DType::kI64 : DType::kI32;
      SF_CHECK_CODE(b.dtype() == want, ErrorCode::kInvalidFormat)
          << where << ": " << name << " is " << dtypeName(b.dtype()) << ", the format says "
          << dtypeName(want);
    };
    checkIndexType(s.pos, f.posWidth(), "pos", caps.hasPos);
    checkIndexType(s.crd, f.crdWidth(), "crd", caps.hasCrd);
    SF_CHECK_CODE(!caps.hasMeta || s.meta.dtype() == DType::kU8, ErrorCode::kInvalidFormat)
        << where << ": meta must be u8";
    const int64_t extent = f.levelExtent(l, tensor.shape());
    impl.validate(spec.type, extent, s, positions, where);
    positions = impl.numChildren(spec.type, extent, s, positions);
  }
  SF_CHECK_CODE(tensor.values().size() == positions, ErrorCode::kInvalidFormat)
      << "values has " << tensor.values().size() << " entries but the levels hold " << positions
      << " positions";
  report.stored = positions;
  for (int64_t i = 0; i < positions; ++i) {
    double v = tensor.values().value(i);
    if (std::isnan(v)) ++report.nanCount;
    if (std::isinf(v)) ++report.infCount;
    if (v == 0) ++report.zeroCount;
  }
  return report;
}

}  // namespace sparseflow
