// .safetensors header parsing with every check of the reference implementation, and the writer.
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "io/storage_bounds.h"
#include "support/check.h"
#include "support/mapped_file.h"
#include "support/quote.h"

namespace sparseflow::io {
namespace {

using Json = nlohmann::json;

struct DTypeInfo {
  const char* name;
  int64_t size;
};
// The dtypes of the safetensors format (sub-byte F4/F6 types are not supported).
constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
    {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8},
};

std::string dtypeList() {
  std::string list;
  for (const DTypeInfo& d : kDTypes) list += (list.empty() ? "" : ", ") + std::string(d.name);
  return list;
}

/// The deepest nesting of objects and arrays in `text` (strings skipped), stopping past `limit`:
/// a guard before handing the text to a recursive-descent consumer.
int nestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

std::string describeJson(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

#define ST_FAIL SF_FAIL(kParseError) << name << ": "

/// Tensor names are quoted in full up to this many bytes (real names reach ~100).
constexpr size_t kNameBytes = 200;

/// A non-negative integer below 2^62 from a JSON value, or an error naming `what`.
uint64_t unsignedValue(const Json& value, const std::string& name, const std::string& what) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > (uint64_t{1} << 62)) {
    ST_FAIL << what << " must be a non-negative integer, not " << describeJson(value);
  }
  return value.get<uint64_t>();
}

SafetensorsArray parseArray(const std::string& key, const Json& info, const std::string& name,
                            uint64_t dataBytes) {
  const std::string where = "tensor " + support::quoted(key, kNameBytes);
  if (key.empty()) ST_FAIL << "a tensor has an empty name";
  if (!info.is_object()) ST_FAIL << where << " must be an object, not " << describeJson(info);
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!info.contains(field)) ST_FAIL << where << " has no \"" << field << "\"";
  }
  SafetensorsArray array;
  array.name = key;
  const Json& dtype = info["dtype"];
  if (!dtype.is_string())
    ST_FAIL << where << ": dtype must be a string, not " << describeJson(dtype);
  array.dtype = dtype.get<std::string>();
  const int64_t elementSize = safetensorsDTypeSize(array.dtype);
  SF_CHECK_CODE(elementSize > 0, ErrorCode::kNotSupported)
      << name << ": " << where << ": dtype " << support::quoted(array.dtype)
      << " is not supported (" << dtypeList() << ")";
  const Json& shape = info["shape"];
  if (!shape.is_array())
    ST_FAIL << where << ": shape must be an array, not " << describeJson(shape);
  // Element count with overflow checks: the byte size must fit the (bounded) data buffer anyway.
  uint64_t count = 1;
  bool overflow = false;
  for (const Json& d : shape) {
    const uint64_t extent = unsignedValue(d, name, where + ": a shape entry");
    array.shape.push_back(static_cast<int64_t>(extent));
    if (extent != 0 && count > std::numeric_limits<uint64_t>::max() / 8 / extent) overflow = true;
    count *= extent;
  }
  const Json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    ST_FAIL << where << ": data_offsets must be [begin, end], not " << describeJson(offsets);
  }
  array.begin = unsignedValue(offsets[0], name, where + ": data_offsets begin");
  array.end = unsignedValue(offsets[1], name, where + ": data_offsets end");
  if (array.begin > array.end) {
    ST_FAIL << where << ": data_offsets [" << array.begin << ", " << array.end
            << "] end before they begin";
  }
  if (array.end > dataBytes) {
    ST_FAIL << where << ": data_offsets [" << array.begin << ", " << array.end
            << "] run past the end of the " << dataBytes << "-byte data buffer";
  }
  const uint64_t bytes = array.end - array.begin;
  if (overflow || count * static_cast<uint64_t>(elementSize) != bytes) {
    ST_FAIL << where << ": data_offsets [" << array.begin << ", " << array.end << "] hold " << bytes
            << " bytes but " << array.dtype << " " << shapeText(array.shape) << " needs "
            << (overflow ? std::string("more than 2^64")
                         : std::to_string(count * static_cast<uint64_t>(elementSize)));
  }
  return array;
}

/// Rejects duplicate keys in any object (nlohmann keeps the last one silently).
struct DuplicateKeyCheck {
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Json::parse_event_t::key && !open.empty() && duplicate.empty()) {
      std::string key = parsed.get<std::string>();
      if (!open.back().insert(key).second) duplicate = key;
    }
    return true;
  }
};

}  // namespace

int64_t safetensorsDTypeSize(std::string_view dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (dtype == d.name) return d.size;
  }
  return 0;
}

std::optional<DType> dtypeFromSafetensors(std::string_view dtype) {
  if (dtype == "F32") return DType::kF32;
  if (dtype == "F64") return DType::kF64;
  if (dtype == "F16") return DType::kF16;
  if (dtype == "BF16") return DType::kBF16;
  if (dtype == "I32") return DType::kI32;
  if (dtype == "I64") return DType::kI64;
  if (dtype == "U8") return DType::kU8;
  return std::nullopt;
}

const char* safetensorsDTypeName(DType type) {
  switch (type) {
    case DType::kF32: return "F32";
    case DType::kF64: return "F64";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI64: return "I64";
    case DType::kU8: return "U8";
  }
  SF_FAIL(kInternal) << "no safetensors dtype for type " << static_cast<int>(type);
}

SafetensorsHeader parseSafetensorsHeader(std::string_view file, const std::string& name) {
  if (file.size() < 8) {
    ST_FAIL << "file of " << file.size()
            << " bytes is too short for a .safetensors header (an 8-byte length comes first)";
  }
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i) {
    headerBytes = headerBytes << 8 | static_cast<uint8_t>(file[static_cast<size_t>(i)]);
  }
  if (headerBytes > kSafetensorsMaxHeaderBytes) {
    ST_FAIL << "header length " << headerBytes << " is over the limit of "
            << kSafetensorsMaxHeaderBytes << " bytes (not a .safetensors file?)";
  }
  if (headerBytes > file.size() - 8) {
    ST_FAIL << "header of " << headerBytes << " bytes runs past the end of the file ("
            << file.size() << " bytes)";
  }
  const std::string_view text = file.substr(8, headerBytes);
  if (text.empty() || text.front() != '{') {
    ST_FAIL << "header does not start with '{' (not a .safetensors file?)";
  }
  constexpr int kMaxDepth = 8;  // a valid header nests 3 deep
  if (nestingDepth(text, kMaxDepth) > kMaxDepth) {
    ST_FAIL << "header nests objects or arrays more than " << kMaxDepth << " deep";
  }
  DuplicateKeyCheck duplicates;
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), std::ref(duplicates));
  } catch (const Json::exception& e) {
    ST_FAIL << "header is not valid JSON: " << support::printable(e.what());
  }
  if (!duplicates.duplicate.empty()) {
    ST_FAIL << "header names " << support::quoted(duplicates.duplicate, kNameBytes) << " twice";
  }
  if (!header.is_object()) ST_FAIL << "header must be a JSON object";

  SafetensorsHeader result;
  result.dataStart = 8 + headerBytes;
  const uint64_t dataBytes = file.size() - result.dataStart;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) ST_FAIL << "__metadata__ must be an object of strings";
      for (const auto& [mkey, mvalue] : value.items()) {
        if (!mvalue.is_string()) {
          ST_FAIL << "__metadata__ " << support::quoted(mkey, kNameBytes)
                  << " must be a string, not " << describeJson(mvalue);
        }
        result.metadata.emplace_back(mkey, mvalue.get<std::string>());
      }
      continue;
    }
    result.arrays.push_back(parseArray(key, value, name, dataBytes));
  }
  std::sort(result.arrays.begin(), result.arrays.end(),
            [](const SafetensorsArray& a, const SafetensorsArray& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  // The arrays tile the data buffer exactly: no overlap, no hole, nothing after the last.
  uint64_t covered = 0;
  const SafetensorsArray* previous = nullptr;
  for (const SafetensorsArray& a : result.arrays) {
    if (a.begin < covered) {
      ST_FAIL << "tensors " << support::quoted(previous->name, kNameBytes) << " ["
              << previous->begin << ", " << previous->end << ") and "
              << support::quoted(a.name, kNameBytes) << " [" << a.begin << ", " << a.end
              << ") overlap";
    }
    if (a.begin > covered) {
      ST_FAIL << "bytes [" << covered << ", " << a.begin
              << ") of the data buffer belong to no tensor";
    }
    covered = a.end;
    if (a.end > a.begin || previous == nullptr) previous = &a;
  }
  if (covered != dataBytes) {
    ST_FAIL << "the data buffer holds " << dataBytes << " bytes but the tensors end at byte "
            << covered;
  }
  return result;
}

namespace {

/// The header (length + JSON padded to 8 bytes) for `arrays` in `order`, with their offsets.
std::string formatHeader(const std::vector<SafetensorsOutArray>& arrays,
                         const std::vector<size_t>& order,
                         const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& m = header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) m[key] = value;
  }
  std::set<std::string_view> names;
  uint64_t at = 0;
  for (size_t i : order) {
    const SafetensorsOutArray& a = arrays[i];
    SF_USER_CHECK(!a.name.empty() && a.name != "__metadata__")
        << "a .safetensors tensor cannot be named '" << a.name << "'";
    SF_USER_CHECK(names.insert(a.name).second) << "tensor '" << a.name << "' is written twice";
    const int64_t size = safetensorsDTypeSize(a.dtype);
    SF_USER_CHECK(size > 0) << "tensor '" << a.name << "': unknown dtype '" << a.dtype << "'";
    uint64_t count = 1;
    for (int64_t d : a.shape) {
      SF_USER_CHECK(d >= 0) << "tensor '" << a.name << "': negative dimension";
      count *= static_cast<uint64_t>(d);
    }
    SF_USER_CHECK(count * static_cast<uint64_t>(size) == a.bytes.size())
        << "tensor '" << a.name << "': " << a.bytes.size() << " bytes for " << a.dtype << " "
        << shapeText(a.shape);
    header[a.name] = {
        {"dtype", a.dtype}, {"shape", a.shape}, {"data_offsets", {at, at + a.bytes.size()}}};
    at += a.bytes.size();
  }
  std::string json;
  try {
    json = header.dump();
  } catch (const nlohmann::ordered_json::exception& e) {
    SF_FAIL(kInvalidArgument) << "cannot write the .safetensors header: " << e.what();
  }
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(length >> (8 * i));
  return out + json;
}

/// Largest element first (stable), so every array starts aligned to its element size.
std::vector<size_t> layoutOrder(const std::vector<SafetensorsOutArray>& arrays) {
  std::vector<size_t> order(arrays.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return safetensorsDTypeSize(arrays[a].dtype) > safetensorsDTypeSize(arrays[b].dtype);
  });
  return order;
}

}  // namespace

std::string formatSafetensors(const std::vector<SafetensorsOutArray>& arrays,
                              const std::vector<std::pair<std::string, std::string>>& metadata) {
  const std::vector<size_t> order = layoutOrder(arrays);
  std::string out = formatHeader(arrays, order, metadata);
  for (size_t i : order) out.append(arrays[i].bytes);
  return out;
}

void writeSafetensors(const std::string& path, const std::vector<SafetensorsOutArray>& arrays,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  SF_CHECK_CODE(!path.empty(), ErrorCode::kIoError) << "cannot write a file with an empty path";
  const std::vector<size_t> order = layoutOrder(arrays);
  const std::string header = formatHeader(arrays, order, metadata);
  // Header then arrays, through one temporary file renamed over `path` once complete and synced.
  std::vector<std::string_view> pieces{header};
  for (size_t i : order) pieces.push_back(arrays[i].bytes);
  support::writeFileAtomically(path, pieces);
}

}  // namespace sparseflow::io
