// The C ABI's n:m entry points: sparsify with its impact report, and the 2:4 linear layer.
#include <omp.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/nm.h"

namespace sparseflow::capi {
namespace {

/// Checks a caller array of `count` elements of `type` for run(): size, null and alignment.
void checkRunArray(const void* data, DType type, int64_t count, int64_t expected, const char* name,
                   const char* shape) {
  SF_USER_CHECK(count == expected) << "argument '" << name << "_count' is " << count << " but "
                                   << shape << " is " << expected << " elements";
  SF_USER_CHECK(data != nullptr || count == 0) << "argument '" << name << "' is null";
  SF_USER_CHECK(reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dtypeSize(type)) == 0)
      << "argument '" << name << "' is not aligned to its " << dtypeSize(type) << "-byte "
      << dtypeName(type) << " elements";
}

/// rows × cols, or kOutOfMemory when it overflows.
int64_t product(int64_t rows, int64_t cols, const char* what) {
  SF_CHECK_CODE(cols == 0 || rows <= std::numeric_limits<int64_t>::max() / cols,
                ErrorCode::kOutOfMemory)
      << what << " (" << rows << " x " << cols << ") has more than 2^63 elements";
  return rows * cols;
}

}  // namespace
}  // namespace sparseflow::capi

using namespace sparseflow;  // NOLINT(google-build-using-namespace): entry points only
using capi::contextArg;
using capi::guard;
using capi::linearArg;
using capi::requireNonNull;
using capi::tensorArg;

extern "C" {

sparseflow_status sparseflow_nm_sparsify(SparseFlowContext* context, const SparseFlowTensor* dense,
                                         const char* pattern, SparseFlowTensor** compressed,
                                         sparseflow_nm_impact* impact) {
  return guard(__func__, [&] {
    capi::resetOutput(compressed, "compressed");
    const SparseFlowContext& c = contextArg(context, "context");
    const SparseFlowTensor& t = tensorArg(dense, "dense");
    const nm::NMPattern nmPattern = nm::NMPattern::parse(capi::stringArg(pattern, "pattern"));
    requireNonNull(impact, "impact");
    const capi::ScopedOmpThreads threads(c.threads.load());
    nm::Sparsified result = nm::sparsify(t.tensor, nmPattern);
    SparseFlowTensor* handle = capi::newDerivedTensor(std::move(result.compressed), &t);
    impact->max_abs_error = result.impact.maxAbsError;
    impact->mean_abs_error = result.impact.meanAbsError;
    impact->relative_frobenius_error = result.impact.relativeFrobeniusError;
    impact->kept_magnitude_fraction = result.impact.keptMagnitudeFraction;
    impact->kept = result.impact.kept;
    impact->total = result.impact.total;
    *compressed = handle;
  });
}

sparseflow_status sparseflow_linear_create(SparseFlowContext* context,
                                           const SparseFlowTensor* weights, const float* bias,
                                           int64_t bias_count, const char* epilogue,
                                           SparseFlowLinear** layer) {
  return guard(__func__, [&] {
    capi::resetOutput(layer, "layer");
    const SparseFlowContext& c = contextArg(context, "context");
    const SparseFlowTensor& w = tensorArg(weights, "weights");
    SF_USER_CHECK(bias_count >= 0) << "argument 'bias_count' is negative (" << bias_count << ")";
    SF_USER_CHECK(bias != nullptr || bias_count == 0)
        << "argument 'bias' is null but 'bias_count' is " << bias_count;
    // Checked before the copy, so that a wrong count never reads past the caller's array.
    SF_USER_CHECK(bias == nullptr || w.tensor.rank() != 2 || bias_count == w.tensor.shape()[0])
        << "argument 'bias_count' is " << bias_count << " but the weights have "
        << w.tensor.shape()[0] << " output features";
    std::vector<float> biasValues;
    if (bias != nullptr) biasValues.assign(bias, bias + bias_count);
    const Epilogue parsed = Epilogue::parse(epilogue != nullptr ? epilogue : "none");
    const int32_t threads = c.threads.load();
    const capi::ScopedOmpThreads scoped(threads);  // packing runs on the context's threads too
    // The layer keeps its weights: a deep copy when they view the caller's arrays.
    const Tensor owned = w.borrowsCallerMemory ? w.tensor.clone() : w.tensor;
    auto handle = std::make_unique<SparseFlowLinear>();
    handle->layer =
        std::make_unique<NMLinear>(owned, std::move(biasValues), parsed, NMLinearOptions{threads});
    handle->threads = threads > 0 ? threads : omp_get_max_threads();
    *layer = capi::publishHandle(std::move(handle), capi::HandleKind::kLinear);
  });
}

sparseflow_status sparseflow_linear_run(const SparseFlowLinear* layer, sparseflow_dtype dtype,
                                        int64_t batch, const void* x, int64_t x_count, void* y,
                                        int64_t y_count) {
  return guard(__func__, [&] {
    const NMLinear& l = *linearArg(layer, "layer").layer;
    const DType type = capi::valueDTypeArg(dtype, "dtype");
    SF_USER_CHECK(batch >= 0) << "argument 'batch' is negative (" << batch << ")";
    capi::checkRunArray(x, type, x_count, capi::product(batch, l.inFeatures(), "x"), "x",
                        "batch x in_features");
    capi::checkRunArray(y, type, y_count, capi::product(batch, l.outFeatures(), "y"), "y",
                        "batch x out_features");
    l.forward(x, type, batch, y);
  });
}

sparseflow_status sparseflow_linear_destroy(SparseFlowLinear* layer) {
  return guard(__func__, [&] { capi::destroyHandle(layer, capi::HandleKind::kLinear, "layer"); });
}

sparseflow_status sparseflow_linear_get_out_features(const SparseFlowLinear* layer,
                                                     int64_t* out_features) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    requireNonNull(out_features, "out_features");
    *out_features = l.layer->outFeatures();
  });
}

sparseflow_status sparseflow_linear_get_in_features(const SparseFlowLinear* layer,
                                                    int64_t* in_features) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    requireNonNull(in_features, "in_features");
    *in_features = l.layer->inFeatures();
  });
}

sparseflow_status sparseflow_linear_get_weight_dtype(const SparseFlowLinear* layer,
                                                     sparseflow_dtype* dtype) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    requireNonNull(dtype, "dtype");
    *dtype = static_cast<sparseflow_dtype>(l.layer->weightType());
  });
}

sparseflow_status sparseflow_linear_get_threads(const SparseFlowLinear* layer, int32_t* threads) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    requireNonNull(threads, "threads");
    *threads = l.threads;
  });
}

sparseflow_status sparseflow_linear_get_weight_bytes(const SparseFlowLinear* layer,
                                                     int64_t* bytes) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    requireNonNull(bytes, "bytes");
    *bytes = l.layer->weightBytes();
  });
}

sparseflow_status sparseflow_linear_get_epilogue(const SparseFlowLinear* layer, char* buffer,
                                                 size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    capi::copyString(l.layer->epilogue().toString(), buffer, capacity, size, "epilogue");
  });
}

sparseflow_status sparseflow_linear_describe(const SparseFlowLinear* layer, int64_t batch,
                                             char* buffer, size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    const SparseFlowLinear& l = linearArg(layer, "layer");
    SF_USER_CHECK(batch >= 0) << "argument 'batch' is negative (" << batch << ")";
    capi::copyString(l.layer->describe(batch), buffer, capacity, size, "description");
  });
}

}  // extern "C"
