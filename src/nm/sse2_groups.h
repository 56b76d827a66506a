// SSE2 (the x86-64 baseline, so no run-time dispatch) for groups of m = 4, 8 or 16 f32 values,
// four groups at a time: magnitudes are compared as integers after 4x4 transposes, so one compare
// serves four groups. f16/bf16 rows are widened to f32 first (exact, order-preserving). The impact
// sums add in the same per-lane order as the scalar ImpactLanes: the results are bit-for-bit
// those of the scalar path.
#pragma once

#if defined(__SSE2__)
#define SPARSEFLOW_NM_SSE2 1

#include <emmintrin.h>

#include <array>
#include <cstdint>

#include "nm/nm_kernels.h"

namespace sparseflow::nm::detail::sse2 {

/// Four groups of kM f32 (4 * kM consecutive values) in column order: vector g * kM/4 + b holds
/// elements 4b..4b+3 of group g. `stays` has all-ones lanes for the elements that stay.
template <int kM>
struct Block {
  static constexpr int kVectors = kM;  // 4 groups x kM/4 vectors each
  __m128 values[kM];
  __m128i stays[kM];
};

inline void transpose(__m128i& a, __m128i& b, __m128i& c, __m128i& d) {
  __m128 w = _mm_castsi128_ps(a), x = _mm_castsi128_ps(b);
  __m128 y = _mm_castsi128_ps(c), z = _mm_castsi128_ps(d);
  _MM_TRANSPOSE4_PS(w, x, y, z);
  a = _mm_castps_si128(w), b = _mm_castps_si128(x), c = _mm_castps_si128(y);
  d = _mm_castps_si128(z);
}

/// Between column order (vector g * kM/4 + b) and element order (vector e: element e of the four
/// groups, one per lane). The same call maps either way.
template <int kM>
inline void transposeGroups(const __m128i* in, __m128i* out) {
  constexpr int kPer = kM / 4;
  for (int b = 0; b < kPer; ++b) {
    __m128i r0 = in[b], r1 = in[kPer + b], r2 = in[2 * kPer + b], r3 = in[3 * kPer + b];
    transpose(r0, r1, r2, r3);
    out[4 * b] = r0, out[4 * b + 1] = r1, out[4 * b + 2] = r2, out[4 * b + 3] = r3;
  }
}
/// The inverse of transposeGroups.
template <int kM>
inline void untransposeGroups(const __m128i* in, __m128i* out) {
  constexpr int kPer = kM / 4;
  for (int b = 0; b < kPer; ++b) {
    __m128i r0 = in[4 * b], r1 = in[4 * b + 1], r2 = in[4 * b + 2], r3 = in[4 * b + 3];
    transpose(r0, r1, r2, r3);
    out[b] = r0, out[kPer + b] = r1, out[2 * kPer + b] = r2, out[3 * kPer + b] = r3;
  }
}

/// Magnitude pruning of four groups at x: the n largest nonzero magnitudes of each group stay,
/// ties to the lower column. Lanes of `nonFinite` become all-ones for a NaN or Inf.
template <int kM>
inline Block<kM> selectBlock(const float* x, int n, __m128i& nonFinite) {
  Block<kM> q;
  const __m128i absMask = _mm_set1_epi32(0x7fffffff), maxFinite = _mm_set1_epi32(0x7f7fffff);
  const __m128i ones = _mm_set1_epi32(-1), zero = _mm_setzero_si128();
  __m128i mag[kM], e[kM], rank[kM];
  for (int v = 0; v < kM; ++v) {
    q.values[v] = _mm_loadu_ps(x + 4 * v);
    mag[v] = _mm_and_si128(_mm_castps_si128(q.values[v]), absMask);
    nonFinite = _mm_or_si128(nonFinite, _mm_cmpgt_epi32(mag[v], maxFinite));
  }
  transposeGroups<kM>(mag, e);
  // Minus the number of elements that beat each one: j after i beats it when larger, j before i
  // when not smaller. Magnitudes are below 2^31, so signed compares order them.
  for (int i = 0; i < kM; ++i) rank[i] = zero;
  for (int i = 0; i < kM; ++i) {
    for (int j = i + 1; j < kM; ++j) {
      const __m128i jBeatsI = _mm_cmpgt_epi32(e[j], e[i]);
      rank[i] = _mm_add_epi32(rank[i], jBeatsI);
      rank[j] = _mm_add_epi32(rank[j], _mm_xor_si128(jBeatsI, ones));
    }
  }
  const __m128i minusN = _mm_set1_epi32(-n);
  for (int i = 0; i < kM; ++i) {
    rank[i] = _mm_andnot_si128(_mm_cmpeq_epi32(e[i], zero), _mm_cmpgt_epi32(rank[i], minusN));
  }
  untransposeGroups<kM>(rank, q.stays);
  return q;
}

/// Four groups at x that are n:kM already: every nonzero stays. Lanes of `tooMany` become
/// all-ones for a group with more than n nonzeros.
template <int kM>
inline Block<kM> nonzeroBlock(const float* x, int n, __m128i& tooMany) {
  Block<kM> q;
  const __m128i absMask = _mm_set1_epi32(0x7fffffff), zero = _mm_setzero_si128();
  const __m128i ones = _mm_set1_epi32(-1);
  for (int v = 0; v < kM; ++v) {
    q.values[v] = _mm_loadu_ps(x + 4 * v);
    const __m128i mag = _mm_and_si128(_mm_castps_si128(q.values[v]), absMask);
    q.stays[v] = _mm_xor_si128(_mm_cmpeq_epi32(mag, zero), ones);
  }
  __m128i e[kM];
  transposeGroups<kM>(q.stays, e);
  __m128i minusCount = zero;
  for (int i = 0; i < kM; ++i) minusCount = _mm_add_epi32(minusCount, e[i]);
  tooMany = _mm_or_si128(tooMany, _mm_cmplt_epi32(minusCount, _mm_set1_epi32(-n)));
  return q;
}

/// The kM-bit mask of the elements of group g that stay.
template <int kM>
inline uint32_t staysMask(const Block<kM>& q, int g) {
  uint32_t mask = 0;
  for (int b = 0; b < kM / 4; ++b) {
    mask |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(q.stays[g * (kM / 4) + b])))
            << (4 * b);
  }
  return mask;
}

/// Where the n slots of a 4-group go, for each 4-bit mask of the nonzeros that stay: offsets
/// (padding at the smallest unused ones), a mask per slot (all-ones for a stored value, 0 for
/// padding), and the packed meta.
struct SlotPlan {
  uint8_t offsets[3];
  uint8_t meta;  // the n offsets at 2 bits each, LSB first
  uint32_t keep[3];
};

/// The plans for n = 1, 2, 3 (index n - 1), by mask.
inline const std::array<std::array<SlotPlan, 16>, 3>& slotPlans() {
  static const auto plans = [] {
    std::array<std::array<SlotPlan, 16>, 3> out{};
    for (int n = 1; n <= 3; ++n) {
      for (int stored = 0; stored < 16; ++stored) {
        const int count = std::popcount(static_cast<unsigned>(stored));
        SlotPlan& plan = out[static_cast<size_t>(n - 1)][static_cast<size_t>(stored)];
        if (count > n) continue;  // never stored: prune keeps n, compress refuses the group
        uint64_t slots = slotMask(static_cast<uint64_t>(stored), count, n);
        for (int k = 0; k < n; ++k) {
          const int off = std::countr_zero(slots);
          slots &= slots - 1;
          plan.offsets[k] = static_cast<uint8_t>(off);
          plan.keep[k] = (stored >> off) & 1 ? 0xffffffffu : 0u;
          plan.meta = static_cast<uint8_t>(plan.meta | off << (2 * k));
        }
      }
    }
    return out;
  }();
  return plans;
}

/// Number of set bits of a group mask (SWAR: no popcnt instruction in the x86-64 baseline).
inline int bitCount(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return static_cast<int>((((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

/// The bits of a float or 16-bit float value, and back.
template <typename Storage>
using BitsOf = std::conditional_t<sizeof(Storage) == 4, uint32_t, uint16_t>;

/// Writes the kN slots of each of the four groups of 4 in q (16 columns) to values and meta,
/// taking the values from x (the row in its own dtype; q may hold it widened to f32). Returns
/// the advanced values pointer.
template <int kN, typename Storage>
inline Storage* emitBlock4(const Block<4>& q, const Storage* x, Storage* values, MetaWriter& meta) {
  using Bits = BitsOf<Storage>;
  const std::array<SlotPlan, 16>& plans = slotPlans()[kN - 1];
  uint32_t packed = 0;
  for (int g = 0; g < 4; ++g) {
    const SlotPlan& plan =
        plans[static_cast<size_t>(_mm_movemask_ps(_mm_castsi128_ps(q.stays[g])))];
    for (int s = 0; s < kN; ++s) {
      values[kN * g + s] = std::bit_cast<Storage>(static_cast<Bits>(
          std::bit_cast<Bits>(x[4 * g + plan.offsets[s]]) & static_cast<Bits>(plan.keep[s])));
    }
    packed |= static_cast<uint32_t>(plan.meta) << (2 * kN * g);
  }
  meta.put(packed, 8 * kN);
  return values + 4 * kN;
}

/// As emitBlock4 for groups of 8 or 16 and any n (meta at `bits` per offset).
template <int kM, typename Storage>
inline Storage* emitBlock(const Block<kM>& q, const Storage* x, int n, int bits, Storage* values,
                          MetaWriter& meta) {
  using Bits = BitsOf<Storage>;
  for (int g = 0; g < 4; ++g) {
    const uint32_t stored = staysMask<kM>(q, g);
    const Storage* group = x + kM * g;
    uint64_t slots = slotMask(stored, bitCount(stored), n);
    for (int s = 0; s < n; ++s) {
      const int off = std::countr_zero(slots);
      slots &= slots - 1;
      const Bits keep = static_cast<Bits>(0 - static_cast<Bits>((stored >> off) & 1));
      *values++ = std::bit_cast<Storage>(static_cast<Bits>(std::bit_cast<Bits>(group[off]) & keep));
      meta.put(static_cast<uint32_t>(off), bits);
    }
  }
  return values;
}

/// Widens f16 or bf16 bits to f32, exactly, without float arithmetic on subnormals (so a
/// denormals-are-zero mode set by the caller changes nothing).
template <bool kBf16>
inline void widen(const uint16_t* in, float* out, int64_t count) {
  int64_t i = 0;
  const __m128i zero = _mm_setzero_si128();
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    __m128i lo = _mm_unpacklo_epi16(h, zero), hi = _mm_unpackhi_epi16(h, zero);
    for (__m128i* w : {&lo, &hi}) {
      if constexpr (kBf16) {
        *w = _mm_slli_epi32(*w, 16);
      } else {
        const __m128i sign = _mm_slli_epi32(_mm_and_si128(*w, _mm_set1_epi32(0x8000)), 16);
        const __m128i em = _mm_and_si128(*w, _mm_set1_epi32(0x7fff));
        const __m128i exponent = _mm_and_si128(em, _mm_set1_epi32(0x7c00));
        // Normal: rebias the exponent (127 - 15) << 23. Inf/NaN: all-ones exponent.
        const __m128i normal = _mm_add_epi32(_mm_slli_epi32(em, 13), _mm_set1_epi32(112 << 23));
        const __m128i special = _mm_or_si128(_mm_slli_epi32(em, 13), _mm_set1_epi32(0x7f800000));
        // Subnormal: mantissa * 2^-24, an integer converted exactly and scaled to a normal f32.
        const __m128i sub =
            _mm_castps_si128(_mm_mul_ps(_mm_cvtepi32_ps(em), _mm_set1_ps(0x1p-24f)));
        const __m128i isSpecial = _mm_cmpeq_epi32(exponent, _mm_set1_epi32(0x7c00));
        const __m128i isSub = _mm_cmpeq_epi32(exponent, zero);
        __m128i r =
            _mm_or_si128(_mm_and_si128(isSpecial, special), _mm_andnot_si128(isSpecial, normal));
        r = _mm_or_si128(_mm_and_si128(isSub, sub), _mm_andnot_si128(isSub, r));
        *w = _mm_or_si128(r, sign);
      }
    }
    _mm_storeu_ps(out + i, _mm_castsi128_ps(lo));
    _mm_storeu_ps(out + i + 4, _mm_castsi128_ps(hi));
  }
  for (; i < count; ++i) out[i] = kBf16 ? bf16ToFloat(in[i]) : f16ToFloat(in[i]);
}

/// The impact sums of a row prefix in SSE2 registers: lanes 0,1 and 2,3 of ImpactLanes (column
/// % 4), each lane adding its columns in order exactly as ImpactLanes::addPruned does (the
/// dropped sums equal the error sums; the maximum, exact in any order, is taken in f32).
struct ImpactAccumulator {
  __m128d absError[2], sqError[2], absKept[2], sqKept[2];
  __m128 maxError;
  __m128i kept;

  ImpactAccumulator() {
    for (int h = 0; h < 2; ++h)
      absError[h] = sqError[h] = absKept[h] = sqKept[h] = _mm_setzero_pd();
    maxError = _mm_setzero_ps();
    kept = _mm_setzero_si128();
  }

  /// Four consecutive columns (starting at a multiple of 4) and the lanes that stay.
  void add(__m128 v, __m128i stays) {
    const __m128 magnitude = _mm_and_ps(v, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
    const __m128 keptPart = _mm_and_ps(magnitude, _mm_castsi128_ps(stays));
    const __m128 errorPart = _mm_andnot_ps(_mm_castsi128_ps(stays), magnitude);
    maxError = _mm_max_ps(errorPart, maxError);
    const __m128d k[2] = {_mm_cvtps_pd(keptPart), _mm_cvtps_pd(_mm_movehl_ps(keptPart, keptPart))};
    const __m128d e[2] = {_mm_cvtps_pd(errorPart),
                          _mm_cvtps_pd(_mm_movehl_ps(errorPart, errorPart))};
    for (int h = 0; h < 2; ++h) {
      absError[h] = _mm_add_pd(absError[h], e[h]);
      sqError[h] = _mm_add_pd(sqError[h], _mm_mul_pd(e[h], e[h]));
      absKept[h] = _mm_add_pd(absKept[h], k[h]);
      sqKept[h] = _mm_add_pd(sqKept[h], _mm_mul_pd(k[h], k[h]));
    }
    kept = _mm_sub_epi32(kept, stays);
  }

  /// Moves the sums into (zeroed) scalar lanes, where a row's tail continues.
  void storeTo(ImpactLanes& lanes) const {
    for (int h = 0; h < 2; ++h) {
      _mm_storeu_pd(lanes.absError + 2 * h, absError[h]);
      _mm_storeu_pd(lanes.sqError + 2 * h, sqError[h]);
      _mm_storeu_pd(lanes.absDropped + 2 * h, absError[h]);
      _mm_storeu_pd(lanes.sqDropped + 2 * h, sqError[h]);
      _mm_storeu_pd(lanes.absKept + 2 * h, absKept[h]);
      _mm_storeu_pd(lanes.sqKept + 2 * h, sqKept[h]);
    }
    _mm_storeu_pd(lanes.maxError, _mm_cvtps_pd(maxError));
    _mm_storeu_pd(lanes.maxError + 2, _mm_cvtps_pd(_mm_movehl_ps(maxError, maxError)));
    alignas(16) int32_t counts[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(counts), kept);
    for (int l = 0; l < 4; ++l) lanes.kept[l] = counts[l];
  }
};

}  // namespace sparseflow::nm::detail::sse2

namespace sparseflow::nm::detail {

/// Which rows take the SSE2 path: f32, f16 and bf16 in groups of 4, 8 or 16.
template <typename Tr, int kM>
inline constexpr bool kUsesSse2 = (kM == 4 || kM == 8 || kM == 16) && !std::is_same_v<Tr, F64>;
/// Which of those are widened to f32 first.
template <typename Tr, int kM>
inline constexpr bool kWidensToF32 = kUsesSse2<Tr, kM> && !std::is_same_v<Tr, F32>;

/// The row as f32: itself, or widened into `scratch` (cols floats).
template <typename Tr>
inline const float* rowAsF32(const typename Tr::Storage* x, float* scratch, int64_t cols) {
  if constexpr (std::is_same_v<Tr, F32>) {
    return x;
  } else {
    sse2::widen<std::is_same_v<Tr, BF16>>(x, scratch, cols);
    return scratch;
  }
}

}  // namespace sparseflow::nm::detail

#endif  // __SSE2__
