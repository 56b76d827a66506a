// matrixStatistics(): one pass over the entries in CSR order plus a block census per block size.
#include "sparseflow/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow {

MatrixStatistics matrixStatistics(const Tensor& matrix) {
  SF_USER_CHECK(matrix.rank() == 2)
      << "statistics need a matrix, not a rank-" << matrix.rank() << " tensor";
  MatrixStatistics s;
  s.rows = matrix.shape()[0];
  s.cols = matrix.shape()[1];
  Coo coo = toCoo(matrix);
  s.nnz = coo.numEntries();
  s.density = s.rows && s.cols ? static_cast<double>(s.nnz) /
                                     (static_cast<double>(s.rows) * static_cast<double>(s.cols))
                               : 0;
  // Row and column lengths from the sorted coordinates of the entries: memory grows with the
  // entries, never with the shape (a matrix of 10^9 empty rows is described in kilobytes).
  std::vector<int64_t> rowsOf(static_cast<size_t>(s.nnz)), colsOf(static_cast<size_t>(s.nnz));
  for (int64_t e = 0; e < s.nnz; ++e) {
    const int64_t i = coo.coords[2 * e], j = coo.coords[2 * e + 1];
    rowsOf[static_cast<size_t>(e)] = i;
    colsOf[static_cast<size_t>(e)] = j;
    s.bandwidth = std::max(s.bandwidth, std::abs(i - j));
  }
  // Lengths of the runs of equal values in sorted `v`: the nonempty rows' (columns') lengths.
  const auto runLengths = [](std::vector<int64_t>& v) {
    std::sort(v.begin(), v.end());
    std::vector<int64_t> lengths;
    for (size_t k = 0; k < v.size();) {
      size_t end = k;
      while (end < v.size() && v[end] == v[k]) ++end;
      lengths.push_back(static_cast<int64_t>(end - k));
      k = end;
    }
    return lengths;
  };
  const std::vector<int64_t> rowLen = runLengths(rowsOf), colLen = runLengths(colsOf);
  if (s.rows > 0) {
    s.emptyRows = s.rows - static_cast<int64_t>(rowLen.size());
    s.minRow =
        s.emptyRows > 0 || rowLen.empty() ? 0 : *std::min_element(rowLen.begin(), rowLen.end());
    s.maxRow = rowLen.empty() ? 0 : *std::max_element(rowLen.begin(), rowLen.end());
    s.meanRow = static_cast<double>(s.nnz) / static_cast<double>(s.rows);
    double var = static_cast<double>(s.emptyRows) * s.meanRow * s.meanRow;  // the empty rows
    for (int64_t len : rowLen) var += (len - s.meanRow) * (len - s.meanRow);
    s.sdRow = std::sqrt(var / static_cast<double>(s.rows));
  }
  if (s.cols > 0) {
    s.maxCol = colLen.empty() ? 0 : *std::max_element(colLen.begin(), colLen.end());
    s.emptyCols = s.cols - static_cast<int64_t>(colLen.size());
  }
  // Block and 2:4 census over the entries sorted row-major, one block row (row) at a time: no
  // key combines a row and a column, so no shape overflows it (a row times a block-column count
  // wrapped for widths near 2^63).
  std::vector<std::pair<int64_t, int64_t>> entries(static_cast<size_t>(s.nnz));
  for (int64_t e = 0; e < s.nnz; ++e) {
    entries[static_cast<size_t>(e)] = {coo.coords[2 * e], coo.coords[2 * e + 1]};
  }
  std::sort(entries.begin(), entries.end());
  std::vector<int64_t> blockColumns;
  for (int64_t b : {2, 4, 8}) {
    BlockFill f;
    f.block = b;
    for (size_t k = 0; k < entries.size();) {
      const int64_t blockRow = entries[k].first / b;
      blockColumns.clear();
      for (; k < entries.size() && entries[k].first / b == blockRow; ++k) {
        blockColumns.push_back(entries[k].second / b);
      }
      std::sort(blockColumns.begin(), blockColumns.end());
      f.blocks += std::unique(blockColumns.begin(), blockColumns.end()) - blockColumns.begin();
    }
    f.fill = f.blocks ? static_cast<double>(s.nnz) /
                            (static_cast<double>(f.blocks) * static_cast<double>(b * b))
                      : 0;
    s.blockFill.push_back(f);
  }
  // Groups of 4 columns in a row: consecutive in row-major order (duplicates count once each).
  for (size_t k = 0; k < entries.size();) {
    size_t end = k;
    while (end < entries.size() && entries[end].first == entries[k].first &&
           entries[end].second / 4 == entries[k].second / 4) {
      ++end;
    }
    s.groupsOverTwoFour += end - k > 2;
    k = end;
  }
  s.fitsTwoFour = s.groupsOverTwoFour == 0;
  return s;
}

std::string MatrixStatistics::toString() const {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf,
                        "shape      %lld x %lld\n"
                        "nnz        %lld (density %.3g)\n"
                        "row length min %lld, max %lld, mean %.2f, sd %.2f, %lld empty rows\n"
                        "col length max %lld, %lld empty columns\n"
                        "bandwidth  %lld\n",
                        static_cast<long long>(rows), static_cast<long long>(cols),
                        static_cast<long long>(nnz), density, static_cast<long long>(minRow),
                        static_cast<long long>(maxRow), meanRow, sdRow,
                        static_cast<long long>(emptyRows), static_cast<long long>(maxCol),
                        static_cast<long long>(emptyCols), static_cast<long long>(bandwidth));
  std::string out(buf, static_cast<size_t>(n));
  for (const BlockFill& f : blockFill) {
    n = std::snprintf(buf, sizeof buf, "block fill %lldx%lld: %.3f (%lld blocks)\n",
                      static_cast<long long>(f.block), static_cast<long long>(f.block), f.fill,
                      static_cast<long long>(f.blocks));
    out.append(buf, static_cast<size_t>(n));
  }
  n = std::snprintf(
      buf, sizeof buf, "2:4        %s\n",
      fitsTwoFour
          ? "yes, every group of 4 holds at most 2"
          : ("no, " + std::to_string(groupsOverTwoFour) + " groups of 4 hold more than 2").c_str());
  out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace sparseflow
