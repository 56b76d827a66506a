// Per-target row epilogues over a row, in place (Highway): the softmax y = exp(y - max(y)) /
// sum(exp(y - max(y))) and the layer normalization y = (y - mean) / sqrt(var + 1e-5), the formulas
// of torch.softmax / layer_norm and of the kernel language's `softmax(j, ...)` and
// `layernorm(j, ...)`. Included once per target from kernel translation units after
// hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_ROW_EPILOGUES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_ROW_EPILOGUES_INL_H_
#undef SPARSEFLOW_KERNELS_ROW_EPILOGUES_INL_H_
#else
#define SPARSEFLOW_KERNELS_ROW_EPILOGUES_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/row_epilogue.h"

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

/// Layer normalization of `count` values in place: (y - mean) / sqrt(var + 1e-5) with the biased
/// variance about the mean. Two passes with the corrected two-pass formula (Chan, Golub and
/// LeVeque): the second pass also sums the deviations d = y - mean, which are not zero when the
/// first pass' mean is rounded, and corrects mean += Σd / n and var = (Σd² - (Σd)² / n) / n. A
/// row of equal values then normalizes to zeros (the rounding of the mean, divided by
/// sqrt(1e-5), had made them 1e-4). NaN and ±inf follow the formula (either makes the row NaN).
/// f32 sums in vectors of f32 partial sums; f64 element by element. `eps` (default 1e-5), and
/// with `gamma` and `beta` (count values each, or null) y = y_normalized * gamma + beta.
template <typename T>
void layerNormScalar(T* HWY_RESTRICT y, int64_t count, T eps = T(1e-5),
                     const T* HWY_RESTRICT gamma = nullptr, const T* HWY_RESTRICT beta = nullptr) {
  T sum = 0;
  for (int64_t t = 0; t < count; ++t) sum += y[t];
  const T n = static_cast<T>(count);
  T mean = sum / n;
  T deviations = 0, squares = 0;
  for (int64_t t = 0; t < count; ++t) {
    deviations += y[t] - mean;
    squares += (y[t] - mean) * (y[t] - mean);
  }
  const T raw = (squares - deviations * deviations / n) / n;
  const T variance = raw < T(0) ? T(0) : raw;  // rounding below zero; NaN stays NaN
  mean += deviations / n;
  const T scale = T(1) / std::sqrt(variance + eps);
  for (int64_t t = 0; t < count; ++t) {
    y[t] = (y[t] - mean) * scale;
    if (gamma) y[t] *= gamma[t];
    if (beta) y[t] += beta[t];
  }
}

inline void layerNormSpan(double* HWY_RESTRICT y, int64_t count) {
  layerNormScalar(y, count);
}

inline void layerNormSpan(float* HWY_RESTRICT y, int64_t count, float eps = 1e-5f,
                          const float* HWY_RESTRICT gamma = nullptr,
                          const float* HWY_RESTRICT beta = nullptr) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (count < lanes) return layerNormScalar(y, count, eps, gamma, beta);
  auto vsum = hn::Zero(d);
  int64_t t = 0;
  for (; t + lanes <= count; t += lanes) vsum = hn::Add(vsum, hn::LoadU(d, y + t));
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (int64_t r = t; r < count; ++r) sum += y[r];
  const float n = static_cast<float>(count);
  float mean = sum / n;
  const auto first = hn::Set(d, mean);
  auto vdev = hn::Zero(d), vsq = hn::Zero(d);
  for (t = 0; t + lanes <= count; t += lanes) {
    const auto x = hn::Sub(hn::LoadU(d, y + t), first);
    vdev = hn::Add(vdev, x);
    vsq = hn::MulAdd(x, x, vsq);
  }
  float deviations = hn::GetLane(hn::SumOfLanes(d, vdev));
  float squares = hn::GetLane(hn::SumOfLanes(d, vsq));
  for (int64_t r = t; r < count; ++r) {
    deviations += y[r] - mean;
    squares += (y[r] - mean) * (y[r] - mean);
  }
  const float raw = (squares - deviations * deviations / n) / n;
  const float variance = raw < 0.0f ? 0.0f : raw;  // rounding below zero; NaN stays NaN
  mean += deviations / n;
  const auto vmean = hn::Set(d, mean);
  const float scale = 1.0f / std::sqrt(variance + eps);
  const auto vscale = hn::Set(d, scale);
  for (t = 0; t + lanes <= count; t += lanes) {
    auto v = hn::Mul(hn::Sub(hn::LoadU(d, y + t), vmean), vscale);
    if (gamma) v = hn::Mul(v, hn::LoadU(d, gamma + t));
    if (beta) v = hn::Add(v, hn::LoadU(d, beta + t));
    hn::StoreU(v, d, y + t);
  }
  for (int64_t r = t; r < count; ++r) {
    y[r] = (y[r] - mean) * scale;
    if (gamma) y[r] *= gamma[r];
    if (beta) y[r] += beta[r];
  }
}

/// The row epilogue `row` over `count` values in place.
template <typename T>
HWY_INLINE void rowEpilogueSpan(RowEpilogue row, T* HWY_RESTRICT y, int64_t count) {
  if (row == RowEpilogue::kSoftmax) softmaxSpan(y, count);
  if (row == RowEpilogue::kLayerNorm) layerNormSpan(y, count);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
