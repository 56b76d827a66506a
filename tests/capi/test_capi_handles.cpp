// The C ABI's handle checks: every kind of handle used after its destroy, destroyed twice, passed
// as another kind, or never made by sparseflow gets INVALID_ARGUMENT naming the argument, never
// undefined behaviour (the ASan build runs these too: no handle memory is read after its destroy).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"

namespace sparseflow_capi_test {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

SparseFlowTensor* denseVector(SparseFlowContext* context, const std::vector<float>& values) {
  const int64_t shape[1] = {static_cast<int64_t>(values.size())};
  SparseFlowTensor* tensor = nullptr;
  EXPECT_EQ(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, shape, values.data(),
                                           shape[0], &tensor),
            SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  return tensor;
}

TEST(CapiHandles, DestroyedContextIsNamed) {
  SparseFlowContext* context = nullptr;
  ASSERT_SF_OK(sparseflow_context_create(&context));
  ASSERT_SF_OK(sparseflow_context_destroy(context));
  int32_t threads = 0;
  EXPECT_SF_ERROR(sparseflow_context_get_threads(context, &threads),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'context' is not a live SparseFlowContext: it is a destroyed "
                  "SparseFlowContext");
  EXPECT_SF_ERROR(sparseflow_context_set_threads(context, 1), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed");
  EXPECT_SF_ERROR(sparseflow_context_destroy(context), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "sparseflow_context_destroy", "destroyed SparseFlowContext");
  const std::vector<float> values = {1, 2};
  const int64_t shape[1] = {2};
  SparseFlowTensor* tensor = nullptr;
  EXPECT_SF_ERROR(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, shape,
                                                 values.data(), 2, &tensor),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'context'", "destroyed");
  EXPECT_EQ(tensor, nullptr);
}

TEST(CapiHandles, DestroyedTensorIsNamedEverywhere) {
  ContextPtr context = makeContext(1);
  const std::vector<float> values = {1, 2, 3};
  SparseFlowTensor* tensor = denseVector(context.get(), values);
  ASSERT_NE(tensor, nullptr);
  ASSERT_SF_OK(sparseflow_tensor_destroy(tensor));
  // The next tensor made must not make the old pointer valid again.
  const TensorPtr next(denseVector(context.get(), values));
  EXPECT_NE(next.get(), tensor);
  int32_t rank = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_rank(tensor, &rank), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'tensor' is not a live SparseFlowTensor: it is a destroyed "
                  "SparseFlowTensor");
  SparseFlowTensor* converted = nullptr;
  EXPECT_SF_ERROR(sparseflow_tensor_convert(context.get(), tensor, "coo", &converted),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'tensor'", "destroyed");
  EXPECT_EQ(converted, nullptr);
  std::vector<double> dense(3);
  EXPECT_SF_ERROR(sparseflow_tensor_copy_to_dense(context.get(), tensor, dense.data(), 3),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "destroyed");
  EXPECT_SF_ERROR(sparseflow_tensor_destroy(tensor), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed SparseFlowTensor");
  sparseflow_nm_impact impact;
  EXPECT_SF_ERROR(sparseflow_nm_sparsify(context.get(), tensor, "2:4", &converted, &impact),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'dense'", "destroyed");
  SparseFlowLinear* layer = nullptr;
  EXPECT_SF_ERROR(sparseflow_linear_create(context.get(), tensor, nullptr, 0, nullptr, &layer),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'weights'", "destroyed");
  // The live tensor made after it still works.
  EXPECT_EQ(denseOf(next.get()), (std::vector<double>{1, 2, 3}));
}

TEST(CapiHandles, DestroyedLayerIsNamed) {
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
  SparseFlowLinear* layer = nullptr;
  ASSERT_SF_OK(sparseflow_linear_create(context.get(), weights.get(), nullptr, 0, "relu", &layer));
  ASSERT_SF_OK(sparseflow_linear_destroy(layer));
  std::vector<float> x(4, 1.0f), y(2, -1.0f);
  EXPECT_SF_ERROR(sparseflow_linear_run(layer, SPARSEFLOW_DTYPE_F32, 1, x.data(), 4, y.data(), 2),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'layer' is not a live SparseFlowLinear: it is a destroyed "
                  "SparseFlowLinear");
  EXPECT_EQ(y, (std::vector<float>{-1.0f, -1.0f})) << "nothing may be written";
  int64_t features = 0;
  EXPECT_SF_ERROR(sparseflow_linear_get_out_features(layer, &features),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "destroyed");
  EXPECT_SF_ERROR(sparseflow_linear_destroy(layer), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed SparseFlowLinear");
}

TEST(CapiHandles, DestroyedKernelAndOptionsAreNamed) {
  ContextPtr context = makeContext(1);
  SparseFlowKernelOptions* options = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_options_create(&options));
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(options, "A", "csr"));
  SparseFlowKernel* kernel = nullptr;
  // CSR SpMM runs the hand-tuned kernel: no compiler needed.
  ASSERT_SF_OK(sparseflow_kernel_compile_with_options(context.get(), "C(i,j) = A(i,k) * B(k,j)",
                                                      options, &kernel));
  ASSERT_SF_OK(sparseflow_kernel_options_destroy(options));
  EXPECT_SF_ERROR(sparseflow_kernel_options_set_schedule(options, "parallel(i)"),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'options' is not a live SparseFlowKernelOptions: it is a destroyed "
                  "SparseFlowKernelOptions");
  SparseFlowKernel* again = nullptr;
  EXPECT_SF_ERROR(sparseflow_kernel_compile_with_options(context.get(), "C(i,j) = A(i,k) * B(k,j)",
                                                         options, &again),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "'options'", "destroyed");
  EXPECT_EQ(again, nullptr);
  EXPECT_SF_ERROR(sparseflow_kernel_options_destroy(options), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed");

  ASSERT_SF_OK(sparseflow_kernel_destroy(kernel));
  SparseFlowTensor* out = nullptr;
  EXPECT_SF_ERROR(
      sparseflow_kernel_run(context.get(), kernel, nullptr, nullptr, 0, nullptr, nullptr, 0, &out),
      SPARSEFLOW_STATUS_INVALID_ARGUMENT,
      "argument 'kernel' is not a live SparseFlowKernel: it is a destroyed "
      "SparseFlowKernel");
  size_t size = 0;
  EXPECT_SF_ERROR(sparseflow_kernel_get_source(kernel, nullptr, 0, &size),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "destroyed");
  EXPECT_SF_ERROR(sparseflow_kernel_destroy(kernel), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed SparseFlowKernel");
}

TEST(CapiHandles, DestroyedTensorInsideAnArrayArgumentIsNamed) {
  ContextPtr context = makeContext(1);
  SparseFlowKernel* raw = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(), "C(i,j) = A(i,k) * B(k,j)", "A=csr",
                                         nullptr, nullptr, &raw));
  std::unique_ptr<SparseFlowKernel, decltype(&sparseflow_kernel_destroy)> kernel(
      raw, sparseflow_kernel_destroy);
  SmallMatrix m;
  SparseFlowTensor* a = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &a));
  const TensorPtr A(a);
  const std::vector<float> bValues(static_cast<size_t>(m.cols * 2), 1.0f);
  const int64_t bShape[2] = {m.cols, 2};
  SparseFlowTensor* b = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, bShape,
                                              bValues.data(), m.cols * 2, &b));
  ASSERT_SF_OK(sparseflow_tensor_destroy(b));
  const char* names[2] = {"A", "B"};
  const SparseFlowTensor* tensors[2] = {A.get(), b};
  SparseFlowTensor* out = nullptr;
  EXPECT_SF_ERROR(sparseflow_kernel_run(context.get(), kernel.get(), names, tensors, 2, nullptr,
                                        nullptr, 0, &out),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT, "argument 'tensors[1]'", "destroyed");
  EXPECT_EQ(out, nullptr);
}

TEST(CapiHandles, WrongKindAndForeignPointersAreNamed) {
  ContextPtr context = makeContext(1);
  const std::vector<float> values = {1, 2};
  const TensorPtr tensor(denseVector(context.get(), values));
  int32_t threads = 0;
  EXPECT_SF_ERROR(sparseflow_context_get_threads(
                      reinterpret_cast<const SparseFlowContext*>(tensor.get()), &threads),
                  SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'context' is not a live SparseFlowContext: it is a SparseFlowTensor");
  // Pointers sparseflow never made: a stack variable, a heap block, a misaligned address.
  int32_t onStack = 0;
  std::vector<uint64_t> onHeap(16, 0);
  const void* foreign[3] = {&onStack, onHeap.data(),
                            reinterpret_cast<const char*>(onHeap.data()) + 3};
  for (const void* pointer : foreign) {
    int32_t rank = 0;
    EXPECT_SF_ERROR(
        sparseflow_tensor_get_rank(static_cast<const SparseFlowTensor*>(pointer), &rank),
        SPARSEFLOW_STATUS_INVALID_ARGUMENT,
        "argument 'tensor' is not a live SparseFlowTensor: sparseflow did not make it");
    EXPECT_SF_ERROR(
        sparseflow_tensor_destroy(static_cast<SparseFlowTensor*>(const_cast<void*>(pointer))),
        SPARSEFLOW_STATUS_INVALID_ARGUMENT, "sparseflow did not make it");
  }
  EXPECT_EQ(onStack, 0);
  EXPECT_EQ(onHeap, std::vector<uint64_t>(16, 0)) << "foreign memory must not be written";
}

TEST(CapiHandles, ManyCreateDestroyCyclesStayBoundedAndChecked) {
  // More cycles than the quarantine holds: old handles leave it and read as never made (their
  // memory is reused), recent ones read as destroyed; live ones keep working throughout.
  ContextPtr context = makeContext(1);
  const std::vector<float> values = {4, 5};
  const TensorPtr keeper(denseVector(context.get(), values));
  SparseFlowTensor* first = denseVector(context.get(), values);
  ASSERT_SF_OK(sparseflow_tensor_destroy(first));
  SparseFlowTensor* last = nullptr;
  for (int i = 0; i < 3000; ++i) {
    last = denseVector(context.get(), values);
    ASSERT_NE(last, nullptr);
    ASSERT_SF_OK(sparseflow_tensor_destroy(last));
  }
  int32_t rank = 0;
  EXPECT_SF_ERROR(sparseflow_tensor_get_rank(last, &rank), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "destroyed");
  // The oldest pointer left the quarantine; its address may have served a later (destroyed)
  // tensor since. Either way it is refused without being read.
  EXPECT_SF_ERROR(sparseflow_tensor_get_rank(first, &rank), SPARSEFLOW_STATUS_INVALID_ARGUMENT,
                  "argument 'tensor' is not a live SparseFlowTensor");
  EXPECT_EQ(denseOf(keeper.get()), (std::vector<double>{4, 5}));
}

}  // namespace
}  // namespace sparseflow_capi_test
