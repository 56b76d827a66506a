// n:m on real pruned weights (DLMC patterns with random values) and the speed of the direct path
// on a 7B-class layer (4096 x 11008 f32), reported as ratios to a plain copy and to the generic
// builder in the same run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "sparseflow/io.h"
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

double secondsOf(const std::function<void()>& body, int repeats) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
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

TEST(NMSpeed, SparsifyA7BLayerAndBeatTheGenericBuilder) {
#if defined(SPARSEFLOW_SANITIZED) || !defined(NDEBUG)
  GTEST_SKIP() << "timings need an optimized build without sanitizers";
#endif
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Tensor w = randomF32(4096, 11008, seed);
  Sparsified s;
  const double sparsifySeconds = secondsOf([&] { s = sparsify(w, {2, 4}); }, 3);
  const double copySeconds = secondsOf([&] { (void)w.clone(); }, 3);
  Tensor pruned;
  const double pruneSeconds = secondsOf([&] { pruned = prune(w, {2, 4}); }, 2);
  const double compressSeconds = secondsOf([&] { (void)compress(pruned, {2, 4}); }, 2);
  const double decompressSeconds = secondsOf([&] { (void)decompress(s.compressed); }, 2);
  const double megabytes = static_cast<double>(w.values().bytes()) / 1e6;
  std::printf(
      "4096x11008 f32 (%.0f MB): sparsify 2:4 %.1f ms (%.1f GB/s of input), copy %.1f ms, "
      "ratio %.2f; prune %.1f ms, compress %.1f ms, decompress %.1f ms\n  %s\n",
      megabytes, sparsifySeconds * 1e3, megabytes / 1e3 / sparsifySeconds, copySeconds * 1e3,
      sparsifySeconds / copySeconds, pruneSeconds * 1e3, compressSeconds * 1e3,
      decompressSeconds * 1e3, s.impact.toString().c_str());
  EXPECT_EQ(s.impact.kept, 4096 * 11008 / 2);
  // A ratio, not an absolute time: one pass that reads 180 MB and writes 90 MB stays within a
  // few copies of the input.
  EXPECT_LT(sparsifySeconds, 8 * copySeconds);

  // The direct path against the generic level-by-level builder on a BERT-sized layer.
  const Tensor small = prune(randomF32(768, 3072, seed + 1), {2, 4});
  const std::vector<double> dense = toDense(small);
  const double genericSeconds =
      secondsOf([&] { (void)fromDense(small.shape(), dense.data(), Format::parse("2:4", 2)); }, 1);
  const double directSeconds = secondsOf([&] { (void)compress(small, {2, 4}); }, 3);
  std::printf("768x3072 f32 2:4 compress: direct %.2f ms, generic builder %.1f ms (%.0fx)\n",
              directSeconds * 1e3, genericSeconds * 1e3, genericSeconds / directSeconds);
  EXPECT_LT(directSeconds * 5, genericSeconds);
}

}  // namespace
}  // namespace sparseflow::nm
