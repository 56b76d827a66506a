// The n:m level: each group of m consecutive coordinates keeps n slots; slot offsets within the
// group are packed into meta (2 bits each for m ≤ 4). Groups with fewer entries are padded with
// zero-valued slots at unused offsets, as 2:4 hardware expects.
#include <algorithm>

#include "format/levels/level_common.h"

namespace sparseflow::format {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

void writeOffset(std::vector<uint8_t>& meta, int64_t slot, int32_t bits, int64_t offset) {
  int64_t bit = slot * bits;
  meta[static_cast<size_t>(bit >> 3)] |= static_cast<uint8_t>(offset << (bit & 7));
}

class NMLevel final : public LevelImpl {
 public:
  LevelKind kind() const override { return LevelKind::kNM; }
  std::string_view name() const override { return "nm"; }
  LevelCapabilities capabilities() const override {
    LevelCapabilities caps;
    caps.hasMeta = true;
    caps.childrenFromShape = true;
    caps.fillsZeros = true;
    return caps;
  }
  std::string invalidParameters(const LevelType& type) const override {
    if (type.n > 0 && type.n < type.m && type.m <= 256) return "";
    return "n:m needs 0 < n < m <= 256 (got " + std::to_string(type.n) + ":" +
           std::to_string(type.m) + ")";
  }
  std::string print(const LevelType& type) const override {
    return "nm(" + std::to_string(type.n) + "," + std::to_string(type.m) + ")";
  }
  LevelType parse(const std::vector<std::string>& params, std::string_view text) const override {
    SF_USER_CHECK(params.size() == 2) << "level '" << text << "': nm takes two parameters, n and m";
    int64_t n = parsePositiveParam(params[0], text), m = parsePositiveParam(params[1], text);
    SF_USER_CHECK(n < m && m <= 256) << "level '" << text << "': n:m needs 0 < n < m <= 256";
    return LevelType::nm(static_cast<int32_t>(n), static_cast<int32_t>(m));
  }

  LevelBuildOutput build(const LevelBuildInput& in) const override {
    LevelBuildOutput out;
    out.resolved = in.type;
    const int64_t n = in.type.n, m = in.type.m;
    const int32_t bits = nmMetaBits(in.type.m);
    int64_t numParents = static_cast<int64_t>(in.parentSeg.size()) - 1;
    int64_t groups = ceilDiv(in.extent, m);
    int64_t slots = numParents * groups * n;
    out.meta.assign(static_cast<size_t>(ceilDiv(slots * bits, 8)), 0);
    out.childSeg.reserve(static_cast<size_t>(slots + 1));
    std::vector<int64_t> offsets;
    std::vector<int64_t> starts;
    int64_t slot = 0;
    for (int64_t p = 0; p < numParents; ++p) {
      int64_t e = in.parentSeg[p], end = in.parentSeg[p + 1];
      for (int64_t g = 0; g < groups; ++g) {
        offsets.clear();
        starts.clear();
        while (e < end && in.coords[e * in.stride] < (g + 1) * m) {
          int64_t c = in.coords[e * in.stride];
          offsets.push_back(c - g * m);
          starts.push_back(e);
          while (e < end && in.coords[e * in.stride] == c) ++e;
        }
        SF_USER_CHECK(static_cast<int64_t>(offsets.size()) <= n)
            << in.where << ": parent position " << p << ", group of coordinates " << g * m << ".."
            << g * m + m - 1 << " has " << offsets.size() << " entries but " << n << ":" << m
            << " keeps " << n << " (prune to " << n << ":" << m << " first)";
        // Padding takes the smallest unused offsets; slots stay sorted by offset.
        std::vector<std::pair<int64_t, int64_t>> group;  // (offset, first entry or -1)
        for (size_t i = 0; i < offsets.size(); ++i) group.emplace_back(offsets[i], starts[i]);
        for (int64_t off = 0; static_cast<int64_t>(group.size()) < n; ++off) {
          if (std::find(offsets.begin(), offsets.end(), off) == offsets.end()) {
            group.emplace_back(off, -1);
          }
        }
        std::sort(group.begin(), group.end());
        for (const auto& [off, first] : group) {
          writeOffset(out.meta, slot++, bits, off);
          // An empty run for padding: begin == end at the next real entry (or the run's end).
          out.childSeg.push_back(first >= 0 ? first : -1);
        }
      }
      SF_ICHECK(e == end) << in.where << ": coordinate outside the extent";
    }
    // Resolve padding runs to empty runs: a padding slot starts where the next real run starts.
    int64_t next = in.parentSeg.back();
    out.childSeg.push_back(next);
    for (int64_t s = slots - 1; s >= 0; --s) {
      if (out.childSeg[s] < 0) {
        out.childSeg[s] = next;
      } else {
        next = out.childSeg[s];
      }
    }
    return out;
  }

  int64_t numChildren(const LevelType& type, int64_t extent, const LevelStorage&,
                      int64_t numParents) const override {
    return childPositions(numParents, childPositions(ceilDiv(extent, type.m), type.n));
  }

  void expand(const LevelType& type, int64_t extent, const LevelStorage& storage,
              const std::vector<int64_t>& parents, LevelExpansion& out) const override {
    const int64_t perParent = ceilDiv(extent, type.m) * type.n;
    const int32_t bits = nmMetaBits(type.m);
    const uint8_t* meta = storage.meta.as<uint8_t>();
    for (size_t i = 0; i < parents.size(); ++i) {
      for (int64_t s = 0; s < perParent; ++s) {
        int64_t q = parents[i] * perParent + s;
        int64_t c = (s / type.n) * type.m + readNMOffset(meta, q, bits);
        if (c >= extent) continue;  // padding of a partial last group
        out.childPos.push_back(q);
        out.coord.push_back(c);
        out.parent.push_back(static_cast<int64_t>(i));
      }
    }
  }

  void validate(const LevelType& type, int64_t extent, const LevelStorage& storage,
                int64_t numParents, const std::string& where) const override {
    const int64_t groups = ceilDiv(extent, type.m);
    const int32_t bits = nmMetaBits(type.m);
    int64_t slots = 0, metaBits = 0;
    SF_CHECK_CODE(!__builtin_mul_overflow(numParents, groups, &slots) &&
                      !__builtin_mul_overflow(slots, type.n, &slots) &&
                      !__builtin_mul_overflow(slots, bits, &metaBits),
                  ErrorCode::kOutOfMemory)
        << where << ": " << numParents << " x " << groups << " groups of " << type.n
        << " slots, at " << bits << " metadata bits each, do not fit in 63 bits";
    SF_CHECK_CODE(storage.meta.size() == ceilDiv(metaBits, 8), ErrorCode::kInvalidFormat)
        << where << ": meta has " << storage.meta.size() << " bytes, expected "
        << ceilDiv(metaBits, 8);
    const uint8_t* meta = storage.meta.as<uint8_t>();
    for (int64_t g = 0; g < numParents * groups; ++g) {
      int64_t previous = -1;
      for (int64_t s = 0; s < type.n; ++s) {
        int64_t off = readNMOffset(meta, g * type.n + s, bits);
        SF_CHECK_CODE(off < type.m && off > previous, ErrorCode::kInvalidFormat)
            << where << ": group " << g % groups << " of parent position " << g / groups
            << " has offset " << off << " in slot " << s
            << " (offsets must increase and stay below m = " << type.m << ")";
        previous = off;
      }
    }
  }
};

}  // namespace

const LevelImpl& nmLevelImpl() {
  static const NMLevel impl;
  return impl;
}

}  // namespace sparseflow::format
