/* A compiled kernel from C99 through sparseflow.h alone: SpMV y = A·x on a real matrix file. */
/*
 * Usage: kernel_spmv MATRIX_FILE
 * Reads the matrix as CSR, compiles "y(i) = A(i,j) * x(j)" for CSR (written as its levels, a format
 * text with a comma, set through the kernel options of ABI 1.2) with a schedule, runs it on
 * x = (1, 2, 3, ...), and checks y against a float64 loop over the CSR arrays.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sparseflow/sparseflow.h"

#define CHECK(call)                                                                           \
  do {                                                                                        \
    sparseflow_status status_ = (call);                                                       \
    if (status_ != SPARSEFLOW_STATUS_OK) {                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, sparseflow_status_name(status_), \
              sparseflow_last_error());                                                       \
      goto cleanup;                                                                           \
    }                                                                                         \
  } while (0)

int main(int argc, char** argv) {
  SparseFlowContext* context = NULL;
  SparseFlowTensor* a = NULL;
  SparseFlowTensor* x = NULL;
  SparseFlowTensor* y = NULL;
  SparseFlowKernelOptions* options = NULL;
  SparseFlowKernel* kernel = NULL;
  float* xs = NULL;
  double* ys = NULL;
  const void* pos = NULL;
  const void* crd = NULL;
  const void* val = NULL;
  int64_t shape[2], count = 0, i, p;
  int32_t rank = 0;
  sparseflow_dtype type;
  const char* names[2] = {"A", "x"};
  const SparseFlowTensor* tensors[2];
  double worst = 0;
  int ok = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: %s MATRIX_FILE\n", argv[0]);
    return 2;
  }
  if (SPARSEFLOW_ABI_CHECK() != SPARSEFLOW_STATUS_OK) {
    fprintf(stderr, "%s\n", sparseflow_last_error());
    return 1;
  }
  CHECK(sparseflow_context_create(&context));
  CHECK(sparseflow_tensor_read(context, argv[1], "csr", SPARSEFLOW_DTYPE_F32, &a));
  CHECK(sparseflow_tensor_get_rank(a, &rank));
  CHECK(sparseflow_tensor_get_shape(a, shape, 2));
  xs = (float*)malloc((size_t)shape[1] * sizeof(float));
  ys = (double*)malloc((size_t)shape[0] * sizeof(double));
  if (xs == NULL || ys == NULL) goto cleanup;
  for (i = 0; i < shape[1]; ++i) xs[i] = (float)(i % 7 + 1);
  CHECK(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, &shape[1], xs, shape[1],
                                       &x));
  CHECK(sparseflow_kernel_options_create(&options));
  CHECK(sparseflow_kernel_options_set_format(options, "A", "levels[d0:dense, d1:compressed]"));
  CHECK(sparseflow_kernel_options_set_schedule(options, "split(i, i0, i1, 32); parallel(i0)"));
  CHECK(sparseflow_kernel_compile_with_options(context, "y(i) = A(i,j) * x(j)", options, &kernel));
  tensors[0] = a;
  tensors[1] = x;
  CHECK(sparseflow_kernel_run(context, kernel, names, tensors, 2, NULL, NULL, 0, &y));
  CHECK(sparseflow_tensor_copy_to_dense(context, y, ys, shape[0]));
  /* The reference, from A's own CSR arrays (int32 positions and coordinates, f32 values). */
  CHECK(sparseflow_tensor_get_positions(a, 1, &pos, &count, &type));
  CHECK(sparseflow_tensor_get_coordinates(a, 1, &crd, &count, &type));
  CHECK(sparseflow_tensor_get_values(a, &val, &count));
  for (i = 0; i < shape[0]; ++i) {
    double want = 0;
    for (p = ((const int32_t*)pos)[i]; p < ((const int32_t*)pos)[i + 1]; ++p) {
      want += (double)((const float*)val)[p] * xs[((const int32_t*)crd)[p]];
    }
    if (fabs(ys[i] - want) / (1.0 + fabs(want)) > worst)
      worst = fabs(ys[i] - want) / (1.0 + fabs(want));
  }
  printf("%s: %lld x %lld, %lld stored; spmv max relative error %.3g\n", argv[1],
         (long long)shape[0], (long long)shape[1], (long long)count, worst);
  ok = worst < 1e-4;
cleanup:
  sparseflow_kernel_destroy(kernel);
  sparseflow_kernel_options_destroy(options);
  sparseflow_tensor_destroy(y);
  sparseflow_tensor_destroy(x);
  sparseflow_tensor_destroy(a);
  sparseflow_context_destroy(context);
  free(xs);
  free(ys);
  return ok ? 0 : 1;
}
