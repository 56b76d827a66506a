// Fast CSR/CSC build (parallel counting sort, per-row sort and duplicate merge) and extraction.
#include "format/build_fast.h"

#include <omp.h>

#include <algorithm>
#include <numeric>

#include "format/format_shapes.h"
#include "support/check.h"
#include "support/half.h"

namespace sparseflow::format {
namespace {

template <typename PosT, typename CrdT, typename ValueStore>
Tensor buildCompressedRows(const Coo& coo, const Format& format, const BuildOptions& options,
                           int32_t rowDim, ValueStore store) {
  const int32_t colDim = 1 - rowDim;
  const int64_t rows = coo.shape[static_cast<size_t>(rowDim)];
  const int64_t n = coo.numEntries();
  const int64_t* coords = coo.coords.data();
  std::vector<int64_t> count(static_cast<size_t>(rows + 1), 0);
  for (int64_t e = 0; e < n; ++e) ++count[static_cast<size_t>(coords[2 * e + rowDim] + 1)];
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<CrdT> crd(static_cast<size_t>(n));
  std::vector<double> vals(static_cast<size_t>(n));
  {
    std::vector<int64_t> next(count.begin(), count.end() - 1);
    for (int64_t e = 0; e < n; ++e) {
      int64_t at = next[static_cast<size_t>(coords[2 * e + rowDim])]++;
      crd[static_cast<size_t>(at)] = static_cast<CrdT>(coords[2 * e + colDim]);
      vals[static_cast<size_t>(at)] = coo.values[static_cast<size_t>(e)];
    }
  }
  // Sort each row by column and merge duplicates in place; rows are independent.
  std::vector<int64_t> kept(static_cast<size_t>(rows), 0);
  bool rejected = false;
  int64_t badRow = -1, badCol = -1;
#pragma omp parallel
  {
    std::vector<std::pair<CrdT, double>> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t begin = count[static_cast<size_t>(r)], end = count[static_cast<size_t>(r + 1)];
      bool sorted = true;
      for (int64_t q = begin + 1; q < end && sorted; ++q) sorted = crd[q - 1] < crd[q];
      if (!sorted) {
        scratch.clear();
        for (int64_t q = begin; q < end; ++q) scratch.emplace_back(crd[q], vals[q]);
        std::stable_sort(scratch.begin(), scratch.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        int64_t out = begin;
        for (size_t i = 0; i < scratch.size(); ++i) {
          if (out > begin && crd[out - 1] == scratch[i].first) {
            if (options.duplicates == Duplicates::kReject) {
#pragma omp critical
              {
                rejected = true;
                badRow = r, badCol = scratch[i].first;
              }
            }
            vals[out - 1] += scratch[i].second;
          } else {
            crd[out] = scratch[i].first;
            vals[out] = scratch[i].second;
            ++out;
          }
        }
        kept[static_cast<size_t>(r)] = out - begin;
      } else {
        kept[static_cast<size_t>(r)] = end - begin;
      }
    }
  }
  SF_USER_CHECK(!rejected) << "duplicate entry at (" << (rowDim == 0 ? badRow : badCol) << ", "
                           << (rowDim == 0 ? badCol : badRow)
                           << ") (0-based); duplicates are rejected by option";
  const int64_t total = std::accumulate(kept.begin(), kept.end(), int64_t{0});
  const DType posType = format.posWidth() == 64 ? DType::kI64 : DType::kI32;
  const DType crdType = format.crdWidth() == 64 ? DType::kI64 : DType::kI32;
  SF_CHECK_CODE(format.posWidth() == 64 || total <= INT32_MAX, ErrorCode::kOutOfRange)
      << total << " entries do not fit 32-bit positions; use a 64-bit format (suffix @i64)";
  SF_CHECK_CODE(format.crdWidth() == 64 || coo.shape[static_cast<size_t>(colDim)] <= INT32_MAX + 1LL,
                ErrorCode::kOutOfRange)
      << "dimension of size " << coo.shape[static_cast<size_t>(colDim)]
      << " does not fit 32-bit coordinates; use a 64-bit format (suffix @i64)";
  Buffer pos = Buffer::zeros(posType, rows + 1);
  Buffer outCrd = Buffer::zeros(crdType, total);
  Buffer outVals = Buffer::zeros(options.dtype, total);
  auto* p = pos.as<PosT>();
  p[0] = 0;
  for (int64_t r = 0; r < rows; ++r) p[r + 1] = static_cast<PosT>(p[r] + kept[static_cast<size_t>(r)]);
  auto* c = outCrd.as<CrdT>();
#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t from = count[static_cast<size_t>(r)], to = p[r];
    for (int64_t i = 0; i < kept[static_cast<size_t>(r)]; ++i) {
      c[to + i] = crd[static_cast<size_t>(from + i)];
      store(outVals, to + i, vals[static_cast<size_t>(from + i)]);
    }
  }
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(pos);
  levels[1].crd = std::move(outCrd);
  return Tensor(coo.shape, options.dtype, format, std::move(levels), std::move(outVals));
}

template <typename PosT, typename CrdT>
Tensor buildCompressedRowsTyped(const Coo& coo, const Format& format, const BuildOptions& options,
                                int32_t rowDim) {
  switch (options.dtype) {
    case DType::kF32:
      return buildCompressedRows<PosT, CrdT>(
          coo, format, options, rowDim,
          [](Buffer& b, int64_t i, double v) { b.as<float>()[i] = static_cast<float>(v); });
    case DType::kF64:
      return buildCompressedRows<PosT, CrdT>(
          coo, format, options, rowDim,
          [](Buffer& b, int64_t i, double v) { b.as<double>()[i] = v; });
    default:
      return buildCompressedRows<PosT, CrdT>(
          coo, format, options, rowDim,
          [](Buffer& b, int64_t i, double v) { b.setValue(i, v); });
  }
}

}  // namespace

std::optional<Tensor> buildFast(const Coo& coo, const Format& format, const BuildOptions& options) {
  int32_t rowDim = 0;
  if (!isCompressedRows(format, rowDim)) return std::nullopt;
  const bool pos64 = format.posWidth() == 64, crd64 = format.crdWidth() == 64;
  if (pos64 && crd64) return buildCompressedRowsTyped<int64_t, int64_t>(coo, format, options, rowDim);
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
