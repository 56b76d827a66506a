// Names and sizes of element types.
#include "sparseflow/dtype.h"

#include "support/check.h"

namespace sparseflow {

int64_t dtypeSize(DType type) {
  switch (type) {
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
  }
  SF_FAIL(kInvalidArgument) << "unknown dtype code " << static_cast<int>(type);
}

const char* dtypeName(DType type) {
  switch (type) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
  }
  return "unknown";
}

DType parseDType(std::string_view name) {
  if (name == "f32" || name == "float32" || name == "float") return DType::kF32;
  if (name == "f64" || name == "float64" || name == "double") return DType::kF64;
  if (name == "f16" || name == "float16" || name == "half") return DType::kF16;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "i32" || name == "int32") return DType::kI32;
  if (name == "i64" || name == "int64") return DType::kI64;
  if (name == "u8" || name == "uint8") return DType::kU8;
  SF_FAIL(kInvalidArgument) << "unknown dtype '" << name
                            << "' (expected f32, f64, f16, bf16, i32, i64 or u8)";
}

bool isFloatType(DType type) {
  return type == DType::kF32 || type == DType::kF64 || type == DType::kF16 ||
         type == DType::kBF16;
}

}  // namespace sparseflow
