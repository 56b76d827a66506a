// Input rows holding NaN or ±inf for the sparse linear layers (see nonfinite_inputs.h).
#include "kernels/nonfinite_inputs.h"

#include <cmath>
#include <cstring>

#include "kernels/epilogue_apply.h"
#include "sparseflow/build.h"
#include "support/half.h"

namespace sparseflow::kernels {
namespace {

float loadAsFloat(const void* x, DType type, int64_t at) {
  switch (type) {
    case DType::kBF16: return bf16ToFloat(static_cast<const uint16_t*>(x)[at]);
    case DType::kF16: return f16ToFloat(static_cast<const uint16_t*>(x)[at]);
    default: return static_cast<const float*>(x)[at];
  }
}

/// Whether any of `count` values from `bits` has all exponent bits set (NaN or ±inf): a
/// branchless reduction the compiler vectorizes, so the common all-finite case costs little
/// next to the GEMM.
template <typename Bits>
bool anyNonFinite(const Bits* bits, int64_t count, Bits exponent) {
  Bits any = 0;
  for (int64_t i = 0; i < count; ++i) any |= static_cast<Bits>((bits[i] & exponent) == exponent);
  return any != 0;
}

void storeRow(const float* from, int64_t count, DType type, void* to) {
  if (type == DType::kF32) {
    std::memcpy(to, from, static_cast<size_t>(count) * sizeof(float));
    return;
  }
  auto* bits = static_cast<uint16_t*>(to);
  for (int64_t k = 0; k < count; ++k)
    bits[k] = type == DType::kBF16 ? floatToBf16(from[k]) : floatToF16(from[k]);
}

}  // namespace

std::vector<int64_t> rowsWithNonFinite(const void* x, DType type, int64_t batch, int64_t in) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batch; ++b) {
    const bool any =
        type == DType::kF64 ? anyNonFinite(static_cast<const uint64_t*>(x) + b * in, in,
                                           uint64_t{0x7ff0000000000000u})
        : type == DType::kF32
            ? anyNonFinite(static_cast<const uint32_t*>(x) + b * in, in, uint32_t{0x7f800000u})
            : anyNonFinite(static_cast<const uint16_t*>(x) + b * in, in,
                           static_cast<uint16_t>(type == DType::kBF16 ? 0x7f80u : 0x7c00u));
    if (any) rows.push_back(b);
  }
  return rows;
}

namespace {

/// recomputeRows for f64 weights: accumulated in f64 with args.biasF64, the float64 reference
/// activation, stored as f64 or f32 (x's dtype).
void recomputeRowsF64(const Coo& entries, int64_t out, int64_t in, const std::vector<int64_t>& rows,
                      const GemmArgs& args) {
  std::vector<double> acc(static_cast<size_t>(out));
  for (const int64_t b : rows) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < entries.numEntries(); ++k) {
      const double w = entries.values[static_cast<size_t>(k)];
      if (w == 0.0) continue;  // an explicit zero of a padded level is padding too
      const int64_t o = entries.coords[static_cast<size_t>(2 * k)];
      const int64_t c = entries.coords[static_cast<size_t>(2 * k + 1)];
      const double x = args.xType == DType::kF64 ? static_cast<const double*>(args.x)[b * in + c]
                                                 : loadAsFloat(args.x, args.xType, b * in + c);
      acc[static_cast<size_t>(o)] += w * x;
    }
    for (int64_t o = 0; o < out; ++o) {
      const double y = args.epilogueF64(acc[static_cast<size_t>(o)],
                                        args.biasF64 ? args.biasF64[o] : 0.0, b * out + o);
      if (args.yType == DType::kF64) {
        static_cast<double*>(args.y)[b * out + o] = y;
      } else {
        static_cast<float*>(args.y)[b * out + o] = static_cast<float>(y);
      }
    }
  }
}

}  // namespace

void recomputeRows(const Tensor& weights, const std::vector<int64_t>& rows, const GemmArgs& args) {
  const int64_t out = weights.shape()[0], in = weights.shape()[1];
  // toCoo lists the stored entries; the zeros of an n:m level's padding are not among them.
  const Coo entries = toCoo(weights);
  if (weights.dtype() == DType::kF64) return recomputeRowsF64(entries, out, in, rows, args);
  const size_t elementBytes = args.yType == DType::kF32 ? 4 : 2;
  std::vector<float> acc(static_cast<size_t>(out));
  for (const int64_t b : rows) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t k = 0; k < entries.numEntries(); ++k) {
      const float w = static_cast<float>(entries.values[static_cast<size_t>(k)]);
      if (w == 0.0f) continue;  // an explicit zero of a padded level is padding too
      const int64_t o = entries.coords[static_cast<size_t>(2 * k)];
      const int64_t c = entries.coords[static_cast<size_t>(2 * k + 1)];
      acc[static_cast<size_t>(o)] += w * loadAsFloat(args.x, args.xType, b * in + c);
    }
    if (args.extended()) {  // R is f32 (y's dtype)
      const auto* r = static_cast<const float*>(args.residual);
      const bool before = r != nullptr && !args.residualAfterActivation;
      for (int64_t o = 0; o < out; ++o) {
        float& v = acc[static_cast<size_t>(o)];
        v = v * static_cast<float>(args.scale) + (args.bias ? args.bias[o] : 0.0f);
        if (before) v += r[b * out + o];
      }
      applyEpilogueF32(args.activation, acc.data(), nullptr, out);
      for (int64_t o = 0; args.clamped() && o < out; ++o)
        acc[static_cast<size_t>(o)] = args.clamp(acc[static_cast<size_t>(o)]);
      for (int64_t o = 0; r != nullptr && args.residualAfterActivation && o < out; ++o)
        acc[static_cast<size_t>(o)] += r[b * out + o];
    } else {
      applyEpilogueF32(args.activation, acc.data(), args.bias, out);
    }
    storeRow(acc.data(), out, args.yType,
             static_cast<uint8_t*>(args.y) + static_cast<size_t>(b * out) * elementBytes);
  }
}

}  // namespace sparseflow::kernels
