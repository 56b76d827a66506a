/* A 2:4 sparse linear layer from C99 through sparseflow.h alone, checked against a naive loop. */
/*
 * Builds a small dense weight matrix in the program's own memory, prunes it to 2:4 (printing
 * what that cost), makes a layer y = gelu(x · Wᵀ + b) from the compressed weights, runs it and
 * compares every output with a float64 loop over the pruned weights. Exits 0 when they agree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sparseflow/sparseflow.h"

#define OUT_FEATURES 8
#define IN_FEATURES 16
#define BATCH 3

/* Reports a failed call with sparseflow's message and jumps to the cleanup. */
#define CHECK(call)                                                                           \
  do {                                                                                        \
    sparseflow_status status_ = (call);                                                       \
    if (status_ != SPARSEFLOW_STATUS_OK) {                                                    \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, sparseflow_status_name(status_), \
              sparseflow_last_error());                                                       \
      goto cleanup;                                                                           \
    }                                                                                         \
  } while (0)

/* A small deterministic generator: uniform values in [-1, 1). */
static double next_uniform(unsigned long* state) {
  *state = (*state * 1103515245ul + 12345ul) & 0x7ffffffful;
  return (double)*state / 1073741824.0 - 1.0;
}

/* GELU, the erf form, in float64. */
static double gelu(double v) {
  return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
}

int main(void) {
  float weights[OUT_FEATURES * IN_FEATURES];
  float bias[OUT_FEATURES];
  float x[BATCH * IN_FEATURES];
  float y[BATCH * OUT_FEATURES];
  double pruned[OUT_FEATURES * IN_FEATURES];
  const int64_t shape[2] = {OUT_FEATURES, IN_FEATURES};
  unsigned long seed = 2024;
  SparseFlowContext* context = NULL;
  SparseFlowTensor* dense = NULL;
  SparseFlowTensor* compressed = NULL;
  SparseFlowLinear* layer = NULL;
  sparseflow_nm_impact impact;
  char format[32];
  char plan[256];
  double max_error = 0.0;
  int exit_code = 1;
  int i, b, o, k;

  /* Refuse a library this program was not built for, before anything else. */
  if (SPARSEFLOW_ABI_CHECK() != SPARSEFLOW_STATUS_OK) {
    fprintf(stderr, "%s\n", sparseflow_last_error());
    return 1;
  }
  printf("sparseflow ABI %u.%u\n", (unsigned)(sparseflow_abi_version() >> 16),
         (unsigned)(sparseflow_abi_version() & 0xFFFFu));

  for (i = 0; i < OUT_FEATURES * IN_FEATURES; ++i) weights[i] = (float)next_uniform(&seed);
  for (i = 0; i < OUT_FEATURES; ++i) bias[i] = (float)(0.1 * next_uniform(&seed));
  for (i = 0; i < BATCH * IN_FEATURES; ++i) x[i] = (float)next_uniform(&seed);

  CHECK(sparseflow_context_create(&context));
  /* The weights stay in this program's array: the tensor views it without a copy. */
  CHECK(sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 2, shape, weights,
                                       OUT_FEATURES * IN_FEATURES, &dense));
  CHECK(sparseflow_nm_sparsify(context, dense, "2:4", &compressed, &impact));
  CHECK(sparseflow_tensor_get_format(compressed, format, sizeof format, NULL));
  printf(
      "pruned to %s: kept %lld of %lld weights, %.2f%% of the magnitude; max abs error %.4f, "
      "mean abs error %.4f, relative Frobenius error %.4f\n",
      format, (long long)impact.kept, (long long)impact.total,
      100.0 * impact.kept_magnitude_fraction, impact.max_abs_error, impact.mean_abs_error,
      impact.relative_frobenius_error);

  CHECK(sparseflow_linear_create(context, compressed, bias, OUT_FEATURES, "bias+gelu", &layer));
  CHECK(sparseflow_linear_describe(layer, BATCH, plan, sizeof plan, NULL));
  printf("layer %dx%d, bias+gelu, batch %d: %s\n", OUT_FEATURES, IN_FEATURES, BATCH, plan);
  CHECK(sparseflow_linear_run(layer, SPARSEFLOW_DTYPE_F32, BATCH, x, BATCH * IN_FEATURES, y,
                              BATCH * OUT_FEATURES));

  /* The reference: the same layer as a float64 loop over the pruned weights. */
  CHECK(sparseflow_tensor_copy_to_dense(context, compressed, pruned, OUT_FEATURES * IN_FEATURES));
  for (b = 0; b < BATCH; ++b) {
    printf("y[%d] =", b);
    for (o = 0; o < OUT_FEATURES; ++o) {
      double acc = bias[o], error;
      for (k = 0; k < IN_FEATURES; ++k)
        acc += (double)x[b * IN_FEATURES + k] * pruned[o * IN_FEATURES + k];
      error = fabs(gelu(acc) - (double)y[b * OUT_FEATURES + o]);
      if (error > max_error) max_error = error;
      printf(" %8.5f", (double)y[b * OUT_FEATURES + o]);
    }
    printf("\n");
  }
  printf("max abs difference from the float64 loop: %.3g\n", max_error);
  if (max_error > 1e-5) {
    fprintf(stderr, "the layer and the float64 loop disagree\n");
    goto cleanup;
  }
  exit_code = 0;

cleanup:
  /* Destroying NULL is allowed, so one cleanup serves every exit. */
  sparseflow_linear_destroy(layer);
  sparseflow_tensor_destroy(compressed);
  sparseflow_tensor_destroy(dense);
  sparseflow_context_destroy(context);
  return exit_code;
}
