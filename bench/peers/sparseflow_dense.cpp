// DenseLinear behind the DensePeer interface (see sparseflow_dense.h).
#include "peers/sparseflow_dense.h"

#include <string>

namespace sparseflow::bench {
namespace {

class SparseflowDense final : public DensePeer {
 public:
  SparseflowDense(const DenseLinear& layer, const Tensor& x, int64_t batch)
      : layer_(layer),
        x_(x),
        batch_(batch),
        y_(Buffer::zeros(x.dtype(), batch * layer.outFeatures())) {}
  std::string name() const override {
    return std::string("sparseflow dense ") + dtypeName(layer_.weightType()) + " (" +
           layer_.describe(batch_) + ")";
  }
  void run() override { layer_.forward(x_.values().data(), x_.dtype(), batch_, y_.data()); }

 private:
  const DenseLinear& layer_;
  Tensor x_;
  int64_t batch_;
  Buffer y_;
};

}  // namespace

std::unique_ptr<DensePeer> makeSparseflowDensePeer(const DenseLinear& layer, const Tensor& x,
                                                   int64_t batch) {
  return std::make_unique<SparseflowDense>(layer, x, batch);
}

}  // namespace sparseflow::bench
