// The C ABI's versions, errors, context and zero-copy tensors (dense, csr, csc, coo, bsr, n:m),
// each with the errors a C caller can cause; linked against libsparseflow.so only.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

// ---- versions and errors ----

TEST(CapiVersion, LibraryMatchesHeader) {
  EXPECT_EQ(sparseflow_abi_version(), SPARSEFLOW_ABI_VERSION);
  EXPECT_EQ(SPARSEFLOW_ABI_VERSION >> 16, static_cast<uint32_t>(SPARSEFLOW_ABI_VERSION_MAJOR));
  EXPECT_EQ(SPARSEFLOW_ABI_VERSION & 0xFFFFu, static_cast<uint32_t>(SPARSEFLOW_ABI_VERSION_MINOR));
  EXPECT_TRUE(SPARSEFLOW_ABI_COMPATIBLE(sparseflow_abi_version()));
  ASSERT_SF_OK(SPARSEFLOW_ABI_CHECK());
  EXPECT_STREQ(sparseflow_last_error(), "");
}

TEST(CapiVersion, RefusesOtherMajorOrNewerMinor) {
  const uint32_t major = SPARSEFLOW_ABI_VERSION_MAJOR, minor = SPARSEFLOW_ABI_VERSION_MINOR;
  // What the macro says of libraries a program built against this header might meet.
  EXPECT_TRUE(SPARSEFLOW_ABI_COMPATIBLE((major << 16) | (minor + 1)));
  EXPECT_FALSE(SPARSEFLOW_ABI_COMPATIBLE(((major + 1) << 16) | minor));
  if (major > 0) {
    EXPECT_FALSE(SPARSEFLOW_ABI_COMPATIBLE(((major - 1) << 16) | minor));
  }
  // What the library says of programs built against other headers.
  const std::string next = std::to_string(major + 1) + "." + std::to_string(minor);
  EXPECT_SF_ERROR(sparseflow_abi_check(((major + 1) << 16) | minor),
                  SPARSEFLOW_STATUS_NOT_SUPPORTED, "sparseflow_abi_check", next.c_str());
  const std::string newer = std::to_string(major) + "." + std::to_string(minor + 1);
  EXPECT_SF_ERROR(sparseflow_abi_check((major << 16) | (minor + 1)),
                  SPARSEFLOW_STATUS_NOT_SUPPORTED, newer.c_str());
  ASSERT_SF_OK(sparseflow_abi_check(major << 16));  // built against major.0: fine
}

TEST(CapiErrors, StatusNamesAreStable) {
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_OK), "ok");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_PARSE_ERROR), "parse error");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_IO_ERROR), "i/o error");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_NOT_SUPPORTED), "not supported");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_OUT_OF_RANGE), "out of range");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_INVALID_FORMAT), "invalid format");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_INTERNAL), "internal error");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_COMPILE_ERROR), "compile error");
  EXPECT_STREQ(sparseflow_status_name(SPARSEFLOW_STATUS_OUT_OF_MEMORY), "out of memory");
  EXPECT_STREQ(sparseflow_status_name(42), "unknown error");
  EXPECT_STREQ(sparseflow_status_name(-1), "unknown error");
}

TEST(CapiErrors, MessageNamesTheFunctionAndASuccessClearsIt) {
  EXPECT_SF_ERROR(sparseflow_context_create(nullptr), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "sparseflow_context_create: ", "argument 'context' is null");
  ContextPtr context = makeContext();
  EXPECT_STREQ(sparseflow_last_error(), "");
}

// ---- context ----

TEST(CapiContext, ThreadsRoundTripAndNegativeIsRefused) {
  ContextPtr context = makeContext();
  int32_t threads = -1;
  ASSERT_SF_OK(sparseflow_context_get_threads(context.get(), &threads));
  EXPECT_EQ(threads, 0);
  ASSERT_SF_OK(sparseflow_context_set_threads(context.get(), 3));
  ASSERT_SF_OK(sparseflow_context_get_threads(context.get(), &threads));
  EXPECT_EQ(threads, 3);
  EXPECT_SF_ERROR(sparseflow_context_set_threads(context.get(), -2),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'threads'", "-2");
  EXPECT_SF_ERROR(sparseflow_context_set_threads(nullptr, 1), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'context' is null");
  EXPECT_SF_ERROR(sparseflow_context_get_threads(context.get(), nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'threads' is null");
  EXPECT_SF_ERROR(sparseflow_context_get_threads(nullptr, &threads),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'context'");
}

TEST(CapiContext, DestroyAcceptsNull) {
  ASSERT_SF_OK(sparseflow_context_destroy(nullptr));
  ASSERT_SF_OK(sparseflow_tensor_destroy(nullptr));
  ASSERT_SF_OK(sparseflow_linear_destroy(nullptr));
}

TEST(CapiContext, HandleOfTheWrongKindIsRefused) {
  ContextPtr context = makeContext();
  // A C caller that casts one handle to another gets an error, not a crash.
  const auto* notATensor = reinterpret_cast<const SparseFlowTensor*>(context.get());
  int32_t rank = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_rank(notATensor, &rank), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "not a live SparseFlowTensor");
}

// ---- zero-copy tensors ----

TEST(CapiDense, ViewsTheCallersArrayAndReportsAttributes) {
  ContextPtr context = makeContext();
  std::vector<float> values = {1, 0, 2, 0, 0, 3};
  const int64_t shape[2] = {2, 3};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              values.data(), 6, &raw));
  TensorPtr tensor(raw);
  int32_t rank = 0, levels = 0;
  int64_t got[2] = {0, 0}, stored = 0, nnz = 0, bytes = 0, count = 0;
  sparseflow_dtype dtype = -1;
  const void* data = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_get_rank(tensor.get(), &rank));
  ASSERT_SF_OK(sparseflow_tensor_get_shape(tensor.get(), got, 2));
  ASSERT_SF_OK(sparseflow_tensor_get_dtype(tensor.get(), &dtype));
  ASSERT_SF_OK(sparseflow_tensor_get_stored(tensor.get(), &stored));
  ASSERT_SF_OK(sparseflow_tensor_get_nnz(tensor.get(), &nnz));
  ASSERT_SF_OK(sparseflow_tensor_get_bytes(tensor.get(), &bytes));
  ASSERT_SF_OK(sparseflow_tensor_get_num_levels(tensor.get(), &levels));
  ASSERT_SF_OK(sparseflow_tensor_get_values(tensor.get(), &data, &count));
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(got[0], 2);
  EXPECT_EQ(got[1], 3);
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_F32);
  EXPECT_EQ(stored, 6);
  EXPECT_EQ(nnz, 3);
  EXPECT_EQ(bytes, 24);
  EXPECT_EQ(levels, 2);
  EXPECT_EQ(data, values.data());  // zero copy
  EXPECT_EQ(count, 6);
  EXPECT_EQ(formatOf(tensor.get()), "dense");
  // The caller's memory is read live: a change shows through.
  values[1] = 9;
  EXPECT_EQ(denseOf(tensor.get()), (std::vector<double>{1, 9, 2, 0, 0, 3}));
}

TEST(CapiDense, AnyRankAndEveryFloatType) {
  ContextPtr context = makeContext();
  std::vector<double> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) - 3.5;
  const int64_t shape[3] = {2, 3, 4};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F64, 3, shape,
                                              values.data(), 24, &raw));
  TensorPtr tensor(raw);
  EXPECT_EQ(denseOf(tensor.get()), values);
  // bf16 as raw bits: 1.0 is 0x3F80, -2.0 is 0xC000.
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC000};
  const int64_t one[1] = {2};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_BF16, 1, one,
                                              bf16.data(), 2, &raw));
  TensorPtr half(raw);
  EXPECT_EQ(denseOf(half.get()), (std::vector<double>{1.0, -2.0}));
}

TEST(CapiDense, Errors) {
  ContextPtr context = makeContext();
  std::vector<float> values(6, 1.0f);
  const int64_t shape[2] = {2, 3};
  const int64_t negative[2] = {2, -3};
  SparseFlowTensor* raw = nullptr;
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                                 values.data(), 5, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'value_count' is 5", "6 elements");
  EXPECT_EQ(raw, nullptr);
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 0, shape,
                                                 values.data(), 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'rank'");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, nullptr,
                                                 values.data(), 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'shape' is null");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, negative,
                                                 values.data(), 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "dimension 1 is negative");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_I32, 2, shape,
                                                 values.data(), 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'dtype'");
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_dense(context.get(), 77, 2, shape, values.data(), 6, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'dtype' is 77");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                                 nullptr, 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'values' is null");
  const auto* misaligned = reinterpret_cast<const char*>(values.data()) + 1;
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 1, shape,
                                                 misaligned, 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'values' is not aligned");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(nullptr, SPARSEFLOW_DTYPE_F32, 2, shape,
                                                 values.data(), 6, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'context' is null");
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                                 values.data(), 6, nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'tensor' is null");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiCsr, ViewsTheCallersArrays) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  TensorPtr csr(raw);
  EXPECT_EQ(formatOf(csr.get()), "csr");
  EXPECT_EQ(denseOf(csr.get()), m.dense());
  const void* data = nullptr;
  int64_t count = 0;
  sparseflow_dtype type = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_positions(csr.get(), 1, &data, &count, &type));
  EXPECT_EQ(data, m.rowPtr.data());
  EXPECT_EQ(count, 5);
  EXPECT_EQ(type, SPARSEFLOW_DTYPE_I32);
  ASSERT_SF_OK(sparseflow_tensor_get_coordinates(csr.get(), 1, &data, &count, &type));
  EXPECT_EQ(data, m.colIdx.data());
  ASSERT_SF_OK(sparseflow_tensor_get_values(csr.get(), &data, &count));
  EXPECT_EQ(data, m.values.data());
  // The dense outer level stores no arrays.
  ASSERT_SF_OK(sparseflow_tensor_get_positions(csr.get(), 0, &data, &count, &type));
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(count, 0);
  const uint8_t* meta = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_get_metadata(csr.get(), 1, &meta, &count));
  EXPECT_EQ(meta, nullptr);
  EXPECT_SF_ERROR(sparseflow_tensor_get_positions(csr.get(), 2, &data, &count, &type),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'level' is 2", "2 levels");
  EXPECT_SF_ERROR(sparseflow_tensor_get_coordinates(csr.get(), 1, nullptr, &count, &type),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'data'");
}

TEST(CapiCsr, SixtyFourBitIndices) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  std::vector<int64_t> rowPtr(m.rowPtr.begin(), m.rowPtr.end());
  std::vector<int64_t> colIdx(m.colIdx.begin(), m.colIdx.end());
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I64, rowPtr.data(), colIdx.data(),
                                            m.values.data(), 7, &raw));
  TensorPtr csr(raw);
  EXPECT_EQ(formatOf(csr.get()), "csr@i64");
  EXPECT_EQ(denseOf(csr.get()), m.dense());
}

TEST(CapiCsr, BrokenArraysAreRefusedWithTheirPlace) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  auto create = [&](const SmallMatrix& s, int64_t nnz, sparseflow_dtype indexType) {
    return sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, s.rows, s.cols,
                                        indexType, s.rowPtr.data(), s.colIdx.data(),
                                        s.values.data(), nnz, &raw);
  };
  SmallMatrix unsorted = m;
  std::swap(unsorted.colIdx[0], unsorted.colIdx[1]);
  EXPECT_SF_ERROR(create(unsorted, 7, SPARSEFLOW_DTYPE_I32), SPARSEFLOW_STATUS_INVALID_FORMAT,
                  "sparseflow_tensor_create_csr", "level 1");
  SmallMatrix outOfRange = m;
  outOfRange.colIdx[6] = 6;
  EXPECT_SF_ERROR(create(outOfRange, 7, SPARSEFLOW_DTYPE_I32), SPARSEFLOW_STATUS_INVALID_FORMAT,
                  "level 1");
  EXPECT_SF_ERROR(create(m, 6, SPARSEFLOW_DTYPE_I32), SPARSEFLOW_STATUS_INVALID_FORMAT, "pos");
  EXPECT_SF_ERROR(create(m, 7, SPARSEFLOW_DTYPE_F32), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "'index_dtype'");
  EXPECT_SF_ERROR(create(m, -1, SPARSEFLOW_DTYPE_I32), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "'nnz' is negative");
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, 4, 6, SPARSEFLOW_DTYPE_I32,
                                   nullptr, m.colIdx.data(), m.values.data(), 7, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'row_ptr' is null");
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, -4, 6, SPARSEFLOW_DTYPE_I32,
                                   m.rowPtr.data(), m.colIdx.data(), m.values.data(), 7, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'rows' is negative");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiCsc, ViewsTheCallersArrays) {
  ContextPtr context = makeContext();
  // [[1 0 2], [0 0 3]] by columns.
  const std::vector<int32_t> colPtr = {0, 1, 1, 3}, rowIdx = {0, 0, 1};
  const std::vector<float> values = {1, 2, 3};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csc(context.get(), SPARSEFLOW_DTYPE_F32, 2, 3,
                                            SPARSEFLOW_DTYPE_I32, colPtr.data(), rowIdx.data(),
                                            values.data(), 3, &raw));
  TensorPtr csc(raw);
  EXPECT_EQ(formatOf(csc.get()), "csc");
  EXPECT_EQ(denseOf(csc.get()), (std::vector<double>{1, 0, 2, 0, 0, 3}));
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_csc(context.get(), SPARSEFLOW_DTYPE_F32, 2, 3, SPARSEFLOW_DTYPE_I32,
                                   colPtr.data(), nullptr, values.data(), 3, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'row_idx' is null");
}

TEST(CapiCoo, MatrixAndRankThree) {
  ContextPtr context = makeContext();
  const std::vector<int64_t> rows = {0, 0, 2}, cols = {1, 3, 0};
  const std::vector<float> values = {1, 2, 3};
  const void* coords[2] = {rows.data(), cols.data()};
  const int64_t shape[2] = {3, 4};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_coo(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                            SPARSEFLOW_DTYPE_I64, coords, values.data(), 3, &raw));
  TensorPtr coo(raw);
  EXPECT_EQ(formatOf(coo.get()), "coo@i64");
  std::vector<double> expected(12, 0.0);
  expected[1] = 1, expected[3] = 2, expected[8] = 3;
  EXPECT_EQ(denseOf(coo.get()), expected);
  const void* data = nullptr;
  int64_t count = 0;
  sparseflow_dtype type = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_coordinates(coo.get(), 1, &data, &count, &type));
  EXPECT_EQ(data, cols.data());

  const std::vector<int32_t> i = {0, 1, 1}, j = {2, 0, 0}, k = {1, 0, 3};
  const void* coords3[3] = {i.data(), j.data(), k.data()};
  const int64_t shape3[3] = {2, 3, 4};
  ASSERT_SF_OK(sparseflow_tensor_create_coo(context.get(), SPARSEFLOW_DTYPE_F32, 3, shape3,
                                            SPARSEFLOW_DTYPE_I32, coords3, values.data(), 3, &raw));
  TensorPtr coo3(raw);
  std::vector<double> dense3 = denseOf(coo3.get());
  EXPECT_EQ(dense3[0 * 12 + 2 * 4 + 1], 1);
  EXPECT_EQ(dense3[1 * 12 + 0 * 4 + 0], 2);
  EXPECT_EQ(dense3[1 * 12 + 0 * 4 + 3], 3);
}

TEST(CapiCoo, Errors) {
  ContextPtr context = makeContext();
  const std::vector<int32_t> rows = {2, 0}, cols = {0, 1};
  const std::vector<float> values = {1, 2};
  const void* unsorted[2] = {rows.data(), cols.data()};
  const void* missing[2] = {rows.data(), nullptr};
  const int64_t shape[2] = {3, 4};
  SparseFlowTensor* raw = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_coo(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                   SPARSEFLOW_DTYPE_I32, unsorted, values.data(), 2, &raw),
      SPARSEFLOW_STATUS_INVALID_FORMAT, "level 0");
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_coo(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                   SPARSEFLOW_DTYPE_I32, missing, values.data(), 2, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'coords[1]' is null");
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_coo(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                   SPARSEFLOW_DTYPE_I32, nullptr, values.data(), 2, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'coords' is null");
}

TEST(CapiBsr, BlocksWithAPartialEdge) {
  ContextPtr context = makeContext();
  // A 3 × 5 matrix in 2 × 3 blocks: block rows 0..1, block columns 0..1; blocks (0,1) and (1,0).
  const std::vector<int32_t> blockRowPtr = {0, 1, 2}, blockColIdx = {1, 0};
  const std::vector<float> values = {1, 2, 0, 3, 4, 0,   // block (0,1): rows 0-1, cols 3-5
                                     5, 6, 7, 0, 0, 0};  // block (1,0): row 2 (and padding)
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_bsr(context.get(), SPARSEFLOW_DTYPE_F32, 3, 5, 2, 3,
                                            SPARSEFLOW_DTYPE_I32, blockRowPtr.data(),
                                            blockColIdx.data(), values.data(), 2, &raw));
  TensorPtr bsr(raw);
  EXPECT_EQ(formatOf(bsr.get()), "bsr:2x3");
  const std::vector<double> expected = {0, 0, 0, 1, 2,  //
                                        0, 0, 0, 3, 4,  //
                                        5, 6, 7, 0, 0};
  EXPECT_EQ(denseOf(bsr.get()), expected);
  EXPECT_SF_ERROR(sparseflow_tensor_create_bsr(context.get(), SPARSEFLOW_DTYPE_F32, 3, 5, 0, 3,
                                               SPARSEFLOW_DTYPE_I32, blockRowPtr.data(),
                                               blockColIdx.data(), values.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'block_rows'");
  const std::vector<int32_t> badColumn = {1, 2};
  EXPECT_SF_ERROR(sparseflow_tensor_create_bsr(context.get(), SPARSEFLOW_DTYPE_F32, 3, 5, 2, 3,
                                               SPARSEFLOW_DTYPE_I32, blockRowPtr.data(),
                                               badColumn.data(), values.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_FORMAT, "level 1");
}

TEST(CapiNM, ArraysOfSparsifyMakeTheSameTensor) {
  ContextPtr context = makeContext();
  std::vector<float> w = {1, -5, 2, 3,  0, 0, 7, 0,  //
                          4, 0,  0, -6, 1, 2, 3, 4};
  const int64_t shape[2] = {2, 8};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              w.data(), 16, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  TensorPtr compressed(raw);
  EXPECT_EQ(formatOf(compressed.get()), "2:4");
  const void* valuesData = nullptr;
  int64_t valueCount = 0, metaBytes = 0;
  const uint8_t* metaData = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_get_values(compressed.get(), &valuesData, &valueCount));
  ASSERT_SF_OK(sparseflow_tensor_get_metadata(compressed.get(), 1, &metaData, &metaBytes));
  EXPECT_EQ(valueCount, 2 * 2 * 2);
  EXPECT_EQ(metaBytes, 2);  // 8 slots of 2 bits
  std::vector<float> values(static_cast<const float*>(valuesData),
                            static_cast<const float*>(valuesData) + valueCount);
  std::vector<uint8_t> meta(metaData, metaData + metaBytes);
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, "2:4",
                                           values.data(), valueCount, meta.data(), metaBytes,
                                           &raw));
  TensorPtr wrapped(raw);
  EXPECT_EQ(denseOf(wrapped.get()), denseOf(compressed.get()));
  EXPECT_EQ(denseOf(wrapped.get()),
            (std::vector<double>{0, -5, 0, 3, 0, 0, 7, 0, 4, 0, 0, -6, 0, 0, 3, 4}));

  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, "2:4",
                                              values.data(), valueCount, meta.data(), 1, &raw),
                  SPARSEFLOW_STATUS_INVALID_FORMAT, "meta has 1 bytes, expected 2");
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, "2:4",
                                              values.data(), 7, meta.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_FORMAT, "values has 7 entries");
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, "csr",
                                              values.data(), 8, meta.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'pattern' is 'csr'");
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, nullptr,
                                              values.data(), 8, meta.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'pattern' is null");
  std::vector<uint8_t> decreasing = meta;
  decreasing[0] = 0x01;  // slot 0 at offset 1, slot 1 at offset 0
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 2, 8, "2:4",
                                              values.data(), 8, decreasing.data(), 2, &raw),
                  SPARSEFLOW_STATUS_INVALID_FORMAT, "offsets must increase");
}

}  // namespace
}  // namespace sparseflow_capi_test
