// Converted inputs reused while their source is unchanged (see conversion_cache.h).
#include "runtime/conversion_cache.h"

#include "sparseflow/convert.h"

namespace sparseflow::runtime {

std::shared_ptr<const Tensor> ConversionCache::convert(const std::string& operand,
                                                       const Tensor& source, const Format& format,
                                                       DType dtype) const {
  const std::string target = format.toString() + " " + dtypeName(dtype);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = slots_.find(operand);
    if (it != slots_.end() && it->second.target == target && it->second.from.matches(source))
      return it->second.converted;
  }
  // Witnessed before converting: a write during the conversion makes the next call convert again
  // rather than reuse a copy of mixed contents.
  TensorWitness from(source);
  ConvertOptions options;
  options.changeDType = source.dtype() != dtype;
  options.dtype = dtype;
  auto converted = std::make_shared<const Tensor>(sparseflow::convert(source, format, options));
  Slot slot{std::move(from), target, converted};
  std::lock_guard<std::mutex> lock(mutex_);
  slots_[operand] = std::move(slot);
  return converted;
}

}  // namespace sparseflow::runtime
