// Per-target softmax over a row, in place (Highway): y = exp(y - max(y)) / sum(exp(y - max(y))),
// the formula torch.softmax and the kernel language's `softmax(j, ...)` use. Included once per
// target from kernel translation units after hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_SOFTMAX_INL_H_
#undef SPARSEFLOW_KERNELS_SOFTMAX_INL_H_
#else
#define SPARSEFLOW_KERNELS_SOFTMAX_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// The formula element by element, in T: the path for rows whose max is not finite (a NaN
/// anywhere makes the max NaN, as the language's max; +inf gives inf - inf = NaN; a row of -inf
/// gives NaN), and for f64.
template <typename T>
void softmaxScalar(T* HWY_RESTRICT y, int64_t count) {
  T m = -INFINITY;
  bool nan = false;
  for (int64_t t = 0; t < count; ++t) {
    nan = nan || std::isnan(y[t]);
    m = y[t] > m ? y[t] : m;
  }
  if (nan) m = NAN;
  T sum = 0;
  for (int64_t t = 0; t < count; ++t) {
    y[t] = std::exp(y[t] - m);
    sum += y[t];
  }
  for (int64_t t = 0; t < count; ++t) y[t] /= sum;
}

inline void softmaxSpan(double* HWY_RESTRICT y, int64_t count) {
  softmaxScalar(y, count);
}

/// f32: the max, the exponentials and the scale in vectors (Highway's Exp, within 1 ulp of the
/// correctly rounded value on the arguments it sees here, which are <= 0).
inline void softmaxSpan(float* HWY_RESTRICT y, int64_t count) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t t = 0;
  auto vmax = hn::Set(d, -HUGE_VALF);
  auto vnan = hn::Zero(d);  // x * 0: NaN where x is NaN or ±inf (Max drops NaN lanes)
  for (; t + lanes <= count; t += lanes) {
    const auto x = hn::LoadU(d, y + t);
    vmax = hn::Max(vmax, x);
    vnan = hn::MulAdd(x, hn::Zero(d), vnan);
  }
  float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
  bool finite = hn::AllFalse(d, hn::IsNaN(vnan));
  for (int64_t r = t; r < count; ++r) {
    m = y[r] > m ? y[r] : m;
    finite = finite && std::isfinite(y[r]);
  }
  if (HWY_UNLIKELY(!finite || !std::isfinite(m))) return softmaxScalar(y, count);
  const auto shift = hn::Set(d, m);
  // Below -87 the exponential is under f32's normal range: flush it to 0, as exp in f32 would.
  const auto low = hn::Set(d, -87.0f);
  auto vsum = hn::Zero(d);
  for (t = 0; t + lanes <= count; t += lanes) {
    const auto x = hn::Sub(hn::LoadU(d, y + t), shift);
    const auto e = hn::IfThenZeroElse(hn::Lt(x, low), hn::Exp(d, hn::Max(x, low)));
    vsum = hn::Add(vsum, e);
    hn::StoreU(e, d, y + t);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (int64_t r = t; r < count; ++r) {
    y[r] = std::exp(y[r] - m);
    sum += y[r];
  }
  const auto scale = hn::Set(d, 1.0f / sum);
  for (t = 0; t + lanes <= count; t += lanes)
    hn::StoreU(hn::Mul(hn::LoadU(d, y + t), scale), d, y + t);
  for (int64_t r = t; r < count; ++r) y[r] *= 1.0f / sum;
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
