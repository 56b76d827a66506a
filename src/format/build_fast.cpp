// Fast CSR/CSC build (cache-friendly parallel counting sort, per-row sort, duplicate merge) and
// extraction.
#include "format/build_fast.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/counting_sort.h"
#include "format/format_shapes.h"
#include "support/check.h"
#include "support/half.h"

namespace sparseflow::format {
namespace {

/// double → the stored value type, rounding as Buffer::setValue does.
struct ToF32 {
  using Value = float;
  Value operator()(double v) const { return static_cast<float>(v); }
};
struct ToF64 {
  using Value = double;
  Value operator()(double v) const { return v; }
};
struct ToF16 {
  using Value = uint16_t;
  Value operator()(double v) const { return floatToF16(static_cast<float>(v)); }
};
struct ToBf16 {
  using Value = uint16_t;
  Value operator()(double v) const { return floatToBf16(static_cast<float>(v)); }
};

/// Stable sort of one row's (crd, value) pairs by crd: insertion sort for the short rows that
/// dominate sparse matrices (linear on sorted rows), a merge sort through scratch memory for long
/// ones. Returns whether two entries share a crd.
template <typename CrdT, typename V>
bool sortRow(CrdT* crd, V* val, int64_t length) {
  bool repeated = false;
  if (length <= 32) {
    for (int64_t i = 1; i < length; ++i) {
      const CrdT c = crd[i];
      if (crd[i - 1] < c) continue;
      const V v = val[i];
      int64_t j = i;
      for (; j > 0 && crd[j - 1] > c; --j) {
        crd[j] = crd[j - 1];
        val[j] = val[j - 1];
      }
      crd[j] = c;
      val[j] = v;
      repeated |= j > 0 && crd[j - 1] == c;
    }
    return repeated;
  }
  bool sorted = true;
  for (int64_t q = 1; q < length && sorted; ++q) sorted = crd[q - 1] < crd[q];
  if (sorted) return false;
  std::vector<std::pair<CrdT, V>> scratch(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) scratch[static_cast<size_t>(i)] = {crd[i], val[i]};
  std::stable_sort(scratch.begin(), scratch.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int64_t i = 0; i < length; ++i) {
    crd[i] = scratch[static_cast<size_t>(i)].first;
    val[i] = scratch[static_cast<size_t>(i)].second;
    repeated |= i > 0 && crd[i - 1] == crd[i];
  }
  return repeated;
}

/// Merges the duplicates of the rows in `dupRows` (sorted; their crd sorted): the result has one
/// entry per (row, crd), whose value is the sum in double precision of the entries in input order
/// (exactly as if the values had been summed before rounding to the value type), so it re-reads the
/// coordinates to find them. `p`, `c`, `v` hold all `n` entries sorted by row, then crd.
template <typename PosT, typename CrdT, typename Cvt>
Tensor mergeDuplicates(const Coo& coo, const Format& format, const BuildOptions& options,
                       int32_t rowDim, const std::vector<int64_t>& dupRows, const PosT* p, CrdT* c,
                       typename Cvt::Value* v) {
  using V = typename Cvt::Value;
  const int32_t colDim = 1 - rowDim;
  const int64_t rows = coo.shape[static_cast<size_t>(rowDim)];
  // Kept entries per duplicate row, merged in place (values fixed below).
  std::vector<int64_t> kept(dupRows.size());
  int64_t removed = 0;
  for (size_t i = 0; i < dupRows.size(); ++i) {
    const int64_t begin = p[dupRows[i]], end = p[dupRows[i] + 1];
    int64_t out = begin;
    for (int64_t q = begin; q < end; ++q) {
      if (out > begin && c[out - 1] == c[q]) continue;
      c[out] = c[q];
      v[out] = v[q];
      ++out;
    }
    kept[i] = out - begin;
    removed += end - out;
  }
  const int64_t total = static_cast<int64_t>(p[rows]) - removed;
  Buffer pos = Buffer::zeros(format.posWidth() == 64 ? DType::kI64 : DType::kI32, rows + 1);
  Buffer outCrd = Buffer::zeros(format.crdWidth() == 64 ? DType::kI64 : DType::kI32, total);
  Buffer outVals = Buffer::zeros(options.dtype, total);
  auto* np = pos.as<PosT>();
  auto* nc = outCrd.as<CrdT>();
  auto* nv = outVals.as<V>();
  {
    int64_t shift = 0;
    size_t d = 0;
    for (int64_t r = 0; r <= rows; ++r) {
      np[r] = static_cast<PosT>(static_cast<int64_t>(p[r]) - shift);
      if (d < dupRows.size() && dupRows[d] == r) {
        shift += static_cast<int64_t>(p[r + 1]) - p[r] - kept[d];
        ++d;
      }
    }
  }
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t from = p[r], to = np[r], length = static_cast<int64_t>(np[r + 1]) - np[r];
    std::copy(c + from, c + from + length, nc + to);
    std::copy(v + from, v + from + length, nv + to);
  }
  // Re-read the entries of the duplicate rows in input order and sum each position's values.
  std::vector<uint8_t> flagged(static_cast<size_t>(rows), 0);
  for (int64_t r : dupRows) flagged[static_cast<size_t>(r)] = 1;
  const int64_t n = coo.numEntries();
  const int64_t* coords = coo.coords.data();
  std::vector<std::pair<int64_t, int64_t>> matches;  // (entry, position)
#pragma omp parallel
  {
    std::vector<std::pair<int64_t, int64_t>> mine;
#pragma omp for schedule(static) nowait
    for (int64_t e = 0; e < n; ++e) {
      const int64_t r = coords[2 * e + rowDim];
      if (!flagged[static_cast<size_t>(r)]) continue;
      const auto col = static_cast<CrdT>(coords[2 * e + colDim]);
      const CrdT* at = std::lower_bound(nc + np[r], nc + np[r + 1], col);
      mine.emplace_back(e, at - nc);
    }
#pragma omp critical
    matches.insert(matches.end(), mine.begin(), mine.end());
  }
  std::sort(matches.begin(), matches.end());
  std::unordered_map<int64_t, std::pair<double, int64_t>> sums;  // position -> (sum, entries)
  for (const auto& [e, q] : matches) {
    auto [it, first] = sums.try_emplace(q, coo.values[static_cast<size_t>(e)], 1);
    if (!first) {
      it->second.first += coo.values[static_cast<size_t>(e)];
      ++it->second.second;
    }
  }
  for (const auto& [q, sum] : sums) {
    if (sum.second > 1) nv[q] = Cvt{}(sum.first);
  }
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(pos);
  levels[1].crd = std::move(outCrd);
  return Tensor(coo.shape, options.dtype, format, std::move(levels), std::move(outVals));
}

/// CSR (rowDim 0) or CSC (rowDim 1) from checked coordinates: a counting sort by row (see
/// counting_sort.h) that sorts each row by crd while it is in cache, then merges duplicates if
/// any row had some.
template <typename PosT, typename CrdT, typename Cvt>
Tensor buildCompressedRows(const Coo& coo, const Format& format, const BuildOptions& options,
                           int32_t rowDim) {
  using V = typename Cvt::Value;
  const int32_t colDim = 1 - rowDim;
  const int64_t rows = coo.shape[static_cast<size_t>(rowDim)];
  const int64_t n = coo.numEntries();
  const int64_t* coords = coo.coords.data();
  const double* values = coo.values.data();
  Buffer pos = Buffer::zeros(format.posWidth() == 64 ? DType::kI64 : DType::kI32, rows + 1);
  Buffer crdBuffer = Buffer::zeros(format.crdWidth() == 64 ? DType::kI64 : DType::kI32, n);
  Buffer valBuffer = Buffer::zeros(options.dtype, n);
  auto* p = pos.as<PosT>();
  auto* c = crdBuffer.as<CrdT>();
  auto* v = valBuffer.as<V>();
  // The coordinates are checked on the way (a separate pass would read them once more): a row
  // outside the shape is sorted as row 0 and reported once the sort is done.
  const auto rowLimit = static_cast<uint64_t>(rows);
  const auto colLimit = static_cast<uint64_t>(coo.shape[static_cast<size_t>(colDim)]);
  std::atomic<bool> outside{false};
  auto scan = [=, &outside](int64_t begin, int64_t end, const auto& f) {
    const Cvt convert;
    uint64_t bad = 0;  // negative coordinates wrap to huge unsigned ones
    for (int64_t e = begin; e < end; ++e) {
      const auto r = static_cast<uint64_t>(coords[2 * e + rowDim]);
      const auto c = static_cast<uint64_t>(coords[2 * e + colDim]);
      bad |= static_cast<uint64_t>(r >= rowLimit) | static_cast<uint64_t>(c >= colLimit);
      f(static_cast<uint32_t>(r < rowLimit ? r : 0), static_cast<CrdT>(c), convert(values[e]));
    }
    if (bad) outside.store(true, std::memory_order_relaxed);
  };
  std::vector<int64_t> dupRows;
  auto sortRows = [&](int64_t firstRow, int64_t lastRow) {
    for (int64_t r = firstRow; r < lastRow; ++r) {
      if (sortRow(c + p[r], v + p[r], static_cast<int64_t>(p[r + 1]) - p[r])) {
#pragma omp critical(sparseflow_duplicate_rows)
        dupRows.push_back(r);
      }
    }
  };
  countingSortByKey<uint32_t>(n, rows, scan, p, c, v, sortRows);
  if (outside.load()) {
    checkCooEntries(coo);  // throws, naming the first entry outside the shape
    SF_ICHECK(false) << "an entry outside the shape went unreported";
  }
  if (dupRows.empty()) {
    std::vector<LevelStorage> levels(2);
    levels[1].pos = std::move(pos);
    levels[1].crd = std::move(crdBuffer);
    return Tensor(coo.shape, options.dtype, format, std::move(levels), std::move(valBuffer));
  }
  std::sort(dupRows.begin(), dupRows.end());
  if (options.duplicates == Duplicates::kReject) {
    const int64_t badRow = dupRows.front();
    int64_t badCol = -1;
    for (int64_t q = p[badRow] + 1; q < p[badRow + 1] && badCol < 0; ++q) {
      if (c[q - 1] == c[q]) badCol = c[q];
    }
    SF_USER_CHECK(false) << "duplicate entry at (" << (rowDim == 0 ? badRow : badCol) << ", "
                         << (rowDim == 0 ? badCol : badRow)
                         << ") (0-based); duplicates are rejected by option";
  }
  return mergeDuplicates<PosT, CrdT, Cvt>(coo, format, options, rowDim, dupRows, p, c, v);
}

template <typename PosT, typename CrdT>
Tensor buildCompressedRowsTyped(const Coo& coo, const Format& format, const BuildOptions& options,
                                int32_t rowDim) {
  switch (options.dtype) {
    case DType::kF32: return buildCompressedRows<PosT, CrdT, ToF32>(coo, format, options, rowDim);
    case DType::kF64: return buildCompressedRows<PosT, CrdT, ToF64>(coo, format, options, rowDim);
    case DType::kF16: return buildCompressedRows<PosT, CrdT, ToF16>(coo, format, options, rowDim);
    default: return buildCompressedRows<PosT, CrdT, ToBf16>(coo, format, options, rowDim);
  }
}

/// True when every coordinate lies inside the shape (parallel; checkCooEntries names the culprit).
/// Threads start only for millions of coordinates: below, waking them costs more than the check.
bool entriesInShape(const Coo& coo) {
  constexpr int64_t kParallelCheck = int64_t{1} << 22;
  const int32_t rank = coo.rank();
  const int64_t count = coo.numEntries() * rank;
  const int64_t* coords = coo.coords.data();
  if (rank == 2) {  // the common case, written so that it vectorizes
    const auto rows = static_cast<uint64_t>(coo.shape[0]),
               cols = static_cast<uint64_t>(coo.shape[1]);
    // Negative coordinates wrap to huge unsigned ones. No early exit: bad input is rare, and a
    // branch-free loop runs at memory speed.
    unsigned bad = 0;
#pragma omp parallel for reduction(| : bad) schedule(static) if (count > kParallelCheck)
    for (int64_t e = 0; e < count; e += 2) {
      bad |= static_cast<unsigned>(static_cast<uint64_t>(coords[e]) >= rows) |
             static_cast<unsigned>(static_cast<uint64_t>(coords[e + 1]) >= cols);
    }
    return bad == 0;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t c = coords[i];
    if (c < 0 || c >= coo.shape[static_cast<size_t>(i % rank)]) return false;
  }
  return true;
}

}  // namespace

void checkCooEntries(const Coo& coo) {
  if (entriesInShape(coo)) return;
  const int32_t rank = coo.rank();
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    for (int32_t d = 0; d < rank; ++d) {
      int64_t c = coo.coords[static_cast<size_t>(e * rank + d)];
      SF_CHECK_CODE(c >= 0 && c < coo.shape[static_cast<size_t>(d)], ErrorCode::kOutOfRange)
          << "entry " << e << " at " << describeEntry(coo, e) << " (0-based) is outside the shape"
          << " in dimension " << d << " (size " << coo.shape[static_cast<size_t>(d)] << ")";
    }
  }
}

std::optional<Tensor> buildFast(const Coo& coo, const Format& format, const BuildOptions& options) {
  int32_t rowDim = 0;
  if (!isCompressedRows(format, rowDim)) return std::nullopt;
  const int64_t rows = coo.shape[static_cast<size_t>(rowDim)];
  const int64_t cols = coo.shape[static_cast<size_t>(1 - rowDim)];
  // Row keys are 32-bit in the sort; more rows than that could not be allocated anyway. More
  // entries than 32-bit positions hold may still fit once duplicates are merged: the general
  // path decides.
  if (rows > UINT32_MAX || (format.posWidth() != 64 && coo.numEntries() > INT32_MAX)) {
    return std::nullopt;
  }
  if (format.crdWidth() != 64 && cols > INT32_MAX + 1LL) checkCooEntries(coo);  // errors in order
  SF_CHECK_CODE(format.crdWidth() == 64 || cols <= INT32_MAX + 1LL, ErrorCode::kOutOfRange)
      << "dimension of size " << cols
      << " does not fit 32-bit coordinates; use a 64-bit format (suffix @i64)";
  const bool pos64 = format.posWidth() == 64, crd64 = format.crdWidth() == 64;
  if (pos64 && crd64)
    return buildCompressedRowsTyped<int64_t, int64_t>(coo, format, options, rowDim);
  if (pos64) return buildCompressedRowsTyped<int64_t, int32_t>(coo, format, options, rowDim);
  if (crd64) return buildCompressedRowsTyped<int32_t, int64_t>(coo, format, options, rowDim);
  return buildCompressedRowsTyped<int32_t, int32_t>(coo, format, options, rowDim);
}

bool extractFast(const Tensor& t, Coo& out) {
  int32_t rowDim = 0;
  const int64_t start = static_cast<int64_t>(out.values.size());
  if (isCompressedRows(t.format(), rowDim)) {
    const Buffer& pos = t.level(1).pos;
    const Buffer& crd = t.level(1).crd;
    const int64_t rows = t.shape()[static_cast<size_t>(rowDim)];
    const int64_t n = pos.index(rows);
    out.coords.resize(static_cast<size_t>(2 * (start + n)));
    out.values.resize(static_cast<size_t>(start + n));
    int64_t* coords = out.coords.data() + 2 * start;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t q = pos.index(r); q < pos.index(r + 1); ++q) {
        coords[2 * q + rowDim] = r;
        coords[2 * q + 1 - rowDim] = crd.index(q);
        out.values[static_cast<size_t>(start + q)] = t.values().value(q);
      }
    }
    return true;
  }
  if (isCooShaped(t.format())) {
    const int32_t rank = t.rank();
    const int64_t n = t.values().size();
    out.coords.resize(static_cast<size_t>(rank * (start + n)));
    out.values.resize(static_cast<size_t>(start + n));
    const Buffer& pos = t.level(0).pos;
    SF_ICHECK(pos.index(1) == n) << "coo storage has " << pos.index(1) << " entries, " << n
                                 << " values";
    for (int64_t e = 0; e < n; ++e) {
      for (int32_t d = 0; d < rank; ++d) {
        out.coords[static_cast<size_t>((start + e) * rank + d)] = t.level(d).crd.index(e);
      }
      out.values[static_cast<size_t>(start + e)] = t.values().value(e);
    }
    return true;
  }
  return false;
}

std::string describeEntry(const Coo& coo, int64_t e) {
  std::string s = "(";
  for (int32_t d = 0; d < coo.rank(); ++d) {
    s += (d ? ", " : "") + std::to_string(coo.coords[static_cast<size_t>(e * coo.rank() + d)]);
  }
  return s + ")";
}

Coo sumDuplicates(const Coo& coo, Duplicates duplicates) {
  const int32_t rank = coo.rank();
  const int64_t n = coo.numEntries();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto at = [&](int64_t e) { return coo.coords.data() + e * rank; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(at(a), at(a) + rank, at(b), at(b) + rank);
  });
  Coo out;
  out.shape = coo.shape;
  for (int64_t i = 0; i < n; ++i) {
    int64_t e = order[static_cast<size_t>(i)];
    if (!out.values.empty() && std::equal(at(e), at(e) + rank, out.coords.end() - rank)) {
      SF_USER_CHECK(duplicates == Duplicates::kSum)
          << "duplicate entry at " << describeEntry(coo, e)
          << " (0-based); duplicates are rejected by option";
      out.values.back() += coo.values[static_cast<size_t>(e)];
      continue;
    }
    out.coords.insert(out.coords.end(), at(e), at(e) + rank);
    out.values.push_back(coo.values[static_cast<size_t>(e)]);
  }
  return out;
}

}  // namespace sparseflow::format
