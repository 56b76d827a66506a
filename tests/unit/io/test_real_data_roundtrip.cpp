// Every readable real matrix and tensor in data/ round-trips through every format preset and
// through every writable file kind; every deliberately broken file is refused with a clear error.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/real_data_files.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"
#include "sparseflow/validate.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;

const fs::path kData = SPARSEFLOW_DATA_DIR;

const auto& kBroken = testing::brokenDataFiles();

std::vector<fs::path> readableFiles() {
  return testing::readableDataFiles(kData);
}

/// Entries sorted by coordinates, explicit zeros dropped when `dropZeros`.
std::vector<std::pair<std::vector<int64_t>, double>> entries(const Coo& coo, bool dropZeros) {
  std::vector<std::pair<std::vector<int64_t>, double>> out;
  const size_t rank = coo.shape.size();
  for (size_t e = 0; e < coo.values.size(); ++e) {
    if (dropZeros && coo.values[e] == 0) continue;
    out.emplace_back(
        std::vector<int64_t>(coo.coords.begin() + e * rank, coo.coords.begin() + (e + 1) * rank),
        coo.values[e]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> presetsFor(const Tensor& t) {
  if (t.rank() == 1) return {"coo", "dense", "2:4+coo"};
  if (t.rank() != 2) return {"coo", "dense", "csf", "dcsf", "2:4+coo"};
  return {"csr",       "csc",      "coo", "dcsr", "dcsc", "bsr:4x4", "bsr:1x4",
          "bsr:16x16", "bsr:32x1", "ell", "hyb",  "2:4",  "csr@i64", "dense"};
}

TEST(RealData, EveryBrokenFileIsRefusedWithAClearError) {
  for (const auto& [name, fragment] : kBroken) {
    SCOPED_TRACE(name);
    try {
      read((kData / name).string());
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fs::path(name).filename().string()), std::string::npos)
          << "the message does not name the file: " << e.what();
    }
  }
}

/// One test per real file, so ctest runs them in parallel and a failure names the file.
class RealFile : public ::testing::TestWithParam<fs::path> {};

TEST(RealData, EnoughFilesAreReadable) {
  EXPECT_GT(readableFiles().size(), 150u);
}

TEST_P(RealFile, EveryPresetRoundTrips) {
  const fs::path& path = GetParam();
  {
    ReadOptions options;
    options.dtype = DType::kF64;
    Tensor original = read(path.string(), options);
    validate(original);
    const Coo originalCoo = toCoo(original);
    const auto exact = entries(originalCoo, false);
    const auto nonzero = entries(originalCoo, true);
    const int64_t rows = original.rank() == 2 ? original.shape()[0] : 0;
    const double elements = [&] {
      double n = 1;
      for (int64_t s : original.shape()) n *= static_cast<double>(s);
      return n;
    }();
    std::optional<MatrixStatistics> stats;
    if (original.rank() == 2) stats = matrixStatistics(original);
    for (const std::string& preset : presetsFor(original)) {
      SCOPED_TRACE(preset);
      if (preset == "dense" && elements > 4e6) continue;  // 32 MB of f64 per matrix at most
      if (preset == "ell" && static_cast<double>(rows) * static_cast<double>(stats->maxRow) >
                                 8.0 * static_cast<double>(stats->nnz) + 65536) {
        continue;  // ELL pads every row to the longest: hyb is the format for these
      }
#ifdef SPARSEFLOW_SANITIZED
      // Under the sanitizers every file is still read and round-tripped, the larger ones through
      // a sample of the formats, to keep the run short; the release run covers every pair.
      if (preset != "csc" && preset != "bsr:4x4" && preset != "hyb" && preset != "2:4" &&
          preset != "coo" && preset != "dcsf" && original.numStored() > 20000) {
        continue;
      }
#endif
      if (preset == "2:4" && !stats->fitsTwoFour) {
        try {
          convert(original, preset);
          ADD_FAILURE() << "2:4 accepted a matrix that does not fit";
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("prune to 2:4 first"), std::string::npos)
              << e.what();
        }
        continue;
      }
      Tensor converted = convert(original, preset);
      validate(converted);
      EXPECT_EQ(Format::parse(converted.format().toString(), converted.rank()), converted.format());
      Tensor back = convert(converted, original.format());
      // Formats that store zero fill (dense, blocks, n:m) cannot keep explicit zeros.
      const bool fills =
          preset == "dense" || preset.starts_with("bsr") || preset.starts_with("2:4");
      ASSERT_EQ(entries(toCoo(back), fills), fills ? nonzero : exact);
    }
  }
}

TEST_P(RealFile, ReadWriteReadIsIdentical) {
  const fs::path& path = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("sparseflow_rt_" + std::to_string(getpid()) +
                                                    "_" + path.filename().string());
  fs::create_directories(dir);
  {
    ReadOptions options;
    options.dtype = DType::kF64;
    Tensor original = read(path.string(), options);
    const auto expect = entries(toCoo(original), false);
    std::vector<std::string> kinds = {".sft", ".tns"};
    if (original.rank() == 2) kinds.push_back(".mtx");
    for (const std::string& ext : kinds) {
      const std::string out = (dir / ("copy" + ext)).string();
      write(out, original);
      Tensor again = read(out, options);
      ASSERT_EQ(again.shape(), original.shape()) << ext;
      ASSERT_EQ(entries(toCoo(again), false), expect) << ext;
      if (ext == ".sft") {
        EXPECT_EQ(again.format(), original.format());
      }
    }
  }
  fs::remove_all(dir);
}

std::string testName(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = fs::relative(info.param, kData).string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Data, RealFile,
                         ::testing::ValuesIn(testing::perFileTestFiles(readableFiles())), testName);

}  // namespace
}  // namespace sparseflow
