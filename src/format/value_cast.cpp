// Array value casts (see value_cast.h): one templated loop per type pair, parallel over chunks.
#include "format/value_cast.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "support/check.h"
#include "support/half.h"

namespace sparseflow {
namespace {

constexpr int64_t kChunk = 1 << 16;

struct F32 {
  using Storage = float;
  static double toDouble(float v) { return v; }
  static float fromDouble(double v) { return static_cast<float>(v); }
};
struct F64 {
  using Storage = double;
  static double toDouble(double v) { return v; }
  static double fromDouble(double v) { return v; }
};
struct F16 {
  using Storage = uint16_t;
  static double toDouble(uint16_t v) { return f16ToFloat(v); }
  // Through float: a double exactly between two halves rounds twice (documented in formats.md).
  static uint16_t fromDouble(double v) { return floatToF16(static_cast<float>(v)); }
};
struct BF16 {
  using Storage = uint16_t;
  static double toDouble(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t fromDouble(double v) { return floatToBf16(static_cast<float>(v)); }
};

template <typename Fn>
decltype(auto) dispatch(DType type, Fn&& fn) {
  switch (type) {
    case DType::kF32: return fn(F32{});
    case DType::kF64: return fn(F64{});
    case DType::kF16: return fn(F16{});
    case DType::kBF16: return fn(BF16{});
    default: SF_FAIL(kInvalidArgument) << "cannot cast values of type " << dtypeName(type);
  }
}

/// The plain loop: GCC vectorizes the f32/f64 pairs; the half types go through half.h.
template <typename From, typename To>
void castRange(const typename From::Storage* in, typename To::Storage* out, int64_t n) {
  if constexpr (std::is_same_v<From, F64> && std::is_same_v<To, F32>) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
  } else if constexpr (std::is_same_v<From, F32> && std::is_same_v<To, F64>) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(in[i]);
  } else if constexpr (std::is_same_v<From, F32> && std::is_same_v<To, BF16>) {
    for (int64_t i = 0; i < n; ++i) out[i] = floatToBf16(in[i]);
  } else if constexpr (std::is_same_v<From, BF16> && std::is_same_v<To, F32>) {
    for (int64_t i = 0; i < n; ++i) out[i] = bf16ToFloat(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = To::fromDouble(From::toDouble(in[i]));
  }
}

struct ChunkReport {
  int64_t rounded = 0, overflowed = 0;
  double maxAbs = 0, maxRel = 0;
};

/// One lane of checkRange: its counts and maxima live in registers.
struct Lane {
  int64_t rounded = 0, overflowed = 0;
  double maxAbs = 0, maxRel = 0;

  void add(double before, double after) {
    constexpr double kMax = std::numeric_limits<double>::max();
    const bool finiteBefore = std::fabs(before) <= kMax, finiteAfter = std::fabs(after) <= kMax;
    rounded += after != before && (after == after || before == before);
    overflowed += finiteBefore && !finiteAfter;
    const double error = finiteBefore && finiteAfter ? std::fabs(after - before) : 0.0;
    maxAbs = error > maxAbs ? error : maxAbs;
    // error / |before| > maxRel without a division per value (the maximum rarely moves).
    if (error > maxRel * std::fabs(before)) maxRel = error / std::fabs(before);
  }
};

/// Counts what a chunk's cast changed, over four independent lanes: a value is rounded when it
/// differs and is not NaN on both sides; a finite value that became ±Inf overflowed and leaves
/// the errors alone.
template <typename From, typename To>
void checkRange(const typename From::Storage* in, const typename To::Storage* out, int64_t n,
                ChunkReport& r) {
  Lane l0, l1, l2, l3;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    l0.add(From::toDouble(in[i]), To::toDouble(out[i]));
    l1.add(From::toDouble(in[i + 1]), To::toDouble(out[i + 1]));
    l2.add(From::toDouble(in[i + 2]), To::toDouble(out[i + 2]));
    l3.add(From::toDouble(in[i + 3]), To::toDouble(out[i + 3]));
  }
  for (; i < n; ++i) l0.add(From::toDouble(in[i]), To::toDouble(out[i]));
  for (const Lane& l : {l0, l1, l2, l3}) {
    r.rounded += l.rounded;
    r.overflowed += l.overflowed;
    r.maxAbs = std::max(r.maxAbs, l.maxAbs);
    r.maxRel = std::max(r.maxRel, l.maxRel);
  }
}

}  // namespace

void castValues(const void* in, DType from, void* out, DType to, int64_t count,
                CastReport* report) {
  SF_USER_CHECK(count >= 0) << "castValues: negative count " << count;
  dispatch(from, [&](auto f) {
    dispatch(to, [&](auto t) {
      using From = decltype(f);
      using To = decltype(t);
      const auto* src = static_cast<const typename From::Storage*>(in);
      auto* dst = static_cast<typename To::Storage*>(out);
      const int64_t chunks = (count + kChunk - 1) / kChunk;
      std::vector<ChunkReport> reports(report ? static_cast<size_t>(chunks) : 0);
#pragma omp parallel for schedule(static) if (chunks > 4 && omp_get_max_threads() > 1)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t begin = c * kChunk, n = std::min(kChunk, count - begin);
        castRange<From, To>(src + begin, dst + begin, n);
        if (report)
          checkRange<From, To>(src + begin, dst + begin, n, reports[static_cast<size_t>(c)]);
      }
      if (!report) return;
      *report = CastReport{};
      for (const ChunkReport& r : reports) {
        report->rounded += r.rounded;
        report->overflowed += r.overflowed;
        report->maxAbsError = std::max(report->maxAbsError, r.maxAbs);
        report->maxRelError = std::max(report->maxRelError, r.maxRel);
      }
    });
  });
}

Buffer castBuffer(const Buffer& buffer, DType to, CastReport* report) {
  Buffer out = Buffer::zeros(to, buffer.size());
  castValues(buffer.data(), buffer.dtype(), out.data(), to, buffer.size(), report);
  return out;
}

Tensor castTensor(const Tensor& tensor, DType to, CastReport* report) {
  if (tensor.isHybrid()) {
    std::vector<Tensor> parts;
    CastReport total;
    for (const Tensor& part : tensor.parts()) {
      CastReport r;
      parts.push_back(castTensor(part, to, report ? &r : nullptr));
      total.rounded += r.rounded;
      total.overflowed += r.overflowed;
      total.maxAbsError = std::max(total.maxAbsError, r.maxAbsError);
      total.maxRelError = std::max(total.maxRelError, r.maxRelError);
    }
    if (report) *report = total;
    return Tensor::hybrid(tensor.shape(), to, tensor.format(), std::move(parts));
  }
  std::vector<LevelStorage> levels;
  for (const LevelStorage& level : tensor.levels()) {
    levels.push_back({level.pos.clone(), level.crd.clone(), level.meta.clone()});
  }
  return Tensor(tensor.shape(), to, tensor.format(), std::move(levels),
                castBuffer(tensor.values(), to, report));
}

bool fitsF32Exactly(const double* values, int64_t count) {
  bool exact = true;
#pragma omp parallel for schedule(static) reduction(&& : exact) if (count > (1 << 18))
  for (int64_t i = 0; i < count; ++i) {
    const double v = values[i];
    exact = exact && (static_cast<double>(static_cast<float>(v)) == v || v != v);
  }
  return exact;
}

}  // namespace sparseflow
