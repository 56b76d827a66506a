// Per-target SIMD activations (Highway) and the epilogue over a span of f32 outputs.
// Included once per target from kernel translation units after hwy/foreach_target.h.
// NaN and ±inf give torch's values (the float64 references'): the vector formulas clamp and
// approximate for finite inputs, and applySpan sets the lanes whose input is not finite.
#if defined(SPARSEFLOW_KERNELS_ACTIVATIONS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_ACTIVATIONS_INL_H_
#undef SPARSEFLOW_KERNELS_ACTIVATIONS_INL_H_
#else
#define SPARSEFLOW_KERNELS_ACTIVATIONS_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/activation_list.h"
#include "kernels/activation_reference.h"
#include "sparseflow/epilogue.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct VecIdentity {
  template <class D, class V>
  static V apply(D, V v) {
    return v;
  }
};

struct VecRelu {
  template <class D, class V>
  static V apply(D d, V v) {
    // Not Max(v, 0): vmaxps returns its second operand when one is NaN. A compare keeps NaN
    // (and -0) as torch.relu does.
    return hn::IfThenZeroElse(hn::Lt(v, hn::Zero(d)), v);
  }
};

/// exp(x) with the argument clamped to where f32 exp is finite and normal (NaN lanes are set by
/// applySpan).
template <class D, class V>
V clampedExp(D d, V x) {
  return hn::Exp(d, hn::Min(hn::Max(x, hn::Set(d, -87.0f)), hn::Set(d, 88.0f)));
}

struct VecSilu {
  template <class D, class V>
  static V apply(D d, V v) {
    return hn::Div(v, hn::Add(hn::Set(d, 1.0f), clampedExp(d, hn::Neg(v))));
  }
};

/// x * Φ(x) with Φ from erfc (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7), written so the
/// negative tail keeps its relative accuracy: Φ(x) = erfc(-x/√2) / 2.
struct VecGeluErf {
  template <class D, class V>
  static V apply(D d, V v) {
    const V z = hn::Mul(hn::Abs(v), hn::Set(d, 0.70710678118654752f));
    const V t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(hn::Set(d, 0.3275911f), z, hn::Set(d, 1.0f)));
    V poly = hn::Set(d, 1.061405429f);
    poly = hn::MulAdd(poly, t, hn::Set(d, -1.453152027f));
    poly = hn::MulAdd(poly, t, hn::Set(d, 1.421413741f));
    poly = hn::MulAdd(poly, t, hn::Set(d, -0.284496736f));
    poly = hn::MulAdd(poly, t, hn::Set(d, 0.254829592f));
    poly = hn::Mul(poly, t);
    const V erfc = hn::Mul(poly, clampedExp(d, hn::Neg(hn::Mul(z, z))));  // erfc(|x|/√2)
    const V half = hn::Set(d, 0.5f);
    const V phiNegative = hn::Mul(half, erfc);
    const V phi =
        hn::IfThenElse(hn::Lt(v, hn::Zero(d)), phiNegative, hn::Sub(hn::Set(d, 1.0f), phiNegative));
    return hn::Mul(v, phi);
  }
};

struct VecGeluTanh {
  template <class D, class V>
  static V apply(D d, V v) {
    const V inner = hn::Mul(hn::Set(d, 0.7978845608028654f),
                            hn::MulAdd(hn::Mul(hn::Set(d, 0.044715f), v), hn::Mul(v, v), v));
    const V half = hn::Mul(hn::Set(d, 0.5f), v);
    return hn::MulAdd(half, hn::Tanh(d, inner), half);
  }
};

/// F at a vector `v`, with the lanes where `v` is NaN or ±inf set to the reference's value there
/// (`atInf` = reference(+inf), `atMinusInf` = reference(-inf); NaN stays NaN).
template <class F, class D, class V>
V applyExact(D d, V v, float atInf, float atMinusInf) {
  V r = F::apply(d, v);
  if (HWY_UNLIKELY(!hn::AllTrue(d, hn::IsFinite(v)))) {
    const V inf = hn::Set(d, HUGE_VALF);
    r = hn::IfThenElse(hn::Eq(v, inf), hn::Set(d, atInf), r);
    r = hn::IfThenElse(hn::Eq(v, hn::Neg(inf)), hn::Set(d, atMinusInf), r);
    r = hn::IfThenElse(hn::IsNaN(v), v, r);
  }
  return r;
}

/// F's values at +inf and -inf (from its float64 reference), which the vector formulas do not give.
struct InfinityValues {
  float atInf = 0, atMinusInf = 0;
};

/// y[i] = F(y[i] + bias[i]) for i < count (bias may be null), with F's values at ±inf given
/// (kernels that apply the epilogue row by row compute them once per call).
template <class F>
void applySpanWith(float* HWY_RESTRICT y, const float* HWY_RESTRICT bias, int64_t count,
                   InfinityValues inf) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float atInf = inf.atInf, atMinusInf = inf.atMinusInf;
  int64_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    auto v = hn::LoadU(d, y + i);
    if (bias != nullptr) v = hn::Add(v, hn::LoadU(d, bias + i));
    hn::StoreU(applyExact<F>(d, v, atInf, atMinusInf), d, y + i);
  }
  if (i < count) {  // The tail through a zero-padded vector: same arithmetic as the body.
    constexpr size_t kMaxLanes = hn::MaxLanes(hn::ScalableTag<float>());
    HWY_ALIGN float tail[kMaxLanes] = {};
    HWY_ALIGN float tailBias[kMaxLanes] = {};
    const size_t rest = static_cast<size_t>(count - i);
    std::memcpy(tail, y + i, rest * sizeof(float));
    if (bias != nullptr) std::memcpy(tailBias, bias + i, rest * sizeof(float));
    auto v = hn::Add(hn::Load(d, tail), hn::Load(d, tailBias));
    hn::Store(applyExact<F>(d, v, atInf, atMinusInf), d, tail);
    std::memcpy(y + i, tail, rest * sizeof(float));
  }
}

/// y[i] = F(y[i] + bias[i]) for i < count (bias may be null); `reference` is F's float64
/// definition, which gives the value at ±inf.
template <class F>
void applySpan(float* HWY_RESTRICT y, const float* HWY_RESTRICT bias, int64_t count,
               double (*reference)(double)) {
  applySpanWith<F>(
      y, bias, count,
      {static_cast<float>(reference(HUGE_VAL)), static_cast<float>(reference(-HUGE_VAL))});
}

/// The activation's values at ±inf, for applyEpilogueWith.
inline InfinityValues infinityValues(Activation activation) {
  switch (activation) {
#define SF_ACTIVATION_CASE(e, name, ref, vec) \
  case Activation::e:                         \
    return {static_cast<float>(ref(HUGE_VAL)), static_cast<float>(ref(-HUGE_VAL))};
    SF_ACTIVATION_LIST(SF_ACTIVATION_CASE)
#undef SF_ACTIVATION_CASE
  }
  return {};
}

/// The epilogue over a span of f32 outputs: y = activation(y + bias), bias may be null.
inline void applyEpilogue(Activation activation, float* HWY_RESTRICT y,
                          const float* HWY_RESTRICT bias, int64_t count) {
  switch (activation) {
#define SF_ACTIVATION_CASE(e, name, ref, vec) \
  case Activation::e: applySpan<vec>(y, bias, count, &ref); return;
    SF_ACTIVATION_LIST(SF_ACTIVATION_CASE)
#undef SF_ACTIVATION_CASE
  }
}

/// applyEpilogue with the activation's values at ±inf computed once by the caller
/// (infinityValues), for kernels that apply it to many short spans.
inline void applyEpilogueWith(Activation activation, float* HWY_RESTRICT y,
                              const float* HWY_RESTRICT bias, int64_t count, InfinityValues inf) {
  switch (activation) {
#define SF_ACTIVATION_CASE(e, name, ref, vec) \
  case Activation::e: applySpanWith<vec>(y, bias, count, inf); return;
    SF_ACTIVATION_LIST(SF_ACTIVATION_CASE)
#undef SF_ACTIVATION_CASE
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
