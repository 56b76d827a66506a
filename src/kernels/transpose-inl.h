// Per-target block transposition (Highway): dst = srcᵀ for tiles that kernels vectorize over the
// batch (the csr and 2:4 linear layers' Xᵀ tiles and their outputs back into Y's rows). Included
// once per target from kernel translation units after hwy/foreach_target.h.
#if defined(SPARSEFLOW_KERNELS_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARSEFLOW_KERNELS_TRANSPOSE_INL_H_
#undef SPARSEFLOW_KERNELS_TRANSPOSE_INL_H_
#else
#define SPARSEFLOW_KERNELS_TRANSPOSE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// dst[c * dstStride + r] = src[r * srcStride + c] for r < rows, c < cols (or += with
/// `accumulate`): in blocks of 32 columns so the lines written stay in L1, f32 in 4 x 4 blocks of
/// 128-bit vectors (four loads, eight interleaves, four stores for 16 elements).
template <typename T>
HWY_INLINE void transposeInto(const T* HWY_RESTRICT src, int64_t srcStride, T* HWY_RESTRICT dst,
                              int64_t dstStride, int64_t rows, int64_t cols, bool accumulate) {
  for (int64_t c0 = 0; c0 < cols; c0 += 32) {
    const int64_t c1 = std::min(cols, c0 + 32);
    int64_t r = 0;
#if HWY_TARGET != HWY_SCALAR
    if constexpr (std::is_same_v<T, float>) {
      const hn::FixedTag<float, 4> d4;
      const hn::Repartition<uint64_t, decltype(d4)> d64;
      for (; r + 4 <= rows; r += 4) {
        int64_t c = c0;
        for (; c + 4 <= c1; c += 4) {
          const float* s0 = src + r * srcStride + c;
          const auto v0 = hn::LoadU(d4, s0), v1 = hn::LoadU(d4, s0 + srcStride);
          const auto v2 = hn::LoadU(d4, s0 + 2 * srcStride), v3 = hn::LoadU(d4, s0 + 3 * srcStride);
          const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d4, v0, v1));  // a0 b0 a1 b1
          const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d4, v2, v3));  // c0 d0 c1 d1
          const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d4, v0, v1));  // a2 b2 a3 b3
          const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d4, v2, v3));  // c2 d2 c3 d3
          const decltype(v0) out[4] = {hn::BitCast(d4, hn::InterleaveLower(d64, t0, t1)),
                                       hn::BitCast(d4, hn::InterleaveUpper(d64, t0, t1)),
                                       hn::BitCast(d4, hn::InterleaveLower(d64, t2, t3)),
                                       hn::BitCast(d4, hn::InterleaveUpper(d64, t2, t3))};
          for (int q = 0; q < 4; ++q) {
            float* o = dst + (c + q) * dstStride + r;
            hn::StoreU(accumulate ? hn::Add(hn::LoadU(d4, o), out[q]) : out[q], d4, o);
          }
        }
        for (; c < c1; ++c) {  // the block's last columns
          for (int64_t q = r; q < r + 4; ++q) {
            T& o = dst[c * dstStride + q];
            o = accumulate ? o + src[q * srcStride + c] : src[q * srcStride + c];
          }
        }
      }
    }
#endif
    for (; r < rows; ++r) {  // the last rows (all of them for f64)
      for (int64_t c = c0; c < c1; ++c) {
        T& o = dst[c * dstStride + r];
        o = accumulate ? o + src[r * srcStride + c] : src[r * srcStride + c];
      }
    }
  }
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
