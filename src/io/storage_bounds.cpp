// storedPositions and estimatedStorageBytes: walks over a format's levels through the level
// plug-ins' capabilities and child counts (no switch on the level kind), in saturating or checked
// arithmetic.
#include "io/storage_bounds.h"

#include <algorithm>
#include <limits>

#include "format/levels/level_impl.h"
#include "support/check.h"

namespace sparseflow::io {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}
int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}

/// Bytes of the arrays and values of one part (not a hybrid).
int64_t partBytes(const Format& format, const std::vector<int64_t>& shape, int64_t entries,
                  DType dtype) {
  const int64_t posBytes = format.posWidth() / 8, crdBytes = format.crdWidth() / 8;
  const LevelStorage none;
  int64_t parents = 1, bytes = 0;
  for (int32_t l = 0; l < format.numLevels(); ++l) {
    const LevelType& type = format.level(l).type;
    const auto& impl = format::levelImpl(type.kind);
    const auto caps = impl.capabilities();
    const int64_t extent = std::max<int64_t>(format.levelExtent(l, shape), 0);
    int64_t children = 0;
    if (caps.hasPos) {
      bytes = saturatingAdd(bytes, saturatingMul(saturatingAdd(parents, 1), posBytes));
      children = std::min(entries, saturatingMul(parents, extent));  // stored children only
    } else {
      // Dense, singleton, fixed(k), n:m: a fixed number of children per parent, except a fixed
      // level whose k is chosen from the data (ell without K): at least one slot per entry.
      const int64_t perParent = impl.numChildren(type, extent, none, 1);
      children = perParent > 0 ? saturatingMul(parents, perParent)
                               : std::min(entries, saturatingMul(parents, extent));
    }
    if (caps.hasCrd) bytes = saturatingAdd(bytes, saturatingMul(children, crdBytes));
    if (caps.hasMeta) bytes = saturatingAdd(bytes, children / 4 + 1);
    parents = children;
  }
  return saturatingAdd(bytes, saturatingMul(parents, dtypeSize(dtype)));
}

}  // namespace

int64_t storedPositions(const Format& format, const std::vector<int64_t>& shape,
                        const std::vector<LevelStorage>& levels, const std::string& where) {
  SF_ICHECK(levels.size() == static_cast<size_t>(format.numLevels()))
      << "storedPositions: " << levels.size() << " level arrays for " << format.numLevels()
      << " levels";
  int64_t positions = 1;
  for (int32_t l = 0; l < format.numLevels(); ++l) {
    const LevelType& type = format.level(l).type;
    const auto& impl = format::levelImpl(type.kind);
    const int64_t extent = format.levelExtent(l, shape);
    const LevelStorage& storage = levels[static_cast<size_t>(l)];
    // A corrupt pos array of the level above can claim a negative count (its last entry).
    SF_CHECK_CODE(positions >= 0, ErrorCode::kParseError)
        << where << ": " << format::describeLevel(format, l - 1) << " ends at position "
        << positions << " (negative)";
    if (impl.capabilities().hasPos) {
      const DType want = format.posWidth() == 64 ? DType::kI64 : DType::kI32;
      SF_CHECK_CODE(storage.pos.dtype() == want, ErrorCode::kParseError)
          << where << ": " << format::describeLevel(format, l) << ": pos is "
          << dtypeName(storage.pos.dtype()) << ", the format says " << dtypeName(want);
      positions = impl.numChildren(type, extent, storage, positions);  // read from pos
      continue;
    }
    const int64_t perParent = impl.numChildren(type, extent, storage, 1);
    if (perParent < 0 || __builtin_mul_overflow(positions, perParent, &positions)) {
      SF_FAIL(kParseError) << where << ": shape " << shapeText(shape) << " in format "
                           << format.toString() << " declares more than 2^63 positions";
    }
  }
  return positions;
}

int64_t estimatedStorageBytes(const Format& format, const std::vector<int64_t>& shape,
                              int64_t entries, DType dtype) {
  if (!format.isHybrid()) return partBytes(format, shape, entries, dtype);
  int64_t total = 0;
  for (const Format& part : format.parts()) {
    total = saturatingAdd(total, partBytes(part, shape, entries, dtype));
  }
  return total;
}

int64_t defaultStorageLimit(uint64_t fileBytes) {
  constexpr int64_t kFloor = int64_t{256} << 20;
  const uint64_t scaled = fileBytes > static_cast<uint64_t>(kMax / 16) ? kMax : fileBytes * 16;
  return std::max<int64_t>(kFloor, static_cast<int64_t>(scaled));
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace sparseflow::io
