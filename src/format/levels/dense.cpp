// The dense level: every coordinate of the extent under each parent; stores nothing.
#include "format/levels/level_common.h"

namespace sparseflow::format {
namespace {

class DenseLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kDense; }
  std::string_view name() const override { return "dense"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.fillsZeros = true;
    caps.randomAccess = true;
    caps.allCoordinates = true;
    caps.childrenFromShape = true;
    caps.mlirName = "dense";
    return caps;
  }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    SF_USER_CHECK(params.empty()) << "level '" << text << "': dense takes no parameters";
    return LevelType::dense();
  }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    out.childSeg.resize(static_cast<size_t>(numParents * in.extent + 1));
    int64_t child = 0;
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t e = in.parentSeg[p], end = in.parentSeg[p + 1];
      for (int64_t c = 0; c < in.extent; ++c) {
        out.childSeg[child++] = e;
        while (e < end && in.coords[e * in.stride] == c) ++e;
      }
      SF_ICHECK(e == end) << in.where << ": coordinate outside the extent " << in.extent;
    }
    out.childSeg[child] = in.parentSeg.back();
    return out;
  }

  int64_t numChildren(const LevelType&, int64_t extent, const LevelStorage&,
                      int64_t numParents) const override {
    return childPositions(numParents, extent);
  }

  void expand(const LevelType&, int64_t extent, const LevelStorage&,
              const std::vector<int64_t>& parents, LevelExpansion& out) const override {
    for (size_t i = 0; i < parents.size(); ++i) {
      for (int64_t c = 0; c < extent; ++c) {
        out.childPos.push_back(parents[i] * extent + c);
        out.coord.push_back(c);
        out.parent.push_back(static_cast<int64_t>(i));
      }
    }
  }

  void validate(const LevelType&, int64_t, const LevelStorage&, int64_t,
                const std::string&) const override {}
};

}  // namespace

const LevelImpl& denseLevelImpl() {
  static const DenseLevel impl;
  return impl;
}

}  // namespace sparseflow::format
