// Per-target pieces the GEMM kernels share: element loads as f32, weight vectors loaded as f32,
// scratch allocation, and the fused epilogue + store of an f32 output tile into Y's dtype.
// Included once per target from kernel translation units after hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_GEMM_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_GEMM_TILE_INL_H_
#undef SPARSEFLOW_KERNELS_GEMM_TILE_INL_H_
#else
#define SPARSEFLOW_KERNELS_GEMM_TILE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "kernels/activations-inl.h"
#include "kernels/gemm_args.h"
#include "support/check.h"
#include "support/half.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Element i of an f32, bf16 or f16 array, as f32.
inline float toFloat(const void* base, DType type, int64_t i) {
  switch (type) {
    case DType::kBF16: return bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case DType::kF16: return f16ToFloat(static_cast<const uint16_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

/// Element i of an f64, f32, bf16 or f16 array in the accumulation type Acc (f64 values only
/// where Acc is double).
template <typename Acc>
inline Acc elementAs(const void* base, DType type, int64_t i) {
  if constexpr (std::is_same_v<Acc, double>) {
    if (type == DType::kF64) return static_cast<const double*>(base)[i];
  }
  return toFloat(base, type, i);
}

/// f16 lanes promoted to f32 with NaN and ±inf kept: Highway 1.0's emulated conversion (targets
/// without F16C: SSSE3, SSE4, scalar) maps exponent 31 to a finite 2^16·(1 + m), so an inf
/// weight became 65536 and a NaN a number.
template <class D, class VH>
HWY_INLINE hn::Vec<D> promoteF16(D d, VH half) {
  const hn::Vec<D> promoted = hn::PromoteTo(d, half);
#if HWY_TARGET >= HWY_SSE4 || defined(HWY_DISABLE_F16C)
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<uint16_t, D> du16;
  const auto bits = hn::PromoteTo(du, hn::BitCast(du16, half));
  const auto exponent = hn::Set(du, 0x7c00u);
  const auto special = hn::Eq(hn::And(bits, exponent), exponent);
  const auto f32 = hn::Or(
      hn::Or(hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u))), hn::Set(du, 0x7f800000u)),
      hn::ShiftLeft<13>(hn::And(bits, hn::Set(du, 0x3ffu))));
  return hn::IfThenElse(hn::RebindMask(d, special), hn::BitCast(d, f32), promoted);
#else
  return promoted;
#endif
}

/// Loads Lanes(d) weights of type T as D's lane type (f32, or f64 for f64 weights); weights of
/// D's own type from an aligned address.
template <typename T, class D>
HWY_INLINE hn::Vec<D> loadAsFloat(D d, const uint8_t* p) {
  if constexpr (std::is_same_v<T, hn::TFromD<D>>) {
    return hn::Load(d, reinterpret_cast<const T*>(p));
  } else if constexpr (std::is_same_v<T, hwy::float16_t>) {
    const hn::Rebind<T, D> dn;
    return promoteF16(d, hn::LoadU(dn, reinterpret_cast<const T*>(p)));
  } else {
    const hn::Rebind<T, D> dn;
    return hn::PromoteTo(d, hn::LoadU(dn, reinterpret_cast<const T*>(p)));
  }
}

/// `count` values of T (at least one), aligned and zeroed.
template <typename T>
inline hwy::AlignedFreeUniquePtr<T[]> zeroed(int64_t count) {
  auto p = hwy::AllocateAligned<T>(static_cast<size_t>(std::max<int64_t>(count, 1)));
  SF_CHECK_CODE(p != nullptr, ErrorCode::kOutOfMemory)
      << "GEMM scratch of " << count << " values of " << sizeof(T) << " bytes";
  std::memset(p.get(), 0, static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(T));
  return p;
}

inline hwy::AlignedFreeUniquePtr<float[]> zeroedFloats(int64_t count) {
  return zeroed<float>(count);
}

/// Applies the epilogue to `rows` × `count` outputs (f32, or f64 for f64 weights; row stride
/// `tileStride`) for output columns o0.. and stores them into Y in its dtype, at rows b0...
template <typename Acc>
inline void finishTile(const GemmArgs& args, int64_t outFeatures, Acc* tile, int64_t tileStride,
                       int64_t b0, int64_t rows, int64_t o0, int64_t count) {
  if constexpr (std::is_same_v<Acc, double>) {
    // f64 layers: the float64 reference activation per value (the epilogue is O(outputs), the
    // GEMM O(outputs × in)), then Y as f64 or rounded once to f32.
    for (int64_t b = 0; b < rows; ++b) {
      double* row = tile + b * tileStride;
      const int64_t at = (b0 + b) * outFeatures + o0;
      if (args.extended()) {
        for (int64_t i = 0; i < count; ++i) {
          row[i] = args.epilogueF64(row[i], args.biasF64 != nullptr ? args.biasF64[o0 + i] : 0.0,
                                    at + i);
        }
      } else if (args.biasF64 != nullptr || args.activation != Activation::kNone) {
        for (int64_t i = 0; i < count; ++i) {
          const double v = row[i] + (args.biasF64 != nullptr ? args.biasF64[o0 + i] : 0.0);
          row[i] = activationReference(args.activation, v);
        }
      }
      if (args.yType == DType::kF64) {
        std::memcpy(static_cast<double*>(args.y) + at, row, static_cast<size_t>(count) * 8);
      } else {
        auto* y = static_cast<float*>(args.y) + at;
        for (int64_t i = 0; i < count; ++i) y[i] = static_cast<float>(row[i]);
      }
    }
  } else {
    const bool apply = args.bias != nullptr || args.activation != Activation::kNone;
    for (int64_t b = 0; b < rows; ++b) {
      float* row = tile + b * tileStride;
      const int64_t at = (b0 + b) * outFeatures + o0;
      if (args.extended()) {
        // Scale, bias and a residual before the activation in one pass, the activation, then a
        // residual after it (R is f32: y's dtype).
        const auto* r = static_cast<const float*>(args.residual);
        const float scale = static_cast<float>(args.scale);
        const bool before = r != nullptr && !args.residualAfterActivation;
        for (int64_t i = 0; i < count; ++i) {
          float v = row[i] * scale + (args.bias != nullptr ? args.bias[o0 + i] : 0.0f);
          row[i] = before ? v + r[at + i] : v;
        }
        applyEpilogue(args.activation, row, nullptr, count);
        if (args.clamped()) {
          for (int64_t i = 0; i < count; ++i) row[i] = args.clamp(row[i]);
        }
        if (r != nullptr && args.residualAfterActivation) {
          for (int64_t i = 0; i < count; ++i) row[i] += r[at + i];
        }
      } else if (apply) {
        applyEpilogue(args.activation, row, args.bias ? args.bias + o0 : nullptr, count);
      }
      switch (args.yType) {
        case DType::kBF16: {
          auto* y = static_cast<uint16_t*>(args.y) + at;
          for (int64_t i = 0; i < count; ++i) y[i] = floatToBf16(row[i]);
          break;
        }
        case DType::kF16: {
          auto* y = static_cast<uint16_t*>(args.y) + at;
          for (int64_t i = 0; i < count; ++i) y[i] = floatToF16(row[i]);
          break;
        }
        default: std::memcpy(static_cast<float*>(args.y) + at, row, static_cast<size_t>(count) * 4);
      }
    }
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
