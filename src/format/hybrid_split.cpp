// Splitting entries among hybrid parts; see hybrid_split.h for the rule each part follows.
#include "format/hybrid_split.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "support/check.h"

namespace sparseflow::format {
namespace {

enum class PartRule { kFixedRows, kBlocks, kNM, kRest };

PartRule ruleOf(const Format& part) {
  for (const LevelSpec& s : part.levels()) {
    if (s.type.kind == LevelKind::kFixed) return PartRule::kFixedRows;
    if (s.type.kind == LevelKind::kNM) return PartRule::kNM;
    if (s.expr.op == LevelExpr::Op::kDiv) return PartRule::kBlocks;
  }
  return PartRule::kRest;
}

/// The dimension of the part's outermost level: what "row" means for fixed and n:m parts.
int32_t rowDimOf(const Format& part) {
  return part.level(0).expr.dim;
}

/// The dimension the fixed or n:m level stores.
int32_t innerDimOf(const Format& part, LevelKind kind) {
  for (const LevelSpec& s : part.levels()) {
    if (s.type.kind == kind) return s.expr.dim;
  }
  return part.rank() - 1;
}

void take(const Coo& from, int64_t e, Coo& to) {
  const int32_t rank = from.rank();
  to.coords.insert(to.coords.end(), from.coords.begin() + e * rank,
                   from.coords.begin() + (e + 1) * rank);
  to.values.push_back(from.values[static_cast<size_t>(e)]);
}

/// Entries sorted by (row coordinate, then the others in dimension order).
std::vector<int64_t> orderByRow(const Coo& coo, int32_t rowDim) {
  const int32_t rank = coo.rank();
  std::vector<int64_t> order(static_cast<size_t>(coo.numEntries()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const int64_t* x = coo.coords.data() + a * rank;
    const int64_t* y = coo.coords.data() + b * rank;
    if (x[rowDim] != y[rowDim]) return x[rowDim] < y[rowDim];
    return std::lexicographical_compare(x, x + rank, y, y + rank);
  });
  return order;
}

}  // namespace

int64_t chooseHybridWidth(const std::vector<int64_t>& rowLengths) {
  return chooseHybridWidth(rowLengths, static_cast<int64_t>(rowLengths.size()));
}

int64_t chooseHybridWidth(const std::vector<int64_t>& rowLengths, int64_t rows) {
  if (rowLengths.empty()) return 1;
  int64_t longest = *std::max_element(rowLengths.begin(), rowLengths.end());
  std::vector<int64_t> atLeast(static_cast<size_t>(longest + 2), 0);
  for (int64_t len : rowLengths) ++atLeast[static_cast<size_t>(len)];
  for (int64_t k = longest - 1; k >= 0; --k) atLeast[k] += atLeast[k + 1];
  const int64_t need = std::min<int64_t>(rows, std::max<int64_t>(4096, rows / 3));
  int64_t k = 1;
  for (int64_t w = 1; w <= longest; ++w) {
    if (atLeast[static_cast<size_t>(w)] >= need) k = w;
  }
  return k;
}

HybridSplit splitForHybrid(const Coo& coo, const Format& format) {
  HybridSplit out;
  const auto& partFormats = format.parts();
  std::vector<Format> resolved = partFormats;
  std::vector<bool> taken(static_cast<size_t>(coo.numEntries()), false);
  const int32_t rank = coo.rank();
  out.parts.resize(partFormats.size());
  for (Coo& p : out.parts) p.shape = coo.shape;
  int64_t splitK = format.splitK();

  for (size_t i = 0; i + 1 < partFormats.size(); ++i) {
    const Format& part = partFormats[i];
    Coo& dest = out.parts[i];
    switch (ruleOf(part)) {
      case PartRule::kFixedRows: {
        const int32_t rowDim = rowDimOf(part);
        std::vector<int64_t> order = orderByRow(coo, rowDim);
        int32_t fixedLevel = 0;
        while (part.level(fixedLevel).type.kind != LevelKind::kFixed) ++fixedLevel;
        int64_t k = part.level(fixedLevel).type.k;
        if (k == 0) {
          // The lengths of the rows that hold entries, from the row-sorted order: memory grows
          // with the entries, not with the row count (2^40 empty rows are not 8 TB of counters).
          std::vector<int64_t> lengths;
          int64_t lastRow = -1;
          for (int64_t e : order) {
            if (taken[e]) continue;
            const int64_t r = coo.coords[e * rank + rowDim];
            if (r != lastRow) lengths.push_back(0), lastRow = r;
            ++lengths.back();
          }
          k = chooseHybridWidth(lengths, coo.shape[rowDim]);
          resolved[i] = part.withFixedK(fixedLevel, k);
          if (splitK == 0) splitK = k;
        }
        int64_t row = -1, used = 0;
        for (int64_t e : order) {
          if (taken[e]) continue;
          int64_t r = coo.coords[e * rank + rowDim];
          if (r != row) row = r, used = 0;
          if (used < k) take(coo, e, dest), taken[e] = true, ++used;
        }
        break;
      }
      case PartRule::kBlocks: {
        // Count entries per block (the kDiv levels' coordinates), keep blocks at least half full.
        std::vector<LevelExpr> divs;
        int64_t blockVolume = 1;
        for (const LevelSpec& s : part.levels()) {
          if (s.expr.op == LevelExpr::Op::kDiv) divs.push_back(s.expr), blockVolume *= s.expr.block;
        }
        std::map<std::vector<int64_t>, int64_t> fill;
        auto blockOf = [&](int64_t e) {
          std::vector<int64_t> key;
          for (const LevelExpr& x : divs) key.push_back(coo.coords[e * rank + x.dim] / x.block);
          return key;
        };
        for (int64_t e = 0; e < coo.numEntries(); ++e) {
          if (!taken[e]) ++fill[blockOf(e)];
        }
        for (int64_t e = 0; e < coo.numEntries(); ++e) {
          if (!taken[e] && 2 * fill[blockOf(e)] >= blockVolume) take(coo, e, dest), taken[e] = true;
        }
        break;
      }
      case PartRule::kNM: {
        const LevelSpec* nmLevel = nullptr;
        for (const LevelSpec& s : part.levels()) {
          if (s.type.kind == LevelKind::kNM) nmLevel = &s;
        }
        const int32_t inner = innerDimOf(part, LevelKind::kNM);
        const int64_t m = nmLevel->type.m, n = nmLevel->type.n;
        // Group key: all coordinates with the n:m dimension divided by m.
        std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
        for (int64_t e = 0; e < coo.numEntries(); ++e) {
          if (taken[e]) continue;
          std::vector<int64_t> key(coo.coords.begin() + e * rank,
                                   coo.coords.begin() + (e + 1) * rank);
          key[static_cast<size_t>(inner)] /= m;
          groups[key].push_back(e);
        }
        for (auto& [key, members] : groups) {
          std::stable_sort(members.begin(), members.end(), [&](int64_t a, int64_t b) {
            return std::fabs(coo.values[a]) > std::fabs(coo.values[b]);
          });
          for (size_t j = 0; j < members.size() && static_cast<int64_t>(j) < n; ++j) {
            take(coo, members[j], dest), taken[members[j]] = true;
          }
        }
        break;
      }
      case PartRule::kRest:
        SF_FAIL(kNotSupported) << "hybrid format " << format.toString() << ": part " << i << " ("
                               << part.toString()
                               << ") does not say which entries it takes; only ell, bsr and n:m "
                                  "parts may come before the last part";
    }
  }
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    if (!taken[e]) take(coo, e, out.parts.back());
  }
  out.format = Format::hybrid(resolved, splitK);
  return out;
}

}  // namespace sparseflow::format
