// Tests for the .npy reader and writer: numpy-written reference files, round trips, broken files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "io/npy.h"
#include "sparseflow/error.h"
#include "support/mapped_file.h"
#include "unit/io/io_test_helpers.h"

namespace sparseflow::io {
namespace {

using testing::expectError;

const std::string kRefDir = SPARSEFLOW_DATA_DIR "/../tests/unit/io/npy_refs/";

NpyArray readRef(const std::string& file) {
  return readNpy(kRefDir + file);
}

std::string fileBytes(const std::string& path) {
  support::MappedFile file(path);
  return std::string(file.data());
}

template <typename T>
std::vector<T> elements(const NpyArray& array) {
  EXPECT_EQ(array.bytes.size() % sizeof(T), 0u);
  std::vector<T> out(array.bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), array.bytes.data(), array.bytes.size());
  return out;
}

TEST(NpyRefs, Float32) {
  NpyArray a = readRef("f4_2x3.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.dtype, "f32");
  EXPECT_EQ(elements<float>(a),
            (std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, static_cast<float>(0.001), 65504.0f}));
  RawTensor t = toRawTensor(a);
  EXPECT_TRUE(t.dense);
  EXPECT_EQ(t.shape, a.shape);
  EXPECT_EQ(t.values[4], static_cast<double>(static_cast<float>(0.001)));
  EXPECT_EQ(t.numEntries(), 6);
}

TEST(NpyRefs, Float64) {
  NpyArray a = readRef("f8_vec.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(a.dtype, "f64");
  std::vector<double> v = elements<double>(a);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], -0.5);
  EXPECT_EQ(v[2], 1e300);
  EXPECT_EQ(v[3], 5e-324);
  EXPECT_EQ(v[4], 3.141592653589793);
  EXPECT_TRUE(v[5] == 0.0 && std::signbit(v[5]));
  EXPECT_EQ(toRawTensor(a).values[3], 5e-324);
}

TEST(NpyRefs, Float16) {
  NpyArray a = readRef("f2_vec.npy");
  EXPECT_EQ(a.dtype, "f16");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(elements<uint16_t>(a)[3], 0x7bffu);  // 65504, the largest half
  std::vector<double> v = toRawTensor(a).values;
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], -2.0);
  EXPECT_EQ(v[3], 65504.0);
  EXPECT_EQ(v[4], std::ldexp(1.0, -14));  // smallest normal
  EXPECT_EQ(v[5], std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(v[6], std::numeric_limits<double>::infinity());
  EXPECT_EQ(v[7], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(v[8]));
  EXPECT_EQ(v[9], 0.333251953125);
}

TEST(NpyRefs, Integers) {
  NpyArray a = readRef("i8_2x2.npy");
  EXPECT_EQ(a.dtype, "i64");
  EXPECT_EQ(elements<int64_t>(a),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), 0, -1}));
  EXPECT_EQ(toRawTensor(a).values[3], -1.0);

  NpyArray s = readRef("i2_2x3x4.npy");
  EXPECT_EQ(s.dtype, "i16");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 3, 4}));
  std::vector<int16_t> v = elements<int16_t>(s);
  ASSERT_EQ(v.size(), 24u);
  for (int k = 0; k < 24; ++k) EXPECT_EQ(v[k], k * 1000 - 12000);
  EXPECT_EQ(toRawTensor(s).values[23], 11000.0);

  NpyArray u = readRef("u1_4.npy");
  EXPECT_EQ(u.dtype, "u8");
  EXPECT_EQ(u.bytes, (std::vector<uint8_t>{0, 1, 128, 255}));
  EXPECT_EQ(toRawTensor(u).values, (std::vector<double>{0, 1, 128, 255}));

  NpyArray b = readRef("bool_5.npy");
  EXPECT_EQ(b.dtype, "bool");
  EXPECT_EQ(b.bytes, (std::vector<uint8_t>{1, 0, 0, 1, 1}));
  EXPECT_EQ(toRawTensor(b).values, (std::vector<double>{1, 0, 0, 1, 1}));
}

TEST(NpyRefs, FortranOrderIsTransposed) {
  NpyArray a = readRef("i4_fortran_2x3.npy");
  EXPECT_EQ(a.dtype, "i32");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elements<int32_t>(a), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));

  NpyArray b = readRef("f4_fortran_2x3x4.npy");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 3, 4}));
  std::vector<float> v = elements<float>(b);
  ASSERT_EQ(v.size(), 24u);
  for (int k = 0; k < 24; ++k) EXPECT_EQ(v[k], static_cast<float>(k - 10)) << k;
}

TEST(NpyRefs, ScalarEmptyBigEndianAndVersions) {
  NpyArray scalar = readRef("f8_scalar.npy");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(elements<double>(scalar), (std::vector<double>{3.5}));
  RawTensor t = toRawTensor(scalar);
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.numEntries(), 1);

  NpyArray empty = readRef("f8_empty_0x3.npy");
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(empty.bytes.empty());
  EXPECT_EQ(toRawTensor(empty).numEntries(), 0);

  NpyArray big = readRef("f8_big_endian.npy");
  EXPECT_EQ(big.dtype, "f64");
  EXPECT_EQ(elements<double>(big), (std::vector<double>{1.0, -2.5, 1e-300}));
  NpyArray bigInt = readRef("i4_big_endian_2x2.npy");
  EXPECT_EQ(elements<int32_t>(bigInt), (std::vector<int32_t>{1, -2, 70000, -70000}));

  NpyArray v2 = readRef("f4_v2.npy");
  EXPECT_EQ(v2.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(elements<float>(v2), (std::vector<float>{1, 2, 3, 4}));
  NpyArray v3 = readRef("i8_v3.npy");
  EXPECT_EQ(elements<int64_t>(v3), (std::vector<int64_t>{7, -8, 9}));
}

TEST(NpyWrite, MatchesNumpyByteForByte) {
  for (const char* file : {"f4_2x3.npy", "f8_vec.npy", "f2_vec.npy", "i8_2x2.npy", "f8_scalar.npy",
                           "f8_empty_0x3.npy", "i2_2x3x4.npy", "bool_5.npy", "u1_4.npy"}) {
    std::string expected = fileBytes(kRefDir + file);
    EXPECT_EQ(formatNpy(readRef(file)), expected) << file;
  }
}

NpyArray randomArray(const std::string& dtype, std::vector<int64_t> shape, std::mt19937& rng) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  int64_t count = 1;
  for (int64_t d : a.shape) count *= d;
  a.bytes.resize(static_cast<size_t>(count * npyItemSize(dtype)));
  for (uint8_t& b : a.bytes) b = static_cast<uint8_t>(rng());
  if (dtype == "bool") {
    for (uint8_t& b : a.bytes) b &= 1;
  }
  return a;
}

TEST(NpyWrite, RoundTripsEveryDtypeAndShape) {
  std::mt19937 rng(42);
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {7}, {3, 5}, {0, 4}, {4, 0}, {2, 3, 4}, {1, 2, 1, 3, 2}, {100000}};
  for (const char* dtype :
       {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"}) {
    for (const auto& shape : shapes) {
      NpyArray a = randomArray(dtype, shape, rng);
      std::string bytes = formatNpy(a);
      size_t headerEnd = bytes.size() - a.bytes.size();
      EXPECT_EQ(headerEnd % 64, 0u);
      EXPECT_EQ(bytes[headerEnd - 1], '\n');
      NpyArray b = parseNpy(bytes, "round.npy");
      EXPECT_EQ(b.dtype, a.dtype);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.bytes, a.bytes) << dtype;
    }
  }
}

TEST(NpyWrite, WritesFiles) {
  testing::ScratchDir dir;
  std::string path = dir.file("a.npy");
  NpyArray a;
  a.dtype = "i32";
  a.shape = {2, 2};
  int32_t values[] = {1, -2, 3, -4};
  a.bytes.assign(reinterpret_cast<uint8_t*>(values), reinterpret_cast<uint8_t*>(values) + 16);
  writeNpy(path, a);
  NpyArray b = readNpy(path);
  EXPECT_EQ(b.bytes, a.bytes);
  EXPECT_EQ(toRawTensor(b).values, (std::vector<double>{1, -2, 3, -4}));
  expectError([&] { writeNpy(dir.file("no/such/dir/b.npy"), a); }, ErrorCode::kIoError,
              {"no/such/dir/b.npy"});
}

TEST(NpyWrite, RejectsInconsistentArrays) {
  NpyArray a;
  a.dtype = "f32";
  a.shape = {2, 2};
  a.bytes.resize(15);
  expectError([&] { formatNpy(a); }, ErrorCode::kInvalidArgument,
              {"formatNpy: 15 bytes do not hold shape (2, 2) of f32"});
  expectError([&] { toRawTensor(a); }, ErrorCode::kInvalidArgument, {"15 bytes do not hold"});
  a.dtype = "c64";
  expectError([&] { formatNpy(a); }, ErrorCode::kInvalidArgument, {"unknown dtype 'c64'"});
  a.dtype = "f32";
  a.shape = {-1};
  expectError([&] { formatNpy(a); }, ErrorCode::kInvalidArgument, {"bad shape (-1,)"});
  expectError([] { npyItemSize("bf16"); }, ErrorCode::kInvalidArgument, {"unknown .npy dtype"});
}

/// A v1.0 file with header dict `dict` (padded as numpy does) followed by `data`.
std::string npyFile(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t prelude = major == 1 ? 10 : 12;
  header.append(63 - (prelude + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

const std::string kDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";

void expectNpyError(const std::string& bytes, ErrorCode code, const std::string& fragment) {
  expectError([&] { parseNpy(bytes, "bad.npy"); }, code, {fragment});
}

TEST(NpyErrors, BadPreambles) {
  std::string good = npyFile(kDict, std::string(8, '\0'));
  EXPECT_EQ(parseNpy(good, "good.npy").shape, (std::vector<int64_t>{2}));
  expectNpyError("", ErrorCode::kParseError, "bad.npy: byte 0: not a .npy file");
  expectNpyError("\x93NUMPX\x01", ErrorCode::kParseError, "bad.npy: byte 0: not a .npy file");
  expectNpyError("PK\x03\x04", ErrorCode::kParseError, "not a .npy file");
  expectNpyError(good.substr(0, 7), ErrorCode::kParseError,
                 "bad.npy: byte 7: the file ends inside the .npy version");
  expectNpyError(good.substr(0, 9), ErrorCode::kParseError,
                 "bad.npy: byte 9: the file ends inside the header length");
  std::string v4 = good;
  v4[6] = 4;
  expectNpyError(v4, ErrorCode::kNotSupported,
                 "bad.npy: byte 6: .npy format version 4.0 is not supported");
  std::string v11 = good;
  v11[7] = 1;
  expectNpyError(v11, ErrorCode::kNotSupported, "version 1.1 is not supported");
  expectNpyError(good.substr(0, 60), ErrorCode::kParseError,
                 "bad.npy: byte 8: the header length 118 runs past the end of the file (60 bytes)");
  std::string v2 = npyFile(kDict, std::string(8, '\0'), 2);
  EXPECT_EQ(parseNpy(v2, "v2.npy").shape, (std::vector<int64_t>{2}));
  v2[11] = '\x7f';  // header length ~2 GB
  expectNpyError(v2, ErrorCode::kParseError, "bad.npy: byte 8: the header length");
}

TEST(NpyErrors, MalformedHeaderDicts) {
  const std::string data(8, '\0');
  auto bad = [&](const std::string& dict, ErrorCode code, const std::string& fragment) {
    expectNpyError(npyFile(dict, data), code, fragment);
  };
  bad("[1, 2]", ErrorCode::kParseError, "bad.npy: byte 10: malformed .npy header: the header must");
  bad("{'descr': '<f4', 'fortran_order': False}", ErrorCode::kParseError,
      "bad.npy: byte 10: malformed .npy header: the header dict lacks key 'shape'");
  bad("{'descr': '<f4', 'shape': (2,)}", ErrorCode::kParseError, "lacks key 'fortran_order'");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", ErrorCode::kParseError,
      "bad.npy: byte 66: malformed .npy header: unexpected key 'extra'");
  bad("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
      ErrorCode::kParseError, "bad.npy: byte 27: malformed .npy header: key 'descr' appears twice");
  bad("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", ErrorCode::kParseError,
      "bad.npy: byte 26: malformed .npy header: expected ',' or '}'");
  bad("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,)}", ErrorCode::kParseError,
      "byte 44: malformed .npy header: fortran_order must be True or False");
  bad("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", ErrorCode::kParseError,
      "malformed .npy header");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", ErrorCode::kParseError,
      "shape (n) is not a tuple");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", ErrorCode::kParseError,
      "bad.npy: byte 61: malformed .npy header: a dimension must be a non-negative integer");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", ErrorCode::kParseError,
      "shape must be a tuple");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      ErrorCode::kParseError, "a dimension does not fit in 64 bits");
  bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", ErrorCode::kParseError,
      "unexpected text after the header dict");
  bad("{'descr': 7, 'fortran_order': False, 'shape': (2,)}", ErrorCode::kParseError,
      "bad.npy: byte 20: malformed .npy header: expected a quoted dtype string");
  bad("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", ErrorCode::kNotSupported,
      "bad.npy: byte 20: dtype '<c8' is not supported");
  bad("{'descr': '<U3', 'fortran_order': False, 'shape': (2,)}", ErrorCode::kNotSupported,
      "dtype '<U3' is not supported");
  bad("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", ErrorCode::kNotSupported,
      "dtype '|O' is not supported");
  bad("{'descr': '<f16', 'fortran_order': False, 'shape': (2,)}", ErrorCode::kNotSupported,
      "dtype '<f16' is not supported");
  bad("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", ErrorCode::kNotSupported,
      "bad.npy: byte 20: structured dtypes");
  // Python 2 spellings still read.
  NpyArray a = parseNpy(npyFile("{u'descr': u'<f4', 'fortran_order': False, 'shape': (2L,)}", data),
                        "py2.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2}));
}

TEST(NpyErrors, SizesAreCheckedBeforeAllocating) {
  auto withShape = [](const std::string& shape) {
    return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  expectNpyError(npyFile(withShape("(4294967296, 4294967296, 4)"), ""), ErrorCode::kParseError,
                 "bad.npy: byte 60: shape (4294967296, 4294967296, 4) of f64 has more bytes than "
                 "fit in 64 bits");
  expectNpyError(npyFile(withShape("(1152921504606846976,)"), ""), ErrorCode::kParseError,
                 "has more bytes than fit in 64 bits");
  // Claims 10^12 elements in a tiny file: an error, not an allocation.
  expectNpyError(npyFile(withShape("(1000000, 1000000)"), std::string(16, '\0')),
                 ErrorCode::kParseError,
                 "bad.npy: byte 144: the data is 16 bytes but shape (1000000, 1000000) of f64 "
                 "needs 8000000000000 (from byte 128): the file is truncated");
  expectNpyError(npyFile(kDict, std::string(7, '\0')), ErrorCode::kParseError,
                 "bad.npy: byte 135: the data is 7 bytes but shape (2,) of f32 needs 8");
  expectNpyError(npyFile(kDict, std::string(11, '\0')), ErrorCode::kParseError,
                 "bad.npy: byte 136: 3 bytes follow the array data (shape (2,) of f32 needs 8)");
  expectNpyError(npyFile(withShape("(0, 5)"), "x"), ErrorCode::kParseError,
                 "1 bytes follow the array data");
}

TEST(NpyErrors, MissingFileIsAnIoError) {
  expectError([] { readNpy("/no/such/dir/x.npy"); }, ErrorCode::kIoError, {"/no/such/dir/x.npy"});
}

}  // namespace
}  // namespace sparseflow::io
