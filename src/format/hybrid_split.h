// Splitting entries among the parts of a hybrid format (ELL + COO, BSR + CSR, 2:4 + CSR, ...).
#pragma once

#include <vector>

#include "sparseflow/build.h"

namespace sparseflow::format {

struct HybridSplit {
  Format format;           ///< the hybrid format with data-chosen parameters resolved (hyb's k)
  std::vector<Coo> parts;  ///< entries of each part; together they are the input
};

/// Each part but the last takes what it holds well: a fixed(k) part the first k entries of each
/// row, a blocked part the blocks at least half full, an n:m part the n largest magnitudes of
/// each group; the last part takes the rest. `coo` must be free of duplicates.
HybridSplit splitForHybrid(const Coo& coo, const Format& format);

/// ELL width for hyb chosen from row lengths (Bell and Garland's rule): the largest k such that
/// at least max(4096, rows/3) rows have k or more entries (at least 1).
int64_t chooseHybridWidth(const std::vector<int64_t>& rowLengths);
/// The same with the lengths of the nonempty rows only, out of `rows` rows in all.
int64_t chooseHybridWidth(const std::vector<int64_t>& rowLengths, int64_t rows);

}  // namespace sparseflow::format
