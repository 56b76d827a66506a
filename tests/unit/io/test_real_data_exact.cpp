// The user's round trip, on every real matrix in data/: read with the default (exact) value type,
// convert to each of csr, csc, coo, dcsr, bsr:4x4, bsr:1x8, ell:8 (where rows fit) and hyb, write
// .mtx, read it back: the same value type, the same entries, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "common/entry_bits.h"
#include "common/real_data_files.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;

const fs::path kData = SPARSEFLOW_DATA_DIR;

std::vector<fs::path> matrixFiles() {
  std::vector<fs::path> out;
  for (const fs::path& p : testing::readableDataFiles(kData)) {
    const FileKind kind = fileKindFromPath(p.string());
    // TACO's .ttx tensor objects of rank 1 and 3 are tensors, not matrices (test_matrix_market).
    const bool tensorObject = p.extension() == ".ttx" && read(p.string()).rank() != 2;
    if (kind != FileKind::kFrostt && kind != FileKind::kNpy && !tensorObject) out.push_back(p);
  }
  return out;
}

using testing::entryBits;

class RealMatrix : public ::testing::TestWithParam<fs::path> {};

TEST(RealMatrices, EnoughAreBundled) {
  EXPECT_GT(matrixFiles().size(), 120u);
}

TEST_P(RealMatrix, DefaultReadRoundTripsThroughEveryFormatAndMtxExactly) {
  const fs::path& path = GetParam();
  const Tensor original = read(path.string());
  ASSERT_EQ(original.rank(), 2);
  const auto stored = entryBits(original, false);
  const auto nonzero = entryBits(original, true);
  const MatrixStatistics stats = matrixStatistics(original);
  const fs::path dir = fs::temp_directory_path() /
                       ("sf_exact_rt_" + std::to_string(getpid()) + "_" + path.filename().string());
  fs::create_directories(dir);
  for (const std::string format :
       {"csr", "csc", "coo", "dcsr", "bsr:4x4", "bsr:1x8", "ell:8", "hyb"}) {
    SCOPED_TRACE(format);
#ifdef SPARSEFLOW_SANITIZED
    // Under the sanitizers every file still round-trips, the larger ones through a sample of the
    // formats (one per kind of level), to keep the run short; the release run covers every pair.
    if (original.numStored() > 20000 && format != "csc" && format != "bsr:4x4" && format != "hyb") {
      continue;
    }
#endif
    if (format == "ell:8" && stats.maxRow > 8) {
      try {
        convert(original, format);
        ADD_FAILURE() << "ell:8 accepted a row of " << stats.maxRow << " entries";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      }
      continue;
    }
    const Tensor converted = convert(original, format);
    const std::string out = (dir / "back.mtx").string();
    write(out, converted);
    const Tensor back = read(out);
    EXPECT_EQ(back.dtype(), original.dtype());
    EXPECT_EQ(back.shape(), original.shape());
    // Formats with zero fill (blocks, ELL slots) cannot tell an explicit zero from fill.
    const bool fills = format.starts_with("bsr") || format.starts_with("ell") || format == "hyb";
    ASSERT_EQ(entryBits(back, fills), fills ? nonzero : stored);
    EXPECT_EQ(compareValues(original, back).changed, 0);
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

INSTANTIATE_TEST_SUITE_P(Data, RealMatrix,
                         ::testing::ValuesIn(testing::perFileTestFiles(matrixFiles())), testName);

}  // namespace
}  // namespace sparseflow
