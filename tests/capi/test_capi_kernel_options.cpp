// The C ABI's kernel options (ABI 1.2) and the NAME=VALUE lists of sparseflow_kernel_compile:
// format texts with commas ("levels[d0:dense, d1:compressed]", "nm(2,4)") bound both ways, run
// against a float64 reference, and the errors that name the setting or list item at fault.
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

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
struct OptionsDeleter {
  void operator()(SparseFlowKernelOptions* o) const { sparseflow_kernel_options_destroy(o); }
};
using OptionsPtr = std::unique_ptr<SparseFlowKernelOptions, OptionsDeleter>;

OptionsPtr makeOptions() {
  SparseFlowKernelOptions* raw = nullptr;
  EXPECT_EQ(sparseflow_kernel_options_create(&raw), SPARSEFLOW_STATUS_OK);
  return OptionsPtr(raw);
}

std::string formatBinding(const SparseFlowKernelOptions* options, const char* name) {
  size_t size = 0;
  EXPECT_EQ(sparseflow_kernel_options_get_format(options, name, nullptr, 0, &size),
            SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  std::string text(size, '\0');
  EXPECT_EQ(sparseflow_kernel_options_get_format(options, name, text.data(), size, nullptr),
            SPARSEFLOW_STATUS_OK);
  text.resize(size - 1);
  return text;
}

std::string descriptionOf(const SparseFlowKernel* kernel) {
  size_t size = 0;
  EXPECT_EQ(sparseflow_kernel_get_description(kernel, nullptr, 0, &size), SPARSEFLOW_STATUS_OK);
  std::string text(size, '\0');
  EXPECT_EQ(sparseflow_kernel_get_description(kernel, text.data(), size, nullptr),
            SPARSEFLOW_STATUS_OK);
  text.resize(size - 1);
  return text;
}

/// y = A x on SmallMatrix (as caller CSR arrays) with `kernel`, checked against float64.
void expectSpmvMatches(SparseFlowContext* context, const SparseFlowKernel* kernel) {
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context, SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  const TensorPtr A(raw);
  const std::vector<float> x = {0.5f, -1, 2, 0.25f, 3, -0.75f};
  const int64_t shape[1] = {m.cols};
  ASSERT_SF_OK(
      sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, shape, x.data(), 6, &raw));
  const TensorPtr X(raw);
  const char* names[2] = {"A", "x"};
  const SparseFlowTensor* tensors[2] = {A.get(), X.get()};
  ASSERT_SF_OK(
      sparseflow_kernel_run(context, kernel, names, tensors, 2, nullptr, nullptr, 0, &raw));
  const TensorPtr y(raw);
  const std::vector<double> dense = m.dense(), got = denseOf(y.get());
  ASSERT_EQ(got.size(), 4u);
  for (int64_t i = 0; i < m.rows; ++i) {
    double want = 0;
    for (int64_t j = 0; j < m.cols; ++j) want += dense[i * m.cols + j] * x[j];
    EXPECT_NEAR(got[i], want, 1e-6) << "row " << i;
  }
}

TEST(CapiKernelOptions, DefaultsAndEverySettingRoundTrip) {
  OptionsPtr options = makeOptions();
  SparseFlowKernelOptions* o = options.get();
  int32_t flag = -1;
  sparseflow_dtype dtype = -1;
  EXPECT_EQ(formatBinding(o, "A"), "");
  ASSERT_SF_OK(sparseflow_kernel_options_get_dtype(o, "A", &dtype));
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_F32);
  for (auto get : {sparseflow_kernel_options_get_parallel, sparseflow_kernel_options_get_use_cache,
                   sparseflow_kernel_options_get_hand_tuned}) {
    ASSERT_SF_OK(get(o, &flag));
    EXPECT_EQ(flag, 1);
  }
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(o, "A", "levels[d0:dense, d1:compressed]"));
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(o, "W_2", "nm(2,4)"));
  ASSERT_SF_OK(sparseflow_kernel_options_set_dtype(o, "x", SPARSEFLOW_DTYPE_F64));
  ASSERT_SF_OK(sparseflow_kernel_options_set_schedule(o, "split(i, i0, i1, 2); parallel(i0)"));
  ASSERT_SF_OK(sparseflow_kernel_options_set_parallel(o, 0));
  ASSERT_SF_OK(sparseflow_kernel_options_set_use_cache(o, 0));
  ASSERT_SF_OK(sparseflow_kernel_options_set_hand_tuned(o, 0));
  EXPECT_EQ(formatBinding(o, "A"), "levels[d0:dense, d1:compressed]");
  EXPECT_EQ(formatBinding(o, "W_2"), "nm(2,4)");
  ASSERT_SF_OK(sparseflow_kernel_options_get_dtype(o, "x", &dtype));
  EXPECT_EQ(dtype, SPARSEFLOW_DTYPE_F64);
  char schedule[64];
  ASSERT_SF_OK(sparseflow_kernel_options_get_schedule(o, schedule, sizeof schedule, nullptr));
  EXPECT_STREQ(schedule, "split(i, i0, i1, 2); parallel(i0)");
  for (auto get : {sparseflow_kernel_options_get_parallel, sparseflow_kernel_options_get_use_cache,
                   sparseflow_kernel_options_get_hand_tuned}) {
    ASSERT_SF_OK(get(o, &flag));
    EXPECT_EQ(flag, 0);
  }
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(o, "A", "csr"));  // replaces
  EXPECT_EQ(formatBinding(o, "A"), "csr");
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(o, "A", nullptr));  // removes
  EXPECT_EQ(formatBinding(o, "A"), "");
  ASSERT_SF_OK(sparseflow_kernel_options_set_schedule(o, nullptr));
  ASSERT_SF_OK(sparseflow_kernel_options_get_schedule(o, schedule, sizeof schedule, nullptr));
  EXPECT_STREQ(schedule, "");
}

TEST(CapiKernelOptions, SettersNameWhatIsWrong) {
  OptionsPtr options = makeOptions();
  SparseFlowKernelOptions* o = options.get();
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_format(o, nullptr, "csr"),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'tensor_name' is null");
  for (const char* bad : {"", "1A", "A B", "A=csr", "A,B"}) {
    const std::string named = "argument 'tensor_name' is '" + std::string(bad) + "'";
    EXPECT_SF_ERROR(sparseflow_kernel_options_set_format(o, bad, "csr"),
                    SPARSEFLOW_STATUS_INVALID_ARGUMENT, named.c_str(), "a letter or '_'");
  }
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_dtype(o, "A", SPARSEFLOW_DTYPE_I32),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'dtype' is 4");
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_parallel(o, 2), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'parallel' is 2; it must be 0 or 1");
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_use_cache(o, -1),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'use_cache' is -1");
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_hand_tuned(nullptr, 1),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'options' is null");
  EXPECT_SF_ERROR(sparseflow_kernel_options_create(nullptr), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'options' is null");
  int32_t* noFlag = nullptr;
  EXPECT_SF_ERROR(sparseflow_kernel_options_get_parallel(o, noFlag),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'parallel' is null");
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(o, "A", "bsr:4x4"));
  char small[4];
  size_t size = 0;
  EXPECT_SF_ERROR(sparseflow_kernel_options_get_format(o, "A", small, sizeof small, &size),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "too small");
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(sparseflow_kernel_options_destroy(nullptr), SPARSEFLOW_STATUS_OK);
}

TEST(CapiKernelOptions, FormatWithCommasCompilesAndRuns) {
  ContextPtr context = makeContext(1);
  OptionsPtr options = makeOptions();
  ASSERT_SF_OK(
      sparseflow_kernel_options_set_format(options.get(), "A", "levels[d0:dense, d1:compressed]"));
  ASSERT_SF_OK(sparseflow_kernel_options_set_schedule(options.get(), "split(i, i0, i1, 2)"));
  SparseFlowKernel* raw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile_with_options(context.get(), "y(i) = A(i,j) * x(j)",
                                                      options.get(), &raw));
  const KernelPtr kernel(raw);
  // The kernel copied the options: changing or destroying them does not touch it.
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(options.get(), "A", "coo"));
  options.reset();
  EXPECT_NE(descriptionOf(kernel.get()).find("A: csr"), std::string::npos)
      << descriptionOf(kernel.get());
  expectSpmvMatches(context.get(), kernel.get());

  // No options: the defaults (all dense); a CSR input is converted.
  ASSERT_SF_OK(
      sparseflow_kernel_compile_with_options(context.get(), "y(i) = A(i,j) * x(j)", nullptr, &raw));
  const KernelPtr dense(raw);
  EXPECT_NE(descriptionOf(dense.get()).find("A: dense"), std::string::npos)
      << descriptionOf(dense.get());
  expectSpmvMatches(context.get(), dense.get());
}

TEST(CapiKernelOptions, CompileErrorsNameTheTensor) {
  ContextPtr context = makeContext(1);
  OptionsPtr options = makeOptions();
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(options.get(), "Q", "csr"));
  SparseFlowKernel* raw = nullptr;
  EXPECT_SF_ERROR(sparseflow_kernel_compile_with_options(context.get(), "y(i) = A(i,j) * x(j)",
                                                         options.get(), &raw),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "format given for 'Q'", "does not use");
  EXPECT_EQ(raw, nullptr);
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile_with_options(context.get(), nullptr, options.get(), &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'text' is null");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile_with_options(nullptr, "y(i) = A(i,j) * x(j)", options.get(), &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'context' is null");
}

TEST(CapiKernelLists, BracketsAndParenthesesKeepTheirCommas) {
  ContextPtr context = makeContext(1);
  SparseFlowKernel* raw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), "y(i) = A(i,j) * x(j)",
                                         " A = levels[d0:dense, d1:compressed] ,, x=dense ",
                                         "x=f32, A=f32", "split(i, i0, i1, 2)", &raw));
  const KernelPtr kernel(raw);
  EXPECT_NE(descriptionOf(kernel.get()).find("A: csr"), std::string::npos)
      << descriptionOf(kernel.get());
  expectSpmvMatches(context.get(), kernel.get());
}

TEST(CapiKernelLists, MalformedListsNameTheItem) {
  ContextPtr context = makeContext(1);
  const char* text = "y(i) = A(i,j) * x(j)";
  SparseFlowKernel* raw = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, "x=dense, A=levels[d0:dense, d1:compressed",
                                nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'formats'",
      "item 'A=levels[d0:dense, d1:compressed' leaves '[' unclosed");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, "A=csr], x=dense", nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "item 'A=csr]' has an unmatched ']'");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, "A=levels[d0:dense, d1:nm(2,4]), x=dense",
                                nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "has an unmatched ']'");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, "A=csr, =dense", nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "item '=dense' is not NAME=VALUE");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, "A=csr, A=coo", nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "binds 'A' twice");
  EXPECT_SF_ERROR(
      sparseflow_kernel_compile(context.get(), text, nullptr, "A=f64, x", nullptr, &raw),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'dtypes'", "item 'x' is not NAME=VALUE");
  EXPECT_EQ(raw, nullptr);
}

}  // namespace
}  // namespace sparseflow_capi_test
