// docs/capi.md's kernel example: ctx, a = west0067 (csr), x = 67 ones; y must come back.
// doc-test files: west0067.mtx=data/suitesparse/LAGraph/data/west0067.mtx
SparseFlowContext* ctx = NULL;
SparseFlowTensor *a = NULL, *x = NULL;
float ones[67];
const int64_t x_shape[1] = {67};
for (int k = 0; k < 67; ++k) ones[k] = 1.0f;
if (sparseflow_context_create(&ctx) != SPARSEFLOW_STATUS_OK ||
    sparseflow_tensor_read(ctx, "west0067.mtx", "csr", SPARSEFLOW_DTYPE_F32, &a) !=
        SPARSEFLOW_STATUS_OK ||
    sparseflow_tensor_create_dense(ctx, SPARSEFLOW_DTYPE_F32, 1, x_shape, ones, 67, &x) !=
        SPARSEFLOW_STATUS_OK) {
  fprintf(stderr, "%s\n", sparseflow_last_error());
  return 1;
}
// doc-test: after
int64_t stored = 0;
if (k == NULL || y == NULL || sparseflow_tensor_get_stored(y, &stored) != SPARSEFLOW_STATUS_OK ||
    stored != 67) {
  fprintf(stderr, "the kernel did not run: %s\n", sparseflow_last_error());
  return 1;
}
sparseflow_tensor_destroy(y);
sparseflow_kernel_destroy(k);
sparseflow_tensor_destroy(x);
sparseflow_tensor_destroy(a);
sparseflow_context_destroy(ctx);
