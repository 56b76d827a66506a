// The dense GEMM driver (Highway, compiled once per SIMD target, dispatched at run time): packs
// batch chunks of X k-major per register tile, runs the tiles over thread blocks of weight panels
// in k chunks, and finishes each block with the fused epilogue.
#include "kernels/dense_gemm/dense_gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "support/check.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dense_gemm/dense_gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dense_gemm/dense_tile-inl.h"
#include "kernels/gemm_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Register tiles split a chunk of `rows` batch rows evenly (8 rows: 4 + 4, not 6 + 2).
struct TileSplit {
  int64_t tiles, base, extra;
  TileSplit(int64_t rows, int64_t maxRows)
      : tiles(ceilDiv(rows, maxRows)), base(rows / tiles), extra(rows % tiles) {}
  int64_t first(int64_t t) const { return t * base + std::min(t, extra); }
  int64_t rows(int64_t t) const { return base + (t < extra ? 1 : 0); }
};

/// The accumulation type for weights of type T: f64 for f64 weights, else f32.
template <typename T>
using AccumulatorOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// X rows [b0 + r0, b0 + r0 + mr) as Acc, k-major: dst[k · mr + r].
template <typename Acc>
void packTile(const GemmArgs& args, int64_t in, int64_t row0, int64_t mr, Acc* dst) {
  if (mr == 1 && args.xType == (std::is_same_v<Acc, double> ? DType::kF64 : DType::kF32)) {
    std::memcpy(dst, static_cast<const Acc*>(args.x) + row0 * in,
                static_cast<size_t>(in) * sizeof(Acc));
    return;
  }
  for (int64_t r = 0; r < mr; ++r) {
    for (int64_t k = 0; k < in; ++k)
      dst[k * mr + r] = elementAs<Acc>(args.x, args.xType, (row0 + r) * in + k);
  }
}

/// The tile of `mr` rows over panels [p, p1): as many panels at once as tilePanels(mr) where
/// they remain, else one; returns the panels done.
template <typename T, int MR, typename Acc>
int64_t tileOf(const uint8_t* panel, int64_t panelStride, int64_t panelsLeft, const Acc* x,
               int64_t steps, Acc* c, int64_t cStride, bool first) {
  constexpr int kPanels = tilePanels(MR);
  if (kPanels > 1 && panelsLeft >= kPanels) {
    denseTile<T, Acc, MR, kPanels>(panel, panelStride, x, steps, c, cStride, first);
    return kPanels;
  }
  denseTile<T, Acc, MR, 1>(panel, panelStride, x, steps, c, cStride, first);
  return 1;
}

template <typename T, typename Acc>
int64_t runTile(int64_t mr, const uint8_t* panel, int64_t panelStride, int64_t panelsLeft,
                const Acc* x, int64_t steps, Acc* c, int64_t cStride, bool first) {
  switch (mr) {
    case 1: return tileOf<T, 1>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
    case 2: return tileOf<T, 2>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
    case 3: return tileOf<T, 3>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
    case 4: return tileOf<T, 4>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
    case 5: return tileOf<T, 5>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
    default: return tileOf<T, 6>(panel, panelStride, panelsLeft, x, steps, c, cStride, first);
  }
}

template <typename T>
void runDense(const PackedDenseWeights& w, const GemmArgs& args, const DenseGemmPlan& plan) {
  using Acc = AccumulatorOf<T>;
  const int64_t in = w.inFeatures, out = w.outFeatures, width = w.width;
  const int64_t kChunk = std::max<int64_t>(plan.kChunk, 1);
  const int64_t blockPanels = std::max<int64_t>(plan.panelsPerBlock, 1);
  const int64_t blocks = ceilDiv(w.panels, blockPanels);
  const int64_t blockWidth = blockPanels * width;
  const int64_t chunk = std::clamp<int64_t>(plan.batchChunk, 1, args.batch);
  const int64_t stepBytes = width * static_cast<int64_t>(sizeof(T));
  const int64_t panelStride = in * stepBytes;
  auto xs = zeroed<Acc>(chunk * in);
  // One parallel region for all batch chunks: each chunk is packed, then its blocks computed;
  // the omp for's barriers keep the packed chunk alive until every block has read it.
#pragma omp parallel num_threads(plan.threads)
  {
    auto c = zeroed<Acc>(chunk * blockWidth);
    for (int64_t b0 = 0; b0 < args.batch; b0 += chunk) {
      const int64_t rows = std::min(chunk, args.batch - b0);
      const TileSplit split(rows, std::clamp(plan.tileRows, 1, 6));  // runTile's heights
#pragma omp for schedule(static)
      for (int64_t t = 0; t < split.tiles; ++t) {
        packTile(args, in, b0 + split.first(t), split.rows(t), xs.get() + split.first(t) * in);
      }
#pragma omp for schedule(dynamic, 1)
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t p0 = blk * blockPanels, p1 = std::min(w.panels, p0 + blockPanels);
        // k0 == 0 runs even when in == 0, so that the tiles start C from zero.
        for (int64_t k0 = 0; k0 == 0 || k0 < in; k0 += kChunk) {
          const int64_t steps = std::min(kChunk, in - k0);
          // Panel by panel, each one's k chunk reused from L1 by every register tile; a lone
          // tile of 1 or 2 rows (GEMV) takes several panels at once instead.
          for (int64_t p = p0; p < p1;) {
            const int64_t panelsLeft = split.tiles == 1 ? p1 - p : 1;
            int64_t done = 1;
            for (int64_t t = 0; t < split.tiles; ++t) {
              const int64_t r0 = split.first(t), mr = split.rows(t);
              done = runTile<T>(mr, w.panel(p) + k0 * stepBytes, panelStride, panelsLeft,
                                xs.get() + r0 * in + k0 * mr, steps,
                                c.get() + r0 * blockWidth + (p - p0) * width, blockWidth, k0 == 0);
            }
            p += done;
          }
        }
        const int64_t count = std::min(out, p1 * width) - p0 * width;
        finishTile(args, out, c.get(), blockWidth, b0, rows, p0 * width, count);
      }
    }
  }
}

int32_t DenseF32Lanes() {
  return static_cast<int32_t>(hn::Lanes(hn::ScalableTag<float>()));
}

int32_t DenseF64Lanes() {
  return static_cast<int32_t>(hn::Lanes(hn::ScalableTag<double>()));
}

void RunDenseGemm(const PackedDenseWeights& w, const GemmArgs& args, const DenseGemmPlan& plan) {
  const int32_t lanes = w.valueType == DType::kF64 ? DenseF64Lanes() : DenseF32Lanes();
  SF_ICHECK(w.width == 2 * lanes) << "weights packed in panels of " << w.width << ", target has "
                                  << lanes << " lanes of " << dtypeName(w.valueType);
  switch (w.valueType) {
    case DType::kF64: return runDense<double>(w, args, plan);
    case DType::kBF16: return runDense<hwy::bfloat16_t>(w, args, plan);
    case DType::kF16: return runDense<hwy::float16_t>(w, args, plan);
    default: return runDense<float>(w, args, plan);
  }
}

const char* DenseTargetName() {
  return hwy::TargetName(HWY_TARGET);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(DenseF32Lanes);
HWY_EXPORT(DenseF64Lanes);
HWY_EXPORT(DenseTargetName);
HWY_EXPORT(RunDenseGemm);

int32_t denseGemmLanes() {
  return HWY_DYNAMIC_DISPATCH(DenseF32Lanes)();
}

int32_t denseGemmLanes(DType weights) {
  return weights == DType::kF64 ? HWY_DYNAMIC_DISPATCH(DenseF64Lanes)() : denseGemmLanes();
}

const char* denseGemmTargetName() {
  return HWY_DYNAMIC_DISPATCH(DenseTargetName)();
}

void runDenseGemm(const PackedDenseWeights& weights, const GemmArgs& args,
                  const DenseGemmPlan& plan) {
  HWY_DYNAMIC_DISPATCH(RunDenseGemm)(weights, args, plan);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
