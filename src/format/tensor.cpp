// Tensor: assembly, sizes, copies and the one-line summary.
#include "sparseflow/tensor.h"

#include <cstdio>

#include "support/check.h"

namespace sparseflow {

Tensor::Tensor(std::vector<int64_t> shape, DType dtype, Format format,
               std::vector<LevelStorage> levels, Buffer values)
    : shape_(std::move(shape)),
      dtype_(dtype),
      format_(std::move(format)),
      levels_(std::move(levels)),
      values_(std::move(values)) {
  SF_USER_CHECK(!format_.isHybrid()) << "use Tensor::hybrid for a hybrid format";
  SF_USER_CHECK(format_.rank() == rank())
      << "format " << format_.toString() << " has rank " << format_.rank() << " but the shape has "
      << rank() << " dimensions";
  SF_USER_CHECK(format_.numLevels() == static_cast<int32_t>(levels_.size()))
      << "format " << format_.toString() << " has " << format_.numLevels()
      << " levels but storage for " << levels_.size() << " was given";
  SF_USER_CHECK(isFloatType(dtype)) << "tensor values must be f32, f64, f16 or bf16, not "
                                    << dtypeName(dtype);
  SF_USER_CHECK(values_.dtype() == dtype) << "values buffer is " << dtypeName(values_.dtype())
                                          << " but the tensor is " << dtypeName(dtype);
  for (int64_t s : shape_) SF_USER_CHECK(s >= 0) << "negative dimension size " << s;
}

Tensor Tensor::hybrid(std::vector<int64_t> shape, DType dtype, Format format,
                      std::vector<Tensor> parts) {
  SF_USER_CHECK(format.isHybrid()) << "Tensor::hybrid needs a hybrid format";
  SF_USER_CHECK(parts.size() == format.parts().size())
      << "hybrid format has " << format.parts().size() << " parts but " << parts.size()
      << " tensors were given";
  for (size_t i = 0; i < parts.size(); ++i) {
    SF_USER_CHECK(parts[i].shape() == shape && parts[i].dtype() == dtype)
        << "hybrid part " << i << " differs in shape or dtype";
  }
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.format_ = std::move(format);
  t.parts_ = std::move(parts);
  t.values_ = Buffer::zeros(dtype, 0);
  return t;
}

int64_t Tensor::numStored() const {
  if (!isHybrid()) return values_.size();
  int64_t total = 0;
  for (const Tensor& p : parts_) total += p.numStored();
  return total;
}

int64_t Tensor::storageBytes() const {
  if (isHybrid()) {
    int64_t total = 0;
    for (const Tensor& p : parts_) total += p.storageBytes();
    return total;
  }
  int64_t total = values_.bytes();
  for (const LevelStorage& l : levels_) total += l.pos.bytes() + l.crd.bytes() + l.meta.bytes();
  return total;
}

Tensor Tensor::clone() const {
  if (isHybrid()) {
    std::vector<Tensor> parts;
    for (const Tensor& p : parts_) parts.push_back(p.clone());
    return hybrid(shape_, dtype_, format_, std::move(parts));
  }
  std::vector<LevelStorage> levels;
  for (const LevelStorage& l : levels_) levels.push_back({l.pos.clone(), l.crd.clone(),
                                                           l.meta.clone()});
  return Tensor(shape_, dtype_, format_, std::move(levels), values_.clone());
}

std::string Tensor::summary() const {
  std::string dims;
  for (size_t i = 0; i < shape_.size(); ++i) dims += (i ? "x" : "") + std::to_string(shape_[i]);
  char bytes[32];
  std::snprintf(bytes, sizeof bytes, "%.1f KB", static_cast<double>(storageBytes()) / 1e3);
  return std::string(dtypeName(dtype_)) + " " + dims + " " + format_.toString() + ", " +
         std::to_string(numStored()) + " stored, " + bytes;
}

}  // namespace sparseflow
