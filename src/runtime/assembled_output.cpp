// runAssembling (see assembled_output.h).
#include "runtime/assembled_output.h"

#include <limits>

#include "support/check.h"

namespace sparseflow::runtime {
namespace {

/// pos[0] = 0 and pos[p + 1] += pos[p]: counts to offsets. Returns the total.
template <typename T>
int64_t prefixSum(Buffer& pos, const std::string& output) {
  T* p = pos.as<T>();
  int64_t total = 0;
  p[0] = 0;
  for (int64_t k = 1; k < pos.size(); ++k) {
    total += static_cast<int64_t>(p[k]);
    SF_CHECK_CODE(total <= std::numeric_limits<T>::max(), ErrorCode::kOutOfRange)
        << "output " << output << " has more than " << std::numeric_limits<T>::max()
        << " entries, past its 32-bit indices: bind it with 64-bit ones (e.g. csr@i64)";
    p[k] = static_cast<T>(total);
  }
  return total;
}

}  // namespace

Tensor runAssembling(const lower::LoweredKernel& lowered, const BoundInputs& bound,
                     const KernelEntry& symbolic, const KernelEntry& numeric,
                     const std::string& kernelText) {
  const lower::TensorArg& out = lowered.tensors[0];
  const Format& format = out.format;
  const int32_t level = lowered.assembledLevel;
  SF_ICHECK(level == format.numLevels() - 1 || (lowered.listOutput && level == 0))
      << "assembled level " << level;
  // Parent positions of the assembled level: the product of the dense levels' extents.
  int64_t parents = 1;
  for (int32_t l = 0; l < level; ++l)
    parents *= bound.outputShape[static_cast<size_t>(format.level(l).expr.dim)];
  const DType posType = format.posWidth() == 64 ? DType::kI64 : DType::kI32;
  const DType crdType = format.crdWidth() == 64 ? DType::kI64 : DType::kI32;
  const DType valueType = out.valueType == ir::ScalarType::kF64 ? DType::kF64 : DType::kF32;
  std::vector<LevelStorage> levels(static_cast<size_t>(format.numLevels()));
  levels[static_cast<size_t>(level)].pos = Buffer::zeros(posType, parents + 1);
  levels[static_cast<size_t>(level)].crd = Buffer::zeros(crdType, 0);
  {
    Tensor counting(bound.outputShape, valueType, format, levels, Buffer::zeros(valueType, 0));
    const std::vector<sf_tensor_arg> args = tensorArgs(lowered, bound, counting);
    callEntry(symbolic, args, bound, kernelText);
  }
  Buffer& pos = levels[static_cast<size_t>(level)].pos;
  const int64_t entries = posType == DType::kI64 ? prefixSum<int64_t>(pos, out.name)
                                                 : prefixSum<int32_t>(pos, out.name);
  // A list's singleton levels hold a coordinate per entry too.
  for (size_t l = static_cast<size_t>(level); l < levels.size(); ++l)
    levels[l].crd = Buffer::zeros(crdType, entries);
  Tensor result(bound.outputShape, valueType, format, std::move(levels),
                Buffer::zeros(valueType, entries));
  const std::vector<sf_tensor_arg> args = tensorArgs(lowered, bound, result);
  callEntry(numeric, args, bound, kernelText);
  return result;
}

}  // namespace sparseflow::runtime
