// The C ABI's tensors: files, conversion, release and the attribute getters.
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "format/levels/level_impl.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"

namespace sparseflow::capi {
namespace {

bool viewsMemory(const Tensor& tensor) {
  if (tensor.isHybrid()) {
    for (const Tensor& part : tensor.parts()) {
      if (viewsMemory(part)) return true;
    }
    return false;
  }
  auto views = [](const Buffer& b) { return b.size() > 0 && !b.owning(); };
  if (views(tensor.values())) return true;
  for (const LevelStorage& level : tensor.levels()) {
    if (views(level.pos) || views(level.crd) || views(level.meta)) return true;
  }
  return false;
}

/// The storage of `level`; hybrid tensors have none reachable through the C API.
const LevelStorage& levelArg(const Tensor& tensor, int32_t level) {
  SF_CHECK_CODE(!tensor.isHybrid(), ErrorCode::kNotSupported)
      << "the tensor's format " << tensor.format().toString()
      << " is hybrid; convert it to a plain format to read its arrays";
  SF_USER_CHECK(level >= 0 && level < tensor.format().numLevels())
      << "argument 'level' is " << level << " but the format " << tensor.format().toString()
      << " has " << tensor.format().numLevels() << " levels";
  return tensor.level(level);
}

/// Hands out an index array (positions or coordinates) that the level may not have.
void indexArray(const Buffer& buffer, bool present, const void** data, int64_t* count,
                sparseflow_dtype* dtype) {
  requireNonNull(data, "data");
  requireNonNull(count, "count");
  requireNonNull(dtype, "dtype");
  *data = present && buffer.size() > 0 ? buffer.data() : nullptr;
  *count = present ? buffer.size() : 0;
  *dtype = static_cast<sparseflow_dtype>(present ? buffer.dtype() : DType::kI32);
}

int64_t countNonzeros(const Tensor& tensor) {
  if (tensor.isHybrid()) {
    int64_t total = 0;
    for (const Tensor& part : tensor.parts()) total += countNonzeros(part);
    return total;
  }
  int64_t nonzero = 0;
  const Buffer& values = tensor.values();
  for (int64_t i = 0; i < values.size(); ++i) nonzero += values.value(i) != 0 ? 1 : 0;
  return nonzero;
}

}  // namespace

SparseFlowTensor* newDerivedTensor(Tensor tensor, const SparseFlowTensor* source) {
  // A conversion to the same format may hand back the source's arrays: copy them, since the
  // caller may free theirs as soon as the source is destroyed.
  if (source != nullptr && source->borrowsCallerMemory && viewsMemory(tensor)) {
    tensor = tensor.clone();
  }
  auto handle = std::make_unique<SparseFlowTensor>();
  handle->tensor = std::move(tensor);
  return publishHandle(std::move(handle), HandleKind::kTensor);
}

}  // namespace sparseflow::capi

using namespace sparseflow;  // NOLINT(google-build-using-namespace): entry points only
using capi::contextArg;
using capi::guard;
using capi::requireNonNull;
using capi::tensorArg;

extern "C" {

sparseflow_status sparseflow_tensor_read(SparseFlowContext* context, const char* path,
                                         const char* format, sparseflow_dtype dtype,
                                         SparseFlowTensor** tensor) {
  return guard(__func__, [&] {
    capi::resetOutput(tensor, "tensor");
    const SparseFlowContext& c = contextArg(context, "context");
    ReadOptions options;
    options.format = format != nullptr ? format : "";
    options.dtype = capi::valueDTypeArg(dtype, "dtype");
    const std::string file(capi::stringArg(path, "path"));
    const capi::ScopedOmpThreads threads(c.threads.load());
    *tensor = capi::newDerivedTensor(read(file, options), nullptr);
  });
}

sparseflow_status sparseflow_tensor_write(SparseFlowContext* context,
                                          const SparseFlowTensor* tensor, const char* path) {
  return guard(__func__, [&] {
    const SparseFlowContext& c = contextArg(context, "context");
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const std::string file(capi::stringArg(path, "path"));
    const capi::ScopedOmpThreads threads(c.threads.load());
    write(file, t.tensor);
  });
}

sparseflow_status sparseflow_tensor_convert(SparseFlowContext* context,
                                            const SparseFlowTensor* tensor, const char* format,
                                            SparseFlowTensor** result) {
  return guard(__func__, [&] {
    capi::resetOutput(result, "result");
    const SparseFlowContext& c = contextArg(context, "context");
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const std::string text(capi::stringArg(format, "format"));
    const capi::ScopedOmpThreads threads(c.threads.load());
    *result = capi::newDerivedTensor(convert(t.tensor, text), &t);
  });
}

sparseflow_status sparseflow_tensor_destroy(SparseFlowTensor* tensor) {
  return guard(__func__, [&] { capi::destroyHandle(tensor, capi::HandleKind::kTensor, "tensor"); });
}

sparseflow_status sparseflow_tensor_get_rank(const SparseFlowTensor* tensor, int32_t* rank) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(rank, "rank");
    *rank = t.tensor.rank();
  });
}

sparseflow_status sparseflow_tensor_get_shape(const SparseFlowTensor* tensor, int64_t* shape,
                                              int32_t capacity) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(shape, "shape");
    SF_USER_CHECK(capacity >= t.tensor.rank())
        << "argument 'capacity' is " << capacity << " but the tensor has rank " << t.tensor.rank();
    for (int32_t d = 0; d < t.tensor.rank(); ++d) shape[d] = t.tensor.shape()[d];
  });
}

sparseflow_status sparseflow_tensor_get_dtype(const SparseFlowTensor* tensor,
                                              sparseflow_dtype* dtype) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(dtype, "dtype");
    *dtype = static_cast<sparseflow_dtype>(t.tensor.dtype());
  });
}

sparseflow_status sparseflow_tensor_get_stored(const SparseFlowTensor* tensor, int64_t* stored) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(stored, "stored");
    *stored = t.tensor.numStored();
  });
}

sparseflow_status sparseflow_tensor_get_nnz(const SparseFlowTensor* tensor, int64_t* nnz) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(nnz, "nnz");
    *nnz = capi::countNonzeros(t.tensor);
  });
}

sparseflow_status sparseflow_tensor_get_bytes(const SparseFlowTensor* tensor, int64_t* bytes) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(bytes, "bytes");
    *bytes = t.tensor.storageBytes();
  });
}

sparseflow_status sparseflow_tensor_get_format(const SparseFlowTensor* tensor, char* buffer,
                                               size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    capi::copyString(t.tensor.format().toString(), buffer, capacity, size, "format string");
  });
}

sparseflow_status sparseflow_tensor_get_summary(const SparseFlowTensor* tensor, char* buffer,
                                                size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    capi::copyString(t.tensor.summary(), buffer, capacity, size, "summary");
  });
}

sparseflow_status sparseflow_tensor_get_num_levels(const SparseFlowTensor* tensor,
                                                   int32_t* num_levels) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    requireNonNull(num_levels, "num_levels");
    *num_levels = t.tensor.isHybrid() ? 0 : t.tensor.format().numLevels();
  });
}

sparseflow_status sparseflow_tensor_get_positions(const SparseFlowTensor* tensor, int32_t level,
                                                  const void** data, int64_t* count,
                                                  sparseflow_dtype* dtype) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const LevelStorage& storage = capi::levelArg(t.tensor, level);
    const LevelKind kind = t.tensor.format().level(level).type.kind;
    const bool present = format::levelImpl(kind).capabilities().hasPos;
    capi::indexArray(storage.pos, present, data, count, dtype);
  });
}

sparseflow_status sparseflow_tensor_get_coordinates(const SparseFlowTensor* tensor, int32_t level,
                                                    const void** data, int64_t* count,
                                                    sparseflow_dtype* dtype) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const LevelStorage& storage = capi::levelArg(t.tensor, level);
    const LevelKind kind = t.tensor.format().level(level).type.kind;
    const bool present = format::levelImpl(kind).capabilities().hasCrd;
    capi::indexArray(storage.crd, present, data, count, dtype);
  });
}

sparseflow_status sparseflow_tensor_get_metadata(const SparseFlowTensor* tensor, int32_t level,
                                                 const uint8_t** data, int64_t* bytes) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const LevelStorage& storage = capi::levelArg(t.tensor, level);
    requireNonNull(data, "data");
    requireNonNull(bytes, "bytes");
    const LevelKind kind = t.tensor.format().level(level).type.kind;
    const bool present = format::levelImpl(kind).capabilities().hasMeta;
    *data = present && storage.meta.size() > 0 ? storage.meta.as<uint8_t>() : nullptr;
    *bytes = present ? storage.meta.size() : 0;
  });
}

sparseflow_status sparseflow_tensor_get_values(const SparseFlowTensor* tensor, const void** data,
                                               int64_t* count) {
  return guard(__func__, [&] {
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    SF_CHECK_CODE(!t.tensor.isHybrid(), ErrorCode::kNotSupported)
        << "the tensor's format " << t.tensor.format().toString()
        << " is hybrid; convert it to a plain format to read its values";
    requireNonNull(data, "data");
    requireNonNull(count, "count");
    *data = t.tensor.values().size() > 0 ? t.tensor.values().data() : nullptr;
    *count = t.tensor.values().size();
  });
}

sparseflow_status sparseflow_tensor_copy_to_dense(SparseFlowContext* context,
                                                  const SparseFlowTensor* tensor, double* values,
                                                  int64_t count) {
  return guard(__func__, [&] {
    const SparseFlowContext& c = contextArg(context, "context");
    const SparseFlowTensor& t = tensorArg(tensor, "tensor");
    const int64_t total = numElements(t.tensor.shape());
    SF_USER_CHECK(count == total) << "argument 'count' is " << count << " but the tensor ("
                                  << t.tensor.summary() << ") has " << total << " elements";
    if (total > 0) requireNonNull(values, "values");
    const capi::ScopedOmpThreads threads(c.threads.load());
    const std::vector<double> dense = toDense(t.tensor);
    if (!dense.empty()) std::memcpy(values, dense.data(), dense.size() * sizeof(double));
  });
}

}  // extern "C"
