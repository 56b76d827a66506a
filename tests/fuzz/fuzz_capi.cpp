// libFuzzer target for the C ABI: the input bytes decode into a sequence of calls on a small pool
// of handles (creations with arbitrary shapes and counts over arrays this harness owns,
// conversions, layers, kernel options and list texts, runs, destroys, and calls on destroyed
// handles). Every call must return a status: no crash, no abort, no sanitizer report. Uses only
// sparseflow.h.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sparseflow/sparseflow.h"

namespace {

constexpr size_t kMaxOps = 48;
constexpr int64_t kMaxElements = 4096;  // the largest array the harness allocates for a call

/// Reads the input front to back; past its end, every read gives zeros.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  template <typename T, size_t N>
  const T& pick(const T (&table)[N]) {
    return table[byte() % N];
  }
  /// A size: mostly small, sometimes one of the values that break naive arithmetic.
  int64_t size() {
    // No edge a dense copy of the machine's size could come from (2^31, 65536^2 would be
    // accepted by the library's memory check and then filled): tiny, or clearly too large.
    static const int64_t kEdges[] = {0,
                                     1,
                                     -1,
                                     INT64_MAX,
                                     INT64_MIN,
                                     int64_t{1} << 62,
                                     (int64_t{1} << 62) + 1,
                                     int64_t{1} << 40,
                                     INT64_MAX / 2 + 1,
                                     4097};
    const uint8_t b = byte();
    return b < 200 ? b % 17 : kEdges[b % (sizeof kEdges / sizeof kEdges[0])];
  }
  /// Up to 48 bytes of text.
  std::string text() {
    const size_t length = byte() % 49;
    std::string s;
    for (size_t i = 0; i < length && !done(); ++i) s.push_back(static_cast<char>(byte()));
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

const char* const kFormats[] = {"csr",
                                "csc",
                                "coo",
                                "dense",
                                "2:4",
                                "bsr:2x2",
                                "ell",
                                "hyb",
                                "dcsr",
                                "coo@i64",
                                "levels[d0:dense, d1:compressed]",
                                "nm(2,4)",
                                "bogus",
                                ""};
const char* const kPatterns[] = {"2:4", "1:4", "2:8", "csr", "levels[d0:dense, d1:nm(200,256)]",
                                 "0:4", "2:2", ""};
const char* const kEpilogues[] = {"none", "bias", "relu", "bias+relu", "gelu", "bias+gelu", "x"};
const char* const kTexts[] = {"y(i) = A(i,j) * x(j)",
                              "C(i,j) = A(i,k) * B(k,j)",
                              "Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))",
                              "y(i) = alpha * A(i,j) * x(j)",
                              "C(i,j) = A(i,j) +",
                              ""};
const char* const kNames[] = {"A", "B", "x", "W", "X", "bias", "C", "1x", ""};
const sparseflow_dtype kDTypes[] = {
    SPARSEFLOW_DTYPE_F32, SPARSEFLOW_DTYPE_F64, SPARSEFLOW_DTYPE_F16, SPARSEFLOW_DTYPE_BF16,
    SPARSEFLOW_DTYPE_I32, SPARSEFLOW_DTYPE_I64, SPARSEFLOW_DTYPE_U8,  -1};
const int32_t kThreads[] = {0, 1, 2, -1, SPARSEFLOW_MAX_THREADS + 1, INT32_MAX};

/// Handles in use, and handles destroyed (kept to be passed again: each must be refused).
struct Pool {
  std::vector<SparseFlowContext*> contexts;
  std::vector<SparseFlowTensor*> tensors;
  std::vector<SparseFlowLinear*> layers;
  std::vector<SparseFlowKernel*> kernels;
  std::vector<SparseFlowKernelOptions*> options;
  std::vector<void*> destroyed;
  /// Arrays tensors view; freed only after every handle is gone.
  std::vector<std::vector<uint64_t>> arrays;

  template <typename T>
  static T* any(Reader& in, const std::vector<T*>& list) {
    return list.empty() ? nullptr : list[in.byte() % list.size()];
  }
  SparseFlowContext* context(Reader& in) {
    // Mostly a live one; sometimes NULL or a destroyed pointer.
    const uint8_t b = in.byte();
    if (b < 8 && !destroyed.empty())
      return static_cast<SparseFlowContext*>(destroyed[b % destroyed.size()]);
    if (b < 12) return nullptr;
    return any(in, contexts);
  }
  SparseFlowTensor* tensor(Reader& in) {
    const uint8_t b = in.byte();
    if (b < 16 && !destroyed.empty())
      return static_cast<SparseFlowTensor*>(destroyed[b % destroyed.size()]);
    return any(in, tensors);
  }
  /// A new array of `count` elements of up to 8 bytes, filled from the input (count clamped).
  void* array(Reader& in, int64_t count) {
    if (count <= 0 || count > kMaxElements) return nullptr;
    std::vector<uint64_t>& a = arrays.emplace_back(static_cast<size_t>(count));
    for (uint64_t& v : a) v = in.byte() % 8 == 0 ? in.byte() : v;
    return a.data();
  }
};

/// Keeps a handle a call made. `handle` is a reference, read after the call ran (a copy could be
/// taken before it: the order in which arguments are evaluated is unspecified).
template <typename T>
void keep(std::vector<T*>& list, sparseflow_status status, T* const& handle) {
  if (status == SPARSEFLOW_STATUS_OK && handle != nullptr) list.push_back(handle);
}

template <typename T, typename Destroy>
void destroyOne(Reader& in, std::vector<T*>& list, std::vector<void*>& destroyed, Destroy destroy) {
  if (list.empty()) return;
  const size_t at = in.byte() % list.size();
  destroy(list[at]);
  destroyed.push_back(list[at]);
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(at));
}

void createTensor(Reader& in, Pool& pool) {
  SparseFlowContext* c = pool.context(in);
  const sparseflow_dtype dtype = in.pick(kDTypes), index = in.pick(kDTypes);
  SparseFlowTensor* t = nullptr;
  sparseflow_status s = SPARSEFLOW_STATUS_OK;
  const int64_t rows = in.size(), cols = in.size();
  switch (in.byte() % 6) {
    case 0: {
      const int32_t rank = static_cast<int32_t>(in.byte() % 5) - 1;
      int64_t shape[3] = {rows, cols, in.size()};
      const int64_t count = in.size();
      s = sparseflow_tensor_create_dense(c, dtype, rank, rank > 0 ? shape : nullptr,
                                         pool.array(in, count), count, &t);
      break;
    }
    case 1:
    case 2: {
      // The harness never lies about its arrays: row_ptr (col_ptr) has outer + 1 elements.
      const bool csr = in.byte() % 2 != 0;
      const int64_t nnz = in.size(), outer = csr ? rows : cols;
      void* ptr = pool.array(in, outer >= 0 && outer < kMaxElements ? outer + 1 : 0);
      void* idx = pool.array(in, nnz);
      void* values = pool.array(in, nnz);
      s = csr ? sparseflow_tensor_create_csr(c, dtype, rows, cols, index, ptr, idx, values, nnz, &t)
              : sparseflow_tensor_create_csc(c, dtype, rows, cols, index, ptr, idx, values, nnz,
                                             &t);
      break;
    }
    case 3: {
      const int32_t rank = static_cast<int32_t>(in.byte() % 4);
      int64_t shape[3] = {rows, cols, in.size()};
      const int64_t nnz = in.size();
      const void* coords[3] = {pool.array(in, nnz), pool.array(in, nnz), pool.array(in, nnz)};
      s = sparseflow_tensor_create_coo(c, dtype, rank, shape, index,
                                       in.byte() % 8 ? coords : nullptr, pool.array(in, nnz), nnz,
                                       &t);
      break;
    }
    case 4: {
      const int64_t br = in.size(), bc = in.size(), blocks = in.size();
      // block_row_ptr has ceil(rows / br) + 1 elements and values blocks x br x bc, where small.
      const bool small = rows >= 0 && br > 0 && bc > 0 && blocks >= 0 && rows < kMaxElements &&
                         blocks <= kMaxElements && br <= kMaxElements && bc <= kMaxElements &&
                         blocks * br * bc <= kMaxElements;
      void* ptr = pool.array(in, small ? (rows + br - 1) / br + 1 : 0);
      void* values = pool.array(in, small ? blocks * br * bc : 0);
      s = sparseflow_tensor_create_bsr(c, dtype, rows, cols, br, bc, index, ptr,
                                       pool.array(in, blocks), values, blocks, &t);
      break;
    }
    default: {
      const int64_t count = in.size(), metaBytes = in.size();
      s = sparseflow_tensor_create_nm(
          c, dtype, rows, cols, in.pick(kPatterns), pool.array(in, count), count,
          static_cast<const uint8_t*>(pool.array(in, metaBytes)), metaBytes, &t);
      break;
    }
  }
  keep(pool.tensors, s, t);
}

void queryTensor(Reader& in, Pool& pool) {
  const SparseFlowTensor* t = pool.tensor(in);
  int32_t rank = 0;
  int64_t value = 0, shape[4];
  char text[64];
  size_t size = 0;
  const void* data = nullptr;
  sparseflow_dtype dtype;
  sparseflow_tensor_get_rank(t, &rank);
  sparseflow_tensor_get_shape(t, shape, static_cast<int32_t>(in.byte() % 6) - 1);
  sparseflow_tensor_get_nnz(t, &value);
  sparseflow_tensor_get_format(t, in.byte() % 2 ? text : nullptr, in.byte() % 65, &size);
  sparseflow_tensor_get_summary(t, text, sizeof text, &size);
  const int32_t level = static_cast<int32_t>(in.byte() % 5) - 1;
  sparseflow_tensor_get_positions(t, level, &data, &value, &dtype);
  sparseflow_tensor_get_coordinates(t, level, &data, &value, &dtype);
  const uint8_t* meta = nullptr;
  sparseflow_tensor_get_metadata(t, level, &meta, &value);
  sparseflow_tensor_get_values(t, &data, &value);
  // A dense copy only where the harness can hold it.
  if (sparseflow_tensor_get_rank(t, &rank) == SPARSEFLOW_STATUS_OK && rank <= 4 &&
      sparseflow_tensor_get_shape(t, shape, 4) == SPARSEFLOW_STATUS_OK) {
    int64_t total = 1;
    for (int32_t d = 0; d < rank && total <= kMaxElements; ++d) {
      total = shape[d] > 0 && shape[d] <= kMaxElements ? total * shape[d]
                                                       : (shape[d] ? kMaxElements + 1 : 0);
    }
    if (total <= kMaxElements) {
      std::vector<double> dense(static_cast<size_t>(total) + 1);
      sparseflow_tensor_copy_to_dense(pool.context(in), t, dense.data(),
                                      in.byte() % 8 ? total : total + 1);
    }
  }
}

void layerOps(Reader& in, Pool& pool) {
  if (in.byte() % 2) {
    const int64_t biasCount = in.size();
    SparseFlowLinear* layer = nullptr;
    const sparseflow_status s = sparseflow_linear_create(
        pool.context(in), pool.tensor(in), static_cast<const float*>(pool.array(in, biasCount)),
        biasCount, in.byte() % 8 ? in.pick(kEpilogues) : nullptr, &layer);
    keep(pool.layers, s, layer);
    return;
  }
  SparseFlowLinear* layer = Pool::any(in, pool.layers);
  if (in.byte() < 16 && !pool.destroyed.empty()) {
    layer = static_cast<SparseFlowLinear*>(pool.destroyed[in.byte() % pool.destroyed.size()]);
  }
  int64_t in_features = 0, out_features = 0;
  sparseflow_linear_get_in_features(layer, &in_features);
  sparseflow_linear_get_out_features(layer, &out_features);
  const int64_t batch = in.size();
  const bool fits = batch >= 0 && batch <= 16 && in_features <= kMaxElements / 16 &&
                    out_features <= kMaxElements / 16;
  const int64_t xCount = fits ? batch * in_features : in.size();
  const int64_t yCount = fits ? batch * out_features : in.size();
  sparseflow_linear_run(layer, in.pick(kDTypes), batch, pool.array(in, xCount), xCount,
                        pool.array(in, yCount), yCount - (yCount > 0 && in.byte() % 8 == 0));
  char text[128];
  size_t size = 0;
  sparseflow_linear_describe(layer, in.size(), text, sizeof text, &size);
}

void kernelOps(Reader& in, Pool& pool) {
  switch (in.byte() % 5) {
    case 0: {
      SparseFlowKernelOptions* options = nullptr;
      keep(pool.options, sparseflow_kernel_options_create(&options), options);
      break;
    }
    case 1: {
      SparseFlowKernelOptions* options = Pool::any(in, pool.options);
      const std::string free = in.text();
      sparseflow_kernel_options_set_format(options, in.pick(kNames),
                                           in.byte() % 2 ? in.pick(kFormats) : free.c_str());
      sparseflow_kernel_options_set_dtype(options, in.pick(kNames), in.pick(kDTypes));
      sparseflow_kernel_options_set_schedule(options, in.byte() % 2 ? nullptr : free.c_str());
      sparseflow_kernel_options_set_hand_tuned(options, static_cast<int32_t>(in.byte() % 3));
      sparseflow_kernel_options_set_parallel(options, static_cast<int32_t>(in.byte() % 3));
      char text[32];
      size_t size = 0;
      sparseflow_kernel_options_get_format(options, in.pick(kNames), text, in.byte() % 33, &size);
      break;
    }
    case 2: {
      SparseFlowKernel* kernel = nullptr;
      keep(pool.kernels,
           sparseflow_kernel_compile_with_options(pool.context(in), in.pick(kTexts),
                                                  Pool::any(in, pool.options), &kernel),
           kernel);
      break;
    }
    case 3: {
      // The NAME=VALUE lists as raw text: bracket nesting, commas, '=' anywhere.
      const std::string formats = in.text(), dtypes = in.text(), schedule = in.text();
      SparseFlowKernel* kernel = nullptr;
      keep(pool.kernels,
           sparseflow_kernel_compile(pool.context(in), in.pick(kTexts),
                                     in.byte() % 4 ? formats.c_str() : nullptr,
                                     in.byte() % 4 ? dtypes.c_str() : nullptr,
                                     in.byte() % 4 ? schedule.c_str() : nullptr, &kernel),
           kernel);
      break;
    }
    default: {
      const char* names[3] = {in.pick(kNames), in.pick(kNames), in.pick(kNames)};
      const SparseFlowTensor* tensors[3] = {pool.tensor(in), pool.tensor(in), pool.tensor(in)};
      const char* paramNames[1] = {"alpha"};
      const double params[1] = {1.5};
      SparseFlowTensor* out = nullptr;
      keep(pool.tensors,
           sparseflow_kernel_run(pool.context(in), Pool::any(in, pool.kernels), names, tensors,
                                 in.byte() % 4, paramNames, params, in.byte() % 2, &out),
           out);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // No compiler: generated kernels fail fast with COMPILE_ERROR after the whole front end ran;
  // hand-tuned ones (CSR SpMM, the 2:4 layer) compile and run. Nothing is written to a cache.
  static const bool kEnvironment = [] {
    setenv("SPARSEFLOW_CXX", "/nonexistent/sparseflow-fuzz-no-compiler", 1);
    setenv("SPARSEFLOW_CACHE_DIR", "/nonexistent/sparseflow-fuzz-no-cache", 1);
    return true;
  }();
  (void)kEnvironment;
  Reader in(data, size);
  Pool pool;
  for (size_t op = 0; op < kMaxOps && !in.done(); ++op) {
    switch (in.byte() % 12) {
      case 0: {
        SparseFlowContext* c = nullptr;
        keep(pool.contexts, sparseflow_context_create(&c), c);
        break;
      }
      case 1: sparseflow_context_set_threads(pool.context(in), in.pick(kThreads)); break;
      case 2:
      case 3: createTensor(in, pool); break;
      case 4: queryTensor(in, pool); break;
      case 5: {
        SparseFlowTensor* result = nullptr;
        sparseflow_nm_impact impact;
        const sparseflow_status s =
            in.byte() % 2 ? sparseflow_tensor_convert(pool.context(in), pool.tensor(in),
                                                      in.pick(kFormats), &result)
                          : sparseflow_nm_sparsify(pool.context(in), pool.tensor(in),
                                                   in.pick(kPatterns), &result, &impact);
        keep(pool.tensors, s, result);
        break;
      }
      case 6: layerOps(in, pool); break;
      case 7:
      case 8: kernelOps(in, pool); break;
      case 9:
        switch (in.byte() % 5) {
          case 0: destroyOne(in, pool.tensors, pool.destroyed, sparseflow_tensor_destroy); break;
          case 1: destroyOne(in, pool.layers, pool.destroyed, sparseflow_linear_destroy); break;
          case 2: destroyOne(in, pool.kernels, pool.destroyed, sparseflow_kernel_destroy); break;
          case 3:
            destroyOne(in, pool.options, pool.destroyed, sparseflow_kernel_options_destroy);
            break;
          default: destroyOne(in, pool.contexts, pool.destroyed, sparseflow_context_destroy);
        }
        break;
      case 10:
        // A destroyed handle destroyed again, as each kind: refused, never freed twice.
        if (!pool.destroyed.empty()) {
          void* stale = pool.destroyed[in.byte() % pool.destroyed.size()];
          sparseflow_tensor_destroy(static_cast<SparseFlowTensor*>(stale));
          sparseflow_linear_destroy(static_cast<SparseFlowLinear*>(stale));
          sparseflow_kernel_destroy(static_cast<SparseFlowKernel*>(stale));
          sparseflow_kernel_options_destroy(static_cast<SparseFlowKernelOptions*>(stale));
          sparseflow_context_destroy(static_cast<SparseFlowContext*>(stale));
        }
        break;
      default: {
        int32_t threads = 0;
        sparseflow_context_get_threads(pool.context(in), &threads);
        const char* message = sparseflow_last_error();
        if (message == nullptr) std::abort();  // never NULL, by the header's promise
        break;
      }
    }
  }
  for (SparseFlowKernel* k : pool.kernels) sparseflow_kernel_destroy(k);
  for (SparseFlowLinear* l : pool.layers) sparseflow_linear_destroy(l);
  for (SparseFlowTensor* t : pool.tensors) sparseflow_tensor_destroy(t);
  for (SparseFlowKernelOptions* o : pool.options) sparseflow_kernel_options_destroy(o);
  for (SparseFlowContext* c : pool.contexts) sparseflow_context_destroy(c);
  return 0;
}
