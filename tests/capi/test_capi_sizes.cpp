// The C ABI against sizes that overflow or cannot be met: huge shapes with empty arrays, counts
// that disagree with shapes, thread counts OpenMP cannot start. Each is a named status, never an
// abort or exit of the host process (these cases used to end it: Highway's assert, libgomp).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

constexpr int64_t kHuge = int64_t{1} << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CapiSizes, NMShapeWhoseSlotCountWrapsIsRefused) {
  ContextPtr context = makeContext(1);
  SparseFlowTensor* tensor = nullptr;
  // 2^62 rows x 8 columns of 2:4: 2^64 value slots, which wrapped to 0 and let empty arrays pass.
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, kHuge, 8, "2:4",
                                              nullptr, 0, nullptr, 0, &tensor),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "level 1 (",
                  "4611686018427387904 x 2 groups of 2 slots", "do not fit in 63 bits");
  EXPECT_EQ(tensor, nullptr);
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {kHuge, 4}, {kMax, 4}, {kMax, kMax}, {3, kMax}, {kHuge / 2, 16}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, rows, cols,
                                                "2:4", nullptr, 0, nullptr, 0, &tensor),
                    SPARSEFLOW_STATUS_OUT_OF_MEMORY, "do not fit in 63 bits");
  }
  // 1 x INT64_MAX columns of 200:256: the slots fit, their 8-bit offsets do not.
  EXPECT_SF_ERROR(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 1, kMax,
                                              "levels[d0:dense, d1:nm(200,256)]", nullptr, 0,
                                              nullptr, 0, &tensor),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "at 8 metadata bits each, do not fit");
}

TEST(CapiSizes, LayerOfHugeEmptyWeightsIsRefusedNotAborted) {
  ContextPtr context = makeContext(1);
  SparseFlowTensor* raw = nullptr;
  // 2^62 x 0 is a valid, empty matrix; packing it for the GEMM would need 2^65 bytes.
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, kHuge, 0, "2:4",
                                           nullptr, 0, nullptr, 0, &raw));
  const TensorPtr weights(raw);
  SparseFlowLinear* layer = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), weights.get(), nullptr, 0, nullptr, &layer),
      SPARSEFLOW_STATUS_OUT_OF_MEMORY, "packing 2:4 weights 4611686018427387904x0");
  EXPECT_EQ(layer, nullptr);
}

TEST(CapiSizes, LayerWithNoOutputFeaturesWorks) {
  // 0 x 8 weights: nothing to pack (Highway's allocator aborts on a 0-byte request).
  ContextPtr context = makeContext(1);
  std::vector<float> values(1);
  std::vector<uint8_t> meta(1);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, 0, 8, "2:4",
                                           values.data(), 0, meta.data(), 0, &raw));
  const TensorPtr weights(raw);
  SparseFlowLinear* layerRaw = nullptr;
  ASSERT_SF_OK(
      sparseflow_linear_create(context.get(), weights.get(), nullptr, 0, "relu", &layerRaw));
  const LinearPtr layer(layerRaw);
  std::vector<float> x(3 * 8, 1.0f);
  float y = 0;
  ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, 3, x.data(), 24, &y, 0));
  int64_t out = -1;
  ASSERT_SF_OK(sparseflow_linear_get_out_features(layer.get(), &out));
  EXPECT_EQ(out, 0);
}

TEST(CapiSizes, BsrRowPointerCountThatOverflowsIsRefused) {
  ContextPtr context = makeContext(1);
  SparseFlowTensor* tensor = nullptr;
  const int64_t rowPtr[1] = {0};
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_bsr(context.get(), SPARSEFLOW_DTYPE_F32, kMax, 4, 1, 1,
                                   SPARSEFLOW_DTYPE_I64, rowPtr, nullptr, nullptr, 0, &tensor),
      SPARSEFLOW_STATUS_OUT_OF_MEMORY, "argument 'rows'", "too many block rows");
  // ceil(INT64_MAX / 2) block rows: computed without overflow, then the short array is refused.
  EXPECT_SF_ERROR(
      sparseflow_tensor_create_bsr(context.get(), SPARSEFLOW_DTYPE_F32, kMax, 4, 2, 2,
                                   SPARSEFLOW_DTYPE_I64, nullptr, nullptr, nullptr, 0, &tensor),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'block_row_ptr' is null",
      "4611686018427387905");
}

TEST(CapiSizes, DenseAndCopySizesThatOverflowAreRefused) {
  ContextPtr context = makeContext(1);
  SparseFlowTensor* tensor = nullptr;
  const int64_t shape[3] = {kHuge, 4, 2};
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 3, shape,
                                                 nullptr, 0, &tensor),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "more than 2^63 elements");
  // An empty COO tensor of a huge shape is fine; its dense copy is not.
  const int64_t cooShape[2] = {kHuge, kHuge};
  const int64_t* coords[2] = {nullptr, nullptr};
  ASSERT_SF_OK(sparseflow_tensor_create_coo(
      context.get(), SPARSEFLOW_DTYPE_F32, 2, cooShape, SPARSEFLOW_DTYPE_I64,
      reinterpret_cast<const void* const*>(coords), nullptr, 0, &tensor));
  const TensorPtr coo(tensor);
  double sink = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_copy_to_dense(context.get(), coo.get(), &sink, 1),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "more than 2^63 elements");
}

TEST(CapiSizes, BiasCountIsCheckedBeforeTheBiasIsRead) {
  ContextPtr context = makeContext(1);
  const std::vector<float> w = {1, 0, 2, 0, 0, 3, 0, 4};
  const int64_t shape[2] = {2, 4};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              w.data(), 8, &raw));
  const TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  const TensorPtr weights(raw);
  const float bias[2] = {1, 2};
  SparseFlowLinear* layer = nullptr;
  // A count far beyond the 2-element array: refused before any element is copied (ASan checks).
  EXPECT_SF_ERROR(
      sparseflow_linear_create(context.get(), weights.get(), bias, kHuge, "bias", &layer),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'bias_count' is 4611686018427387904",
      "2 output features");
  EXPECT_SF_ERROR(sparseflow_linear_create(context.get(), weights.get(), bias, 3, "bias", &layer),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'bias_count' is 3");
  EXPECT_EQ(layer, nullptr);
}

TEST(CapiSizes, ThreadCountsOpenMPCannotStartAreRefused) {
  ContextPtr context = makeContext(1);
  for (int32_t threads :
       {SPARSEFLOW_MAX_THREADS + 1, 100000, std::numeric_limits<int32_t>::max()}) {
    SCOPED_TRACE(threads);
    const std::string named = "argument 'threads' is " + std::to_string(threads);
    EXPECT_SF_ERROR(sparseflow_context_set_threads(context.get(), threads),
                    SPARSEFLOW_STATUS_INVALID_ARGUMENT, named.c_str(),
                    "SPARSEFLOW_MAX_THREADS = 4096");
  }
  int32_t threads = -1;
  ASSERT_SF_OK(sparseflow_context_get_threads(context.get(), &threads));
  EXPECT_EQ(threads, 1) << "a refused count leaves the setting as it was";
  ASSERT_SF_OK(sparseflow_context_set_threads(context.get(), SPARSEFLOW_MAX_THREADS));
  ASSERT_SF_OK(sparseflow_context_get_threads(context.get(), &threads));
  EXPECT_EQ(threads, SPARSEFLOW_MAX_THREADS);
}

TEST(CapiSizes, TensorsWithoutEntriesConvertToEveryFormat) {
  // An all-zero matrix has no entries to build from (found by fuzz_capi: the builder offset a null
  // coordinate pointer; its seed tests/fuzz/capi_seeds/convert_zero_matrix replays it).
  ContextPtr context = makeContext(1);
  const std::vector<float> zeros(2 * 8, 0.0f);
  const int64_t shape[2] = {2, 8};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              zeros.data(), 16, &raw));
  const TensorPtr dense(raw);
  for (const char* format : {"csr", "csc", "coo", "dcsr", "bsr:2x2", "ell", "hyb", "2:4"}) {
    SCOPED_TRACE(format);
    ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), dense.get(), format, &raw));
    const TensorPtr converted(raw);
    int64_t nnz = -1;
    ASSERT_SF_OK(sparseflow_tensor_get_nnz(converted.get(), &nnz));
    EXPECT_EQ(nnz, 0);
    EXPECT_EQ(denseOf(converted.get()), std::vector<double>(16, 0.0));
  }
}

TEST(CapiSizes, EmptyMatricesOfHugeRowCountsSparsifyAtOnce) {
  // 2^62 x 0 holds nothing: sparsify must not visit its rows (it looped over 2^48 chunks, and
  // the chunk count overflowed for INT64_MAX rows; found by fuzz_capi).
  ContextPtr context = makeContext(1);
  for (int64_t rows : {kHuge, kMax}) {
    SCOPED_TRACE(rows);
    SparseFlowTensor* raw = nullptr;
    ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, rows, 0, "2:4",
                                             nullptr, 0, nullptr, 0, &raw));
    const TensorPtr empty(raw);
    sparseflow_nm_impact impact;
    ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), empty.get(), "2:4", &raw, &impact));
    const TensorPtr sparsified(raw);
    EXPECT_EQ(impact.total, 0);
    EXPECT_EQ(impact.kept, 0);
    int64_t shape[2] = {-1, -1};
    ASSERT_SF_OK(sparseflow_tensor_get_shape(sparsified.get(), shape, 2));
    EXPECT_EQ(shape[0], rows);
    EXPECT_EQ(shape[1], 0);
  }
}

TEST(CapiSizes, EmptyMatricesOfHugeRowCountsConvertAtOnce) {
  // Nothing stored: converting must not expand 2^62 rows one by one (it grew without bound;
  // found by fuzz_capi).
  ContextPtr context = makeContext(1);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_nm(context.get(), SPARSEFLOW_DTYPE_F32, kHuge, 0, "2:4",
                                           nullptr, 0, nullptr, 0, &raw));
  const TensorPtr nm(raw);
  const int64_t shape[2] = {kHuge, 0};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              nullptr, 0, &raw));
  const TensorPtr dense(raw);
  for (const SparseFlowTensor* source : {nm.get(), dense.get()}) {
    for (const char* format : {"coo", "dcsr"}) {
      SCOPED_TRACE(format);
      ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), source, format, &raw));
      const TensorPtr converted(raw);
      int64_t stored = -1;
      ASSERT_SF_OK(sparseflow_tensor_get_stored(converted.get(), &stored));
      EXPECT_EQ(stored, 0);
    }
    // CSR needs 2^62 + 1 row positions: refused, not attempted.
    EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), source, "csr", &raw),
                    SPARSEFLOW_STATUS_OUT_OF_MEMORY);
  }
}

TEST(CapiSizes, HybOfAFewEntriesInHugeRowCountsIsRefusedByItsSize) {
  // Three entries in 2^40 rows: choosing hyb's ELL width counted entries per row in an array of
  // 2^40 counters (8 TB; found by fuzz_capi). The width now comes from the rows that hold
  // entries; the ELL part's 2^40 rows are then refused by the storage check, with a message.
  ContextPtr context = makeContext(1);
  const int64_t shape[2] = {int64_t{1} << 40, 8};
  const std::vector<int64_t> rows = {0, 5, int64_t{1} << 39}, cols = {1, 7, 3};
  const std::vector<float> values = {1.5f, -2.0f, 4.0f};
  const int64_t* coords[2] = {rows.data(), cols.data()};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_coo(
      context.get(), SPARSEFLOW_DTYPE_F32, 2, shape, SPARSEFLOW_DTYPE_I64,
      reinterpret_cast<const void* const*>(coords), values.data(), 3, &raw));
  const TensorPtr coo(raw);
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), coo.get(), "hyb", &raw),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "GB; this machine has");
}

TEST(CapiSizes, DensifyingMoreThanTheMachineHoldsIsANamedError) {
  // An empty 2^20 x 2^20 COO matrix: sparsify densifies it (8 TB as doubles). Refused by the
  // memory check with a message, before any allocation (found by fuzz_capi at 32 GB).
  ContextPtr context = makeContext(1);
  const int64_t shape[2] = {int64_t{1} << 20, int64_t{1} << 20};
  const int64_t* coords[2] = {nullptr, nullptr};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_coo(
      context.get(), SPARSEFLOW_DTYPE_F32, 2, shape, SPARSEFLOW_DTYPE_I64,
      reinterpret_cast<const void* const*>(coords), nullptr, 0, &raw));
  const TensorPtr coo(raw);
  sparseflow_nm_impact impact;
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), coo.get(), "2:4", &raw, &impact),
                  SPARSEFLOW_STATUS_OUT_OF_MEMORY, "a dense copy of the tensor would need",
                  "GB; this machine has");
}

TEST(CapiSizes, MatrixWithoutRowsButHugeWidthSparsifies) {
  // 0 x INT64_MAX: no values, but its per-row metadata bit count (2^62 slots x 2 bits) overflowed
  // (found by fuzz_capi).
  ContextPtr context = makeContext(1);
  const int64_t shape[2] = {0, kMax};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F64, 2, shape,
                                              nullptr, 0, &raw));
  const TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  const TensorPtr sparsified(raw);
  int64_t got[2] = {-1, -1}, stored = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_shape(sparsified.get(), got, 2));
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], kMax);
  ASSERT_SF_OK(sparseflow_tensor_get_stored(sparsified.get(), &stored));
  EXPECT_EQ(stored, 0);
  EXPECT_EQ(impact.total, 0);
}

TEST(CapiSizes, WidestCsrConvertsToBsr) {
  // INT64_MAX columns: the block count ceil(cols / 2) overflowed as (cols + 2 - 1) / 2 (found by
  // fuzz_capi).
  ContextPtr context = makeContext(1);
  const int64_t rowPtr[3] = {0, 1, 1}, colIdx[1] = {kMax - 1};
  const float values[1] = {2.5f};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, 2, kMax,
                                            SPARSEFLOW_DTYPE_I64, rowPtr, colIdx, values, 1, &raw));
  const TensorPtr csr(raw);
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), csr.get(), "bsr:2x2@i64", &raw));
  const TensorPtr bsr(raw);
  int64_t stored = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_stored(bsr.get(), &stored));
  EXPECT_EQ(stored, 4);  // one 2 x 2 block
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), bsr.get(), "csr@i64", &raw));
  const TensorPtr back(raw);
  const void* crd = nullptr;
  int64_t count = 0;
  sparseflow_dtype type;
  ASSERT_SF_OK(sparseflow_tensor_get_coordinates(back.get(), 1, &crd, &count, &type));
  ASSERT_EQ(count, 1);
  EXPECT_EQ(static_cast<const int64_t*>(crd)[0], kMax - 1);
}

}  // namespace
}  // namespace sparseflow_capi_test
