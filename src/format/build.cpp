// Generic builders: coordinates → any format level by level, and any format → coordinates.
#include "sparseflow/build.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <type_traits>

#include "format/build_fast.h"
#include "format/hybrid_split.h"
#include "format/levels/level_impl.h"
#include "support/check.h"
#include "support/memory.h"

namespace sparseflow {
namespace {

using format::describeEntry;
using format::LevelBuildInput;
using format::LevelBuildOutput;
using format::levelImpl;

DType indexType(int32_t width) {
  return width == 64 ? DType::kI64 : DType::kI32;
}

int64_t levelCoord(const LevelExpr& e, int64_t dimCoord) {
  switch (e.op) {
    case LevelExpr::Op::kIdentity: return dimCoord;
    case LevelExpr::Op::kDiv: return dimCoord / e.block;
    case LevelExpr::Op::kMod: return dimCoord % e.block;
  }
  return dimCoord;
}

/// The shape and the array sizes; the coordinates are checked by format::checkCooEntries.
void checkCooShape(const Coo& coo) {
  const int32_t rank = coo.rank();
  for (int64_t s : coo.shape) SF_USER_CHECK(s >= 0) << "negative dimension size " << s;
  SF_USER_CHECK(static_cast<int64_t>(coo.coords.size()) == coo.numEntries() * rank)
      << "coordinate list has " << coo.coords.size() << " coordinates for " << coo.numEntries()
      << " values of a rank-" << rank << " tensor";
}

std::vector<int64_t> levelExtents(const Coo& coo, const Format& format) {
  std::vector<int64_t> extents;
  for (int32_t l = 0; l < format.numLevels(); ++l) {
    extents.push_back(format.levelExtent(l, coo.shape));
  }
  return extents;
}

/// Each entry's level coordinates (rows of `lc`) packed into one key whose order is theirs, when
/// the extents' product fits 63 bits; false (keys empty) when it does not.
bool packLevelKeys(const std::vector<int64_t>& lc, int64_t n, const std::vector<int64_t>& extents,
                   std::vector<uint64_t>& keys) {
  const auto L = static_cast<int64_t>(extents.size());
  unsigned __int128 span = 1;
  for (int64_t e : extents) span *= static_cast<unsigned __int128>(std::max<int64_t>(e, 1));
  if (span >= (static_cast<unsigned __int128>(1) << 63)) return false;
  keys.resize(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    uint64_t key = 0;
    for (int64_t l = 0; l < L; ++l) {
      key = key * static_cast<uint64_t>(std::max<int64_t>(extents[static_cast<size_t>(l)], 1)) +
            static_cast<uint64_t>(lc[static_cast<size_t>(e * L + l)]);
    }
    keys[static_cast<size_t>(e)] = key;
  }
  return true;
}

/// The order that sorts entries by their level coordinates, ties by entry index; empty when the
/// entries are in that order already (the common case when converting from a format with the same
/// level order), which one pass over the packed keys detects.
std::vector<int64_t> sortOrder(const std::vector<int64_t>& lc, int64_t n, int64_t L,
                               const std::vector<uint64_t>& keys, bool packed) {
  std::vector<int64_t> order;
  if (packed) {
    bool sorted = true;
    for (int64_t e = 1; e < n && sorted; ++e)
      sorted = keys[static_cast<size_t>(e - 1)] <= keys[static_cast<size_t>(e)];
    if (sorted) return order;
    std::vector<std::pair<uint64_t, int64_t>> keyed(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e)
      keyed[static_cast<size_t>(e)] = {keys[static_cast<size_t>(e)], e};
    std::sort(keyed.begin(), keyed.end());
    order.resize(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e)
      order[static_cast<size_t>(e)] = keyed[static_cast<size_t>(e)].second;
    return order;
  }
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const int64_t* x = &lc[static_cast<size_t>(a * L)];
    const int64_t* y = &lc[static_cast<size_t>(b * L)];
    return std::lexicographical_compare(x, x + L, y, y + L);
  });
  return order;
}

/// Sorted, duplicate-free entries in level-coordinate order.
struct SortedEntries {
  std::vector<int64_t> levelCoords;  // numEntries x numLevels
  std::vector<double> values;
  int64_t count = 0;
};

SortedEntries sortByLevels(const Coo& coo, const Format& format, Duplicates duplicates) {
  const int32_t rank = coo.rank(), L = format.numLevels();
  const int64_t n = coo.numEntries();
  std::vector<int64_t> lc(static_cast<size_t>(n * L));
  for (int64_t e = 0; e < n; ++e) {
    for (int32_t l = 0; l < L; ++l) {
      const LevelExpr& x = format.level(l).expr;
      lc[static_cast<size_t>(e * L + l)] =
          levelCoord(x, coo.coords[static_cast<size_t>(e * rank + x.dim)]);
    }
  }
  std::vector<uint64_t> keys;
  const bool packed = packLevelKeys(lc, n, levelExtents(coo, format), keys);
  std::vector<int64_t> order = sortOrder(lc, n, L, keys, packed);
  const auto entryAt = [&](int64_t i) { return order.empty() ? i : order[static_cast<size_t>(i)]; };
  const auto sameCoords = [&](int64_t a, int64_t b) {
    if (packed) return keys[static_cast<size_t>(a)] == keys[static_cast<size_t>(b)];
    const int64_t* x = &lc[static_cast<size_t>(a * L)];
    return std::equal(x, x + L, &lc[static_cast<size_t>(b * L)]);
  };
  SortedEntries out;
  if (order.empty()) {
    // In order already: the coordinates and values as they are, unless two entries coincide.
    bool repeated = false;
    for (int64_t e = 1; e < n && !repeated; ++e) repeated = sameCoords(e - 1, e);
    if (!repeated) {
      out.levelCoords = std::move(lc);
      out.values = coo.values;
      out.count = n;
      return out;
    }
  }
  out.levelCoords.reserve(lc.size());
  out.values.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t e = entryAt(i);
    if (i > 0 && sameCoords(entryAt(i - 1), e)) {
      SF_USER_CHECK(duplicates == Duplicates::kSum)
          << "duplicate entry at " << describeEntry(coo, e)
          << " (0-based); duplicates are rejected by option";
      out.values.back() += coo.values[static_cast<size_t>(e)];
      continue;
    }
    const int64_t* x = &lc[static_cast<size_t>(e * L)];
    out.levelCoords.insert(out.levelCoords.end(), x, x + L);
    out.values.push_back(coo.values[static_cast<size_t>(e)]);
    ++out.count;
  }
  return out;
}

/// The leaves' values: the first entry of each leaf position that has one (a position without
/// entries stays zero).
void writeLeafValues(const SortedEntries& entries, const std::vector<int64_t>& seg,
                     Buffer& values) {
  const int64_t leaves = static_cast<int64_t>(seg.size()) - 1;
  const auto fill = [&](auto* v) {
    using T = std::remove_pointer_t<decltype(v)>;
    for (int64_t p = 0; p < leaves; ++p) {
      if (seg[static_cast<size_t>(p)] < seg[static_cast<size_t>(p + 1)])
        v[p] = static_cast<T>(entries.values[static_cast<size_t>(seg[static_cast<size_t>(p)])]);
    }
  };
  if (values.dtype() == DType::kF32) return fill(values.as<float>());
  if (values.dtype() == DType::kF64) return fill(values.as<double>());
  for (int64_t p = 0; p < leaves; ++p) {
    if (seg[static_cast<size_t>(p)] < seg[static_cast<size_t>(p + 1)])
      values.setValue(p, entries.values[static_cast<size_t>(seg[static_cast<size_t>(p)])]);
  }
}

Tensor buildGeneric(const Coo& coo, const Format& requested, const BuildOptions& options) {
  SortedEntries entries = sortByLevels(coo, requested, options.duplicates);
  const int32_t L = requested.numLevels();
  std::vector<LevelSpec> resolvedLevels = requested.levels();
  std::vector<LevelStorage> storage(static_cast<size_t>(L));
  std::vector<int64_t> seg = {0, entries.count};
  for (int32_t l = 0; l < L; ++l) {
    const std::string where = format::describeLevel(requested, l);
    const auto& impl = levelImpl(requested.level(l).type.kind);
    if (!impl.chosenByData(requested.level(l).type)) {
      // Children of this level: bounded before the build allocates one run per child.
      LevelStorage none;
      const int64_t parents = static_cast<int64_t>(seg.size()) - 1;
      const int64_t extent = requested.levelExtent(l, coo.shape);
      if (impl.capabilities().childrenFromShape) {
        SF_CHECK_CODE(extent == 0 || parents <= INT64_MAX / 16 / std::max<int64_t>(extent, 1),
                      ErrorCode::kOutOfMemory)
            << where << ": too many positions";
        checkAllocation(16 * impl.numChildren(requested.level(l).type, extent, none, parents),
                        (requested.toString() + " storage").c_str());
      }
    }
    // No entries: no coordinates to point into (an offset from a null data() is undefined).
    LevelBuildInput in{requested.level(l).type,
                       requested.levelExtent(l, coo.shape),
                       entries.levelCoords.empty() ? nullptr : entries.levelCoords.data() + l,
                       L,
                       seg,
                       where};
    LevelBuildOutput out = impl.build(in);
    resolvedLevels[static_cast<size_t>(l)].type = out.resolved;
    auto caps = levelImpl(out.resolved.kind).capabilities();
    LevelStorage& s = storage[static_cast<size_t>(l)];
    if (caps.hasPos) {
      s.pos = Buffer::fromIndices(indexType(requested.posWidth()), out.pos, where.c_str());
    }
    if (caps.hasCrd) {
      s.crd = Buffer::fromIndices(indexType(requested.crdWidth()), out.crd, where.c_str());
    }
    if (caps.hasMeta) {
      s.meta = Buffer::zeros(DType::kU8, static_cast<int64_t>(out.meta.size()));
      std::copy(out.meta.begin(), out.meta.end(), s.meta.as<uint8_t>());
    }
    seg = std::move(out.childSeg);
  }
  const int64_t leaves = static_cast<int64_t>(seg.size()) - 1;
  Buffer values = Buffer::zeros(options.dtype, leaves);
  writeLeafValues(entries, seg, values);
  Format resolved(requested.rank(), std::move(resolvedLevels), requested.posWidth(),
                  requested.crdWidth());
  return Tensor(coo.shape, options.dtype, resolved, std::move(storage), std::move(values));
}

}  // namespace

int64_t numElements(const std::vector<int64_t>& shape) {
  int64_t total = 1;
  for (int64_t s : shape) {
    SF_USER_CHECK(s >= 0) << "negative dimension size " << s;
    SF_CHECK_CODE(s == 0 || total <= std::numeric_limits<int64_t>::max() / s,
                  ErrorCode::kOutOfMemory)
        << "the shape has more than 2^63 elements";
    total *= s;
  }
  return total;
}

Tensor fromCoo(const Coo& coo, const Format& format, const BuildOptions& options) {
  SF_USER_CHECK(format.rank() == coo.rank())
      << "format " << format.toString() << " is for rank-" << format.rank()
      << " tensors but the coordinates have rank " << coo.rank();
  SF_USER_CHECK(isFloatType(options.dtype))
      << "tensor values must be f32, f64, f16 or bf16, not " << dtypeName(options.dtype);
  checkCooShape(coo);
  if (format.isHybrid()) {
    format::checkCooEntries(coo);
    Coo merged = format::sumDuplicates(coo, options.duplicates);
    format::HybridSplit split = format::splitForHybrid(merged, format);
    std::vector<Tensor> parts;
    for (size_t i = 0; i < split.parts.size(); ++i) {
      parts.push_back(fromCoo(split.parts[i], split.format.parts()[i], options));
    }
    // Part formats may resolve data-chosen parameters; record what was built.
    std::vector<Format> built;
    for (const Tensor& p : parts) built.push_back(p.format());
    return Tensor::hybrid(coo.shape, options.dtype, Format::hybrid(built, split.format.splitK()),
                          std::move(parts));
  }
  if (auto fast = format::buildFast(coo, format, options)) return std::move(*fast);
  format::checkCooEntries(coo);
  return buildGeneric(coo, format, options);
}

Tensor fromDense(const std::vector<int64_t>& shape, const double* values, const Format& format,
                 DType dtype) {
  const int64_t total = numElements(shape);
  if (format.isDenseRowMajor()) {
    Buffer out = Buffer::zeros(dtype, total);
    for (int64_t i = 0; i < total; ++i) out.setValue(i, values[i]);
    std::vector<LevelStorage> levels(static_cast<size_t>(format.numLevels()));
    return Tensor(shape, dtype, format, std::move(levels), std::move(out));
  }
  Coo coo;
  coo.shape = shape;
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < total; ++i) {
    if (values[i] != 0) {
      coo.coords.insert(coo.coords.end(), index.begin(), index.end());
      coo.values.push_back(values[i]);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  BuildOptions options;
  options.dtype = dtype;
  return fromCoo(coo, format, options);
}

}  // namespace sparseflow
