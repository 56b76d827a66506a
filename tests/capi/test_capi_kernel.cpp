// The C ABI's compiled kernels: compile, run on caller-buffer tensors against a float64
// reference, inspect, and the errors (bad bindings, bad text, unknown tensors) with their messages.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

struct KernelDeleter {
  void operator()(SparseFlowKernel* k) const { sparseflow_kernel_destroy(k); }
};
using KernelPtr = std::unique_ptr<SparseFlowKernel, KernelDeleter>;

std::string textOf(sparseflow_status (*get)(const SparseFlowKernel*, char*, size_t, size_t*),
                   const SparseFlowKernel* k) {
  size_t size = 0;
  EXPECT_EQ(get(k, nullptr, 0, &size), SPARSEFLOW_STATUS_OK) << sparseflow_last_error();
  std::string text(size, '\0');
  EXPECT_EQ(get(k, text.data(), text.size() + 1, &size), SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  return text;
}

TEST(CapiKernel, SpmvOnCallerCsrMatchesReference) {
  ContextPtr context = makeContext(2);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1, 1);
  const int64_t rows = 57, cols = 43;
  std::vector<int32_t> rowPtr{0}, colIdx;
  std::vector<float> vals;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (rng() % 5 == 0) {
        colIdx.push_back(static_cast<int32_t>(j));
        vals.push_back(value(rng));
      }
    }
    rowPtr.push_back(static_cast<int32_t>(colIdx.size()));
  }
  std::vector<float> x(cols);
  for (float& v : x) v = value(rng);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, rows, cols,
                                            SPARSEFLOW_DTYPE_I32, rowPtr.data(), colIdx.data(),
                                            vals.data(), static_cast<int64_t>(vals.size()), &raw));
  const TensorPtr A(raw);
  const int64_t xShape[1] = {cols};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 1, xShape,
                                              x.data(), cols, &raw));
  const TensorPtr X(raw);

  SparseFlowKernel* kraw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), "y(i) = alpha * A(i,j) * x(j)", "A=csr",
                                         nullptr, "split(i, i0, i1, 16); parallel(i0)", &kraw));
  const KernelPtr kernel(kraw);
  const char* names[2] = {"A", "x"};
  const SparseFlowTensor* tensors[2] = {A.get(), X.get()};
  const char* paramNames[1] = {"alpha"};
  const double params[1] = {-1.5};
  ASSERT_SF_OK(sparseflow_kernel_run(context.get(), kernel.get(), names, tensors, 2, paramNames,
                                     params, 1, &raw));
  const TensorPtr y(raw);
  const std::vector<double> got = denseOf(y.get());
  ASSERT_EQ(got.size(), static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    double want = 0;
    for (int32_t p = rowPtr[i]; p < rowPtr[i + 1]; ++p)
      want += -1.5 * vals[p] * double(x[colIdx[p]]);
    EXPECT_NEAR(got[i], want, 1e-5 * (1 + std::fabs(want))) << "row " << i;
  }
  EXPECT_NE(textOf(sparseflow_kernel_get_source, kernel.get()).find("sf_kernel_main"),
            std::string::npos);
  EXPECT_NE(textOf(sparseflow_kernel_get_ir, kernel.get()).find("for v_i0 in"), std::string::npos);
  EXPECT_NE(textOf(sparseflow_kernel_get_description, kernel.get()).find("A: csr"),
            std::string::npos);
}

TEST(CapiKernel, RunIntoCallerMemoryAndTheProvider) {
  // C = relu(A·B + b) with A csr: the hand-tuned provider, written straight into the caller's
  // array (`=` overwrites it); `+=` adds into it; a wrong output shape is an error naming it.
  ContextPtr context = makeContext(2);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1, 1);
  const int64_t rows = 41, inner = 29, cols = 13;
  std::vector<int32_t> rowPtr{0}, colIdx;
  std::vector<float> vals;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < inner; ++k) {
      if (rng() % 4 == 0) {
        colIdx.push_back(static_cast<int32_t>(k));
        vals.push_back(value(rng));
      }
    }
    rowPtr.push_back(static_cast<int32_t>(colIdx.size()));
  }
  std::vector<float> b(static_cast<size_t>(inner * cols)), bias(cols);
  for (float& v : b) v = value(rng);
  for (float& v : bias) v = value(rng);
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, rows, inner,
                                            SPARSEFLOW_DTYPE_I32, rowPtr.data(), colIdx.data(),
                                            vals.data(), static_cast<int64_t>(vals.size()), &raw));
  const TensorPtr A(raw);
  const int64_t bShape[2] = {inner, cols}, biasShape[1] = {cols}, cShape[2] = {rows, cols};
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, bShape,
                                              b.data(), inner * cols, &raw));
  const TensorPtr B(raw);
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 1, biasShape,
                                              bias.data(), cols, &raw));
  const TensorPtr Bias(raw);
  std::vector<float> c(static_cast<size_t>(rows * cols), 7.0f);
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, cShape,
                                              c.data(), rows * cols, &raw));
  const TensorPtr C(raw);
  std::vector<double> want(c.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double acc = bias[static_cast<size_t>(j)];
      for (int32_t p = rowPtr[i]; p < rowPtr[i + 1]; ++p)
        acc += double(vals[p]) * b[static_cast<size_t>(colIdx[p] * cols + j)];
      want[static_cast<size_t>(i * cols + j)] = std::max(acc, 0.0);
    }
  }
  const char* names[3] = {"A", "B", "b"};
  const SparseFlowTensor* tensors[3] = {A.get(), B.get(), Bias.get()};
  for (const char* text :
       {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", "C(i,j) += relu(A(i,k) * B(k,j) + b(j))"}) {
    SCOPED_TRACE(text);
    const bool add = std::string(text).find("+=") != std::string::npos;
    SparseFlowKernel* kraw = nullptr;
    ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), text, "A=csr", nullptr, nullptr, &kraw));
    const KernelPtr kernel(kraw);
    EXPECT_STREQ(textOf(sparseflow_kernel_get_provider, kernel.get()).c_str(), "csr_spmm");
    std::fill(c.begin(), c.end(), 7.0f);
    ASSERT_SF_OK(sparseflow_kernel_run_into(context.get(), kernel.get(), names, tensors, 3, nullptr,
                                            nullptr, 0, C.get()));
    for (size_t e = 0; e < c.size(); ++e) {
      const double expected = want[e] + (add ? 7.0 : 0.0);
      ASSERT_NEAR(c[e], expected, 1e-5 * (1 + std::fabs(expected))) << "element " << e;
    }
  }
  SparseFlowKernel* kraw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), "C(i,j) = abs(A(i,k) * B(k,j))", "A=csr",
                                         nullptr, nullptr, &kraw));
  const KernelPtr generated(kraw);
  EXPECT_STREQ(textOf(sparseflow_kernel_get_provider, generated.get()).c_str(), "generated");
  const SparseFlowTensor* two[2] = {A.get(), B.get()};
  EXPECT_EQ(sparseflow_kernel_run_into(context.get(), generated.get(), names, two, 2, nullptr,
                                       nullptr, 0, B.get()),
            SPARSEFLOW_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sparseflow_last_error()).find("also the output"), std::string::npos)
      << sparseflow_last_error();
  const int64_t wrongShape[2] = {rows, cols + 1};
  std::vector<float> wrong(static_cast<size_t>(rows * (cols + 1)));
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, wrongShape,
                                              wrong.data(), rows * (cols + 1), &raw));
  const TensorPtr Wrong(raw);
  EXPECT_EQ(sparseflow_kernel_run_into(context.get(), generated.get(), names, two, 2, nullptr,
                                       nullptr, 0, Wrong.get()),
            SPARSEFLOW_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sparseflow_last_error()).find("output 'C' has the wrong shape"),
            std::string::npos)
      << sparseflow_last_error();
}

TEST(CapiKernel, ErrorsNameTheCulprit) {
  ContextPtr context = makeContext(1);
  SparseFlowKernel* k = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * ", "A=csr", nullptr, nullptr, &k),
      SPARSEFLOW_STATUS_PARSE_ERROR, "line 1, column");
  EXPECT_EQ(k, nullptr);
  EXPECT_SF_ERROR(sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * x(j)", "A:csr", nullptr,
                                            nullptr, &k),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'formats'", "NAME=VALUE");
  EXPECT_SF_ERROR(sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * x(j)", "A=csr", "A=f65",
                                            nullptr, &k),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "f65");
  EXPECT_SF_ERROR(sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * x(j)", "A=csr", nullptr,
                                            "parallel(q)", &k),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "no loop named 'q'");
  EXPECT_SF_ERROR(sparseflow_kernel_compile(context.get(), nullptr, nullptr, nullptr, nullptr, &k),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'text'");
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * x(j)", " A = csr ",
                                         nullptr, nullptr, &k));
  const KernelPtr kernel(k);
  SparseFlowTensor* out = nullptr;
  const char* names[1] = {"A"};
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  const TensorPtr A(raw);
  const SparseFlowTensor* tensors[1] = {A.get()};
  EXPECT_SF_ERROR(sparseflow_kernel_run(context.get(), kernel.get(), names, tensors, 1, nullptr,
                                        nullptr, 0, &out),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'x'");
  EXPECT_EQ(out, nullptr);
  const char* wrong[1] = {"Z"};
  EXPECT_SF_ERROR(sparseflow_kernel_run(context.get(), kernel.get(), wrong, tensors, 1, nullptr,
                                        nullptr, 0, &out),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'Z'");
  EXPECT_SF_ERROR(
      sparseflow_kernel_run(context.get(), nullptr, names, tensors, 1, nullptr, nullptr, 0, &out),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'kernel'");
  EXPECT_EQ(sparseflow_kernel_destroy(nullptr), SPARSEFLOW_STATUS_OK);
}

}  // namespace
}  // namespace sparseflow_capi_test
