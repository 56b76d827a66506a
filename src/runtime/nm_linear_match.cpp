// The 2:4 linear-layer pattern and its runner (see nm_linear_match.h).
#include "runtime/nm_linear_match.h"

#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::runtime {
namespace {

const expr::Access* asAccess(const expr::ExprPtr& e) {
  return std::get_if<expr::Access>(&e->node);
}

bool isFormat(const std::map<std::string, Format>& formats, const std::string& name,
              const char* text, int32_t rank) {
  auto it = formats.find(name);
  const Format want = Format::parse(text, rank);
  return it == formats.end() ? want == Format::parse("dense", rank) : it->second == want;
}

}  // namespace

std::optional<NMLinearMatch> matchNMLinear(const expr::CheckedKernel& kernel,
                                           const std::map<std::string, Format>& formats) {
  const expr::Statement& s = kernel.statement;
  if (s.accumulate || s.lhs.indices.size() != 2) return std::nullopt;
  NMLinearMatch m;
  m.y = s.lhs.tensor;
  const std::string& b = s.lhs.indices[0];
  const std::string& o = s.lhs.indices[1];
  expr::ExprPtr e = s.rhs;
  if (const auto* u = std::get_if<expr::Unary>(&e->node)) {
    switch (u->fn) {
      case expr::UnaryFn::kRelu: m.epilogue.activation = Activation::kRelu; break;
      case expr::UnaryFn::kSilu: m.epilogue.activation = Activation::kSilu; break;
      case expr::UnaryFn::kGelu: m.epilogue.activation = Activation::kGeluErf; break;
      case expr::UnaryFn::kGeluTanh: m.epilogue.activation = Activation::kGeluTanh; break;
      default: return std::nullopt;
    }
    e = u->operand;
  }
  if (const auto* add = std::get_if<expr::Binary>(&e->node);
      add && add->op == expr::BinaryOp::kAdd) {
    const expr::Access* bias = asAccess(add->rhs);
    expr::ExprPtr sum = add->lhs;
    if (!bias) {
      bias = asAccess(add->lhs);
      sum = add->rhs;
    }
    if (!bias || bias->indices != std::vector<std::string>{o}) return std::nullopt;
    m.bias = bias->tensor;
    m.epilogue.bias = true;
    e = sum;
  }
  const auto* r = std::get_if<expr::Reduce>(&e->node);
  if (!r || r->op != expr::ReduceOp::kSum) return std::nullopt;
  const auto* mul = std::get_if<expr::Binary>(&r->body->node);
  if (!mul || mul->op != expr::BinaryOp::kMul) return std::nullopt;
  const expr::Access* x = asAccess(mul->lhs);
  const expr::Access* w = asAccess(mul->rhs);
  if (x && w && x->indices.size() == 2 && x->indices[0] == o) std::swap(x, w);
  const std::string& i = r->index;
  if (!x || !w || x->indices != std::vector<std::string>{b, i} ||
      w->indices != std::vector<std::string>{o, i}) {
    return std::nullopt;
  }
  m.x = x->tensor;
  m.w = w->tensor;
  if (m.x == m.w || !isFormat(formats, m.w, "2:4", 2) || !isFormat(formats, m.x, "dense", 2) ||
      !isFormat(formats, m.y, "dense", 2) ||
      (!m.bias.empty() && !isFormat(formats, m.bias, "dense", 1))) {
    return std::nullopt;
  }
  return m;
}

Tensor NMLinearRunner::run(const std::map<std::string, const Tensor*>& inputs,
                           DType outputType) const {
  auto get = [&](const std::string& name) -> const Tensor& {
    auto it = inputs.find(name);
    SF_USER_CHECK(it != inputs.end() && it->second != nullptr)
        << "the 2:4 linear kernel needs tensor '" << name << "'";
    return *it->second;
  };
  const Tensor& w = get(match_.w);
  const Tensor& x = get(match_.x);
  SF_USER_CHECK(w.rank() == 2 && x.rank() == 2 && x.shape()[1] == w.shape()[1])
      << "2:4 linear: " << match_.x << " is " << x.summary() << " and " << match_.w << " is "
      << w.summary() << "; the reduction index needs " << match_.x << "'s columns = " << match_.w
      << "'s columns";
  std::shared_ptr<const NMLinear> layer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Tensor* bias = match_.bias.empty() ? nullptr : &get(match_.bias);
    if (!layer_ || !packedFrom_.matches(w) || (bias && !biasFrom_.matches(*bias))) {
      std::vector<float> b;
      if (bias) {
        SF_USER_CHECK(bias->rank() == 1 && bias->shape()[0] == w.shape()[0])
            << "2:4 linear: bias '" << match_.bias << "' must have " << w.shape()[0] << " values";
        for (double v : toDense(*bias)) b.push_back(static_cast<float>(v));
      }
      const Tensor packedFrom = w.format() == Format::parse("2:4", 2) ? w : convert(w, "2:4");
      layer_ = std::make_shared<const NMLinear>(packedFrom, std::move(b), match_.epilogue);
      packedFrom_ = TensorWitness(w);
      biasFrom_ = bias ? TensorWitness(*bias) : TensorWitness();
    }
    layer = layer_;
  }
  // x in f32 or the weights' dtype, dense row-major; anything else is converted first.
  const DType xType = x.dtype() == DType::kF32 || x.dtype() == w.dtype() ? x.dtype() : DType::kF32;
  Tensor xDense = x;
  if (x.format() != Format::parse("dense", 2) || x.dtype() != xType) {
    ConvertOptions options;
    options.changeDType = x.dtype() != xType;
    options.dtype = xType;
    xDense = convert(x, Format::parse("dense", 2), options);
  }
  Tensor y = layer->forward(xDense);
  if (y.dtype() == outputType) return y;
  ConvertOptions options;
  options.changeDType = true;
  options.dtype = outputType;
  return convert(y, y.format(), options);
}

}  // namespace sparseflow::runtime
