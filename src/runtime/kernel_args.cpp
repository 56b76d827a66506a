// Argument binding for compiled kernels (see kernel_args.h).
#include "runtime/kernel_args.h"

#include <algorithm>
#include <cstring>

#include "format/levels/level_impl.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::runtime {
namespace {

DType dtypeOf(ir::ScalarType t) {
  return t == ir::ScalarType::kF64 ? DType::kF64 : DType::kF32;
}

/// The compiled format with its data-chosen parameters (ell's k) taken from `actual` when the
/// two otherwise agree; else the compiled format unchanged.
Format resolveFormat(const Format& compiled, const Format& actual) {
  if (compiled.numLevels() != actual.numLevels()) return compiled;
  Format resolved = compiled;
  for (int32_t l = 0; l < compiled.numLevels(); ++l) {
    const LevelType& c = compiled.level(l).type;
    if (format::levelImpl(c.kind).chosenByData(c) && actual.level(l).type.kind == c.kind) {
      resolved = resolved.withFixedK(l, actual.level(l).type.k);
    }
  }
  return resolved;
}

}  // namespace

bool ShapeCache::find(const std::vector<const Tensor*>& inputs, Shapes* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!last_ || last_->inputShapes.size() + 1 != inputs.size()) return false;
  for (size_t k = 1; k < inputs.size(); ++k) {
    if (inputs[k]->shape() != last_->inputShapes[k - 1] ||
        inputs[k]->dtype() != last_->inputTypes[k - 1]) {
      return false;
    }
  }
  *out = *last_;
  return true;
}

void ShapeCache::store(Shapes shapes) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_ = std::move(shapes);
}

BoundInputs bindInputs(const expr::Statement& statement, const lower::LoweredKernel& lowered,
                       const std::map<std::string, const Tensor*>& inputs,
                       const std::map<std::string, double>& params, ShapeCache* cache,
                       const ConversionCache* conversions) {
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (size_t k = 1; k < lowered.tensors.size(); ++k)
      known = known || lowered.tensors[k].name == name;
    SF_USER_CHECK(known) << "tensor '" << name << "' is not an input of the kernel '"
                         << statement.text << "'";
    SF_USER_CHECK(tensor != nullptr) << "tensor '" << name << "' is null";
  }
  BoundInputs bound;
  bound.tensors.assign(lowered.tensors.size(), nullptr);
  std::map<std::string, expr::TensorInfo> infos;
  for (size_t k = 1; k < lowered.tensors.size(); ++k) {
    const lower::TensorArg& arg = lowered.tensors[k];
    auto it = inputs.find(arg.name);
    SF_USER_CHECK(it != inputs.end()) << "the kernel '" << statement.text << "' needs tensor '"
                                      << arg.name << "' (" << arg.format.toString() << ")";
    const Tensor& t = *it->second;
    SF_USER_CHECK(t.rank() == arg.rank)
        << "tensor '" << arg.name << "' has rank " << t.rank() << " but the kernel uses it with "
        << arg.rank << " indices";
    infos[arg.name] = {t.shape(), t.dtype()};
    const DType want = dtypeOf(arg.valueType);
    if (t.format() == resolveFormat(arg.format, t.format()) && t.dtype() == want) {
      bound.tensors[k] = &t;
      continue;
    }
    if (conversions != nullptr) {
      bound.converted.push_back(conversions->convert(arg.name, t, arg.format, want));
    } else {
      ConvertOptions options;
      options.changeDType = t.dtype() != want;
      options.dtype = want;
      bound.converted.push_back(std::make_shared<const Tensor>(convert(t, arg.format, options)));
    }
    bound.tensors[k] = bound.converted.back().get();
  }
  // Shapes: the checker validates extents and infers the output's shape (as the last call did,
  // when the original inputs are shaped and typed as then).
  std::vector<const Tensor*> originals(lowered.tensors.size(), nullptr);
  for (size_t k = 1; k < lowered.tensors.size(); ++k)
    originals[k] = inputs.at(lowered.tensors[k].name);
  ShapeCache::Shapes known;
  if (cache != nullptr && cache->find(originals, &known)) {
    bound.extents = std::move(known.extents);
    bound.outputShape = std::move(known.outputShape);
  } else {
    const expr::CheckedKernel checked = expr::check(statement, infos);
    for (const std::string& index : lowered.indexVars)
      bound.extents.push_back(checked.indexExtents.at(index));
    bound.outputShape = checked.tensors.at(lowered.tensors[0].name).shape;
    if (cache != nullptr) {
      ShapeCache::Shapes shapes;
      for (size_t k = 1; k < originals.size(); ++k) {
        shapes.inputShapes.push_back(originals[k]->shape());
        shapes.inputTypes.push_back(originals[k]->dtype());
      }
      shapes.extents = bound.extents;
      shapes.outputShape = bound.outputShape;
      cache->store(std::move(shapes));
    }
  }
  // The entries the inputs store: the generated code's measure of the work (it forks threads
  // only above SF_PARALLEL_MIN_WORK).
  int64_t entries = 0;
  for (size_t k = 1; k < bound.tensors.size(); ++k) entries += bound.tensors[k]->numStored();
  bound.extents.push_back(entries);
  if (lowered.hashCapacity) {
    // The hash workspace's slots: a power of two at least twice the entries a row can have, which
    // are at most the assembled coordinate's extent and at most the entries of all the inputs.
    const Format& format = lowered.tensors[0].format;
    const int64_t extent =
        bound.outputShape.at(static_cast<size_t>(format.level(format.numLevels() - 1).expr.dim));
    const int64_t most = std::min(extent, entries);
    int64_t capacity = 16;
    while (capacity < 2 * most) capacity *= 2;
    bound.extents.push_back(capacity);
  }
  for (const std::string& p : lowered.params) {
    auto it = params.find(p);
    SF_USER_CHECK(it != params.end())
        << "the kernel '" << statement.text << "' needs the scalar parameter '" << p << "'";
    bound.params.push_back(it->second);
  }
  for (const auto& [name, value] : params) {
    bool known = false;
    for (const std::string& p : lowered.params) known = known || p == name;
    SF_USER_CHECK(known) << "'" << name << "' is not a scalar parameter of the kernel '"
                         << statement.text << "'";
  }
  return bound;
}

OutputLayout outputLayout(const lower::LoweredKernel& lowered, const BoundInputs& bound) {
  const lower::TensorArg& out = lowered.tensors[0];
  OutputLayout layout;
  layout.dtype = dtypeOf(out.valueType);
  if (lowered.outputPatternFrom.empty()) {
    layout.format = out.format;
    layout.values = 1;
    for (int64_t d : bound.outputShape) layout.values *= d;
    return layout;
  }
  for (size_t k = 1; k < lowered.tensors.size(); ++k) {
    if (lowered.tensors[k].name != lowered.outputPatternFrom) continue;
    layout.pattern = bound.tensors[k];
    layout.format = layout.pattern->format();
    layout.values = layout.pattern->values().size();
    return layout;
  }
  SF_FAIL(kInternal) << "pattern input " << lowered.outputPatternFrom << " not bound";
}

Tensor makeOutput(const lower::LoweredKernel& lowered, const BoundInputs& bound) {
  const OutputLayout layout = outputLayout(lowered, bound);
  if (!layout.pattern) {
    return Tensor(bound.outputShape, layout.dtype, layout.format,
                  std::vector<LevelStorage>(static_cast<size_t>(layout.format.numLevels())),
                  Buffer::zeros(layout.dtype, layout.values));
  }
  // The index arrays are shared (Buffer copies share memory); the values are fresh zeros.
  return Tensor(bound.outputShape, layout.dtype, layout.format, layout.pattern->levels(),
                Buffer::zeros(layout.dtype, layout.values));
}

void callEntry(const KernelEntry& entry, const std::vector<sf_tensor_arg>& args,
               const BoundInputs& bound, const std::string& kernelText) {
  const int32_t status = entry(args.data(), bound.extents.data(), bound.params.data());
  SF_CHECK_CODE(status != SF_KERNEL_OUT_OF_MEMORY, ErrorCode::kOutOfMemory)
      << "kernel '" << kernelText
      << "': a scratch workspace could not be allocated; the output is incomplete";
  SF_CHECK_CODE(status == SF_KERNEL_OK, ErrorCode::kInternal)
      << "kernel '" << kernelText << "' returned status " << status;
}

std::vector<sf_tensor_arg> tensorArgs(const lower::LoweredKernel& lowered, const BoundInputs& bound,
                                      Tensor& output) {
  std::vector<sf_tensor_arg> args(lowered.tensors.size());
  std::memset(args.data(), 0, args.size() * sizeof(sf_tensor_arg));
  for (size_t k = 0; k < lowered.tensors.size(); ++k) {
    const Tensor& t = k == 0 ? output : *bound.tensors[k];
    SF_ICHECK(t.format().numLevels() <= SF_MAX_LEVELS)
        << "tensor " << lowered.tensors[k].name << " has " << t.format().numLevels() << " levels";
    args[k].values = k == 0 ? output.mutableValues().data() : const_cast<void*>(t.values().data());
    for (int32_t l = 0; l < t.format().numLevels(); ++l) {
      const LevelStorage& s = t.level(l);
      args[k].pos[l] = s.pos.data();
      args[k].crd[l] = s.crd.data();
      args[k].meta[l] = static_cast<const uint8_t*>(s.meta.data());
      args[k].slots[l] = t.format().level(l).type.k;
    }
  }
  return args;
}

}  // namespace sparseflow::runtime
