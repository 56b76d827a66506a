/* Formats from C99 through sparseflow.h alone: zero-copy CSR, conversions, files and errors. */
/*
 * Usage: convert MATRIX_FILE OUTPUT_DIR
 * Wraps a CSR matrix held in this program's arrays, converts it to CSC and reads the arrays
 * back; reads MATRIX_FILE, converts it to bsr:4x4, writes it as .sft into OUTPUT_DIR, reads
 * that back and checks that the values survived; shows the message a refused conversion gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Prints a tensor's one-line summary, sized by a query first. */
static sparseflow_status print_summary(const char* label, const SparseFlowTensor* tensor) {
  size_t size = 0;
  char* text;
  sparseflow_status status = sparseflow_tensor_get_summary(tensor, NULL, 0, &size);
  if (status != SPARSEFLOW_STATUS_OK) return status;
  text = (char*)malloc(size);
  if (text == NULL) return SPARSEFLOW_STATUS_OUT_OF_MEMORY;
  status = sparseflow_tensor_get_summary(tensor, text, size, NULL);
  if (status == SPARSEFLOW_STATUS_OK) printf("%s: %s\n", label, text);
  free(text);
  return status;
}

int main(int argc, char** argv) {
  /* [[1 0 2], [0 0 3], [4 5 0]] in CSR, in this program's memory. */
  const int32_t row_ptr[4] = {0, 2, 3, 5};
  const int32_t col_idx[5] = {0, 2, 2, 0, 1};
  const float values[5] = {1, 2, 3, 4, 5};
  SparseFlowContext* context = NULL;
  SparseFlowTensor* csr = NULL;
  SparseFlowTensor* csc = NULL;
  SparseFlowTensor* matrix = NULL;
  SparseFlowTensor* blocked = NULL;
  SparseFlowTensor* reloaded = NULL;
  SparseFlowTensor* refused = NULL;
  double* expected = NULL;
  double* actual = NULL;
  const void* pos;
  const void* crd;
  const void* stored;
  int64_t pos_count, crd_count, stored_count, shape[2], elements, i;
  sparseflow_dtype pos_type, crd_type;
  char path[4096];
  int exit_code = 1;

  if (argc != 3) {
    fprintf(stderr, "usage: %s MATRIX_FILE OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  if (SPARSEFLOW_ABI_CHECK() != SPARSEFLOW_STATUS_OK) {
    fprintf(stderr, "%s\n", sparseflow_last_error());
    return 1;
  }
  CHECK(sparseflow_context_create(&context));

  CHECK(sparseflow_tensor_create_csr(context, SPARSEFLOW_DTYPE_F32, 3, 3, SPARSEFLOW_DTYPE_I32,
                                     row_ptr, col_idx, values, 5, &csr));
  CHECK(sparseflow_tensor_convert(context, csr, "csc", &csc));
  CHECK(sparseflow_tensor_get_positions(csc, 1, &pos, &pos_count, &pos_type));
  CHECK(sparseflow_tensor_get_coordinates(csc, 1, &crd, &crd_count, &crd_type));
  CHECK(sparseflow_tensor_get_values(csc, &stored, &stored_count));
  if (pos_type != SPARSEFLOW_DTYPE_I32 || crd_type != SPARSEFLOW_DTYPE_I32) goto cleanup;
  printf("csc col_ptr:");
  for (i = 0; i < pos_count; ++i) printf(" %d", ((const int32_t*)pos)[i]);
  printf("  row_idx:");
  for (i = 0; i < crd_count; ++i) printf(" %d", ((const int32_t*)crd)[i]);
  printf("  values:");
  for (i = 0; i < stored_count; ++i) printf(" %g", (double)((const float*)stored)[i]);
  printf("\n");

  CHECK(sparseflow_tensor_read(context, argv[1], NULL, SPARSEFLOW_DTYPE_F64, &matrix));
  CHECK(print_summary("read", matrix));
  CHECK(sparseflow_tensor_convert(context, matrix, "bsr:4x4", &blocked));
  CHECK(print_summary("converted", blocked));
  snprintf(path, sizeof path, "%s/convert_example.sft", argv[2]);
  CHECK(sparseflow_tensor_write(context, blocked, path));
  CHECK(sparseflow_tensor_read(context, path, NULL, SPARSEFLOW_DTYPE_F64, &reloaded));
  CHECK(print_summary("reloaded", reloaded));

  CHECK(sparseflow_tensor_get_shape(matrix, shape, 2));
  elements = shape[0] * shape[1];
  expected = (double*)malloc((size_t)elements * sizeof(double));
  actual = (double*)malloc((size_t)elements * sizeof(double));
  if (expected == NULL || actual == NULL) goto cleanup;
  CHECK(sparseflow_tensor_copy_to_dense(context, matrix, expected, elements));
  CHECK(sparseflow_tensor_copy_to_dense(context, reloaded, actual, elements));
  if (memcmp(expected, actual, (size_t)elements * sizeof(double)) != 0) {
    fprintf(stderr, "the values changed on the way through bsr:4x4 and .sft\n");
    goto cleanup;
  }
  printf("values unchanged through bsr:4x4 and .sft\n");

  /* A format that cannot hold the data is refused with a message saying where. */
  if (sparseflow_tensor_convert(context, matrix, "1:8", &refused) == SPARSEFLOW_STATUS_OK) {
    fprintf(stderr, "1:8 unexpectedly held the matrix\n");
    goto cleanup;
  }
  printf("1:8 refused: %s\n", sparseflow_last_error());
  exit_code = 0;

cleanup:
  free(expected);
  free(actual);
  sparseflow_tensor_destroy(refused);
  sparseflow_tensor_destroy(reloaded);
  sparseflow_tensor_destroy(blocked);
  sparseflow_tensor_destroy(matrix);
  sparseflow_tensor_destroy(csc);
  sparseflow_tensor_destroy(csr);
  sparseflow_context_destroy(context);
  return exit_code;
}
