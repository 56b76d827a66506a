/* sparseflow's stable C ABI: opaque handles, status codes, version checks (C99 and C++). */
/*
 * The rules (versioning, status codes, ownership, lifetimes, threads) are in docs/capi.md; the
 * short form:
 *
 * - Every function is prefixed `sparseflow_` and returns a sparseflow_status, except the three
 *   that cannot fail: sparseflow_abi_version, sparseflow_status_name and sparseflow_last_error.
 * - A failed call returns a nonzero status and leaves a message naming the culprit (argument,
 *   file and line, format text...) in sparseflow_last_error(); output handles are set to NULL.
 *   No C++ exception and no abort crosses this boundary, whatever the input.
 * - Objects are opaque handles made by a *_create / *_read / *_convert / *_sparsify call and
 *   released by the matching *_destroy, which accepts NULL. Calls that create objects or work on
 *   tensors take a SparseFlowContext first; attribute getters take only the object.
 *
 * Thread safety:
 * - sparseflow_last_error() is per thread: each thread sees the message of its own last call.
 * - A SparseFlowContext may be used by any number of threads at once, set_threads included.
 * - A SparseFlowTensor is immutable once created: any number of threads may read, convert,
 *   write, sparsify or query the same tensor at once.
 * - A SparseFlowLinear may be run from any number of threads at once (each with its own y) and
 *   gives the same results, bit for bit, as serial runs.
 * - A SparseFlowKernel may be run from any number of threads at once; each run returns a new
 *   output tensor, the same as serial runs give.
 * - A SparseFlowKernelOptions may be set and used to compile from any number of threads at once
 *   (each compile reads a consistent snapshot).
 * - A context's thread count is applied to the calling thread only (OpenMP's per-thread setting,
 *   restored on return): a program that runs its own threads can give each call 1 thread.
 * - Destroying an object must not race with any other use of that object.
 *
 * Handles are checked before they are read: NULL, a destroyed handle, a handle of another kind
 * or a pointer sparseflow never made gives SPARSEFLOW_STATUS_INVALID_ARGUMENT naming the
 * argument (and, for a recently destroyed one, saying so), never undefined behaviour.
 */
#ifndef SPARSEFLOW_SPARSEFLOW_H_
#define SPARSEFLOW_SPARSEFLOW_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define SPARSEFLOW_API __attribute__((visibility("default")))
#else
#define SPARSEFLOW_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------------- */

/// What every function returns: 0 (SPARSEFLOW_STATUS_OK) or why the call failed. A fixed-width
/// integer rather than an enum type, so that codes a newer library appends keep the ABI.
typedef int32_t sparseflow_status;

/// The status values: those of sparseflow::ErrorCode, stable, appended only, never renumbered.
/// Treat any nonzero value, including ones a newer library adds, as a failure.
enum sparseflow_status_code {
  SPARSEFLOW_STATUS_OK = 0,
  SPARSEFLOW_STATUS_INVALID_ARGUMENT = 1,  ///< a bad argument: null handle, size, format text
  SPARSEFLOW_STATUS_PARSE_ERROR = 2,       ///< a malformed file or text; names file and line
  SPARSEFLOW_STATUS_IO_ERROR = 3,          ///< a file could not be opened, read or written
  SPARSEFLOW_STATUS_NOT_SUPPORTED = 4,     ///< a valid request sparseflow does not support (yet)
  SPARSEFLOW_STATUS_OUT_OF_RANGE = 5,      ///< an index or coordinate outside its dimension
  SPARSEFLOW_STATUS_INVALID_FORMAT = 6,    ///< arrays that break their format's invariants
  SPARSEFLOW_STATUS_INTERNAL = 7,          ///< a sparseflow bug; the message says where
  SPARSEFLOW_STATUS_COMPILE_ERROR = 8,     ///< the JIT compiler failed or is missing
  SPARSEFLOW_STATUS_OUT_OF_MEMORY = 9      ///< an allocation failed or a size would overflow
};

/// The stable name of a status ("invalid argument"), "unknown error" for other values. Never
/// fails; the string is static.
SPARSEFLOW_API const char* sparseflow_status_name(sparseflow_status status);

/// The message of this thread's most recent failed call, or "" when its most recent call
/// succeeded (every call but this one and the two above clears it first). Valid until this
/// thread's next sparseflow call; copy it to keep it. Never NULL.
SPARSEFLOW_API const char* sparseflow_last_error(void);

/* ---------------------------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------------------------- */

/// The ABI this header describes. MAJOR changes break programs built against an older header;
/// MINOR versions only add functions and enum values, so a library of the same MAJOR and an equal
/// or higher MINOR runs every program built against this header.
#define SPARSEFLOW_ABI_VERSION_MAJOR 1
#define SPARSEFLOW_ABI_VERSION_MINOR 3

/// MAJOR and MINOR packed as (MAJOR << 16) | MINOR, as sparseflow_abi_version() returns them.
#define SPARSEFLOW_ABI_VERSION \
  ((uint32_t)(((uint32_t)SPARSEFLOW_ABI_VERSION_MAJOR << 16) | SPARSEFLOW_ABI_VERSION_MINOR))

/// Nonzero when a library reporting `library_version` (a sparseflow_abi_version() value) can run
/// a program compiled against this header: same MAJOR, MINOR at least this header's (written
/// `+ 1 >` so that MINOR 0 draws no always-true warning).
#define SPARSEFLOW_ABI_COMPATIBLE(library_version)                          \
  ((((uint32_t)(library_version)) >> 16) == SPARSEFLOW_ABI_VERSION_MAJOR && \
   (((uint32_t)(library_version)) & 0xFFFFu) + 1u > SPARSEFLOW_ABI_VERSION_MINOR)

/// The library's ABI version, packed as SPARSEFLOW_ABI_VERSION is. Never fails.
SPARSEFLOW_API uint32_t sparseflow_abi_version(void);

/// Refuses a library that cannot run a program built against `header_version`: returns
/// SPARSEFLOW_STATUS_NOT_SUPPORTED with a message giving both versions when they are not
/// compatible. Call it first, through SPARSEFLOW_ABI_CHECK().
SPARSEFLOW_API sparseflow_status sparseflow_abi_check(uint32_t header_version);

/// `if (SPARSEFLOW_ABI_CHECK() != SPARSEFLOW_STATUS_OK) { puts(sparseflow_last_error()); ... }`
#define SPARSEFLOW_ABI_CHECK() sparseflow_abi_check(SPARSEFLOW_ABI_VERSION)

/* ---------------------------------------------------------------------------------------------
 * Element types
 * ------------------------------------------------------------------------------------------- */

/// An element type, a fixed-width integer holding one of the values below.
typedef int32_t sparseflow_dtype;

/// Element types; the values are sparseflow::DType's and are stable. Tensor values are f32, f64,
/// f16 or bf16 (the 16-bit types as their raw uint16_t bits); indices are i32 or i64.
enum sparseflow_dtype_code {
  SPARSEFLOW_DTYPE_F32 = 0,
  SPARSEFLOW_DTYPE_F64 = 1,
  SPARSEFLOW_DTYPE_F16 = 2,
  SPARSEFLOW_DTYPE_BF16 = 3,
  SPARSEFLOW_DTYPE_I32 = 4,
  SPARSEFLOW_DTYPE_I64 = 5,
  SPARSEFLOW_DTYPE_U8 = 6
};

/* ---------------------------------------------------------------------------------------------
 * Handles
 * ------------------------------------------------------------------------------------------- */

/// Settings for the calls that create objects or work on tensors, which take it first: the number
/// of OpenMP threads they use (a layer keeps it for its runs). Objects copy what they need: a
/// context may be destroyed while objects made with it live.
typedef struct SparseFlowContext SparseFlowContext;
/// A tensor: shape, value type, format and arrays (its own, or views of the caller's memory).
typedef struct SparseFlowTensor SparseFlowTensor;
/// A linear layer with 2:4 sparse weights: y = epilogue(x · Wᵀ + b), prepared once.
typedef struct SparseFlowLinear SparseFlowLinear;

/// A kernel compiled from index notation (ABI 1.1): run on named tensors, any shapes.
typedef struct SparseFlowKernel SparseFlowKernel;
/// How to compile a kernel (ABI 1.2): formats and dtypes by tensor name, schedule, switches.
typedef struct SparseFlowKernelOptions SparseFlowKernelOptions;

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

/// A new context with threads = 0 (OpenMP's default: all cores).
SPARSEFLOW_API sparseflow_status sparseflow_context_create(SparseFlowContext** context);
/// Releases a context; NULL is accepted and ignored.
SPARSEFLOW_API sparseflow_status sparseflow_context_destroy(SparseFlowContext* context);
/// The most threads a context accepts (ABI 1.2); OpenMP's thread limit (OMP_THREAD_LIMIT) may
/// lower it.
#define SPARSEFLOW_MAX_THREADS 4096

/// Threads that later calls with this context use (read, write, convert, copy_to_dense, sparsify,
/// kernel runs, and the runs of layers created with it); 0 means OpenMP's default. Negative values
/// and more than min(SPARSEFLOW_MAX_THREADS, omp_get_thread_limit()) are refused
/// (SPARSEFLOW_STATUS_INVALID_ARGUMENT).
SPARSEFLOW_API sparseflow_status sparseflow_context_set_threads(SparseFlowContext* context,
                                                                int32_t threads);
/// The thread count set (0: OpenMP's default).
SPARSEFLOW_API sparseflow_status sparseflow_context_get_threads(const SparseFlowContext* context,
                                                                int32_t* threads);

/* ---------------------------------------------------------------------------------------------
 * Tensors from the caller's arrays, without copying
 *
 * The tensor keeps the caller's pointers: the arrays must stay valid and unchanged until
 * sparseflow_tensor_destroy(tensor) returns. sparseflow never writes through them. Everything
 * derived from such a tensor (convert, sparsify, a linear layer) owns its own memory and may
 * outlive the arrays. The arrays are validated on creation (sizes, sorted and in-range indices,
 * n:m metadata); a violation is SPARSEFLOW_STATUS_INVALID_FORMAT naming the level and position.
 * `dtype` is the value type (f32, f64, f16, bf16); `index_dtype` is i32 or i64 and applies to
 * every index array of the call. Counts are elements, not bytes.
 * ------------------------------------------------------------------------------------------- */

/// A dense row-major tensor of any rank >= 1: `values` holds value_count = prod(shape) elements.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_dense(
    SparseFlowContext* context, sparseflow_dtype dtype, int32_t rank, const int64_t* shape,
    const void* values, int64_t value_count, SparseFlowTensor** tensor);

/// A rows × cols CSR matrix: row_ptr (rows + 1), col_idx (nnz, sorted and unique within each row),
/// values (nnz).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_csr(
    SparseFlowContext* context, sparseflow_dtype dtype, int64_t rows, int64_t cols,
    sparseflow_dtype index_dtype, const void* row_ptr, const void* col_idx, const void* values,
    int64_t nnz, SparseFlowTensor** tensor);

/// A rows × cols CSC matrix: col_ptr (cols + 1), row_idx (nnz, sorted and unique within each
/// column), values (nnz).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_csc(
    SparseFlowContext* context, sparseflow_dtype dtype, int64_t rows, int64_t cols,
    sparseflow_dtype index_dtype, const void* col_ptr, const void* row_idx, const void* values,
    int64_t nnz, SparseFlowTensor** tensor);

/// A COO tensor of any rank >= 1: coords[d] points at nnz coordinates of dimension d; entries
/// sorted lexicographically (row-major order) without duplicates. Only the coordinate arrays are
/// kept; the array of `rank` pointers itself may be freed after the call.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_coo(
    SparseFlowContext* context, sparseflow_dtype dtype, int32_t rank, const int64_t* shape,
    sparseflow_dtype index_dtype, const void* const* coords, const void* values, int64_t nnz,
    SparseFlowTensor** tensor);

/// A rows × cols BSR matrix of block_rows × block_cols blocks: block_row_ptr (ceil(rows /
/// block_rows) + 1), block_col_idx (num_blocks, sorted and unique per block row), values
/// (num_blocks × block_rows × block_cols, each block row-major; edge blocks padded with zeros).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_bsr(
    SparseFlowContext* context, sparseflow_dtype dtype, int64_t rows, int64_t cols,
    int64_t block_rows, int64_t block_cols, sparseflow_dtype index_dtype, const void* block_row_ptr,
    const void* block_col_idx, const void* values, int64_t num_blocks, SparseFlowTensor** tensor);

/// A rows × cols n:m matrix (`pattern` "2:4", "1:4", "2:8"...; n of every m columns stored):
/// values holds rows × ceil(cols / m) × n elements, group by group; meta the in-group offset of
/// each value slot, increasing within a group, packed little-endian at 2 bits (m <= 4), 4 bits
/// (m <= 16) or 8 bits per slot: meta_bytes = ceil(slots × bits / 8). These are the arrays
/// sparseflow_nm_sparsify produces (docs/formats.md).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_create_nm(
    SparseFlowContext* context, sparseflow_dtype dtype, int64_t rows, int64_t cols,
    const char* pattern, const void* values, int64_t value_count, const uint8_t* meta,
    int64_t meta_bytes, SparseFlowTensor** tensor);

/* ---------------------------------------------------------------------------------------------
 * Files, conversion, release
 * ------------------------------------------------------------------------------------------- */

/// Reads a file of any kind sparseflow reads (.mtx, Harwell-Boeing, .tns, .smtx, .npy, .sft), with
/// values of `dtype`, in `format` ("csr", "bsr:4x4", "2:4"...; NULL or "": as stored for .sft,
/// dense for dense files, csr for other matrices, coo for other tensors). Errors name the file.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_read(SparseFlowContext* context,
                                                        const char* path, const char* format,
                                                        sparseflow_dtype dtype,
                                                        SparseFlowTensor** tensor);
/// Writes a tensor; the kind comes from the extension (.mtx, .tns, .smtx, .npy, .sft). The write
/// is atomic: a failed write leaves no partial file.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_write(SparseFlowContext* context,
                                                         const SparseFlowTensor* tensor,
                                                         const char* path);
/// The same tensor in another format (any format text of docs/formats.md: "csc", "bsr:4x4", "ell",
/// "hyb", "2:4", "coo@i64"...). Exact: a format that cannot hold the data is an error naming the
/// first place that does not fit.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_convert(SparseFlowContext* context,
                                                           const SparseFlowTensor* tensor,
                                                           const char* format,
                                                           SparseFlowTensor** result);
/// The tensor as a dense row-major array of doubles (exact for every value type): `count` must
/// be prod(shape).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_copy_to_dense(SparseFlowContext* context,
                                                                 const SparseFlowTensor* tensor,
                                                                 double* values, int64_t count);
/// Releases a tensor; NULL is accepted and ignored.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_destroy(SparseFlowTensor* tensor);

/* ---------------------------------------------------------------------------------------------
 * Tensor attributes
 *
 * Strings are copied into the caller's buffer: pass buffer = NULL to learn the size needed
 * (including the terminating NUL) in *size; a buffer smaller than that is refused with
 * SPARSEFLOW_STATUS_INVALID_ARGUMENT, *size still set. `size` may be NULL when buffer is not.
 * Array pointers stay valid until the tensor is destroyed.
 * ------------------------------------------------------------------------------------------- */

/// Number of dimensions.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_rank(const SparseFlowTensor* tensor,
                                                            int32_t* rank);
/// The extents of the dimensions into shape[0..rank); `capacity` must be at least the rank.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_shape(const SparseFlowTensor* tensor,
                                                             int64_t* shape, int32_t capacity);
/// The value type.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_dtype(const SparseFlowTensor* tensor,
                                                             sparseflow_dtype* dtype);
/// Stored values, padding and explicit zeros included (summed over hybrid parts).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_stored(const SparseFlowTensor* tensor,
                                                              int64_t* stored);
/// Stored values that are not zero (NaN counts as nonzero).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_nnz(const SparseFlowTensor* tensor,
                                                           int64_t* nnz);
/// Bytes of all arrays, index and value.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_bytes(const SparseFlowTensor* tensor,
                                                             int64_t* bytes);
/// The format as text ("csr", "bsr:4x4", "2:4"); sparseflow_tensor_convert reads it back.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_format(const SparseFlowTensor* tensor,
                                                              char* buffer, size_t capacity,
                                                              size_t* size);
/// One line: "f32 1024x1024 csr, 32768 stored, 393.2 KB".
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_summary(const SparseFlowTensor* tensor,
                                                               char* buffer, size_t capacity,
                                                               size_t* size);
/// Number of storage levels (0 for a hybrid format, whose parts are not reachable here: convert
/// to a plain format to read its arrays).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_num_levels(const SparseFlowTensor* tensor,
                                                                  int32_t* num_levels);
/// The positions array of `level` (compressed and ragged levels; others: *data NULL, *count 0)
/// and its type (i32 or i64).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_positions(const SparseFlowTensor* tensor,
                                                                 int32_t level, const void** data,
                                                                 int64_t* count,
                                                                 sparseflow_dtype* dtype);
/// The coordinates array of `level` (compressed, singleton and fixed levels; others: *data NULL,
/// *count 0) and its type (i32 or i64; fixed levels mark padding with -1).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_coordinates(const SparseFlowTensor* tensor,
                                                                   int32_t level, const void** data,
                                                                   int64_t* count,
                                                                   sparseflow_dtype* dtype);
/// The packed n:m metadata of `level` (n:m levels; others: *data NULL, *bytes 0).
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_metadata(const SparseFlowTensor* tensor,
                                                                int32_t level, const uint8_t** data,
                                                                int64_t* bytes);
/// The values array (of the tensor's dtype) in storage order; not for hybrid formats.
SPARSEFLOW_API sparseflow_status sparseflow_tensor_get_values(const SparseFlowTensor* tensor,
                                                              const void** data, int64_t* count);
/* ---------------------------------------------------------------------------------------------
 * n:m structured sparsity
 * ------------------------------------------------------------------------------------------- */

/// What pruning cost, computed in float64 over all elements, with e = original - pruned.
/// Frozen for ABI 1.x: new measures come as new functions, never as new fields.
typedef struct sparseflow_nm_impact {
  double max_abs_error;             ///< max |e|
  double mean_abs_error;            ///< sum |e| / total
  double relative_frobenius_error;  ///< ||e||_F / ||original||_F
  double kept_magnitude_fraction;   ///< sum |original| where kept, over sum |original|
  int64_t kept;                     ///< nonzeros kept
  int64_t total;                    ///< elements
} sparseflow_nm_impact;

/// Magnitude-prunes a matrix (any format; out_features × in_features for weights) to `pattern`
/// ("2:4") along its rows and compresses it: *compressed is in the n:m format, *impact says what
/// the pruning cost (required: nothing is pruned without a report). NaN or Inf is refused.
SPARSEFLOW_API sparseflow_status sparseflow_nm_sparsify(SparseFlowContext* context,
                                                        const SparseFlowTensor* dense,
                                                        const char* pattern,
                                                        SparseFlowTensor** compressed,
                                                        sparseflow_nm_impact* impact);

/* ---------------------------------------------------------------------------------------------
 * Linear layer with 2:4 weights
 * ------------------------------------------------------------------------------------------- */

/// A layer y = epilogue(x · Wᵀ + b) from W (out_features × in_features) in the "2:4" format with
/// f32, f16, bf16 or f64 values (f64 weights accumulate in f64; the f32 bias is widened).
/// `epilogue` is "none" (or NULL), "bias", "relu", "bias+relu", "silu", "gelu" (erf form),
/// "gelu_tanh", "tanh", "sigmoid", "bias+gelu"...; `bias` (bias_count = out_features f32 values)
/// must be given exactly when it says bias, and is copied. The weights are packed (and copied): the
/// tensor may be destroyed after this call. The layer runs on the context's thread count.
SPARSEFLOW_API sparseflow_status sparseflow_linear_create(SparseFlowContext* context,
                                                          const SparseFlowTensor* weights,
                                                          const float* bias, int64_t bias_count,
                                                          const char* epilogue,
                                                          SparseFlowLinear** layer);
/// y = epilogue(x · Wᵀ + b) for a row-major x of batch × in_features elements (x_count) into a
/// row-major y of batch × out_features elements (y_count); both of `dtype`, which is f32 or the
/// weights' dtype. Accumulates in f32 (f64 for f64 weights). Safe to call from many threads at
/// once.
SPARSEFLOW_API sparseflow_status sparseflow_linear_run(const SparseFlowLinear* layer,
                                                       sparseflow_dtype dtype, int64_t batch,
                                                       const void* x, int64_t x_count, void* y,
                                                       int64_t y_count);
/// Releases a layer; NULL is accepted and ignored.
SPARSEFLOW_API sparseflow_status sparseflow_linear_destroy(SparseFlowLinear* layer);
/// out_features (rows of W, elements of a y row).
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_out_features(const SparseFlowLinear* layer,
                                                                    int64_t* out_features);
/// in_features (columns of W, elements of an x row).
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_in_features(const SparseFlowLinear* layer,
                                                                   int64_t* in_features);
/// The weights' value type.
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_weight_dtype(const SparseFlowLinear* layer,
                                                                    sparseflow_dtype* dtype);
/// The threads each run uses (the context's count, resolved when it was 0).
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_threads(const SparseFlowLinear* layer,
                                                               int32_t* threads);
/// Bytes of packed weights (values + metadata) one run streams.
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_weight_bytes(const SparseFlowLinear* layer,
                                                                    int64_t* bytes);
/// The epilogue as text ("bias+gelu"); string rules as for the tensor attributes.
SPARSEFLOW_API sparseflow_status sparseflow_linear_get_epilogue(const SparseFlowLinear* layer,
                                                                char* buffer, size_t capacity,
                                                                size_t* size);
/// The SIMD target and tile plan a run with this batch size uses ("avx512: broadcast ...").
SPARSEFLOW_API sparseflow_status sparseflow_linear_describe(const SparseFlowLinear* layer,
                                                            int64_t batch, char* buffer,
                                                            size_t capacity, size_t* size);

/* ---------------------------------------------------------------------------------------------
 * Compiled kernels (ABI 1.1): index notation → generated C++ → JIT (docs/compiler.md)
 * ------------------------------------------------------------------------------------------- */

/// Compiles `text` ("y(i) = A(i,j) * x(j)"). `formats` binds formats by tensor name
/// ("A=csr,B=bsr:4x4"; NULL or "" for all dense), `dtypes` value types ("A=f64"; NULL or "": all
/// f32), `schedule` the schedule text (NULL or "": the default). The lists are split at commas
/// outside () and [], so "A=levels[d0:dense, d1:compressed], W=nm(2,4)"-style values pass; an
/// unbalanced bracket or an item that is not NAME=VALUE is refused naming the item.
/// sparseflow_kernel_compile_with_options takes the same settings one by one. Needs a C++ compiler
/// at run time (SPARSEFLOW_STATUS_COMPILE_ERROR says so when there is none); compiled code is
/// cached on disk (docs/jit.md).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_compile(SparseFlowContext* context,
                                                           const char* text, const char* formats,
                                                           const char* dtypes, const char* schedule,
                                                           SparseFlowKernel** kernel);
/// Runs the kernel on `count` named inputs (names[k] is bound to tensors[k]) and `param_count`
/// named scalar parameters; *output receives a new tensor (dense, or sparse with the pattern of
/// the input it follows), owned by the caller. Inputs in another format or dtype than compiled
/// for are converted first; shapes are checked (errors name the tensor and index).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_run(
    SparseFlowContext* context, const SparseFlowKernel* kernel, const char* const* names,
    const SparseFlowTensor* const* tensors, size_t count, const char* const* param_names,
    const double* params, size_t param_count, SparseFlowTensor** output);
/// sparseflow_kernel_run into `output` (ABI 1.3), a tensor of the output's shape, dtype and format
/// that the caller made (sparseflow_tensor_create_dense over its own memory, or an earlier
/// result): `=` kernels overwrite its values, `+=` kernels add to them, and nothing is allocated
/// for the output (a kernel that assembles a sparse output replaces its storage). A wrong shape,
/// dtype or format is SPARSEFLOW_STATUS_INVALID_ARGUMENT naming the output.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_run_into(
    SparseFlowContext* context, const SparseFlowKernel* kernel, const char* const* names,
    const SparseFlowTensor* const* tensors, size_t count, const char* const* param_names,
    const double* params, size_t param_count, SparseFlowTensor* output);
/// The provider that runs the kernel (ABI 1.3): "csr_spmm", "nm_linear", "dense_linear" (the
/// hand-tuned kernels), "generated" or "format decomposition" (string rules as
/// sparseflow_tensor_get_format).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_get_provider(const SparseFlowKernel* kernel,
                                                                char* buffer, size_t capacity,
                                                                size_t* size);
/// The generated C++ source, or a comment naming the hand-tuned kernel that runs instead (string
/// rules as sparseflow_tensor_get_format).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_get_source(const SparseFlowKernel* kernel,
                                                              char* buffer, size_t capacity,
                                                              size_t* size);
/// The loop IR as compiled (after the schedule and the default transforms), printed.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_get_ir(const SparseFlowKernel* kernel,
                                                          char* buffer, size_t capacity,
                                                          size_t* size);
/// What was compiled: formats, loop orders, parallel loops, densified operands, cache use.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_get_description(const SparseFlowKernel* kernel,
                                                                   char* buffer, size_t capacity,
                                                                   size_t* size);
/// Releases a kernel; NULL is allowed.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_destroy(SparseFlowKernel* kernel);

/* ---------------------------------------------------------------------------------------------
 * Kernel options (ABI 1.2): settings one at a time, so that format texts need no quoting and new
 * settings come as new functions. Defaults: every tensor dense and f32, the default schedule,
 * parallel outer loops, the disk cache, hand-tuned kernels where they apply.
 * ------------------------------------------------------------------------------------------- */

/// New options holding the defaults; release with sparseflow_kernel_options_destroy.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_create(SparseFlowKernelOptions** options);
/// Releases options; NULL is accepted and ignored. Kernels compiled with them are not affected.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_destroy(SparseFlowKernelOptions* options);
/// Binds tensor `tensor_name` to `format`, any format text of docs/formats.md taken whole
/// ("csr", "bsr:4x4", "2:4", "levels[d0:dense, d1:compressed]"); replaces an earlier binding of
/// the name; NULL or "" removes it (dense). The text is checked when the kernel compiles.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_set_format(
    SparseFlowKernelOptions* options, const char* tensor_name, const char* format);
/// Binds tensor `tensor_name` to the value type `dtype` (f32, f64, f16 or bf16).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_set_dtype(
    SparseFlowKernelOptions* options, const char* tensor_name, sparseflow_dtype dtype);
/// The schedule text (docs/compiler.md); NULL or "": the default schedule.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_set_schedule(SparseFlowKernelOptions* options, const char* schedule);
/// 1: run the outermost loop of each nest on all cores where that cannot race (default); 0: not.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_set_parallel(SparseFlowKernelOptions* options, int32_t parallel);
/// 1: use the on-disk kernel cache (default); 0: compile privately, cache nothing.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_set_use_cache(SparseFlowKernelOptions* options, int32_t use_cache);
/// 1: run the hand-tuned kernels where the kernel is exactly theirs (default); 0: always
/// generated code.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_set_hand_tuned(SparseFlowKernelOptions* options, int32_t hand_tuned);
/// The format bound to `tensor_name` ("" when none: dense); string rules as
/// sparseflow_tensor_get_format.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_get_format(
    const SparseFlowKernelOptions* options, const char* tensor_name, char* buffer, size_t capacity,
    size_t* size);
/// The value type bound to `tensor_name` (SPARSEFLOW_DTYPE_F32 when none).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_get_dtype(
    const SparseFlowKernelOptions* options, const char* tensor_name, sparseflow_dtype* dtype);
/// The schedule text ("" for the default).
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_get_schedule(
    const SparseFlowKernelOptions* options, char* buffer, size_t capacity, size_t* size);
/// The switches, 0 or 1.
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_get_parallel(const SparseFlowKernelOptions* options, int32_t* parallel);
SPARSEFLOW_API sparseflow_status
sparseflow_kernel_options_get_use_cache(const SparseFlowKernelOptions* options, int32_t* use_cache);
SPARSEFLOW_API sparseflow_status sparseflow_kernel_options_get_hand_tuned(
    const SparseFlowKernelOptions* options, int32_t* hand_tuned);
/// sparseflow_kernel_compile with the settings of `options` (NULL: the defaults). The options
/// are copied: they may be changed or destroyed afterwards.
SPARSEFLOW_API sparseflow_status sparseflow_kernel_compile_with_options(
    SparseFlowContext* context, const char* text, const SparseFlowKernelOptions* options,
    SparseFlowKernel** kernel);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SPARSEFLOW_SPARSEFLOW_H_
