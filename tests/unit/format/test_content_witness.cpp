// Buffer stamps and content witnesses: a cache of derived data matches only the contents it was
// built from, whatever address a buffer has and however its memory was written.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/random_coo.h"
#include "format/content_witness.h"
#include "sparseflow/build.h"

namespace sparseflow {
namespace {

Buffer randomBuffer(int64_t n, uint64_t seed) {
  Buffer b = Buffer::zeros(DType::kF32, n);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  float* p = b.as<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(rng() % 1000) / 7.0f;
  return b;
}

TEST(BufferStamp, OwnedBuffersAreWatchedAndWritesChangeTheVersion) {
  Buffer b = randomBuffer(100, 1);
  const Buffer::Stamp first = b.stamp();
  EXPECT_TRUE(first.watched);
  EXPECT_NE(first.id, 0u);
  EXPECT_EQ(b.stamp().version, first.version);  // no write in between
  b.as<float>()[3] = 1;                         // a mutable accessor is a write
  const Buffer::Stamp second = b.stamp();
  EXPECT_EQ(second.id, first.id);
  EXPECT_NE(second.version, first.version);
  b.setValue(4, 2.0);
  EXPECT_NE(b.stamp().version, second.version);
  // Copies share the state: a write through a copy is seen through the original.
  Buffer copy = b;
  const uint64_t before = b.stamp().version;
  copy.data();
  EXPECT_NE(b.stamp().version, before);
  // A clone is new memory with a new identity.
  EXPECT_NE(b.clone().stamp().id, b.stamp().id);
}

TEST(BufferStamp, CallerMemoryAndExternalWritersAreNotWatched) {
  std::vector<float> memory(64, 1.0f);
  Buffer view = Buffer::view(DType::kF32, memory.data(), 64);
  EXPECT_FALSE(view.stamp().watched);
  Buffer owned = randomBuffer(64, 2);
  {
    std::shared_ptr<void> token = owned.openExternalWriter();
    EXPECT_FALSE(owned.stamp().watched);
    const uint64_t version = owned.stamp().version;
    token.reset();  // the release counts as a write
    EXPECT_TRUE(owned.stamp().watched);
    EXPECT_NE(owned.stamp().version, version);
  }
}

TEST(BufferWitness, MatchesOnlyTheRecordedContents) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Buffer b = randomBuffer(3000000, seed);  // 12 MB: the chunked, parallel hash
  BufferWitness witness(b);
  EXPECT_TRUE(witness.matches(b));
  // Written, but to the same value: the hash still matches.
  float* p = b.as<float>();
  p[17] = p[17];
  EXPECT_TRUE(witness.matches(b));
  // Written to a new value: no match, until the old value is back.
  const float old = p[2999999];
  b.as<float>()[2999999] = old + 1;
  EXPECT_FALSE(witness.matches(b));
  b.as<float>()[2999999] = old;
  EXPECT_TRUE(witness.matches(b));
  // Another buffer with the same contents matches (a new view of the same array, say); one that
  // differs in one element does not.
  Buffer same = b.clone();
  EXPECT_TRUE(witness.matches(same));
  same.as<float>()[0] += 1;
  EXPECT_FALSE(witness.matches(same));
  // Caller memory changed behind the library's back is found by its hash.
  std::vector<float> memory(b.as<float>(), b.as<float>() + b.size());
  Buffer view = Buffer::view(DType::kF32, memory.data(), b.size());
  BufferWitness viewWitness(view);
  EXPECT_TRUE(viewWitness.matches(view));
  memory[123456] += 1;  // no accessor call
  EXPECT_FALSE(viewWitness.matches(view));
  // Same bytes, other type or size: no match.
  EXPECT_FALSE(BufferWitness(Buffer::zeros(DType::kI32, 4)).matches(Buffer::zeros(DType::kF32, 4)));
  EXPECT_FALSE(BufferWitness(Buffer::zeros(DType::kF32, 4)).matches(Buffer::zeros(DType::kF32, 5)));
}

TEST(TensorWitness, CoversEveryArrayShapeAndFormat) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Coo coo = testing::randomCoo({40, 60}, 0.1, seed);
  Tensor csr = fromCoo(coo, Format::parse("csr", 2), {DType::kF32});
  TensorWitness witness(csr);
  EXPECT_TRUE(witness.matches(csr));
  EXPECT_TRUE(witness.matches(csr.clone()));
  Tensor moved = csr.clone();
  moved.mutableLevel(1).crd.as<int32_t>()[0] ^= 1;  // a coordinate, not a value
  EXPECT_FALSE(witness.matches(moved));
  EXPECT_FALSE(witness.matches(fromCoo(coo, Format::parse("csr", 2), {DType::kF64})));
  EXPECT_FALSE(witness.matches(fromCoo(coo, Format::parse("csr@i64", 2), {DType::kF32})));
  Tensor hyb = fromCoo(coo, Format::parse("hyb", 2), {DType::kF32});
  TensorWitness hybWitness(hyb);
  EXPECT_TRUE(hybWitness.matches(hyb.clone()));
  EXPECT_FALSE(hybWitness.matches(csr));
  EXPECT_TRUE(TensorWitness().empty());
  EXPECT_FALSE(TensorWitness().matches(csr));
}

}  // namespace
}  // namespace sparseflow
