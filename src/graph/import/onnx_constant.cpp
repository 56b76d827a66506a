// Reading ONNX TensorProto values (inline, raw little-endian bytes, or external data beside the
// model) into import-time constants.
#include "graph/import/onnx_constant.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/check.h"

namespace sparseflow::graph::onnx_import {
namespace {

/// Import-time constants live in memory as int64 or double: a bound that keeps a malformed shape
/// from asking for terabytes (2^28 elements = 2 GiB as double).
constexpr int64_t kMaxConstantElements = int64_t{1} << 28;

double halfToDouble(uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa ? NAN : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -v : v;
}

double bfloat16ToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Bytes of one element of a fixed-size element type; 0 for the types not read.
int elementBytes(int type) {
  switch (type) {
    case onnx::TensorProto_DataType_FLOAT: return 4;
    case onnx::TensorProto_DataType_DOUBLE: return 8;
    case onnx::TensorProto_DataType_INT64: return 8;
    case onnx::TensorProto_DataType_UINT64: return 8;
    case onnx::TensorProto_DataType_INT32: return 4;
    case onnx::TensorProto_DataType_UINT32: return 4;
    case onnx::TensorProto_DataType_INT16: return 2;
    case onnx::TensorProto_DataType_UINT16: return 2;
    case onnx::TensorProto_DataType_FLOAT16: return 2;
    case onnx::TensorProto_DataType_BFLOAT16: return 2;
    case onnx::TensorProto_DataType_INT8: return 1;
    case onnx::TensorProto_DataType_UINT8: return 1;
    case onnx::TensorProto_DataType_BOOL: return 1;
    default: return 0;
  }
}

bool isFloating(int type) {
  return type == onnx::TensorProto_DataType_FLOAT || type == onnx::TensorProto_DataType_DOUBLE ||
         type == onnx::TensorProto_DataType_FLOAT16 || type == onnx::TensorProto_DataType_BFLOAT16;
}

/// Element i of little-endian bytes of `type`, into the constant's storage.
void decodeElement(Constant& c, int type, const char* p, int64_t i) {
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (type) {
    case onnx::TensorProto_DataType_FLOAT: c.reals[i] = load(float{}); break;
    case onnx::TensorProto_DataType_DOUBLE: c.reals[i] = load(double{}); break;
    case onnx::TensorProto_DataType_FLOAT16: c.reals[i] = halfToDouble(load(uint16_t{})); break;
    case onnx::TensorProto_DataType_BFLOAT16:
      c.reals[i] = bfloat16ToDouble(load(uint16_t{}));
      break;
    case onnx::TensorProto_DataType_INT64: c.ints[i] = load(int64_t{}); break;
    case onnx::TensorProto_DataType_UINT64:
      c.ints[i] = static_cast<int64_t>(load(uint64_t{}));
      break;
    case onnx::TensorProto_DataType_INT32: c.ints[i] = load(int32_t{}); break;
    case onnx::TensorProto_DataType_UINT32: c.ints[i] = load(uint32_t{}); break;
    case onnx::TensorProto_DataType_INT16: c.ints[i] = load(int16_t{}); break;
    case onnx::TensorProto_DataType_UINT16: c.ints[i] = load(uint16_t{}); break;
    case onnx::TensorProto_DataType_INT8: c.ints[i] = load(int8_t{}); break;
    case onnx::TensorProto_DataType_UINT8: c.ints[i] = load(uint8_t{}); break;
    case onnx::TensorProto_DataType_BOOL: c.ints[i] = load(uint8_t{}) != 0; break;
    default: break;
  }
}

/// The bytes of a tensor stored outside the model (data_location EXTERNAL): `location` relative to
/// the model's folder, inside it, with optional offset and length.
std::string externalBytes(const onnx::TensorProto& t, const std::string& where,
                          const std::string& baseDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    try {
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      SF_FAIL(kInvalidArgument) << where << ": external data " << kv.key() << " \"" << kv.value()
                                << "\" is not a number";
    }
  }
  namespace fs = std::filesystem;
  const fs::path rel(location);
  bool inside = !location.empty() && rel.is_relative();
  for (const auto& part : rel) inside = inside && part != "..";
  SF_USER_CHECK(inside) << where << ": external data location \"" << location
                        << "\" must be a relative path inside the model's folder";
  const fs::path file = fs::path(baseDir) / rel;
  std::ifstream in(file, std::ios::binary);
  SF_USER_CHECK(in) << where << ": cannot open its external data " << file.string();
  in.seekg(0, std::ios::end);
  const int64_t size = static_cast<int64_t>(in.tellg());
  if (length < 0) length = size - offset;
  SF_USER_CHECK(offset >= 0 && length >= 0 && offset <= size && length <= size - offset)
      << where << ": external data range [" << offset << ", " << offset + length << ") is outside "
      << file.string() << " (" << size << " bytes)";
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  SF_USER_CHECK(in) << where << ": could not read " << length << " bytes of " << file.string();
  return bytes;
}

}  // namespace

int64_t Constant::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double Constant::real(int64_t i) const {
  return integral ? static_cast<double>(ints[static_cast<size_t>(i)])
                  : reals[static_cast<size_t>(i)];
}

int64_t Constant::integer(int64_t i, const std::string& what) const {
  if (integral) return ints[static_cast<size_t>(i)];
  const double v = reals[static_cast<size_t>(i)];
  SF_USER_CHECK(std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e18)
      << what << ": " << v << " is not an integer";
  return static_cast<int64_t>(v);
}

std::vector<int64_t> Constant::integers(const std::string& what) const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = integer(i, what);
  return out;
}

Constant Constant::asReal() const {
  if (!integral) return *this;
  Constant c;
  c.shape = shape;
  c.reals.assign(ints.begin(), ints.end());
  return c;
}

Constant Constant::realScalar(double v) {
  Constant c;
  c.reals = {v};
  return c;
}

Constant Constant::intVector(const std::vector<int64_t>& values) {
  Constant c;
  c.integral = true;
  c.shape = {static_cast<int64_t>(values.size())};
  c.ints = values;
  return c;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

Constant readTensorProto(const onnx::TensorProto& t, const std::string& where,
                         const std::string& baseDir) {
  const int type = t.data_type();
  const int bytes = elementBytes(type);
  SF_CHECK_CODE(bytes > 0, ErrorCode::kNotSupported)
      << where << ": element type " << type
      << " (strings, complex numbers) is not supported; numbers and booleans are";
  Constant c;
  c.integral = !isFloating(type);
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    SF_USER_CHECK(d >= 0 && (d == 0 || n <= kMaxConstantElements / d))
        << where << ": dims are negative or hold more than 2^28 elements";
    n *= d;
    c.shape.push_back(d);
  }
  if (c.integral) {
    c.ints.assign(static_cast<size_t>(n), 0);
  } else {
    c.reals.assign(static_cast<size_t>(n), 0.0);
  }
  std::string external;
  const std::string* raw = nullptr;
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    external = externalBytes(t, where, baseDir);
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  if (raw) {
    SF_USER_CHECK(static_cast<int64_t>(raw->size()) == n * bytes)
        << where << ": " << raw->size() << " bytes of data for " << n << " elements of " << bytes
        << " bytes";
    for (int64_t i = 0; i < n; ++i) decodeElement(c, type, raw->data() + i * bytes, i);
    return c;
  }
  // Typed fields: float_data, double_data, int64_data, uint64_data or int32_data (which also holds
  // the narrow integers, booleans and the 16-bit floats' bits).
  auto fill = [&](const auto& field, const char* name) {
    SF_USER_CHECK(static_cast<int64_t>(field.size()) == n)
        << where << ": " << field.size() << " values in " << name << " for " << n << " elements";
    for (int64_t i = 0; i < n; ++i) {
      const auto v = field[static_cast<int>(i)];
      if (type == onnx::TensorProto_DataType_FLOAT16) {
        c.reals[i] = halfToDouble(static_cast<uint16_t>(v));
      } else if (type == onnx::TensorProto_DataType_BFLOAT16) {
        c.reals[i] = bfloat16ToDouble(static_cast<uint16_t>(v));
      } else if (c.integral) {
        c.ints[i] = type == onnx::TensorProto_DataType_BOOL ? (v != 0) : static_cast<int64_t>(v);
      } else {
        c.reals[i] = static_cast<double>(v);
      }
    }
  };
  switch (type) {
    case onnx::TensorProto_DataType_FLOAT: fill(t.float_data(), "float_data"); break;
    case onnx::TensorProto_DataType_DOUBLE: fill(t.double_data(), "double_data"); break;
    case onnx::TensorProto_DataType_INT64: fill(t.int64_data(), "int64_data"); break;
    case onnx::TensorProto_DataType_UINT64:
    case onnx::TensorProto_DataType_UINT32: fill(t.uint64_data(), "uint64_data"); break;
    default: fill(t.int32_data(), "int32_data"); break;
  }
  return c;
}

}  // namespace sparseflow::graph::onnx_import
