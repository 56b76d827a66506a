// The C ABI's zero-copy tensors: dense, csr, csc, coo, bsr and n:m views of the caller's arrays,
// validated before the handle is returned.
#include <cstdint>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "format/format_shapes.h"
#include "sparseflow/build.h"
#include "sparseflow/format.h"
#include "sparseflow/validate.h"

namespace sparseflow::capi {
namespace {

/// A view of a caller array of `count` elements; the argument's name is in every error.
Buffer borrow(DType type, const void* data, int64_t count, const char* name) {
  SF_USER_CHECK(count >= 0) << "argument '" << name << "' would hold " << count << " elements";
  SF_USER_CHECK(data != nullptr || count == 0)
      << "argument '" << name << "' is null but must hold " << count << " elements";
  SF_USER_CHECK(reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dtypeSize(type)) == 0)
      << "argument '" << name << "' is not aligned to its " << dtypeSize(type) << "-byte "
      << dtypeName(type) << " elements";
  // The C API promises never to write through these pointers; nothing it offers writes tensors.
  return Buffer::view(type, const_cast<void*>(data), count);
}

void requireNonNegative(int64_t value, const char* name) {
  SF_USER_CHECK(value >= 0) << "argument '" << name << "' is negative (" << value << ")";
}

/// "@i64" for 64-bit indices, "" for 32-bit (the default widths).
std::string widthSuffix(DType indexType) {
  return indexType == DType::kI64 ? "@i64" : "";
}

/// Assembles, validates and wraps a tensor whose arrays view the caller's memory.
SparseFlowTensor* newBorrowedTensor(std::vector<int64_t> shape, DType dtype, const Format& format,
                                    std::vector<LevelStorage> levels, Buffer values) {
  Tensor tensor(std::move(shape), dtype, format, std::move(levels), std::move(values));
  validate(tensor);  // kInvalidFormat naming the level and position
  auto handle = std::make_unique<SparseFlowTensor>();
  handle->tensor = std::move(tensor);
  handle->borrowsCallerMemory = true;
  return publishHandle(std::move(handle), HandleKind::kTensor);
}

/// CSR and CSC share everything but which dimension the outer level stores.
SparseFlowTensor* newCompressedMatrix(const char* preset, sparseflow_dtype dtype, int64_t rows,
                                      int64_t cols, sparseflow_dtype indexDType, const void* ptr,
                                      const char* ptrName, const void* idx, const char* idxName,
                                      const void* values, int64_t nnz) {
  const DType valueType = valueDTypeArg(dtype, "dtype");
  const DType indexType = indexDTypeArg(indexDType, "index_dtype");
  requireNonNegative(rows, "rows");
  requireNonNegative(cols, "cols");
  requireNonNegative(nnz, "nnz");
  const bool byRows = std::string(preset) == "csr";
  const int64_t outer = byRows ? rows : cols;
  SF_USER_CHECK(outer < INT64_MAX)
      << "argument '" << (byRows ? "rows" : "cols") << "' is too large";
  std::vector<LevelStorage> levels(2);
  levels[1].pos = borrow(indexType, ptr, outer + 1, ptrName);
  levels[1].crd = borrow(indexType, idx, nnz, idxName);
  return newBorrowedTensor({rows, cols}, valueType,
                           Format::parse(preset + widthSuffix(indexType), 2), std::move(levels),
                           borrow(valueType, values, nnz, "values"));
}

}  // namespace
}  // namespace sparseflow::capi

using namespace sparseflow;  // NOLINT(google-build-using-namespace): entry points only
using capi::borrow;
using capi::contextArg;
using capi::guard;
using capi::requireNonNegative;

extern "C" {

sparseflow_status sparseflow_tensor_create_dense(SparseFlowContext* context, sparseflow_dtype dtype,
                                                 int32_t rank, const int64_t* shape,
                                                 const void* values, int64_t value_count,
                                                 SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    const DType valueType = capi::valueDTypeArg(dtype, "dtype");
    SF_USER_CHECK(rank >= 1) << "argument 'rank' must be >= 1, got " << rank;
    capi::requireNonNull(shape, "shape");
    std::vector<int64_t> dims(shape, shape + rank);
    for (int32_t d = 0; d < rank; ++d) {
      SF_USER_CHECK(dims[d] >= 0) << "argument 'shape': dimension " << d << " is negative ("
                                  << dims[d] << ")";
    }
    SF_USER_CHECK(value_count == numElements(dims))
        << "argument 'value_count' is " << value_count << " but the shape holds "
        << numElements(dims) << " elements";
    const Format format = Format::parse("dense", rank);
    *tensor = capi::newBorrowedTensor(std::move(dims), valueType, format,
                                      std::vector<LevelStorage>(static_cast<size_t>(rank)),
                                      borrow(valueType, values, value_count, "values"));
  });
}

sparseflow_status sparseflow_tensor_create_csr(SparseFlowContext* context, sparseflow_dtype dtype,
                                               int64_t rows, int64_t cols,
                                               sparseflow_dtype index_dtype, const void* row_ptr,
                                               const void* col_idx, const void* values, int64_t nnz,
                                               SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    *tensor = capi::newCompressedMatrix("csr", dtype, rows, cols, index_dtype, row_ptr, "row_ptr",
                                        col_idx, "col_idx", values, nnz);
  });
}

sparseflow_status sparseflow_tensor_create_csc(SparseFlowContext* context, sparseflow_dtype dtype,
                                               int64_t rows, int64_t cols,
                                               sparseflow_dtype index_dtype, const void* col_ptr,
                                               const void* row_idx, const void* values, int64_t nnz,
                                               SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    *tensor = capi::newCompressedMatrix("csc", dtype, rows, cols, index_dtype, col_ptr, "col_ptr",
                                        row_idx, "row_idx", values, nnz);
  });
}

sparseflow_status sparseflow_tensor_create_coo(SparseFlowContext* context, sparseflow_dtype dtype,
                                               int32_t rank, const int64_t* shape,
                                               sparseflow_dtype index_dtype,
                                               const void* const* coords, const void* values,
                                               int64_t nnz, SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    const DType valueType = capi::valueDTypeArg(dtype, "dtype");
    const DType indexType = capi::indexDTypeArg(index_dtype, "index_dtype");
    SF_USER_CHECK(rank >= 1) << "argument 'rank' must be >= 1, got " << rank;
    capi::requireNonNull(shape, "shape");
    capi::requireNonNull(coords, "coords");
    requireNonNegative(nnz, "nnz");
    const Format format = Format::parse("coo" + capi::widthSuffix(indexType), rank);
    // Level 0 is compressed with the one segment [0, nnz); each level stores one dimension.
    std::vector<LevelStorage> levels(static_cast<size_t>(rank));
    levels[0].pos = Buffer::fromIndices(indexType, {0, nnz}, "nnz");
    for (int32_t d = 0; d < rank; ++d) {
      const std::string name = "coords[" + std::to_string(d) + "]";
      levels[static_cast<size_t>(d)].crd = borrow(indexType, coords[d], nnz, name.c_str());
    }
    *tensor = capi::newBorrowedTensor(std::vector<int64_t>(shape, shape + rank), valueType, format,
                                      std::move(levels), borrow(valueType, values, nnz, "values"));
  });
}

sparseflow_status sparseflow_tensor_create_bsr(SparseFlowContext* context, sparseflow_dtype dtype,
                                               int64_t rows, int64_t cols, int64_t block_rows,
                                               int64_t block_cols, sparseflow_dtype index_dtype,
                                               const void* block_row_ptr, const void* block_col_idx,
                                               const void* values, int64_t num_blocks,
                                               SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    const DType valueType = capi::valueDTypeArg(dtype, "dtype");
    const DType indexType = capi::indexDTypeArg(index_dtype, "index_dtype");
    requireNonNegative(rows, "rows");
    requireNonNegative(cols, "cols");
    requireNonNegative(num_blocks, "num_blocks");
    SF_USER_CHECK(block_rows > 0 && block_cols > 0)
        << "arguments 'block_rows' and 'block_cols' must be positive, got " << block_rows << "x"
        << block_cols;
    const Format format =
        Format::parse("bsr:" + std::to_string(block_rows) + "x" + std::to_string(block_cols) +
                          capi::widthSuffix(indexType),
                      2);
    const int64_t blockRowCount = format.levelExtent(0, {rows, cols});
    SF_CHECK_CODE(blockRowCount < INT64_MAX, ErrorCode::kOutOfMemory)
        << "argument 'rows' (" << rows << ") has too many block rows for block_row_ptr";
    SF_CHECK_CODE(num_blocks <= INT64_MAX / block_rows / block_cols, ErrorCode::kOutOfMemory)
        << "argument 'num_blocks' (" << num_blocks << ") of " << block_rows << "x" << block_cols
        << " blocks holds more than 2^63 values";
    std::vector<LevelStorage> levels(4);
    levels[1].pos = borrow(indexType, block_row_ptr, blockRowCount + 1, "block_row_ptr");
    levels[1].crd = borrow(indexType, block_col_idx, num_blocks, "block_col_idx");
    *tensor = capi::newBorrowedTensor(
        {rows, cols}, valueType, format, std::move(levels),
        borrow(valueType, values, num_blocks * block_rows * block_cols, "values"));
  });
}

sparseflow_status sparseflow_tensor_create_nm(SparseFlowContext* context, sparseflow_dtype dtype,
                                              int64_t rows, int64_t cols, const char* pattern,
                                              const void* values, int64_t value_count,
                                              const uint8_t* meta, int64_t meta_bytes,
                                              SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    contextArg(context, "context");
    const DType valueType = capi::valueDTypeArg(dtype, "dtype");
    const std::string_view text = capi::stringArg(pattern, "pattern");
    requireNonNegative(rows, "rows");
    requireNonNegative(cols, "cols");
    const Format format = Format::parse(text, 2);
    SF_USER_CHECK(format::isMatrixNM(format))
        << "argument 'pattern' is '" << text << "'; expected an n:m pattern such as 2:4";
    std::vector<LevelStorage> levels(2);
    levels[1].meta = borrow(DType::kU8, meta, meta_bytes, "meta");
    *tensor = capi::newBorrowedTensor({rows, cols}, valueType, format, std::move(levels),
                                      borrow(valueType, values, value_count, "values"));
  });
}

}  // extern "C"
