// The fixed(k) level (ELL, sparse_fixed): k crd slots per parent; unused slots hold crd -1.
#include <algorithm>

#include "format/levels/level_common.h"
#include "support/memory.h"

namespace sparseflow::format {
namespace {

/// Distinct coordinates in the run [begin, end) of sorted entries.
int64_t countDistinct(const LevelBuildInput& in, int64_t begin, int64_t end) {
  int64_t count = 0;
  for (int64_t e = begin; e < end; ++e) {
    if (e == begin || in.coords[e * in.stride] != in.coords[(e - 1) * in.stride]) ++count;
  }
  return count;
}

class FixedLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kFixed; }
  std::string_view name() const override { return "fixed"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.hasCrd = true;
    caps.childrenFromShape = true;
    return caps;
  }
  std::string print(const LevelType& type) const override {
    return type.k > 0 ? "fixed(" + std::to_string(type.k) + ")" : "fixed";
  }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    SF_USER_CHECK(params.size() <= 1) << "level '" << text << "': fixed takes one parameter, k";
    return LevelType::fixed(params.empty() ? 0 : parsePositiveParam(params[0], text));
  }
  std::string invalidParameters(const LevelType& type) const override {
    return type.k >= 0 ? "" : "fixed(k) needs k >= 0";
  }
  bool chosenByData(const LevelType& type) const override { return type.k == 0; }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    int64_t widest = 0, widestParent = 0;
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t count = countDistinct(in, in.parentSeg[p], in.parentSeg[p + 1]);
      if (count > widest) widest = count, widestParent = p;
    }
    int64_t k = in.type.k > 0 ? in.type.k : std::max<int64_t>(widest, 1);
    SF_USER_CHECK(widest <= k) << in.where << ": parent position " << widestParent << " has "
                               << widest << " entries but fixed(" << k << ") holds " << k
                               << " (use a larger k, or hyb for long rows)";
    out.resolved.k = k;
    SF_CHECK_CODE(numParents <= INT64_MAX / 16 / k, ErrorCode::kOutOfMemory)
        << in.where << ": too many slots";
    checkAllocation(numParents * k * 16,
                    (in.where + ": fixed(" + std::to_string(k) + ") slots (longest run " +
                     std::to_string(widest) + "; hyb keeps long rows apart)")
                        .c_str());
    out.crd.assign(static_cast<size_t>(numParents * k), -1);
    out.childSeg.reserve(static_cast<size_t>(numParents * k + 1));
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t e = in.parentSeg[p], end = in.parentSeg[p + 1];
      for (int64_t slot = 0; slot < k; ++slot) {
        out.childSeg.push_back(e);
        if (e < end) {
          int64_t c = in.coords[e * in.stride];
          out.crd[p * k + slot] = c;
          while (e < end && in.coords[e * in.stride] == c) ++e;
        }
      }
    }
    out.childSeg.push_back(in.parentSeg.back());
    return out;
  }

  int64_t numChildren(const LevelType& type, int64_t, const LevelStorage&,
                      int64_t numParents) const override {
    return childPositions(numParents, type.k);
  }

  void expand(const LevelType& type, int64_t, const LevelStorage& storage,
              const std::vector<int64_t>& parents, LevelExpansion& out) const override {
    for (size_t i = 0; i < parents.size(); ++i) {
      for (int64_t slot = 0; slot < type.k; ++slot) {
        int64_t q = parents[i] * type.k + slot;
        int64_t c = storage.crd.index(q);
        if (c < 0) break;  // padding follows the stored coordinates
        out.childPos.push_back(q);
        out.coord.push_back(c);
        out.parent.push_back(static_cast<int64_t>(i));
      }
    }
  }

  void validate(const LevelType& type, int64_t extent, const LevelStorage& storage,
                int64_t numParents, const std::string& where) const override {
    SF_CHECK_CODE(type.k > 0, ErrorCode::kInvalidFormat) << where << ": k is not set";
    SF_CHECK_CODE(storage.crd.size() == numParents * type.k, ErrorCode::kInvalidFormat)
        << where << ": crd has " << storage.crd.size() << " entries, expected " << numParents
        << " parents x " << type.k;
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t begin = p * type.k, stored = begin;
      while (stored < begin + type.k && storage.crd.index(stored) >= 0) ++stored;
      for (int64_t q = stored; q < begin + type.k; ++q) {
        SF_CHECK_CODE(storage.crd.index(q) == -1, ErrorCode::kInvalidFormat)
            << where << ": crd[" << q << "] = " << storage.crd.index(q)
            << " follows padding (-1) in parent position " << p;
      }
      validateRun(type, extent, storage.crd, begin, stored, p, where);
    }
  }
};

}  // namespace

const LevelImpl& fixedLevelImpl() {
  static const FixedLevel impl;
  return impl;
}

}  // namespace sparseflow::format
