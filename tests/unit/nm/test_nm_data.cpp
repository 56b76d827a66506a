// n:m on real pruned weights (DLMC patterns with random values: prune/compress round trips and
// the 2:4 linear layer against float64) and the one-pass sparsify on a
// 7B-class layer (4096 x 11008 f32) against prune then compress.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "sparseflow/io.h"
#include "sparseflow/nm_linear.h"
#include "unit/nm/nm_test_helpers.h"

namespace sparseflow::nm {
namespace {

using namespace sparseflow::nm::testing;  // NOLINT(google-build-using-namespace)

/// DLMC files (relative to data/dlmc): every transformer layer here and the rn50 0.9 layers.
std::vector<std::string> dlmcFiles() {
  std::vector<std::string> out;
  const std::filesystem::path root = std::filesystem::path(SPARSEFLOW_DATA_DIR) / "dlmc";
  for (const char* folder : {"transformer", "rn50/magnitude_pruning/0.9"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
      if (entry.path().extension() == ".smtx") out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NMRealData, DlmcWeightsPruneCompressAndComeBack) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::string> files = dlmcFiles();
  ASSERT_GE(files.size(), 15u);
  const NMPattern p{2, 4};
  int index = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    ReadOptions options;
    options.format = "dense";
    options.fill = ValueFill::kRandom;
    options.seed = seed + static_cast<uint64_t>(index);
    // Most files in f32; every fourth in bf16 and f16 to cover the half types on real patterns.
    options.dtype = index % 4 == 1 ? DType::kBF16 : index % 4 == 3 ? DType::kF16 : DType::kF32;
    ++index;
    const Tensor w = read(file, options);
    ASSERT_EQ(w.rank(), 2);
    const int64_t rows = w.shape()[0], cols = w.shape()[1];
    const std::vector<double> x = toDense(w);
    const std::vector<double> want = referencePrune(x, rows, cols, p);

    const Tensor pruned = prune(w, p);
    ASSERT_EQ(toDense(pruned), want);
    EXPECT_TRUE(isNM(pruned, p));
    EXPECT_EQ(isNM(w, p), x == want);

    const Tensor compressed = compress(pruned, p);
    expectSameArrays(compressed,
                     fromDense(w.shape(), want.data(), Format::parse("2:4", 2), w.dtype()));
    EXPECT_EQ(toDense(decompress(compressed)), want);

    const Sparsified one = sparsify(w, p);
    expectSameArrays(one.compressed, compressed);
    expectImpactEqual(one.impact, measureImpact(w, pruned));
    expectImpactNear(one.impact, referenceImpact(x, want));
    std::printf("%-100s %s\n", file.substr(file.find("dlmc/")).c_str(),
                one.impact.toString().c_str());
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(NMRealData, LinearLayerOnPrunedDlmcWeightsMatchesFloat64) {
  // NMLinear on real pruning patterns (values random, pruned to 2:4), every dtype with x in the
  // weights' dtype — bf16 runs the bf16 dot path where the CPU has it — at batch 1 (permute-style
  // paths) and 32, against float64 from the pruned weights and the rounded x.
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::string> all = dlmcFiles();
  ASSERT_GE(all.size(), 3u);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (size_t f = 0; f < all.size(); f += all.size() / 3) {
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      SCOPED_TRACE(all[f] + " " + dtypeName(dtype));
      ReadOptions options;
      options.format = "dense";
      options.fill = ValueFill::kRandom;
      options.seed = seed + f;
      options.dtype = dtype;
      const Tensor w = compress(prune(read(all[f], options), {2, 4}), {2, 4});
      const int64_t out = w.shape()[0], in = w.shape()[1];
      const std::vector<double> wd = toDense(w);
      const NMLinear layer(w, {}, Epilogue{});
      for (int64_t batch : {1, 32}) {
        Buffer x = Buffer::zeros(dtype, batch * in);
        for (int64_t e = 0; e < batch * in; ++e) x.setValue(e, unit(rng));
        Buffer y = Buffer::zeros(dtype, batch * out);
        layer.forward(x.data(), dtype, batch, y.data());
        int64_t bad = 0;
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t o = 0; o < out; ++o) {
            double want = 0, mag = 0;
            for (int64_t i = 0; i < in; ++i) {
              const double t = wd[static_cast<size_t>(o * in + i)] * x.value(b * in + i);
              want += t;
              mag += std::fabs(t);
            }
            // y is rounded to the dtype: half an ulp of it (or, below the normal range, half the
            // subnormal step: f16's is 2^-24, reached by rows with few nonzeros), plus f32
            // summation.
            const double ulp = dtype == DType::kF32    ? 0x1p-24
                               : dtype == DType::kBF16 ? 0x1p-8
                                                       : 0x1p-11;
            const double subnormal = dtype == DType::kF32    ? 0x1p-150
                                     : dtype == DType::kBF16 ? 0x1p-134
                                                             : 0x1p-25;
            const double got = y.value(b * out + o);
            if (!(std::fabs(got - want) <= ulp * std::fabs(want) + 1e-5 * mag + subnormal) &&
                ++bad <= 5)
              ADD_FAILURE() << "batch " << batch << " row " << b << " output " << o << ": " << got
                            << ", want " << want << " (" << layer.describe(batch, dtype) << ")";
          }
        }
        EXPECT_EQ(bad, 0) << layer.describe(batch, dtype);
      }
    }
  }
}

/// A rows x cols f32 matrix of pseudo-random values in (-1, 1) (xorshift: fast for 45M values).
Tensor randomF32(int64_t rows, int64_t cols, uint64_t seed) {
  Buffer values = Buffer::zeros(DType::kF32, rows * cols);
  float* v = values.as<float>();
  uint64_t s = seed | 1;
  for (int64_t i = 0; i < rows * cols; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v[i] = static_cast<float>(static_cast<int64_t>(s >> 40) - (int64_t{1} << 23)) * 0x1p-23f;
  }
  return Tensor({rows, cols}, DType::kF32, Format::parse("dense", 2), std::vector<LevelStorage>(2),
                std::move(values));
}

/// A 7B-class layer through the one-pass sparsify: what prune-then-compress gives, half the
/// weights kept. (Its speed, against a copy of the input and the generic builder, is benchmarked
/// by bench_nm_gemm's pipeline rows, not timed here.)
TEST(NMData, SparsifyA7BLayerEqualsPruneThenCompress) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Tensor w = randomF32(4096, 11008, seed);
  const Sparsified s = sparsify(w, {2, 4});
  EXPECT_EQ(s.impact.kept, 4096 * 11008 / 2);
  const Tensor viaPrune = compress(prune(w, {2, 4}), {2, 4});
  ASSERT_EQ(s.compressed.values().bytes(), viaPrune.values().bytes());
  EXPECT_EQ(std::memcmp(s.compressed.values().data(), viaPrune.values().data(),
                        static_cast<size_t>(viaPrune.values().bytes())),
            0);
  EXPECT_EQ(s.compressed.level(1).meta.bytes(), viaPrune.level(1).meta.bytes());
  EXPECT_EQ(std::memcmp(s.compressed.level(1).meta.data(), viaPrune.level(1).meta.data(),
                        static_cast<size_t>(viaPrune.level(1).meta.bytes())),
            0);
}

}  // namespace
}  // namespace sparseflow::nm
