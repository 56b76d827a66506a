/* The C structs shared by generated kernels and the runtime. This file is also embedded, as is,
 * into the prelude of every generated kernel at build time (src/codegen/c/CMakeLists.txt), so the
 * two can never disagree. C99 and C++ compatible; append fields only at the end. */
#ifndef SPARSEFLOW_RUNTIME_ABI_H_
#define SPARSEFLOW_RUNTIME_ABI_H_

#include <stdint.h>

#define SF_KERNEL_ABI_VERSION 2
#define SF_MAX_LEVELS 8

/* One tensor argument: its values and, per storage level, the arrays that level kind stores
 * (null where it stores none). Index arrays are int32 or int64 as the format says. */
typedef struct sf_tensor_arg {
  void* values;
  const void* pos[SF_MAX_LEVELS];
  const void* crd[SF_MAX_LEVELS];
  const uint8_t* meta[SF_MAX_LEVELS];
  int64_t slots[SF_MAX_LEVELS]; /* fixed(k) levels: k, the slots per parent (ell's width) */
} sf_tensor_arg;

/* What an entry point returns (values stable, appended only). */
#define SF_KERNEL_OK 0
/* A scratch workspace could not be allocated: the output is incomplete. */
#define SF_KERNEL_OUT_OF_MEMORY 1

/* Generated kernels fork threads only when the inputs store at least this many entries. */
#define SF_PARALLEL_MIN_WORK 32768

/* The entry point of a generated kernel: tensors (output first), the extent of each index
 * variable followed by the number of entries the inputs store (then, for a kernel with a hash
 * workspace, its size), and the scalar parameters, in the orders the kernel's description lists.
 * Returns
 * SF_KERNEL_OK or another SF_KERNEL_ status. (Version 1 returned nothing: a workspace that could
 * not be allocated went unreported.) */
typedef int32_t (*sf_kernel_entry)(const sf_tensor_arg* tensors, const int64_t* extents,
                                   const double* params);

#define SF_KERNEL_ENTRY_NAME "sf_kernel_main"
/* Kernels that assemble a sparse output also export this first phase: it writes the number of
 * output entries under each parent position p of the assembled level to pos[p + 1]. */
#define SF_KERNEL_SYMBOLIC_ENTRY_NAME "sf_kernel_symbolic"

#endif /* SPARSEFLOW_RUNTIME_ABI_H_ */
