// A fast 64-bit checksum over bytes (eight bytes per step), for .sft files and cache keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sparseflow {

/// Mixes eight bytes at a time with a multiply-xorshift; not cryptographic, detects corruption.
inline uint64_t checksum64(const void* data, size_t size, uint64_t seed = 0x9e3779b97f4a7c15ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed ^ (size * 0xff51afd7ed558ccdull);
  auto mix = [](uint64_t x) {
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 29;
    return x;
  };
  // Four independent lanes keep the multiplier pipeline busy.
  uint64_t lane[4] = {h, h + 1, h + 2, h + 3};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0x9fb21c651e98df25ull;
      lane[k] ^= lane[k] >> 31;
    }
  }
  h = mix(lane[0]) ^ mix(lane[1] + 1) ^ mix(lane[2] + 2) ^ mix(lane[3] + 3);
  for (; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return mix(h);
}

}  // namespace sparseflow
