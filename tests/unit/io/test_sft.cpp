// .sft: every format and dtype round-trips bit for bit; corrupt, truncated and forged files are
// refused with errors naming the file and byte offset.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/random_coo.h"
#include "io/sft.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/validate.h"
#include "support/hash.h"

namespace sparseflow::io {
namespace {

using sparseflow::testing::freshSeed;
using sparseflow::testing::randomCoo;

void expectSameArrays(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.format(), b.format());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.isHybrid(), b.isHybrid());
  if (a.isHybrid()) {
    for (size_t p = 0; p < a.parts().size(); ++p) expectSameArrays(a.parts()[p], b.parts()[p]);
    return;
  }
  auto same = [](const Buffer& x, const Buffer& y) {
    return x.dtype() == y.dtype() && x.size() == y.size() &&
           (x.bytes() == 0 || std::memcmp(x.data(), y.data(), static_cast<size_t>(x.bytes())) == 0);
  };
  EXPECT_TRUE(same(a.values(), b.values()));
  for (int32_t l = 0; l < a.format().numLevels(); ++l) {
    EXPECT_TRUE(same(a.level(l).pos, b.level(l).pos)) << "level " << l;
    EXPECT_TRUE(same(a.level(l).crd, b.level(l).crd)) << "level " << l;
    EXPECT_TRUE(same(a.level(l).meta, b.level(l).meta)) << "level " << l;
  }
}

TEST(Sft, EveryFormatAndDTypeRoundTrips) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = randomCoo({33, 47}, 0.15, seed);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sft_rt_" + std::to_string(getpid()) + ".sft")).string();
  for (const char* f : {"csr", "csc", "coo", "dcsr", "bsr:4x4", "ell", "hyb", "dense", "csr@i64",
                        "2:4+csr", "levels[d0:dense, d1:ragged]"}) {
    for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
      SCOPED_TRACE(std::string(f) + " " + dtypeName(t));
      Tensor tensor = fromCoo(coo, Format::parse(f, 2), {t});
      writeSft(path, tensor);
      Tensor mapped = readSft(path);
      expectSameArrays(tensor, mapped);
      EXPECT_FALSE(mapped.isHybrid() ? mapped.parts()[0].values().owning()
                                     : mapped.values().owning())
          << "readSft should view the mapping, not copy";
      expectSameArrays(tensor, parseSft(formatSft(tensor), "memory"));
    }
  }
  Coo three = randomCoo({5, 6, 7}, 0.2, seed + 1);
  Tensor csf = fromCoo(three, Format::parse("csf", 3), {DType::kF64});
  expectSameArrays(csf, parseSft(formatSft(csf), "memory"));
  std::filesystem::remove(path);
}

TEST(Sft, MappedArraysAreCopyOnWrite) {
  Coo coo = randomCoo({8, 8}, 0.5, 7);
  Tensor t = fromCoo(coo, Format::parse("csr", 2), {DType::kF32});
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sft_cow_" + std::to_string(getpid()) + ".sft")).string();
  writeSft(path, t);
  {
    Tensor mapped = readSft(path);
    mapped.mutableValues().setValue(0, 123.0);  // must not crash, must not reach the file
    EXPECT_EQ(mapped.values().value(0), 123.0);
  }
  EXPECT_EQ(readSft(path).values().value(0), t.values().value(0));
  std::filesystem::remove(path);
}

void expectRefused(const std::string& bytes, ErrorCode code, const std::string& fragment,
                   bool checksum = true) {
  SftReadOptions options;
  options.verifyChecksum = checksum;
  try {
    parseSft(bytes, "forged.sft", options);
    ADD_FAILURE() << "accepted; expected '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find("forged.sft"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

/// Recomputes the checksum after a deliberate edit, so the later checks are reached.
std::string resealed(std::string bytes) {
  uint64_t sum = checksum64(bytes.data() + 48, bytes.size() - 48);
  std::memcpy(bytes.data() + 40, &sum, 8);
  return bytes;
}

TEST(Sft, BadFilesAreRefused) {
  Coo coo = randomCoo({20, 20}, 0.3, 3);
  const std::string good = formatSft(fromCoo(coo, Format::parse("csr", 2), {DType::kF32}));
  expectRefused("", ErrorCode::kParseError, "too short");
  expectRefused(good.substr(0, 30), ErrorCode::kParseError, "too short");
  std::string magic = good;
  magic[0] = 'X';
  expectRefused(magic, ErrorCode::kParseError, "wrong magic");
  std::string version = good;
  version[8] = 9;
  expectRefused(version, ErrorCode::kNotSupported, "version 9");
  expectRefused(good.substr(0, good.size() - 1), ErrorCode::kParseError, "truncated");
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x40;
  expectRefused(flipped, ErrorCode::kParseError, "checksum mismatch");
  // A record pointing past the end of the file (table starts after the descriptor).
  uint64_t descBytes;
  std::memcpy(&descBytes, good.data() + 16, 8);
  const size_t table = (48 + descBytes + 7) / 8 * 8;
  std::string past = good;
  uint64_t huge = 1ull << 60;
  std::memcpy(past.data() + table + 16, &huge, 8);
  expectRefused(resealed(past), ErrorCode::kParseError, "lies outside the file");
  // Positions that decrease: structurally invalid, refused by validation.
  std::string bad = good;
  uint64_t posOffset;
  std::memcpy(&posOffset, good.data() + table + 24, 8);
  int32_t big = 1000;
  std::memcpy(bad.data() + posOffset + 4, &big, 4);
  try {
    parseSft(resealed(bad), "forged.sft");
    ADD_FAILURE() << "invalid positions accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidFormat) << e.what();
    EXPECT_NE(std::string(e.what()).find("level 1 (compressed, d1)"), std::string::npos)
        << e.what();
  }
  // A descriptor with an unknown format.
  std::string desc = good;
  size_t at = desc.find("format: csr");
  ASSERT_NE(at, std::string::npos);
  desc.replace(at, 11, "format: xyz");
  expectRefused(resealed(desc), ErrorCode::kInvalidArgument, "unknown format 'xyz'");
}


/// A .sft of a dense f32 tensor whose descriptor declares `shape` ("1000 1000") while its values
/// array holds `values` zeros: a forged header, with a valid checksum.
std::string forgedDense(const std::string& shape, uint64_t values) {
  const std::string descriptor = "shape: " + shape + "\ndtype: f32\nformat: dense\n";
  const size_t table = (48 + descriptor.size() + 7) / 8 * 8;
  const size_t dataAt = (table + 32 + 63) / 64 * 64;
  std::string bytes(dataAt + values * 4, '\0');
  std::memcpy(bytes.data(), "SFTENSOR", 8);
  const uint32_t version = 1;
  const uint64_t descBytes = descriptor.size(), count = 1, fileBytes = bytes.size();
  std::memcpy(bytes.data() + 8, &version, 4);
  std::memcpy(bytes.data() + 16, &descBytes, 8);
  std::memcpy(bytes.data() + 24, &count, 8);
  std::memcpy(bytes.data() + 32, &fileBytes, 8);
  std::memcpy(bytes.data() + 48, descriptor.data(), descriptor.size());
  const uint32_t record[4] = {0, 0xffffffffu, 3, 0};  // part 0, values, role values, f32
  const uint64_t at = dataAt;
  std::memcpy(bytes.data() + table, record, 16);
  std::memcpy(bytes.data() + table + 16, &values, 8);
  std::memcpy(bytes.data() + table + 24, &at, 8);
  return resealed(bytes);
}

TEST(Sft, ShapesTheArraysDoNotBackAreRefused) {
  // The forgery itself is well formed: with the shape its values back, it reads.
  EXPECT_EQ(parseSft(forgedDense("2 3", 6), "forged.sft").shape(), (std::vector<int64_t>{2, 3}));
  // 2^32 x 2^32 dense with no values: the position count 2^64 wrapped around to 0 and matched
  // the empty values array, so the file was accepted (and `info` visited 2^64 elements).
  expectRefused(forgedDense("4294967296 4294967296", 0), ErrorCode::kParseError,
                "byte 48: part 0: shape [4294967296, 4294967296] in format dense declares more "
                "than 2^63 positions");
  // Fewer values than the shape needs: refused with the offset of the values' record.
  expectRefused(forgedDense("1000 1000", 4), ErrorCode::kParseError,
                "the values array of part 0 holds 4 elements but the shape and format dense "
                "need 1000000");
  // A dcsr whose level 0 claims -5 children (its last pos entry): the count of the next level
  // was read at pos[-5], outside the array (found by fuzz_sft).
  const Tensor dcsr = fromCoo(Coo{{4, 4}, {1, 2, 3, 0}, {1.0, 2.0}}, Format::parse("dcsr", 2),
                              {DType::kF32});
  std::string bytes = formatSft(dcsr);
  uint64_t descBytes;
  std::memcpy(&descBytes, bytes.data() + 16, 8);
  const size_t table = (48 + descBytes + 7) / 8 * 8;
  uint64_t pos0;  // the first record: level 0's pos, [0, 2]
  std::memcpy(&pos0, bytes.data() + table + 24, 8);
  const int32_t negative = -5;
  std::memcpy(bytes.data() + pos0 + 4, &negative, 4);
  expectRefused(resealed(bytes), ErrorCode::kParseError,
                "level 0 (compressed, d0) ends at position -5 (negative)");
  // The same without structural validation (the fastest load): the sizes are still checked.
  SftReadOptions fast;
  fast.validate = false;
  EXPECT_THROW(parseSft(forgedDense("1000 1000", 4), "forged.sft", fast), Error);
}

}  // namespace
}  // namespace sparseflow::io
