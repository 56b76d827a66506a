// The ragged level (dense_variable): pos[] only; parent p holds coordinates 0..len(p)-1.
#include "format/levels/level_common.h"

namespace sparseflow::format {
namespace {

class RaggedLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kRagged; }
  std::string_view name() const override { return "ragged"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.hasPos = true;
    caps.fillsZeros = true;
    caps.randomAccess = true;
    return caps;
  }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    SF_USER_CHECK(params.empty()) << "level '" << text << "': ragged takes no parameters";
    return LevelType::ragged();
  }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    out.pos.resize(static_cast<size_t>(numParents + 1));
    out.pos[0] = 0;
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t begin = in.parentSeg[p], end = in.parentSeg[p + 1];
      int64_t length = begin < end ? in.coords[(end - 1) * in.stride] + 1 : 0;
      int64_t e = begin;
      for (int64_t c = 0; c < length; ++c) {
        out.childSeg.push_back(e);
        while (e < end && in.coords[e * in.stride] == c) ++e;
      }
      out.pos[p + 1] = out.pos[p] + length;
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
        out.coord.push_back(q - begin);
        out.parent.push_back(static_cast<int64_t>(i));
      }
    }
  }

  void validate(const LevelType&, int64_t extent, const LevelStorage& storage,
                int64_t numParents, const std::string& where) const override {
    SF_CHECK_CODE(storage.pos.size() == numParents + 1, ErrorCode::kInvalidFormat)
        << where << ": pos has " << storage.pos.size() << " entries, expected "
        << numParents + 1;
    SF_CHECK_CODE(storage.pos.index(0) == 0, ErrorCode::kInvalidFormat)
        << where << ": pos[0] is " << storage.pos.index(0) << ", expected 0";
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t length = storage.pos.index(p + 1) - storage.pos.index(p);
      SF_CHECK_CODE(length >= 0 && length <= extent, ErrorCode::kInvalidFormat)
          << where << ": parent position " << p << " has length " << length
          << ", outside [0, " << extent << "]";
    }
  }
};

}  // namespace

const LevelImpl& raggedLevelImpl() {
  static const RaggedLevel impl;
  return impl;
}

}  // namespace sparseflow::format
