// The C ABI's tensors beyond creation: ownership of derived tensors, files, conversion and the
// attribute getters, each with the errors a C caller can cause; linked against libsparseflow.so.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

const std::string kWest0067 =
    std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/west0067.mtx";

// ---- results never borrow the caller's memory ----

TEST(CapiOwnership, ConvertedAndSparsifiedTensorsOutliveTheCallersArrays) {
  ContextPtr context = makeContext();
  auto m = std::make_unique<SmallMatrix>();
  const std::vector<double> expected = m->dense();
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m->rows, m->cols,
                                            SPARSEFLOW_DTYPE_I32, m->rowPtr.data(),
                                            m->colIdx.data(), m->values.data(), 7, &raw));
  TensorPtr source(raw);
  SparseFlowTensor* same = nullptr;
  SparseFlowTensor* csc = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), source.get(), "csr", &same));
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), source.get(), "csc", &csc));
  TensorPtr sameOwner(same), cscOwner(csc);
  source.reset();
  m.reset();  // the caller frees its arrays
  EXPECT_EQ(denseOf(same), expected);
  EXPECT_EQ(denseOf(csc), expected);

  auto w = std::make_unique<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  const int64_t shape[2] = {2, 4};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              w->data(), 8, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  TensorPtr compressed(raw);
  dense.reset();
  w.reset();
  EXPECT_EQ(denseOf(compressed.get()), (std::vector<double>{0, 0, 3, 4, 0, 0, 7, 8}));
}

// ---- files ----

TEST(CapiFiles, ReadConvertWriteReadBack) {
  ContextPtr context = makeContext(1);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_read(context.get(), kWest0067.c_str(), nullptr,
                                      SPARSEFLOW_DTYPE_F64, &raw));
  TensorPtr matrix(raw);
  EXPECT_EQ(formatOf(matrix.get()), "csr");
  int64_t shape[2] = {0, 0}, nnz = 0;
  sparseflow_dtype dtype = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_shape(matrix.get(), shape, 2));
  ASSERT_SF_OK(sparseflow_tensor_get_nnz(matrix.get(), &nnz));
  ASSERT_SF_OK(sparseflow_tensor_get_dtype(matrix.get(), &dtype));
  EXPECT_EQ(shape[0], 67);
  EXPECT_EQ(shape[1], 67);
  EXPECT_EQ(nnz, 294);
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_F64);
  const std::vector<double> expected = denseOf(matrix.get());

  ASSERT_SF_OK(sparseflow_tensor_read(context.get(), kWest0067.c_str(), "bsr:4x4",
                                      SPARSEFLOW_DTYPE_F64, &raw));
  TensorPtr blocked(raw);
  EXPECT_EQ(formatOf(blocked.get()), "bsr:4x4");
  EXPECT_EQ(denseOf(blocked.get()), expected);

  for (const char* name : {"w.sft", "w.mtx", "w.npy"}) {
    SCOPED_TRACE(name);
    const std::string path = tempPath(name);
    ASSERT_SF_OK(sparseflow_tensor_write(context.get(), blocked.get(), path.c_str()));
    ASSERT_SF_OK(
        sparseflow_tensor_read(context.get(), path.c_str(), "", SPARSEFLOW_DTYPE_F64, &raw));
    TensorPtr back(raw);
    EXPECT_EQ(denseOf(back.get()), expected);
    std::remove(path.c_str());
  }
}

TEST(CapiFiles, ErrorsNameTheFile) {
  ContextPtr context = makeContext();
  SparseFlowTensor* raw = nullptr;
  const std::string missing = tempPath("does_not_exist.mtx");
  EXPECT_SF_ERROR(
      sparseflow_tensor_read(context.get(), missing.c_str(), nullptr, SPARSEFLOW_DTYPE_F32, &raw),
      SPARSEFLOW_STATUS_IO_ERROR, "sparseflow_tensor_read", missing.c_str());
  EXPECT_EQ(raw, nullptr);
  const std::string garbage = tempPath("garbage.mtx");
  if (FILE* f = std::fopen(garbage.c_str(), "w")) {
    std::fputs("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 2.0\n", f);
    std::fclose(f);
  }
  EXPECT_SF_ERROR(
      sparseflow_tensor_read(context.get(), garbage.c_str(), nullptr, SPARSEFLOW_DTYPE_F32, &raw),
      SPARSEFLOW_STATUS_PARSE_ERROR, garbage.c_str());
  std::remove(garbage.c_str());
  EXPECT_SF_ERROR(
      sparseflow_tensor_read(context.get(), kWest0067.c_str(), "bogus", SPARSEFLOW_DTYPE_F32, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "unknown format 'bogus'");
  EXPECT_SF_ERROR(
      sparseflow_tensor_read(context.get(), nullptr, nullptr, SPARSEFLOW_DTYPE_F32, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'path' is null");
  EXPECT_SF_ERROR(
      sparseflow_tensor_read(context.get(), kWest0067.c_str(), nullptr, SPARSEFLOW_DTYPE_I64, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'dtype'");

  ASSERT_SF_OK(sparseflow_tensor_read(context.get(), kWest0067.c_str(), nullptr,
                                      SPARSEFLOW_DTYPE_F32, &raw));
  TensorPtr matrix(raw);
  const std::string noKind = tempPath("w.xyz");
  EXPECT_SF_ERROR(sparseflow_tensor_write(context.get(), matrix.get(), noKind.c_str()),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, noKind.c_str(), "extension");
  const std::string noDir = "/nonexistent-sparseflow-dir/w.sft";
  EXPECT_SF_ERROR(sparseflow_tensor_write(context.get(), matrix.get(), noDir.c_str()),
                  SPARSEFLOW_STATUS_IO_ERROR, "nonexistent-sparseflow-dir");
  EXPECT_SF_ERROR(sparseflow_tensor_write(context.get(), nullptr, noKind.c_str()),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'tensor' is null");
  EXPECT_SF_ERROR(sparseflow_tensor_write(context.get(), matrix.get(), nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'path' is null");
}

// ---- conversion and attributes ----

TEST(CapiConvert, FormatsRoundTripAndRefusalsSayWhy) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  TensorPtr csr(raw);
  for (const char* format : {"csc", "coo", "dcsr", "bsr:2x2", "ell", "hyb", "dense", "csr@i64",
                             "levels[d0:dense, d1:compressed]"}) {
    SCOPED_TRACE(format);
    ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), csr.get(), format, &raw));
    TensorPtr converted(raw);
    EXPECT_EQ(denseOf(converted.get()), m.dense());
  }
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), csr.get(), "bogus", &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "sparseflow_tensor_convert",
                  "unknown format 'bogus'");
  EXPECT_EQ(raw, nullptr);
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), csr.get(), "1:4", &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "1:4");
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), csr.get(), nullptr, &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'format' is null");
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), nullptr, "csc", &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'tensor' is null");
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), csr.get(), "csc", nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'result' is null");
}

TEST(CapiAttributes, StringsAndSizes) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  TensorPtr csr(raw);
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), csr.get(), "bsr:2x3", &raw));
  TensorPtr bsr(raw);
  size_t size = 0;
  ASSERT_SF_OK(sparseflow_tensor_get_format(bsr.get(), nullptr, 0, &size));
  EXPECT_EQ(size, 8u);  // "bsr:2x3" and the NUL
  char small[4] = {'x', 'x', 'x', 'x'};
  size = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_format(bsr.get(), small, sizeof small, &size),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "4 bytes is too small", "8 bytes");
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(small[0], 'x');  // nothing written
  char exact[8];
  ASSERT_SF_OK(sparseflow_tensor_get_format(bsr.get(), exact, sizeof exact, nullptr));
  EXPECT_STREQ(exact, "bsr:2x3");
  EXPECT_SF_ERROR(sparseflow_tensor_get_format(bsr.get(), nullptr, 0, nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'buffer' and 'size' are both null");
  ASSERT_SF_OK(sparseflow_tensor_get_summary(bsr.get(), nullptr, 0, &size));
  std::string summary(size, '\0');
  ASSERT_SF_OK(sparseflow_tensor_get_summary(bsr.get(), summary.data(), size, nullptr));
  EXPECT_NE(summary.find("4x6 bsr:2x3"), std::string::npos) << summary;

  int64_t stored = 0, nnz = 0, shape[1];
  ASSERT_SF_OK(sparseflow_tensor_get_stored(bsr.get(), &stored));
  ASSERT_SF_OK(sparseflow_tensor_get_nnz(bsr.get(), &nnz));
  EXPECT_GT(stored, nnz);  // blocks pad with zeros
  EXPECT_EQ(nnz, 7);
  EXPECT_SF_ERROR(sparseflow_tensor_get_shape(bsr.get(), shape, 1),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'capacity' is 1", "rank 2");
  std::vector<double> dense(23);
  EXPECT_SF_ERROR(sparseflow_tensor_copy_to_dense(context.get(), bsr.get(), dense.data(), 23),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'count' is 23", "24 elements");
  for (auto* getter :
       {sparseflow_tensor_get_stored, sparseflow_tensor_get_nnz, sparseflow_tensor_get_bytes}) {
    EXPECT_EQ(getter(bsr.get(), nullptr), SPARSEFLOW_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(getter(nullptr, &stored), SPARSEFLOW_STATUS_INVALID_ARGUMENT);
  }
  int32_t rank = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_rank(nullptr, &rank), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'tensor' is null");
  sparseflow_dtype dtype = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_dtype(bsr.get(), nullptr),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'dtype' is null");
  EXPECT_EQ(sparseflow_tensor_get_dtype(nullptr, &dtype), SPARSEFLOW_STATUS_INVALID_ARGUMENT);
}

TEST(CapiAttributes, HybridTensorsHideTheirParts) {
  ContextPtr context = makeContext();
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  TensorPtr csr(raw);
  ASSERT_SF_OK(sparseflow_tensor_convert(context.get(), csr.get(), "hyb:1", &raw));
  TensorPtr hyb(raw);
  int32_t levels = -1;
  ASSERT_SF_OK(sparseflow_tensor_get_num_levels(hyb.get(), &levels));
  EXPECT_EQ(levels, 0);
  const void* data = nullptr;
  int64_t count = 0, nnz = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_values(hyb.get(), &data, &count),
                  SPARSEFLOW_STATUS_NOT_SUPPORTED, "hybrid");
  sparseflow_dtype type = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_positions(hyb.get(), 0, &data, &count, &type),
                  SPARSEFLOW_STATUS_NOT_SUPPORTED, "hybrid");
  ASSERT_SF_OK(sparseflow_tensor_get_nnz(hyb.get(), &nnz));
  EXPECT_EQ(nnz, 7);
  EXPECT_EQ(denseOf(hyb.get()), m.dense());
}

}  // namespace
}  // namespace sparseflow_capi_test
