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

/// 1 / a from the target's reciprocal estimate and one Newton step (within 2 ulp where the estimate
/// has 12 bits or more, as on every x86 target): a division costs several times more.
template <class D, class V>
V fastReciprocal(D d, V a) {
  const V r = hn::ApproximateReciprocal(a);
  return hn::Mul(r, hn::NegMulAdd(a, r, hn::Set(d, 2.0f)));
}

struct VecSilu {
  template <class D, class V>
  static V apply(D d, V v) {
    return hn::Div(v, hn::Add(hn::Set(d, 1.0f), clampedExp(d, hn::Neg(v))));
  }
};

/// x * Φ(x) = x/2 · (1 + erf(x/√2)), as torch computes it in float, with erf as the rational
/// minimax approximation of Eigen's float erf (x·P(x²)/Q(x²) over |x| ≤ 4, ±1 beyond; |error|
/// about 1e-7): no exponential and no division.
struct VecGeluErf {
  template <class D, class V>
  static V apply(D d, V v) {
    const V bound = hn::Set(d, 4.0f);
    const V scaled = hn::Mul(v, hn::Set(d, 0.70710678118654752f));
    const V x = hn::Min(hn::Max(scaled, hn::Neg(bound)), bound);
    const V x2 = hn::Mul(x, x);
    V p = hn::Set(d, -2.72614225801306e-10f);
    p = hn::MulAdd(p, x2, hn::Set(d, 2.77068142495902e-08f));
    p = hn::MulAdd(p, x2, hn::Set(d, -2.10102402082508e-06f));
    p = hn::MulAdd(p, x2, hn::Set(d, -5.69250639462346e-05f));
    p = hn::MulAdd(p, x2, hn::Set(d, -7.34990630326855e-04f));
    p = hn::MulAdd(p, x2, hn::Set(d, -2.95459980854025e-03f));
    p = hn::MulAdd(p, x2, hn::Set(d, -1.60960333262415e-02f));
    V q = hn::Set(d, -1.45660718464996e-05f);
    q = hn::MulAdd(q, x2, hn::Set(d, -2.13374055278905e-04f));
    q = hn::MulAdd(q, x2, hn::Set(d, -1.68282697438203e-03f));
    q = hn::MulAdd(q, x2, hn::Set(d, -7.37332916720468e-03f));
    q = hn::MulAdd(q, x2, hn::Set(d, -1.42647390514189e-02f));
    V erf = hn::Mul(hn::Mul(x, p), fastReciprocal(d, q));
    // ±1 exactly past the bound, so that 1 + erf is 0 there (x·Φ(x) of a large negative x is 0,
    // not x times the approximation's last bits).
    erf = hn::IfThenElse(hn::Ge(hn::Abs(scaled), bound), hn::CopySign(hn::Set(d, 1.0f), x), erf);
    const V half = hn::Mul(hn::Set(d, 0.5f), v);
    return hn::MulAdd(half, erf, half);
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

/// tanh(x) by Highway's approximation (a few ulp; ±1 at ±inf through applySpan).
struct VecTanh {
  template <class D, class V>
  static V apply(D d, V v) {
    return hn::Tanh(d, v);
  }
};

/// 1 / (1 + exp(-x)), the exponential's argument clamped to where f32 exp is finite (0 and 1 at
/// ∓inf through applySpan).
struct VecSigmoid {
  template <class D, class V>
  static V apply(D d, V v) {
    return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), clampedExp(d, hn::Neg(v))));
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
