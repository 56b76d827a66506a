// Element types of tensor values and index arrays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sparseflow {

/// Element type. Values are stable (they cross the C ABI and the .sft file format): append only.
enum class DType : int32_t {
  kF32 = 0,
  kF64 = 1,
  kF16 = 2,
  kBF16 = 3,
  kI32 = 4,
  kI64 = 5,
  kU8 = 6,
};

/// Bytes per element.
int64_t dtypeSize(DType type);
/// Short name: "f32", "f64", "f16", "bf16", "i32", "i64", "u8".
const char* dtypeName(DType type);
/// Parses a short name (also "float32", "float", "double", "half", "bfloat16"); throws on others.
DType parseDType(std::string_view name);
/// True for f32, f64, f16, bf16 (the types tensor values may have).
bool isFloatType(DType type);

}  // namespace sparseflow
