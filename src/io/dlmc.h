// DLMC (.smtx) reader and writer: the Deep Learning Matrix Collection's CSR sparsity patterns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// DLMC files hold the pattern only; these say what values to make up for it.
struct DlmcOptions {
  enum class Fill {
    kOnes,    ///< every value 1.0
    kRandom,  ///< uniform in [-1, 1): (mt19937_64(seed)() >> 40) * 2^-23 - 1, in file order, the
              ///< same on every platform (std::uniform_real_distribution is not); f32 values
  };
  Fill fill = Fill::kOnes;
  uint64_t seed = 0;
};

/// A DLMC matrix as read: CSR with 0-based row offsets and column indices, values made up.
struct DlmcCsr {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> offsets;  ///< rows + 1 entries, offsets[0] == 0, non-decreasing
  std::vector<int64_t> indices;  ///< nnz column indices in [0, cols), in file order
  std::vector<double> values;    ///< nnz values, per DlmcOptions

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
};

/// Parses .smtx text: line 1 "rows, cols, nnz", line 2 the rows + 1 row offsets, line 3 the nnz
/// column indices (absent or empty when nnz is 0). `name` (usually the path) prefixes every
/// error: "NAME:LINE: ...". Offsets must start at 0, never decrease and end at nnz (kParseError);
/// column indices outside [0, cols) throw kOutOfRange.
DlmcCsr parseDlmcCsr(std::string_view text, const std::string& name,
                     const DlmcOptions& options = {});

/// Maps the file at `path` and parses it (see parseDlmcCsr); I/O failures throw kIoError.
DlmcCsr readDlmcCsr(const std::string& path, const DlmcOptions& options = {});

/// parseDlmcCsr as a sparse 2-d RawTensor (entries in row order, values made up, not a pattern).
RawTensor parseDlmc(std::string_view text, const std::string& name,
                    const DlmcOptions& options = {});

/// readDlmcCsr as a sparse 2-d RawTensor.
RawTensor readDlmc(const std::string& path, const DlmcOptions& options = {});

/// Formats the pattern of a sparse 2-d RawTensor as .smtx (entries sorted by row then column;
/// values are dropped, the format has none), in the layout of the DLMC files. Throws
/// kInvalidArgument for dense tensors, other ranks and duplicate entries.
std::string formatDlmc(const RawTensor& tensor);

/// formatDlmc written atomically to `path` (no partial file on failure).
void writeDlmc(const std::string& path, const RawTensor& tensor);

}  // namespace sparseflow::io
