// Structural statistics of a sparse matrix: what `sparseflow info` prints and what the format
// choice (and later the cost model) looks at.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow {

struct BlockFill {
  int64_t block = 0;          ///< b of b×b blocks
  int64_t blocks = 0;         ///< blocks holding at least one entry
  double fill = 0;            ///< entries / (blocks × b²): 1 means the blocks are full
};

struct MatrixStatistics {
  int64_t rows = 0, cols = 0, nnz = 0;
  double density = 0;
  int64_t minRow = 0, maxRow = 0, emptyRows = 0;
  double meanRow = 0, sdRow = 0;
  int64_t maxCol = 0, emptyCols = 0;
  int64_t bandwidth = 0;                ///< max |i - j| over the entries
  std::vector<BlockFill> blockFill;     ///< 2×2, 4×4, 8×8
  bool fitsTwoFour = false;             ///< every row's groups of 4 columns hold at most 2 entries
  int64_t groupsOverTwoFour = 0;        ///< groups of 4 that hold more than 2
  std::string toString() const;         ///< the block `sparseflow info` prints
};

/// Statistics of a matrix's nonzero pattern (explicit zeros count as entries where stored).
MatrixStatistics matrixStatistics(const Tensor& matrix);

}  // namespace sparseflow
