// The compressed level: pos[] delimits each parent's run of crd[] (CSR's columns).
#include "format/levels/level_common.h"

namespace sparseflow::format {
namespace {

class CompressedLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kCompressed; }
  std::string_view name() const override { return "compressed"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.hasPos = true;
    caps.hasCrd = true;
    caps.mlirName = "compressed";
    return caps;
  }
  std::string print(const LevelType& type) const override { return printWithProps(name(), type); }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    return LevelType::compressed(parseProps(params, text));
  }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    out.pos.resize(static_cast<size_t>(numParents + 1));
    out.pos[0] = 0;
    // At most one child per entry.
    const auto entries = static_cast<size_t>(in.parentSeg.back() - in.parentSeg.front());
    out.crd.reserve(entries);
    out.childSeg.reserve(entries + 1);
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t e = in.parentSeg[p], end = in.parentSeg[p + 1];
      while (e < end) {
        int64_t c = in.coords[e * in.stride];
        out.crd.push_back(c);
        out.childSeg.push_back(e);
        if (in.type.props.unique) {
          while (e < end && in.coords[e * in.stride] == c) ++e;
        } else {
          ++e;  // a non-unique level gives every entry its own position (COO)
        }
      }
      out.pos[p + 1] = static_cast<int64_t>(out.crd.size());
    }
    out.childSeg.push_back(in.parentSeg.back());
    return out;
  }

  int64_t numChildren(const LevelType&, int64_t, const LevelStorage& storage,
                      int64_t numParents) const override {
    return storage.pos.size() > numParents ? storage.pos.index(numParents) : 0;
  }

  void expand(const LevelType&, int64_t, const LevelStorage& storage,
              const std::vector<int64_t>& parents, LevelExpansion& out) const override {
    for (size_t i = 0; i < parents.size(); ++i) {
      int64_t begin = storage.pos.index(parents[i]), end = storage.pos.index(parents[i] + 1);
      for (int64_t q = begin; q < end; ++q) {
        out.childPos.push_back(q);
        out.coord.push_back(storage.crd.index(q));
        out.parent.push_back(static_cast<int64_t>(i));
      }
    }
  }

  void validate(const LevelType& type, int64_t extent, const LevelStorage& storage,
                int64_t numParents, const std::string& where) const override {
    validatePositions(storage.pos, numParents, storage.crd.size(), where);
    for (int64_t p = 0; p < numParents; ++p) {
      validateRun(type, extent, storage.crd, storage.pos.index(p), storage.pos.index(p + 1), p,
                  where);
    }
  }
};

}  // namespace

const LevelImpl& compressedLevelImpl() {
  static const CompressedLevel impl;
  return impl;
}

}  // namespace sparseflow::format
