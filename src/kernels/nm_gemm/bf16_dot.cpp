// The bf16 dot path of the 2:4 GEMM (see bf16_dot.h), with raw AVX-512 intrinsics in functions
// compiled for AVX-512 BF16 + VBMI only (called after a run-time CPU check).
//
// The packed layout is the 16-lane one of packed_weights.h: block (p, s) holds 8 slots of row 2p
// then 8 of row 2p+1 over columns 16s..16s+15, slots 2g and 2g+1 being group g's two weights.
// Two consecutive blocks (64 bytes) are one vector of 32 bf16 = 16 dot lanes, one group each:
// lanes 0-3 and 8-11 add into row 2p, lanes 4-7 and 12-15 into row 2p+1. Their 64 bits of
// metadata become 32 word indices into a 32-column window of X (vpmultishiftqb, then one
// ternary-logic and/or), vpermw gathers the X pairs, vdpbf16ps multiplies and adds.
#include "kernels/nm_gemm/bf16_dot.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "kernels/nm_gemm/pair_blocks.h"
#include "support/check.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SF_BF16_DOT_X86 1
// GCC 12's AVX-512 headers fill unused operands with deliberately undefined vectors, which its
// own -Wuninitialized then reports at every inlined use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define SF_BF16_DOT_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi,avx512bf16")))
#else
#define SF_BF16_DOT_X86 0
#endif

namespace sparseflow::kernels {

bool bf16DotSupported() {
#if SF_BF16_DOT_X86
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bf16");
  }();
  return supported;
#else
  return false;
#endif
}

bool bf16DotApplies(const PackedNMWeights& weights, DType xType) {
  return weights.valueType == DType::kBF16 && xType == DType::kBF16 && weights.lanes == 16 &&
         bf16DotSupported();
}

#if SF_BF16_DOT_X86
namespace {

constexpr int64_t kWindow = 32;      // X columns (bf16) per vector: two 16-column steps
constexpr int64_t kBlockBytes = 32;  // one step's 16 bf16 weights of a row pair
constexpr int64_t kMetaBytes = 4;    // one step's 16 two-bit offsets
constexpr int64_t kPrefetchBytes = 2048;

/// Per word lane t of a vector: where vpmultishiftqb takes its offset bits (2t, in the low byte)
/// and the first window column of its group (16 × block + 4 × group within the block's row).
struct DotConstants {
  alignas(64) uint8_t shiftControl[64];
  alignas(64) uint16_t groupBase[32];
  DotConstants() {
    for (int j = 0; j < 64; ++j) shiftControl[j] = static_cast<uint8_t>(j % 2 == 0 ? j : 0);
    for (int t = 0; t < 32; ++t) {
      const int block = t / 16, k = t % 16;
      groupBase[t] = static_cast<uint16_t>(16 * block + 4 * ((k % 8) / 2));
    }
  }
};

/// The 32 word indices (into a 32-column X window) that 64 bits of metadata select.
SF_BF16_DOT_TARGET inline __m512i windowIndices(uint64_t meta, __m512i control, __m512i base) {
  const __m512i bits =
      _mm512_multishift_epi64_epi8(control, _mm512_set1_epi64(static_cast<long long>(meta)));
  // (bits & 3) | base: the base's two low bits are zero.
  return _mm512_ternarylogic_epi32(bits, _mm512_set1_epi16(3), base, 0xEA);
}

SF_BF16_DOT_TARGET inline __m512 dot(__m512 acc, __m512i weights, __m512i x) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(weights), reinterpret_cast<__m512bh>(x));
}

/// The two 256-bit halves of v added: lanes 0-3 row 2p's, 4-7 row 2p+1's.
SF_BF16_DOT_TARGET inline __m256 fold(__m512 v) {
  return _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
}

/// The sums of four accumulators' row-2p lanes (0-3, 8-11) and row-2p+1 lanes (4-7, 12-15):
/// [a even, a odd, b even, b odd, c even, c odd, d even, d odd]; a third of the instructions of
/// eight masked reductions, which cost small layers (in = 768) a fifth of their time.
SF_BF16_DOT_TARGET inline __m256 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  // Per 128-bit lane: [a01, a23, b01, b23] and [a45, a67, b45, b67]; then the quads' sums.
  const __m256 ab = _mm256_hadd_ps(fold(a), fold(b));
  const __m256 cd = _mm256_hadd_ps(fold(c), fold(d));
  const __m256 sums = _mm256_hadd_ps(ab, cd);  // [a e, b e, c e, d e, a o, b o, c o, d o]
  return _mm256_permutexvar_ps(_mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7), sums);
}

/// P row pairs × BB batch rows: the sums of rows 2·pair0 .. into out (row stride outStride).
template <int P, int BB>
SF_BF16_DOT_TARGET void dotTile(const PackedNMWeights& w, int64_t pair0, const uint16_t* xs,
                                int64_t xStride, float* out, int64_t outStride,
                                const DotConstants& dc) {
  const __m512i control = _mm512_load_si512(dc.shiftControl);
  const __m512i base = _mm512_load_si512(dc.groupBase);
  __m512 acc[P][BB];
  for (int q = 0; q < P; ++q) {
    for (int b = 0; b < BB; ++b) acc[q][b] = _mm512_setzero_ps();
  }
  const int64_t steps = w.steps, full = steps / 2;
  const uint8_t* values = w.block(pair0, 0);
  const uint8_t* meta = w.blockMeta(pair0, 0);
  const int64_t pairValueStride = steps * kBlockBytes, pairMetaStride = steps * kMetaBytes;
  for (int64_t s2 = 0; s2 < full; ++s2) {
    __m512i xv[BB];
    for (int b = 0; b < BB; ++b) {
      xv[b] = _mm512_loadu_si512(xs + b * xStride + s2 * kWindow);
      // Kept in a register: GCC would fold the load into each vpermw, and loads (one 64-byte
      // load a cycle on Zen 4) then outnumber the dot products.
      asm("" : "+v"(xv[b]));
    }
    for (int q = 0; q < P; ++q) {
      const uint8_t* v = values + q * pairValueStride + s2 * 2 * kBlockBytes;
      if constexpr (BB >= 4)
        _mm_prefetch(reinterpret_cast<const char*>(v) + kPrefetchBytes, _MM_HINT_T0);
      const __m512i wv = _mm512_loadu_si512(v);
      uint64_t word;
      std::memcpy(&word, meta + q * pairMetaStride + s2 * 2 * kMetaBytes, sizeof(word));
      const __m512i idx = windowIndices(word, control, base);
      for (int b = 0; b < BB; ++b) {
        acc[q][b] = dot(acc[q][b], wv, _mm512_permutexvar_epi16(idx, xv[b]));
      }
    }
  }
  if (steps % 2 != 0) {  // the last step alone: its 16 weights in the low half, zeros above
    __m512i xv[BB];
    for (int b = 0; b < BB; ++b) xv[b] = _mm512_loadu_si512(xs + b * xStride + full * kWindow);
    for (int q = 0; q < P; ++q) {
      const __m512i wv =
          _mm512_maskz_loadu_epi16(0xFFFFu, values + q * pairValueStride + full * 2 * kBlockBytes);
      uint32_t word;
      std::memcpy(&word, meta + q * pairMetaStride + full * 2 * kMetaBytes, sizeof(word));
      const __m512i idx = windowIndices(word, control, base);
      for (int b = 0; b < BB; ++b) {
        acc[q][b] = dot(acc[q][b], wv, _mm512_permutexvar_epi16(idx, xv[b]));
      }
    }
  }
  // Four accumulators at a time, (q, b) in batch-major order, zeros past the last.
  constexpr int kCount = P * BB;
  __m512 flat[(kCount + 3) / 4 * 4];
  for (int i = 0; i < (kCount + 3) / 4 * 4; ++i) {
    flat[i] = i < kCount ? acc[i % P][i / P] : _mm512_setzero_ps();
  }
  for (int i = 0; i < kCount; i += 4) {
    alignas(32) float sums[8];
    _mm256_store_ps(sums, reduce4(flat[i], flat[i + 1], flat[i + 2], flat[i + 3]));
    for (int j = 0; j < 4 && i + j < kCount; ++j) {
      const int q = (i + j) % P, b = (i + j) / P;
      out[b * outStride + 2 * q] = sums[2 * j];
      out[b * outStride + 2 * q + 1] = sums[2 * j + 1];
    }
  }
}

/// Pairs per tile of BB batch rows: 16 accumulators beside BB X vectors in 32 registers.
constexpr int dotPairs(int bb) {
  return bb >= 8 ? 2 : bb >= 4 ? 4 : bb >= 2 ? 8 : 4;
}

/// The tiles of BB batch rows over pairs [p, p1): PAIRS at a time where they fit, then halves.
template <int BB, int PAIRS>
SF_BF16_DOT_TARGET void dotTiles(const PackedNMWeights& w, int64_t p0, int64_t p, int64_t p1,
                                 const uint16_t* xb, int64_t xStride, float* tb, int64_t tileStride,
                                 const DotConstants& dc) {
  for (; p + PAIRS <= p1; p += PAIRS) {
    dotTile<PAIRS, BB>(w, p, xb, xStride, tb + 2 * (p - p0), tileStride, dc);
  }
  if constexpr (PAIRS > 1) dotTiles<BB, PAIRS / 2>(w, p0, p, p1, xb, xStride, tb, tileStride, dc);
}

/// X's rows as bf16, zero-padded to whole 32-column windows (and one window of slack).
hwy::AlignedFreeUniquePtr<uint16_t[]> paddedX(const NMGemmArgs& args, int64_t in, int64_t stride) {
  const size_t count = static_cast<size_t>(std::max<int64_t>(args.batch * stride, 1));
  auto xs = hwy::AllocateAligned<uint16_t>(count);
  SF_CHECK_CODE(xs != nullptr, ErrorCode::kOutOfMemory) << "bf16 X of " << count << " values";
  const auto* x = static_cast<const uint16_t*>(args.x);
  for (int64_t b = 0; b < args.batch; ++b) {
    uint16_t* row = xs.get() + b * stride;
    std::memcpy(row, x + b * in, static_cast<size_t>(in) * sizeof(uint16_t));
    std::memset(row + in, 0, static_cast<size_t>(stride - in) * sizeof(uint16_t));
  }
  return xs;
}

void runDot(const PackedNMWeights& w, const NMGemmArgs& args, const NMGemmPlan& plan) {
  const int64_t stride = (w.steps + 1) / 2 * kWindow;
  const auto xs = paddedX(args, w.inFeatures, stride);
  const DotConstants dc;
  const int64_t out = w.outFeatures;
  const int64_t tileStride = 2 * std::max<int64_t>(plan.pairsPerBlock, 1);
  forEachPairBlock(
      w.pairs, plan.pairsPerBlock, args.batch, plan.threads,
      [&](auto bb, int64_t p0, int64_t p1, int64_t b, float* tb) {
        constexpr int kBB = decltype(bb)::value;
        dotTiles<kBB, dotPairs(kBB)>(w, p0, p0, p1, xs.get() + b * stride, stride, tb, tileStride,
                                     dc);
      },
      [&](float* rows, int64_t p0, int64_t p1) {
        const int64_t o0 = 2 * p0;
        const int64_t count = std::min(out, 2 * p1) - o0;
        if (count > 0) finishNMGemmTile(args, out, rows, tileStride, 0, args.batch, o0, count);
      });
}

}  // namespace
#endif  // SF_BF16_DOT_X86

void runNMGemmBF16Dot(const PackedNMWeights& weights, const NMGemmArgs& args,
                      const NMGemmPlan& plan) {
  SF_ICHECK(bf16DotApplies(weights, args.xType))
      << "the bf16 dot path needs bf16 weights packed for 16 lanes, bf16 x and AVX-512 BF16";
#if SF_BF16_DOT_X86
  runDot(weights, args, plan);
#else
  (void)plan;
#endif
}

}  // namespace sparseflow::kernels
