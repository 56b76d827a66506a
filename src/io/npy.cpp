// NumPy .npy reading (header dict, byte order, Fortran order) and writing as numpy.save does.
#include "io/npy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <sstream>

#include "io/file_magic.h"
#include "support/check.h"
#include "support/half.h"
#include "support/mapped_file.h"
#include "support/quote.h"

namespace sparseflow::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader keeps little-endian bytes and assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlignment = 64;         // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS
constexpr size_t kMaxRank = 64;

/// One supported element type: our name, numpy's kind letter and size, and how to widen it.
struct DtypeInfo {
  std::string_view name;
  char kind;  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  int32_t size;
};

constexpr std::array<DtypeInfo, 12> kDtypes = {{
    {"f16", 'f', 2},
    {"f32", 'f', 4},
    {"f64", 'f', 8},
    {"i8", 'i', 1},
    {"i16", 'i', 2},
    {"i32", 'i', 4},
    {"i64", 'i', 8},
    {"u8", 'u', 1},
    {"u16", 'u', 2},
    {"u32", 'u', 4},
    {"u64", 'u', 8},
    {"bool", 'b', 1},
}};

const DtypeInfo* findDtype(std::string_view name) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const DtypeInfo* findDtype(char kind, int32_t size) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.kind == kind && info.size == size) return &info;
  }
  return nullptr;
}

/// numpy's descr string for a dtype: '<f8', '|u1', '|b1'...
std::string descrOf(const DtypeInfo& info) {
  return std::string(info.size == 1 ? "|" : "<") + info.kind + std::to_string(info.size);
}

/// Throws kCODE "NAME: byte OFFSET: <message>".
#define SF_NPY_FAIL(code_name, name, offset) \
  SF_FAIL(code_name) << (name) << ": byte " << (offset) << ": "

/// The shape as numpy writes it: "(2, 3)", "(5,)".
std::string tupleText(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

/// The header dict after parsing.
struct NpyHeader {
  std::string descr;
  size_t descrOffset = 0;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  size_t shapeOffset = 0;
};

/// Parses the Python literal numpy writes: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), } (keys in any order, trailing commas allowed, padded with blanks).
class HeaderParser {
 public:
  HeaderParser(std::string_view text, size_t base, const std::string& name)
      : text_(text), base_(base), name_(name) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipBlanks();
    expect('{', "the header must be a Python dict starting with '{'");
    while (true) {
      skipBlanks();
      if (peek() == '}') break;
      size_t keyOffset = pos_;
      std::string key = parseString("a quoted key");
      skipBlanks();
      expect(':', "expected ':' after a key");
      skipBlanks();
      auto once = [&](bool& seen) {
        if (seen) fail(keyOffset, "key " + support::quoted(key) + " appears twice");
        seen = true;
      };
      if (key == "descr") {
        once(seenDescr);
        header.descrOffset = base_ + pos_;
        if (peek() == '[') {
          SF_NPY_FAIL(kNotSupported, name_, base_ + pos_)
              << "structured dtypes (a list descr) are not supported";
        }
        header.descr = parseString("a quoted dtype string such as '<f4'");
      } else if (key == "fortran_order") {
        once(seenOrder);
        header.fortranOrder = parseBool();
      } else if (key == "shape") {
        once(seenShape);
        header.shapeOffset = base_ + pos_;
        header.shape = parseShape();
      } else {
        fail(keyOffset, "unexpected key " + support::quoted(key) +
                            " (numpy writes descr, fortran_order, shape)");
      }
      skipBlanks();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail(pos_, "expected ',' or '}' in the header dict");
      }
    }
    ++pos_;  // '}'
    skipBlanks();
    if (pos_ != text_.size()) fail(pos_, "unexpected text after the header dict");
    if (!seenDescr || !seenOrder || !seenShape) {
      fail(0, std::string("the header dict lacks key '") +
                  (!seenDescr   ? "descr"
                   : !seenOrder ? "fortran_order"
                                : "shape") +
                  "'");
    }
    return header;
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& why) const {
    SF_NPY_FAIL(kParseError, name_, base_ + at) << "malformed .npy header: " << why;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipBlanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c, const char* why) {
    if (peek() != c) fail(pos_, why);
    ++pos_;
  }

  std::string parseString(const char* what) {
    if (peek() == 'u' || peek() == 'b') ++pos_;  // Python 2 files may write u'...'
    char quote = peek();
    if (quote != '\'' && quote != '"') fail(pos_, std::string("expected ") + what);
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') fail(pos_, "unexpected character in string");
      ++pos_;
    }
    if (pos_ == text_.size()) fail(start - 1, "unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool parseBool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(pos_, "fortran_order must be True or False");
  }

  std::vector<int64_t> parseShape() {
    std::vector<int64_t> shape;
    expect('(', "shape must be a tuple such as (2, 3)");
    bool comma = false;  // a one-element tuple needs its trailing comma: (3,)
    while (true) {
      skipBlanks();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail(pos_, "a dimension must be a non-negative integer");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        int digit = text_[pos_] - '0';
        if (value > (INT64_MAX - digit) / 10) fail(pos_, "a dimension does not fit in 64 bits");
        value = value * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long
      if (shape.size() == kMaxRank) fail(pos_, "more than 64 dimensions");
      shape.push_back(value);
      skipBlanks();
      comma = peek() == ',';
      if (comma) {
        ++pos_;
      } else if (peek() != ')') {
        fail(pos_, "expected ',' or ')' in the shape tuple");
      }
    }
    if (shape.size() == 1 && !comma) fail(pos_, "shape (n) is not a tuple; numpy writes (n,)");
    ++pos_;  // ')'
    return shape;
  }

  std::string_view text_;
  size_t base_;
  const std::string& name_;
  size_t pos_ = 0;
};

/// Elements in `shape`, or nullopt if the count overflows int64.
std::optional<int64_t> elementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) return std::nullopt;
  }
  return count;
}

/// Copies column-major `source` into row-major `dest` (same shape, `size`-byte elements), walking
/// the source in order with an odometer over the multi-index (first index fastest).
void transposeFromFortran(const uint8_t* source, uint8_t* dest, const std::vector<int64_t>& shape,
                          int64_t count, size_t size) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);  // row-major strides, in elements
  for (size_t k = rank - 1; k-- > 0;) strides[k] = strides[k + 1] * shape[k + 1];
  std::vector<int64_t> index(rank, 0);
  int64_t target = 0;
  for (int64_t e = 0; e < count; ++e) {
    std::memcpy(dest + static_cast<size_t>(target) * size, source + static_cast<size_t>(e) * size,
                size);
    for (size_t k = 0; k < rank; ++k) {
      target += strides[k];
      if (++index[k] < shape[k]) break;
      target -= strides[k] * shape[k];
      index[k] = 0;
    }
  }
}

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

int64_t npyItemSize(std::string_view dtype) {
  const DtypeInfo* info = findDtype(dtype);
  SF_USER_CHECK(info != nullptr) << "unknown .npy dtype '" << dtype << "'";
  return info->size;
}

NpyArray parseNpy(std::string_view data, const std::string& name) {
  SF_CHECK_CODE(data.substr(0, kMagic.size()) == kMagic, ErrorCode::kParseError)
      << name << ": byte 0: not a .npy file (it does not start with \\x93NUMPY)";
  SF_CHECK_CODE(data.size() >= 8, ErrorCode::kParseError)
      << name << ": byte " << data.size() << ": the file ends inside the .npy version";
  const int major = static_cast<uint8_t>(data[6]);
  const int minor = static_cast<uint8_t>(data[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
    SF_NPY_FAIL(kNotSupported, name, 6)
        << ".npy format version " << major << "." << minor << " is not supported (1.0, 2.0, 3.0)";
  }
  const size_t lengthBytes = major == 1 ? 2 : 4;
  const size_t headerStart = 8 + lengthBytes;
  SF_CHECK_CODE(data.size() >= headerStart, ErrorCode::kParseError)
      << name << ": byte " << data.size() << ": the file ends inside the header length";
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i) {
    headerLength |= static_cast<size_t>(static_cast<uint8_t>(data[8 + i])) << (8 * i);
  }
  if (headerLength > data.size() - headerStart) {
    SF_NPY_FAIL(kParseError, name, 8)
        << "the header length " << headerLength << " runs past the end of the file (" << data.size()
        << " bytes)";
  }
  NpyHeader header =
      HeaderParser(data.substr(headerStart, headerLength), headerStart, name).parse();

  // descr: byte order, kind, size, such as '<f4', '>i8', '|b1'.
  std::string_view descr = header.descr;
  char order = '=';
  if (!descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos) {
    order = descr[0];
    descr.remove_prefix(1);
  }
  const DtypeInfo* info = nullptr;
  if (descr.size() >= 2 && descr.size() <= 3) {
    int32_t size = 0;
    for (char c : descr.substr(1)) size = (c >= '0' && c <= '9') ? size * 10 + (c - '0') : -1;
    if (size > 0) info = findDtype(descr[0], size);
  }
  if (info == nullptr) {
    SF_NPY_FAIL(kNotSupported, name, header.descrOffset)
        << "dtype " << support::quoted(header.descr)
        << " is not supported (float 2/4/8, signed and unsigned integers, bool)";
  }
  const bool swap = order == '>' && info->size > 1;

  std::optional<int64_t> count = elementCount(header.shape);
  int64_t byteCount = 0;
  if (!count || __builtin_mul_overflow(*count, static_cast<int64_t>(info->size), &byteCount)) {
    SF_NPY_FAIL(kParseError, name, header.shapeOffset)
        << "shape " << tupleText(header.shape) << " of " << info->name
        << " has more bytes than fit in 64 bits";
  }
  const size_t dataOffset = headerStart + headerLength;
  const size_t available = data.size() - dataOffset;
  if (static_cast<uint64_t>(byteCount) > available) {
    SF_NPY_FAIL(kParseError, name, data.size())
        << "the data is " << available << " bytes but shape " << tupleText(header.shape) << " of "
        << info->name << " needs " << byteCount << " (from byte " << dataOffset
        << "): the file is truncated";
  }
  if (static_cast<uint64_t>(byteCount) < available) {
    SF_NPY_FAIL(kParseError, name, dataOffset + static_cast<size_t>(byteCount))
        << available - static_cast<uint64_t>(byteCount) << " bytes follow the array data (shape "
        << tupleText(header.shape) << " of " << info->name << " needs " << byteCount << ")";
  }

  NpyArray array;
  array.shape = header.shape;
  array.dtype = std::string(info->name);
  const auto* source = reinterpret_cast<const uint8_t*>(data.data() + dataOffset);
  const size_t size = static_cast<size_t>(info->size);
  if (header.fortranOrder && header.shape.size() > 1 && *count > 0) {
    array.bytes.resize(static_cast<size_t>(byteCount));
    transposeFromFortran(source, array.bytes.data(), header.shape, *count, size);
  } else {
    array.bytes.assign(source, source + byteCount);
  }
  if (swap) {
    for (size_t e = 0; e < array.bytes.size(); e += size) {
      std::reverse(array.bytes.begin() + static_cast<std::ptrdiff_t>(e),
                   array.bytes.begin() + static_cast<std::ptrdiff_t>(e + size));
    }
  }
  if (info->kind == 'b') {
    for (uint8_t& b : array.bytes) b = b != 0;
  }
  return array;
}

NpyArray readNpy(const std::string& path) {
  support::MappedFile file = mapInput(path);
  return parseNpy(file.data(), path);
}

RawTensor toRawTensor(const NpyArray& array) {
  const DtypeInfo* info = findDtype(array.dtype);
  SF_USER_CHECK(info != nullptr) << "toRawTensor: unknown .npy dtype '" << array.dtype << "'";
  std::optional<int64_t> count = elementCount(array.shape);
  SF_USER_CHECK(count && static_cast<uint64_t>(*count) * static_cast<uint64_t>(info->size) ==
                             array.bytes.size())
      << "toRawTensor: " << array.bytes.size() << " bytes do not hold shape "
      << tupleText(array.shape) << " of " << info->name;
  RawTensor tensor;
  tensor.shape = array.shape;
  tensor.dense = true;
  if (info->kind == 'f') {
    tensor.storedType = info->size == 2 ? DType::kF16 : info->size == 4 ? DType::kF32 : DType::kF64;
  }
  tensor.values.resize(static_cast<size_t>(*count));
  const uint8_t* p = array.bytes.data();
  for (double& value : tensor.values) {
    switch (info->kind) {
      case 'f':
        value = info->size == 2   ? static_cast<double>(f16ToFloat(load<uint16_t>(p)))
                : info->size == 4 ? static_cast<double>(load<float>(p))
                                  : load<double>(p);
        break;
      case 'i':
        value = info->size == 1   ? load<int8_t>(p)
                : info->size == 2 ? load<int16_t>(p)
                : info->size == 4 ? load<int32_t>(p)
                                  : static_cast<double>(load<int64_t>(p));
        break;
      case 'u':
        value = info->size == 1   ? load<uint8_t>(p)
                : info->size == 2 ? load<uint16_t>(p)
                : info->size == 4 ? load<uint32_t>(p)
                                  : static_cast<double>(load<uint64_t>(p));
        break;
      default: value = *p != 0 ? 1.0 : 0.0; break;
    }
    p += info->size;
  }
  return tensor;
}

std::string formatNpy(const NpyArray& array) {
  const DtypeInfo* info = findDtype(array.dtype);
  SF_USER_CHECK(info != nullptr) << "formatNpy: unknown dtype '" << array.dtype << "'";
  std::optional<int64_t> count = elementCount(array.shape);
  SF_USER_CHECK(count.has_value())
      << "formatNpy: bad shape " << tupleText(array.shape) << " (negative or overflowing)";
  SF_USER_CHECK(array.shape.size() <= kMaxRank) << "formatNpy: more than 64 dimensions";
  SF_USER_CHECK(static_cast<uint64_t>(*count) * static_cast<uint64_t>(info->size) ==
                array.bytes.size())
      << "formatNpy: " << array.bytes.size() << " bytes do not hold shape "
      << tupleText(array.shape) << " of " << info->name;

  // As numpy's _write_array_header: sorted keys, repr values, spare blanks so the first axis can
  // grow in place, then blanks and a newline up to a multiple of 64 bytes.
  std::string dict = "{'descr': '" + descrOf(*info) +
                     "', 'fortran_order': False, 'shape': " + tupleText(array.shape) + ", }";
  if (!array.shape.empty()) {
    dict.append(kGrowthAxisDigits - std::to_string(array.shape[0]).size(), ' ');
  }
  // Version 1.0 unless its 2-byte header length cannot hold the header; then 2.0, as numpy does.
  const size_t length = dict.size() + 1;
  size_t prelude = kMagic.size() + 2 + 2;
  int major = 1;
  if (length + kAlignment - (prelude + length) % kAlignment > 65535) {
    prelude = kMagic.size() + 2 + 4;
    major = 2;
  }
  const size_t padding = kAlignment - (prelude + length) % kAlignment;
  const size_t headerLength = length + padding;

  std::string out;
  out.reserve(prelude + headerLength + array.bytes.size());
  out += kMagic;
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prelude - 8; ++i)
    out += static_cast<char>((headerLength >> (8 * i)) & 0xff);
  out += dict;
  out.append(padding, ' ');
  out += '\n';
  out.append(reinterpret_cast<const char*>(array.bytes.data()), array.bytes.size());
  return out;
}

void writeNpy(const std::string& path, const NpyArray& array) {
  support::writeFileAtomically(path, formatNpy(array));
}

}  // namespace sparseflow::io
