// The tuning database and the public API on top of it (sparseflow/tune.h): input fingerprints
// that follow the pattern and not the values, records found by kernel, machine and inputs (the
// last one winning, cut-short lines skipped, "-" meaning none), and compileTuned compiling the
// recorded decision, run against float64 on a fresh random matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "sparseflow/tune.h"
#include "tune/database.h"

namespace sparseflow::tune {
namespace {

namespace fs = std::filesystem;

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

/// A fresh directory under the test's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("sf_tune_db_" + std::to_string(std::random_device{}()) + "_" +
             std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Tensor randomMatrix(std::mt19937_64& rng, int64_t rows, int64_t cols, double density,
                    const char* format) {
  std::vector<double> v(static_cast<size_t>(rows * cols), 0.0);
  std::uniform_real_distribution<double> u(-1, 1);
  std::bernoulli_distribution keep(density);
  for (double& x : v) {
    if (keep(rng)) x = static_cast<float>(u(rng));
  }
  return fromDense({rows, cols}, v.data(), Format::parse(format, 2), DType::kF32);
}

TEST(TuneFingerprint, FollowsThePatternNotTheValues) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Tensor a = randomMatrix(rng, 90, 70, 0.1, "csr");
  const Tensor b = randomMatrix(rng, 70, 16, 1.0, "dense");
  const std::string base = inputFingerprint({{"A", &a}, {"B", &b}});
  EXPECT_EQ(base, inputFingerprint({{"A", &a}, {"B", &b}}));
  EXPECT_NE(base.find("A:f32:csr:90x70:stored=" + std::to_string(a.numStored())), std::string::npos)
      << base;
  EXPECT_NE(base.find("; B:f32:dense:70x16"), std::string::npos) << base;
  // Other values on the same pattern: the same fingerprint.
  std::vector<double> tripled = toDense(a);
  for (double& v : tripled) v *= 3.0;
  const Tensor scaled = fromDense({90, 70}, tripled.data(), a.format(), DType::kF32);
  EXPECT_EQ(base, inputFingerprint({{"A", &scaled}, {"B", &b}}));
  // One entry moved to another column, another format, another dtype: another fingerprint.
  Coo coo = toCoo(a);
  ASSERT_GT(coo.values.size(), 2u);
  int64_t& col = coo.coords[1];
  for (int64_t c = 0; c < 70; ++c) {
    bool taken = false;
    for (size_t e = 0; e < coo.values.size(); ++e)
      taken |= coo.coords[2 * e] == coo.coords[0] && coo.coords[2 * e + 1] == c;
    if (!taken) {
      col = c;
      break;
    }
  }
  const Tensor moved = fromCoo(coo, Format::parse("csr", 2));
  EXPECT_NE(base, inputFingerprint({{"A", &moved}, {"B", &b}}));
  const Tensor asCoo = convert(a, Format::parse("coo", 2));
  EXPECT_NE(base, inputFingerprint({{"A", &asCoo}, {"B", &b}}));
  ConvertOptions f64;
  f64.changeDType = true;
  f64.dtype = DType::kF64;
  const Tensor wide = convert(a, a.format(), f64);
  EXPECT_NE(base, inputFingerprint({{"A", &wide}, {"B", &b}}));
  EXPECT_NE(machineFingerprint().find("threads"), std::string::npos) << machineFingerprint();
}

/// The key compileTuned and tuneKernel give the SpMM when A is searched and nothing is pinned.
const std::string kSpmmKey =
    decisionKey("C(i,j) = A(i,k) * B(k,j)", KernelOptions{}, {{"A", nullptr}});

TuningRecord recordFor(const std::string& inputs, const std::string& format,
                       const std::string& schedule = "split(i, i0, i1, 16); parallel(i0)") {
  TuningRecord r;
  r.kernel = kSpmmKey;
  r.machine = machineFingerprint();
  r.inputs = inputs;
  r.chosen.formats = {{"A", format}};
  r.chosen.schedule = schedule;
  r.chosen.handTuned = false;
  r.medianMs = 0.5;
  r.defaultMs = 0.75;
  r.space = 1122;
  r.measured = 17;
  r.model = "model.json";
  return r;
}

TEST(TuningDatabase, TheKeyHoldsWhatTheCallerPinnedAndWhatIsSearched) {
  const std::map<std::string, const Tensor*> tunedA{{"A", nullptr}};
  EXPECT_EQ(kSpmmKey, "C(i,j)=A(i,k)*B(k,j) | tuning A");
  // Blanks do not matter; a searched operand's given format does not either.
  KernelOptions givenA;
  givenA.formats = {{"A", "coo"}};
  EXPECT_EQ(decisionKey("C(i,j)=A(i,k) * B(k,j)", givenA, tunedA), kSpmmKey);
  // Pinned formats, dtypes and the searched set do: a decision never overrides a pin.
  KernelOptions pinned;
  pinned.formats = {{"B", "csr"}};
  EXPECT_EQ(decisionKey("C(i,j) = A(i,k) * B(k,j)", pinned, tunedA),
            "C(i,j)=A(i,k)*B(k,j) | pinned B=csr | tuning A");
  KernelOptions f64;
  f64.dtypes = {{"A", DType::kF64}};
  EXPECT_EQ(decisionKey("C(i,j) = A(i,k) * B(k,j)", f64, tunedA),
            "C(i,j)=A(i,k)*B(k,j) A:f64 | tuning A");
  EXPECT_EQ(decisionKey("C(i,j) = A(i,k) * B(k,j)", {}, {{"A", nullptr}, {"B", nullptr}}),
            "C(i,j)=A(i,k)*B(k,j) | tuning A B");
}

TEST(TuningDatabase, FindsTheLastRecordOfAKeyAndSkipsBrokenLines) {
  TempDir dir;
  const TuningDatabase db(dir.path() / "new" / "db.jsonl");           // the folder is created
  EXPECT_FALSE(db.find("k", machineFingerprint(), "A").has_value());  // no file yet
  db.add(recordFor("A:f32:csr:9x9", "dcsr"));
  db.add(recordFor("A:f32:csr:8x8", "coo"));
  db.add(recordFor("A:f32:csr:9x9", "bsr:2x2"));
  {
    std::ofstream cut(db.path(), std::ios::app);
    // A record cut short by a crash: skipped.
    cut << R"x({"kernel": "C(i,j)=A(i,k)*B(k,j)", "inputs": "A:f32:csr:9x9", "formats)x"
        << "\n";
  }
  const auto hit = db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:9x9");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->chosen.formats.at("A"), "bsr:2x2");
  EXPECT_EQ(hit->chosen.schedule, "split(i, i0, i1, 16); parallel(i0)");
  EXPECT_FALSE(hit->chosen.handTuned);
  EXPECT_DOUBLE_EQ(hit->medianMs, 0.5);
  EXPECT_DOUBLE_EQ(hit->defaultMs, 0.75);
  EXPECT_EQ(hit->space, 1122);
  EXPECT_TRUE(hit->chosen.parallel);
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:8x8")->chosen.formats.at("A"),
            "coo");
  // A one-thread decision reads back as one; a record written before the knob as parallel.
  TuningRecord serial = recordFor("A:f32:csr:7x7", "csr", "");
  serial.chosen.parallel = false;
  db.add(serial);
  EXPECT_FALSE(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:7x7")->chosen.parallel);
  {
    std::ofstream old(db.path(), std::ios::app);
    old << R"x({"kernel": "C(i,j)=A(i,k)*B(k,j) | tuning A", "machine": ")x" << machineFingerprint()
        << R"x(", "inputs": "A:f32:csr:6x6", "formats": {"A": "csc"}, "schedule": "", )x"
        << R"x("hand_tuned": true, "median_ms": 1.0})x"
        << "\n";
  }
  const auto older = db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:6x6");
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->chosen.formats.at("A"), "csc");
  EXPECT_TRUE(older->chosen.parallel);
  EXPECT_FALSE(db.find(kSpmmKey, "another machine", "A:f32:csr:9x9"));
  EXPECT_FALSE(db.find("y(i)=A(i,j)*x(j)", machineFingerprint(), "A:f32:csr:9x9"));
  // "-": no database at all.
  const TuningDatabase none("-");
  EXPECT_TRUE(none.path().empty());
  none.add(recordFor("A:f32:csr:9x9", "csr"));
  EXPECT_FALSE(none.find(kSpmmKey, machineFingerprint(), "A:f32:csr:9x9"));
  // A database that cannot be written names its file.
  const TuningDatabase blocked(dir.path() / "db.jsonl" / "x");
  std::ofstream(dir.path() / "db.jsonl") << "a file, not a folder\n";
  try {
    blocked.add(recordFor("A", "csr"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_NE(std::string(e.what()).find("db.jsonl/x"), std::string::npos) << e.what();
  }
}

// Lookups go through an index of the file's lines by their inputs, kept in the process and
// extended by what was appended since: records another writer appends after a lookup are found,
// a last line still being written is found once whole, quoted text holding "inputs" is not taken
// for the field, and a file replaced at the same path is indexed again (its old records gone).
TEST(TuningDatabase, TheIndexFollowsAppendsAndReplacements) {
  TempDir dir;
  const TuningDatabase db(dir.path() / "db.jsonl");
  db.add(recordFor("A:f32:csr:9x9", "dcsr"));
  ASSERT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:9x9")->chosen.formats.at("A"),
            "dcsr");
  const TuningDatabase other(dir.path() / "db.jsonl");  // another writer of the same file
  other.add(recordFor("A:f32:csr:9x9", "coo"));
  other.add(recordFor("A:f32:csr:5x5", "csc"));
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:9x9")->chosen.formats.at("A"),
            "coo");
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:5x5")->chosen.formats.at("A"),
            "csc");
  // A record whose line is not finished yet: found once its newline is written.
  const std::string line = [&] {
    const std::filesystem::path scratch = dir.path() / "one.jsonl";
    TuningDatabase(scratch).add(recordFor("A:f32:csr:4x4", "bsr:2x2"));
    std::ifstream in(scratch);
    std::string text;
    std::getline(in, text);
    return text;
  }();
  {
    std::ofstream half(db.path(), std::ios::app);
    half << line.substr(0, line.size() / 2) << std::flush;
    EXPECT_FALSE(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:4x4").has_value());
    half << line.substr(line.size() / 2) << "\n";
  }
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:4x4")->chosen.formats.at("A"),
            "bsr:2x2");
  // "inputs" inside a value is not the field: the record is found under its own inputs only.
  TuningRecord decoy = recordFor("A:f32:csr:3x3", "csr");
  decoy.kernel = R"x(C(i,j)=A(i,k)*B(k,j) | "inputs": "decoy", "inputs":"decoy")x";
  db.add(decoy);
  EXPECT_EQ(db.find(decoy.kernel, machineFingerprint(), "A:f32:csr:3x3")->chosen.formats.at("A"),
            "csr");
  EXPECT_FALSE(db.find(decoy.kernel, machineFingerprint(), "decoy").has_value());
  // Past the first 4 KiB and the first chunk's page: 30 more records indexed, then one appended.
  for (int n = 0; n < 30; ++n) other.add(recordFor("A:f32:csr:" + std::to_string(n) + "x2", "csr"));
  EXPECT_TRUE(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:29x2").has_value());
  other.add(recordFor("A:f32:csr:0x2", "dcsc"));
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:0x2")->chosen.formats.at("A"),
            "dcsc");
  // A whole last line without its newline (written by another tool) is the newest record.
  {
    std::string whole = line;
    whole.replace(whole.find("bsr:2x2"), 7, "ell:4");
    std::ofstream(db.path(), std::ios::app) << whole;  // no newline
  }
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:4x4")->chosen.formats.at("A"),
            "ell:4");
  std::ofstream(db.path(), std::ios::app) << "\n";
  // The file replaced (a new file at the path, shorter or longer; the file system may give it the
  // same inode): indexed again.
  std::filesystem::remove(db.path());
  other.add(recordFor("A:f32:csr:5x5", "ell"));
  EXPECT_FALSE(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:9x9").has_value());
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:5x5")->chosen.formats.at("A"),
            "ell");
  {  // rewritten in place with longer contents (the same inode, other bytes)
    const TuningDatabase scratch(dir.path() / "scratch.jsonl");
    for (int n = 0; n < 20; ++n)
      scratch.add(recordFor("A:f32:csr:" + std::to_string(n) + "x1", "csr"));
    scratch.add(recordFor("A:f32:csr:5x5", "dia"));
    std::ifstream in(scratch.path());
    std::stringstream text;
    text << in.rdbuf();
    std::ofstream(db.path(), std::ios::trunc) << text.str();
  }
  EXPECT_EQ(db.find(kSpmmKey, machineFingerprint(), "A:f32:csr:5x5")->chosen.formats.at("A"),
            "dia");
  for (const char* inputs : {"A:f32:csr:0x1", "A:f32:csr:19x1"}) {  // before and after the old end
    const auto hit = db.find(kSpmmKey, machineFingerprint(), inputs);
    ASSERT_TRUE(hit.has_value()) << inputs;
    EXPECT_EQ(hit->chosen.formats.at("A"), "csr");
  }
}

TEST(CompileTuned, CompilesTheRecordedDecisionAndRunsItCorrectly) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  const Tensor a = randomMatrix(rng, 77, 53, 0.15, "csr");
  const Tensor b = randomMatrix(rng, 53, 24, 1.0, "dense");
  const std::map<std::string, const Tensor*> inputs{{"A", &a}, {"B", &b}};
  const std::string text = "C(i,j) = A(i,k) * B(k,j)";
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  TuneOptions t;
  t.database = (dir.path() / "db.jsonl").string();

  // Kernel::compile has no inputs to tune for.
  KernelOptions searching = options;
  searching.tune = TuneMode::kSearch;
  try {
    Kernel::compile(text, searching);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("compileTuned"), std::string::npos) << e.what();
  }
  // No decision yet: kDatabase compiles the options as given and times nothing.
  KernelOptions lookup = options;
  lookup.tune = TuneMode::kDatabase;
  TuneResult result;
  const Kernel plain = compileTuned(text, inputs, lookup, t, &result);
  EXPECT_FALSE(result.fromDatabase);
  EXPECT_EQ(result.formats.at("A"), "csr");
  EXPECT_EQ(result.measured, 0);
  // A recorded decision (bsr:2x2, a split schedule, generated code) is what both modes compile.
  TuningDatabase(t.database)
      .add(recordFor(inputFingerprint(inputs), "bsr:2x2",
                     "split(i_blk, i_blk0, i_blk1, 16); parallel(i_blk0)"));  // kernel key: the
                                                                              // text without blanks
  std::vector<double> expected(77 * 24, 0.0);
  const std::vector<double> da = toDense(a), db = toDense(b);
  for (int64_t i = 0; i < 77; ++i)
    for (int64_t k = 0; k < 53; ++k)
      for (int64_t j = 0; j < 24; ++j) expected[i * 24 + j] += da[i * 53 + k] * db[k * 24 + j];
  for (TuneMode mode : {TuneMode::kDatabase, TuneMode::kSearch}) {
    KernelOptions tuned = options;
    tuned.tune = mode;
    const Kernel kernel = compileTuned(text, inputs, tuned, t, &result);
    EXPECT_TRUE(result.fromDatabase);
    EXPECT_EQ(result.measured, 0);
    EXPECT_EQ(result.formats.at("A"), "bsr:2x2");
    EXPECT_EQ(result.arguments,
              "--format A=bsr:2x2 --schedule 'split(i_blk, i_blk0, i_blk1, 16); "
              "parallel(i_blk0)' "
              "--generated-only");
    EXPECT_NE(kernel.describe().find("bsr"), std::string::npos) << kernel.describe();
    EXPECT_EQ(kernel.provider(), "generated");
    const std::vector<double> got = toDense(kernel.run(inputs));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], expected[e], 1e-5) << e;
  }
  // A decision that does not fit the inputs (a fingerprint collision, a database edited by hand):
  // 2:4 for a matrix that is not 2:4 stops with the conversion's error, never a wrong result.
  const Tensor notNM = randomMatrix(rng, 8, 8, 1.0, "csr");
  const Tensor b8 = randomMatrix(rng, 8, 4, 1.0, "dense");
  const std::map<std::string, const Tensor*> dense{{"A", &notNM}, {"B", &b8}};
  TuningDatabase(t.database).add(recordFor(inputFingerprint(dense), "2:4", ""));
  KernelOptions stale = options;
  stale.tune = TuneMode::kDatabase;
  const Kernel wrong = compileTuned(text, dense, stale, t, &result);
  EXPECT_EQ(result.formats.at("A"), "2:4");
  try {
    wrong.run(dense);
    FAIL() << "a 2:4 kernel ran on a dense matrix";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2:4 keeps 2"), std::string::npos) << e.what();
  }
  // kOff ignores the database.
  const Kernel asGiven = compileTuned(text, inputs, options, t, nullptr);
  EXPECT_EQ(asGiven.provider(), plain.provider());
}

}  // namespace
}  // namespace sparseflow::tune
