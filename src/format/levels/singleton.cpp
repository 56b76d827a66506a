// The singleton level: exactly one crd per parent position, no pos (COO's lower levels).
#include "format/levels/level_common.h"

namespace sparseflow::format {
namespace {

class SingletonLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kSingleton; }
  std::string_view name() const override { return "singleton"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.hasCrd = true;
    caps.mlirName = "singleton";
    return caps;
  }
  std::string print(const LevelType& type) const override { return printWithProps(name(), type); }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    return LevelType::singleton(parseProps(params, text));
  }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    out.crd.resize(static_cast<size_t>(numParents));
    out.childSeg.resize(static_cast<size_t>(numParents + 1));
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t count = in.parentSeg[p + 1] - in.parentSeg[p];
      SF_USER_CHECK(count == 1)
          << in.where << ": a singleton level holds one coordinate per parent, but parent "
          << "position " << p << " has " << count
          << " (the level above must be non-unique, as in coo)";
      out.crd[p] = in.coords[in.parentSeg[p] * in.stride];
      out.childSeg[p] = in.parentSeg[p];
    }
    out.childSeg[numParents] = in.parentSeg.back();
    return out;
  }

  int64_t numChildren(const LevelType&, int64_t, const LevelStorage&,
                      int64_t numParents) const override {
    return numParents;
  }

  void expand(const LevelType&, int64_t, const LevelStorage& storage,
              const std::vector<int64_t>& parents, LevelExpansion& out) const override {
    for (size_t i = 0; i < parents.size(); ++i) {
      out.childPos.push_back(parents[i]);
      out.coord.push_back(storage.crd.index(parents[i]));
      out.parent.push_back(static_cast<int64_t>(i));
    }
  }

  void validate(const LevelType&, int64_t extent, const LevelStorage& storage, int64_t numParents,
                const std::string& where) const override {
    SF_CHECK_CODE(storage.crd.size() == numParents, ErrorCode::kInvalidFormat)
        << where << ": crd has " << storage.crd.size() << " entries, expected one per parent ("
        << numParents << ")";
    for (int64_t q = 0; q < numParents; ++q) {
      int64_t c = storage.crd.index(q);
      SF_CHECK_CODE(c >= 0 && c < extent, ErrorCode::kInvalidFormat)
          << where << ": crd[" << q << "] = " << c << " is outside [0, " << extent << ")";
    }
  }
};

}  // namespace

const LevelImpl& singletonLevelImpl() {
  static const SingletonLevel impl;
  return impl;
}

}  // namespace sparseflow::format
