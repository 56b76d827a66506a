// The autoconfigurator's space and features: features of matrices whose values are known by
// construction (identity, dense blocks, a band, an empty matrix) and the same in every input
// format; the SpMM space's size, order and legality (a sample of configurations, compiled and run,
// against float64); n:m candidates only for inputs that are exactly n:m; configuration, kernel
// and machine features.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/random_coo.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm.h"
#include "tune/cost_model.h"
#include "tune/features.h"
#include "tune/measure.h"
#include "tune/parallel_compile.h"
#include "tune/search.h"
#include "tune/space.h"

namespace sparseflow::tune {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

Tensor fromValues(int64_t rows, int64_t cols, const std::vector<double>& v, const char* format) {
  return fromDense({rows, cols}, v.data(), Format::parse(format, 2), DType::kF32);
}

std::vector<double> identity(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0;
  return v;
}

TEST(TuneFeatures, AnIdentityMatrixHasItsKnownFeatures) {
  const Features f = matrixFeatures(fromValues(64, 64, identity(64), "csr"));
  EXPECT_DOUBLE_EQ(f.at("rows_log2"), std::log2(65.0));
  EXPECT_DOUBLE_EQ(f.at("density"), 1.0 / 64);
  EXPECT_DOUBLE_EQ(f.at("row_mean_log2"), 1.0);  // log2(1 + 1)
  EXPECT_DOUBLE_EQ(f.at("row_cv"), 0.0);
  EXPECT_DOUBLE_EQ(f.at("row_max_over_mean"), 1.0);
  EXPECT_DOUBLE_EQ(f.at("row_empty_fraction"), 0.0);
  EXPECT_DOUBLE_EQ(f.at("row_hist_1"), 1.0);
  EXPECT_DOUBLE_EQ(f.at("band_mean"), 0.0);
  EXPECT_DOUBLE_EQ(f.at("diagonal_fraction"), 1.0);
  EXPECT_DOUBLE_EQ(f.at("contiguous_fraction"), 0.0);
  // b x b diagonal blocks hold b entries each: fill b / b^2.
  for (int b : kBlockSides) EXPECT_DOUBLE_EQ(f.at("block_fill_" + std::to_string(b)), 1.0 / b);
  // The image: the diagonal cells hold 1/8 each, the others nothing.
  for (int r = 0; r < kImage; ++r) {
    for (int c = 0; c < kImage; ++c) {
      EXPECT_DOUBLE_EQ(f.at("image_" + std::to_string(r * kImage + c)), r == c ? 1.0 / kImage : 0)
          << r << "," << c;
    }
  }
}

TEST(TuneFeatures, DenseBlocksFillTheirBlocksAndEveryFormatGivesTheSameFeatures) {
  // 4x4 dense blocks on the diagonal of a 96 x 96 matrix.
  std::vector<double> v(96 * 96, 0.0);
  for (int64_t i = 0; i < 96; ++i) {
    for (int64_t j = i / 4 * 4; j < i / 4 * 4 + 4; ++j) v[static_cast<size_t>(i * 96 + j)] = 1.5;
  }
  const Features f = matrixFeatures(fromValues(96, 96, v, "csr"));
  EXPECT_DOUBLE_EQ(f.at("block_fill_2"), 1.0);
  EXPECT_DOUBLE_EQ(f.at("block_fill_4"), 1.0);
  EXPECT_DOUBLE_EQ(f.at("block_fill_8"), 0.5);    // 2 of the 4 quarter blocks
  EXPECT_DOUBLE_EQ(f.at("block_fill_16"), 0.25);  // 4 of 16
  EXPECT_DOUBLE_EQ(f.at("contiguous_fraction"), 0.75);
  EXPECT_DOUBLE_EQ(f.at("row_hist_3"), 1.0);  // every row holds 4 entries: bucket 4-7
  for (const char* format : {"coo", "csc", "bsr:4x4", "dcsr", "ell"}) {
    const Features g = matrixFeatures(fromValues(96, 96, v, format));
    EXPECT_EQ(g.names, f.names) << format;
    EXPECT_EQ(g.values, f.values) << format;
  }
}

TEST(TuneFeatures, BlockFillCountsSpreadAndClusteredBlockColumnsExactly) {
  // Every row holds 20 entries; all block rows alike, so whichever are sampled give the fill.
  // Spread: columns j * 3000 + r % 2 (a block row's block columns span far more than 64 bits per
  // entry: counted by sorting); clustered: columns 0..19 (counted by the bitmap).
  const int64_t rows = 64, cols = 65536;
  Coo spread{{rows, cols}, {}, {}}, clustered{{rows, cols}, {}, {}};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < 20; ++j) {
      spread.coords.insert(spread.coords.end(), {r, j * 3000 + r % 2});
      spread.values.push_back(1.0);
      clustered.coords.insert(clustered.coords.end(), {r, j});
      clustered.values.push_back(1.0);
    }
  }
  const Features fs = matrixFeatures(fromCoo(spread, Format::parse("csr", 2)));
  const Features fc = matrixFeatures(fromCoo(clustered, Format::parse("csr", 2)));
  // Spread: each b-row block row touches 20 blocks with 20 b entries: fill 1 / b.
  EXPECT_DOUBLE_EQ(fs.at("block_fill_2"), 0.5);
  EXPECT_DOUBLE_EQ(fs.at("block_fill_4"), 0.25);
  EXPECT_DOUBLE_EQ(fs.at("block_fill_8"), 0.125);
  EXPECT_DOUBLE_EQ(fs.at("block_fill_16"), 0.0625);
  // Clustered: 20 b entries in ceil(20 / b) blocks of b x b.
  EXPECT_DOUBLE_EQ(fc.at("block_fill_2"), 1.0);
  EXPECT_DOUBLE_EQ(fc.at("block_fill_4"), 1.0);
  EXPECT_DOUBLE_EQ(fc.at("block_fill_8"), 160.0 / (3 * 64));
  EXPECT_DOUBLE_EQ(fc.at("block_fill_16"), 320.0 / (2 * 256));
}

TEST(TuneFeatures, SampledRowsAndEmptyMatricesStayFinite) {
  // A tall random matrix (more rows than the sample) and an empty one.
  std::mt19937_64 rng(sparseflow::testing::freshSeed());
  const Coo coo = sparseflow::testing::randomCoo({9000, 300}, 0.01, rng());
  const Tensor tall = fromCoo(coo, Format::parse("csr", 2));
  const Features f = matrixFeatures(tall);
  EXPECT_NEAR(f.at("density"), static_cast<double>(tall.numStored()) / (9000.0 * 300), 1e-12);
  double image = 0;
  for (int k = 0; k < kImage * kImage; ++k) image += f.at("image_" + std::to_string(k));
  EXPECT_NEAR(image, 1.0, 1e-9);
  // Uniform random: the sampled block fill at 2 is about the density scaled by the blocks hit.
  EXPECT_GT(f.at("block_fill_2"), 0.24);
  EXPECT_LT(f.at("block_fill_2"), 0.3);
  const Features empty = matrixFeatures(fromValues(5, 7, std::vector<double>(35, 0.0), "csr"));
  for (size_t k = 0; k < empty.values.size(); ++k) {
    EXPECT_TRUE(std::isfinite(empty.values[k])) << empty.names[k];
  }
  EXPECT_DOUBLE_EQ(empty.at("row_empty_fraction"), 1.0);
}

TEST(TuneFeatures, MachineKernelAndConfigurationFeatures) {
  const Features m = machineFeatures();
  EXPECT_TRUE(m.at("simd_f32_lanes") == 4 || m.at("simd_f32_lanes") == 8 ||
              m.at("simd_f32_lanes") == 16)
      << m.at("simd_f32_lanes");
  EXPECT_GE(m.at("threads"), 1);

  const Tensor a = fromValues(64, 64, identity(64), "csr");
  std::vector<double> bv(64 * 32, 0.5);
  const Tensor b = fromDense({64, 32}, bv.data(), Format::parse("dense", 2), DType::kF32);
  const Tensor x = fromDense({64}, bv.data(), Format::parse("dense", 1), DType::kF32);
  const Features spmm = kernelFeatures("C(i,j) = A(i,k) * B(k,j)", {{"A", &a}, {"B", &b}});
  EXPECT_DOUBLE_EQ(spmm.at("dense_extent_log2"), 5.0);  // 32 columns
  EXPECT_DOUBLE_EQ(spmm.at("contraction"), 1.0);
  EXPECT_DOUBLE_EQ(spmm.at("reduced_indices"), 1.0);
  const Features spmv = kernelFeatures("y(i) = relu(A(i,k) * x(k))", {{"A", &a}, {"x", &x}});
  EXPECT_DOUBLE_EQ(spmv.at("dense_extent_log2"), 0.0);
  EXPECT_DOUBLE_EQ(spmv.at("epilogue"), 1.0);

  Config c;
  c.formats = {{"A", "bsr:4x2"}};
  c.split = 64;
  c.unroll = 4;
  c.handTuned = false;
  const Features cf = configFeatures(c, {{"A", "A"}});
  EXPECT_DOUBLE_EQ(cf.at("A.is_bsr"), 1.0);
  EXPECT_DOUBLE_EQ(cf.at("A.is_csr"), 0.0);
  EXPECT_DOUBLE_EQ(cf.at("A.block_rows_log2"), 2.0);
  EXPECT_DOUBLE_EQ(cf.at("A.block_cols_log2"), 1.0);
  EXPECT_DOUBLE_EQ(cf.at("split_log2"), 6.0);
  EXPECT_DOUBLE_EQ(cf.at("unroll_log2"), 2.0);
  EXPECT_DOUBLE_EQ(cf.at("hand_tuned"), 0.0);
  EXPECT_DOUBLE_EQ(cf.at("serial"), 0.0);
  c.parallel = false;
  EXPECT_DOUBLE_EQ(configFeatures(c, {{"A", "A"}}).at("serial"), 1.0);
  for (const char* format : {"csr", "csc", "dcsr", "coo", "ell", "hyb:8", "2:4"}) {
    c.formats = {{"A", format}};
    const Features g = configFeatures(c, {{"A", "A"}});
    double families = 0;
    for (const char* k : {"csr", "csc", "dcsr", "coo", "bsr", "ell", "hyb", "nm"})
      families += g.at(std::string("A.is_") + k);
    EXPECT_DOUBLE_EQ(families, 1.0) << format;
  }
  c.formats = {{"A", "hyb:8"}};
  EXPECT_DOUBLE_EQ(configFeatures(c, {{"A", "A"}}).at("A.hyb_width_log2"), 3.0);
}

TEST(TuneSpace, SpmmHasAThousandLegalConfigurationsThatRunCorrectly) {
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Coo coo = sparseflow::testing::randomCoo({61, 47}, 0.1, rng());
  const Tensor a = fromCoo(coo, Format::parse("csr", 2));
  std::vector<double> bv(47 * 24);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : bv) v = u(rng);
  const Tensor b = fromDense({47, 24}, bv.data(), Format::parse("dense", 2), DType::kF32);
  const std::string kernel = "C(i,j) = A(i,k) * B(k,j)";
  SpaceRequest request;
  request.kernel = kernel;
  request.tuned = {{"A", &a}};
  const Space space = enumerateSpace(request);
  std::string refusals;
  for (const std::string& why : space.why) refusals += "\n  " + why;
  EXPECT_GE(space.configs.size(), 1000u) << space.considered << " considered; refused:" << refusals;
  EXPECT_LE(static_cast<int64_t>(space.configs.size()), space.considered);
  ASSERT_FALSE(space.configs.empty());
  EXPECT_EQ(space.configs.front().arguments(), "--format A=csr");  // the default first
  std::set<std::string> distinct;
  std::set<std::string> formats;
  for (const Config& c : space.configs) {
    distinct.insert(c.arguments());
    formats.insert(c.formats.at("A"));
  }
  EXPECT_EQ(distinct.size(), space.configs.size());
  for (const char* f : {"csr", "csc", "dcsr", "coo", "ell", "hyb:8", "bsr:4x4", "bsr:16x1"})
    EXPECT_TRUE(formats.count(f)) << f;
  EXPECT_FALSE(formats.count("2:4"));  // random values are not 2:4
  // One-thread twins: of every configuration whose schedule does not fork, spelled --serial.
  size_t serial = 0;
  const Config* firstSerial = nullptr;
  for (const Config& c : space.configs) {
    const bool forks = c.schedule.find("parallel(") != std::string::npos;
    const std::string args = c.arguments();
    const bool spelled = args.size() > 9 && args.compare(args.size() - 9, 9, " --serial") == 0;
    EXPECT_EQ(spelled, !c.parallel) << args;
    if (c.parallel) {
      EXPECT_EQ(distinct.count(args + " --serial"), forks ? 0u : 1u) << args;
    } else {
      EXPECT_FALSE(forks) << args;
      ++serial;
      if (firstSerial == nullptr) firstSerial = &c;
    }
  }
  EXPECT_GE(serial, 100u);
  ASSERT_NE(firstSerial, nullptr);
  // Serial options give a space without threads: every configuration runs on one.
  SpaceRequest serialRequest = request;
  serialRequest.base.parallel = false;
  const Space oneThread = enumerateSpace(serialRequest);
  EXPECT_LT(oneThread.configs.size(), space.configs.size());
  for (const Config& c : oneThread.configs) EXPECT_FALSE(c.parallel) << c.arguments();

  // A sample across the space compiles, runs and matches float64.
  std::vector<double> ad = toDense(a), want(61 * 24, 0.0);
  for (int64_t i = 0; i < 61; ++i) {
    for (int64_t k = 0; k < 47; ++k) {
      for (int64_t j = 0; j < 24; ++j) {
        want[static_cast<size_t>(i * 24 + j)] +=
            ad[static_cast<size_t>(i * 47 + k)] *
            static_cast<double>(static_cast<float>(bv[static_cast<size_t>(k * 24 + j)]));
      }
    }
  }
  std::vector<const Config*> sample = {firstSerial};
  for (size_t n = 0; n < space.configs.size(); n += space.configs.size() / 6)
    sample.push_back(&space.configs[n]);
  for (const Config* c : sample) {
    SCOPED_TRACE(c->arguments());
    const Kernel k = Kernel::compile(kernel, optionsFor(KernelOptions{}, *c));
    const std::vector<double> got = toDense(k.run({{"A", &a}, {"B", &b}}));
    ASSERT_EQ(got.size(), want.size());
    for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], want[e], 1e-5) << e;
  }
}

TEST(TuneSpace, NMFormatsAreCandidatesOnlyWhereNothingIsDropped) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> v(16 * 32);
  for (double& x : v) x = u(rng);
  const Tensor dense = fromValues(16, 32, v, "dense");
  const Tensor pruned = nm::prune(dense, {2, 4});
  std::vector<std::string> formats = candidateFormats(convert(pruned, Format::parse("csr", 2)));
  EXPECT_NE(std::find(formats.begin(), formats.end(), "2:4"), formats.end());
  EXPECT_EQ(std::find(formats.begin(), formats.end(), "1:4"), formats.end());
  formats = candidateFormats(convert(dense, Format::parse("csr", 2)));
  EXPECT_EQ(std::find(formats.begin(), formats.end(), "2:4"), formats.end());
  // Read from the stored entries: a 2^20-square matrix (4 TB dense) with a few entries per row
  // group is checked at once; three entries in one group of four rule 2:4 out, two in each rule
  // 1:4 out.
  const int64_t n = int64_t{1} << 20;
  Coo sparse{{n, n}, {}, {}};
  for (int64_t e = 0; e < 1000; ++e) {
    sparse.coords.insert(sparse.coords.end(), {e * 1000, 8 * e, e * 1000, 8 * e + 3});
    sparse.values.insert(sparse.values.end(), {1.0, -2.0});
  }
  Tensor huge = fromCoo(sparse, Format::parse("csr", 2));
  formats = candidateFormats(huge);
  EXPECT_NE(std::find(formats.begin(), formats.end(), "2:4"), formats.end());
  EXPECT_EQ(std::find(formats.begin(), formats.end(), "1:4"), formats.end());
  sparse.coords.insert(sparse.coords.end(), {5, 1, 5, 2, 5, 3});
  sparse.values.insert(sparse.values.end(), {1.0, 1.0, 1.0});
  formats = candidateFormats(fromCoo(sparse, Format::parse("csr", 2)));
  EXPECT_EQ(std::find(formats.begin(), formats.end(), "2:4"), formats.end());
}

}  // namespace
}  // namespace sparseflow::tune

namespace sparseflow::tune {
namespace {

TEST(TuneSearch, ExhaustiveTimesEveryConfigurationAndKeepsTheFastest) {
  std::mt19937_64 rng(11);
  const Coo coo = sparseflow::testing::randomCoo({96, 64}, 0.08, rng());
  const Tensor a = fromCoo(coo, Format::parse("csr", 2));
  std::vector<double> bv(64 * 16, 0.25);
  const Tensor b = fromDense({64, 16}, bv.data(), Format::parse("dense", 2), DType::kF32);
  SpaceRequest request;
  request.kernel = "C(i,j) = A(i,k) * B(k,j)";
  request.tuned = {{"A", &a}};
  // A small space: the default and three hand-tuned or generated defaults of other formats.
  Space space;
  for (const char* format : {"csr", "bsr:4x4", "bsr:2x2", "dcsr"}) {
    Config c;
    c.formats = {{"A", format}};
    space.configs.push_back(c);
  }
  SearchOptions options;
  options.exhaustive = true;
  options.measure.maxRuns = 5;
  const SearchResult r = search(request, space, {{"A", &a}, {"B", &b}}, options);
  EXPECT_EQ(r.measured, 4);
  EXPECT_EQ(r.space, 4);
  ASSERT_EQ(r.candidates.size(), 4u);
  double best = r.candidates[0].medianMs;
  for (const Candidate& c : r.candidates) {
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_GT(c.medianMs, 0.0);
    best = std::min(best, c.medianMs);
  }
  EXPECT_EQ(r.medianMs, best);
  EXPECT_EQ(r.defaultMs, r.candidates[0].medianMs);
  EXPECT_EQ(r.candidates[0].config.arguments(), "--format A=csr");
  // Without a model and not exhaustive there is nothing to rank by.
  options.exhaustive = false;
  EXPECT_THROW(search(request, space, {{"A", &a}, {"B", &b}}, options), Error);
}

TEST(TuneFeatures, TunedOperandsAreNamedByRoleNotByTheirNamesInTheKernel) {
  // The shipped model calls the sparse operand A: a layer's `W` must give it the same features.
  const uint64_t seed = sparseflow::testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor w =
      fromCoo(sparseflow::testing::randomCoo({48, 40}, 0.1, rng()), Format::parse("csr", 2));
  std::vector<double> xv(8 * 40, 0.5), bv(40 * 8, 0.5);
  const Tensor x = fromDense({8, 40}, xv.data(), Format::parse("dense", 2), DType::kF32);
  const Tensor b = fromDense({40, 8}, bv.data(), Format::parse("dense", 2), DType::kF32);
  const std::string layer = "Y(n,o) = X(n,i) * W(o,i)";
  const std::vector<TunedOperand> operands = modelOperands(layer, {"W"});
  ASSERT_EQ(operands.size(), 1u);
  EXPECT_EQ(operands[0].name, "W");
  EXPECT_EQ(operands[0].role, "A");
  Config c;
  c.formats = {{"W", "bsr:4x2"}};
  const std::vector<std::string> names =
      CostModel::load(std::string(SPARSEFLOW_DATA_DIR) + "/tune/model.json").featureNames();
  const std::vector<double> row =
      featureRow(fixedFeatures(layer, operands, {{"X", &x}, {"W", &w}}), c, operands, names);
  ASSERT_EQ(row.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) EXPECT_FALSE(std::isnan(row[k])) << names[k];
  // The same matrix called A in the SpMM spelling: the same matrix and configuration features.
  Config ca;
  ca.formats = {{"A", "bsr:4x2"}};
  const std::vector<TunedOperand> spmm = modelOperands("C(i,j) = A(i,k) * B(k,j)", {"A"});
  const std::vector<double> same = featureRow(
      fixedFeatures("C(i,j) = A(i,k) * B(k,j)", spmm, {{"A", &w}, {"B", &b}}), ca, spmm, names);
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].rfind("A.", 0) == 0 || names[k].rfind("cfg.", 0) == 0) {
      EXPECT_EQ(row[k], same[k]) << names[k];
    }
  }
  // Roles follow the right-hand side's order of first appearance, not the names' order.
  const std::vector<TunedOperand> two = modelOperands("C(i,j) = B(i,k) * A(k,j)", {"A", "B"});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].name, "B");
  EXPECT_EQ(two[0].role, "A");
  EXPECT_EQ(two[1].name, "A");
  EXPECT_EQ(two[1].role, "B");
}

TEST(TuneParallelCompile, ConfigsCompileSideBySideInTheirOrderWithTheirErrors) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Coo coo = sparseflow::testing::randomCoo({72, 40}, 0.1, rng());
  const Tensor a = fromCoo(coo, Format::parse("csr", 2));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> bv(40 * 12);
  for (double& v : bv) v = uniform(rng);
  const Tensor b = fromDense({40, 12}, bv.data(), Format::parse("dense", 2), DType::kF32);
  // The float64 reference C = A B.
  std::vector<double> want(72 * 12, 0.0);
  for (size_t e = 0; e < coo.values.size(); ++e) {
    const int64_t i = coo.coords[2 * e], k = coo.coords[2 * e + 1];
    for (int64_t j = 0; j < 12; ++j) want[i * 12 + j] += coo.values[e] * bv[k * 12 + j];
  }
  std::vector<Config> configs(6);
  configs[0].formats = {{"A", "csr"}};  // hand-tuned: nothing to compile
  configs[1].formats = {{"A", "bsr:4x4"}};
  configs[2].formats = {{"A", "csr"}};
  configs[2].schedule = "split(zz, z0, z1, 8)";  // no index zz: refused
  configs[3].formats = {{"A", "dcsr"}};
  configs[4].formats = {{"A", "csr"}};
  configs[4].handTuned = false;
  configs[5].formats = {{"A", "coo"}};
  const std::vector<std::string> providers{"csr_spmm",  "bsr_spmm",  "",
                                           "generated", "generated", "generated"};
  for (const int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const std::vector<CompiledConfig> compiled =
        compileConfigs("C(i,j) = A(i,k) * B(k,j)", {}, configs, threads);
    ASSERT_EQ(compiled.size(), configs.size());
    for (size_t n = 0; n < configs.size(); ++n) {
      SCOPED_TRACE(configs[n].arguments());
      if (n == 2) {
        EXPECT_FALSE(compiled[n].kernel.has_value());
        EXPECT_NE(compiled[n].error.find("zz"), std::string::npos) << compiled[n].error;
        continue;
      }
      ASSERT_TRUE(compiled[n].kernel.has_value()) << compiled[n].error;
      EXPECT_EQ(compiled[n].kernel->provider(), providers[n]);
      const Tensor c = compiled[n].kernel->run({{"A", &a}, {"B", &b}});
      const std::vector<double> got = toDense(c);
      ASSERT_EQ(got.size(), want.size());
      for (size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-5) << e;
    }
  }
}

TEST(TuneMeasure, ATimedCallOverTheCapIsTheMeasurement) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Coo coo = sparseflow::testing::randomCoo({80, 48}, 0.1, rng());
  const Tensor a = fromCoo(coo, Format::parse("csr", 2));
  std::vector<double> bv(48 * 8, 0.5);
  const Tensor b = fromDense({48, 8}, bv.data(), Format::parse("dense", 2), DType::kF32);
  const std::map<std::string, const Tensor*> inputs{{"A", &a}, {"B", &b}};
  Config c;
  c.formats = {{"A", "csr"}};
  MeasureOptions capped;
  capped.capMs = 1e-9;  // every call is longer
  const Measurement once = measure("C(i,j) = A(i,k) * B(k,j)", {}, c, inputs, capped);
  EXPECT_TRUE(once.capped);
  EXPECT_EQ(once.runs, 2);  // two timed calls over the cap, after the first
  EXPECT_GT(once.medianMs, 0.0);
  EXPECT_LT(once.medianMs, once.totalMs);  // the slower of the two
  EXPECT_GE(2 * once.medianMs, once.totalMs);
  // Where the first call converts nothing it is the first timed call: two calls in all.
  capped.capFirstCall = true;
  const Kernel k = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", optionsFor({}, c));
  const Measurement first = measureCompiled(k, inputs, capped);
  EXPECT_TRUE(first.capped);
  EXPECT_EQ(first.runs, 2);
  EXPECT_GE(first.medianMs, first.firstMs);
  // A cap above every call is not reached.
  MeasureOptions loose;
  loose.capMs = 1e9;
  EXPECT_FALSE(measure("C(i,j) = A(i,k) * B(k,j)", {}, c, inputs, loose).capped);
  const Measurement full = measure("C(i,j) = A(i,k) * B(k,j)", {}, c, inputs);
  EXPECT_FALSE(full.capped);
  EXPECT_GE(full.runs, 3);
  // A call of microseconds is timed until its calls fill the 20 ms target (or 1,000 of them),
  // not stopped after 15 (whose median had not settled in a fresh process). Asserted on the
  // calls' total, which a stall of a loaded machine cannot make fail (a call count could).
  const MeasureOptions defaults;
  EXPECT_GE(defaults.targetMs, 20.0);
  EXPECT_GE(full.runs, defaults.minRuns);
  EXPECT_TRUE(full.runs == defaults.maxRuns || full.totalMs >= defaults.targetMs)
      << full.runs << " calls, " << full.totalMs << " ms in all";
  EXPECT_GE(full.totalMs, full.medianMs);
}

}  // namespace
}  // namespace sparseflow::tune
