// IEEE binary16 and bfloat16 conversions to and from float, round-to-nearest-even.
#pragma once

#include <cstdint>
#include <cstring>

namespace sparseflow {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// bfloat16 bits from float: round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}
inline float bf16ToFloat(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

/// IEEE half bits from float: round to nearest even, overflow to infinity, subnormals kept.
inline uint16_t floatToF16(float f) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow or inf
  if (absu < 0x38800000u) {  // result is subnormal or zero: scale by 2^24 and round
    float scaled = bitsFloat(absu) * 16777216.0f;  // exact: absu < 2^-14, so < 2^10 after scale
    // Round to nearest even integer.
    uint32_t whole = static_cast<uint32_t>(scaled);
    float frac = scaled - static_cast<float>(whole);
    if (frac > 0.5f || (frac == 0.5f && (whole & 1u))) ++whole;
    return static_cast<uint16_t>(sign | whole);
  }
  uint32_t mantissaOdd = (absu >> 13) & 1u;
  absu += 0xc8000fffu + mantissaOdd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (absu >> 13));
}

inline float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // mantissa * 2^-24
    return bitsFloat(floatBits(magnitude) | sign);
  }
  if (exponent == 31) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace sparseflow
