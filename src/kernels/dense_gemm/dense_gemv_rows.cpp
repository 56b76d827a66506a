// The dense GEMV on unpacked row-major weights (see dense_gemv_rows.h; Highway, compiled once per
// SIMD target): each output a dot product in four vector chains, a block of outputs finished
// with the fused epilogue of the GEMM tiles (finishTile).
#include "kernels/dense_gemm/dense_gemv_rows.h"

#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "support/check.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dense_gemm/dense_gemv_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/gemm_tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace sparseflow::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Outputs per block at most: the epilogue's unit and the unit of work a thread takes.
constexpr int64_t kBlock = 64;

/// row · x over `in` values.
template <typename T>
HWY_INLINE T dot(const T* HWY_RESTRICT row, const T* HWY_RESTRICT x, int64_t in) {
  const hn::ScalableTag<T> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t k = 0;
  for (; k + 4 * n <= in; k += 4 * n) {
    a0 = hn::MulAdd(hn::LoadU(d, row + k), hn::LoadU(d, x + k), a0);
    a1 = hn::MulAdd(hn::LoadU(d, row + k + n), hn::LoadU(d, x + k + n), a1);
    a2 = hn::MulAdd(hn::LoadU(d, row + k + 2 * n), hn::LoadU(d, x + k + 2 * n), a2);
    a3 = hn::MulAdd(hn::LoadU(d, row + k + 3 * n), hn::LoadU(d, x + k + 3 * n), a3);
  }
  for (; k + n <= in; k += n) a0 = hn::MulAdd(hn::LoadU(d, row + k), hn::LoadU(d, x + k), a0);
  T sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; k < in; ++k) sum += row[k] * x[k];
  return sum;
}

template <typename T>
void gemvRows(const T* w, int64_t out, int64_t in, const GemmArgs& args, int32_t threads) {
  const T* x = static_cast<const T*>(args.x);
  int team = out * in < 65536 ? 1 : (threads > 0 ? threads : omp_get_max_threads());
  team = static_cast<int>(std::min<int64_t>(team, out));
  // Blocks small enough that every thread gets several (few outputs over a long k: 64 x 65536
  // still runs on every core), at most kBlock.
  const int64_t block = std::clamp<int64_t>(ceilDiv(out, 4 * int64_t{team}), 1, kBlock);
  const int64_t blocks = ceilDiv(out, block);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    alignas(64) T tile[kBlock];
    const int64_t o0 = blk * block, count = std::min(block, out - o0);
    for (int64_t o = 0; o < count; ++o) tile[o] = dot(w + (o0 + o) * in, x, in);
    finishTile(args, out, tile, kBlock, 0, 1, o0, count);
  }
}

void RunDenseGemvRows(const void* w, DType type, int64_t out, int64_t in, const GemmArgs& args,
                      int32_t threads) {
  if (type == DType::kF64) return gemvRows(static_cast<const double*>(w), out, in, args, threads);
  gemvRows(static_cast<const float*>(w), out, in, args, threads);
}

}  // namespace sparseflow::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sparseflow::kernels {

HWY_EXPORT(RunDenseGemvRows);

void runDenseGemvRows(const void* w, DType type, int64_t out, int64_t in, const GemmArgs& args,
                      int32_t threads) {
  SF_ICHECK(type == DType::kF32 || type == DType::kF64)
      << "the row-major GEMV takes f32 or f64 weights, not " << dtypeName(type);
  SF_ICHECK(args.batch == 1 && args.xType == type && args.yType == type)
      << "the row-major GEMV takes one row of x, x and y in the weights' dtype";
  HWY_DYNAMIC_DISPATCH(RunDenseGemvRows)(w, type, out, in, args, threads);
}

}  // namespace sparseflow::kernels
#endif  // HWY_ONCE
