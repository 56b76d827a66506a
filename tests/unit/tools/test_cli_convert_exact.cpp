// `sparseflow convert` keeps values exactly and runs in memory proportional to the entries:
// held-out real matrices (large integers, many-digit decimals, an arrowhead) through every format
// and back to .mtx bit for bit; the report compares against the source at full precision and says
// what a
// --dtype change rounded; a 10^6 x 10^6 matrix with 10^7 entries converts under a memory ceiling.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/entry_bits.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "unit/tools/tool_process.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::ToolResult;
using testing::ToolTest;

const std::string kData = SPARSEFLOW_DATA_DIR;

using testing::entryBits;

class ConvertExact : public ToolTest {};

TEST_F(ConvertExact, HeldOutMatricesRoundTripThroughEveryFormatBitForBit) {
  // Chosen for their values and shapes, not tuned on: integers past 2^24 (Groebner), an integer
  // arrowhead with a 46500-entry row (arrow), 17-digit decimals (west0479, bayer10), a symmetric
  // file stored as one triangle (bcsstk13), a 0-based triplet file (mbeacxc).
  std::vector<std::string> matrices = {"suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx",
                                       "suitesparse/ParU/Matrix/arrow.mtx",
                                       "suitesparse/ParU/Matrix/west0479.mtx",
                                       "suitesparse/ParU/Matrix/bayer10.mtx",
                                       "suitesparse/LAGraph/data/bcsstk13.mtx",
                                       "suitesparse/CSparse/Matrix/mbeacxc"};
#ifdef SPARSEFLOW_SANITIZED
  matrices.resize(3);  // the sanitized tools run ~5x slower: the three with the trickiest values
#endif
  for (const std::string& name : matrices) {
    SCOPED_TRACE(name);
    const std::string source = kData + "/" + name;
    const Tensor original = read(source);
    const bool fitsEll8 = [&] {
      const Tensor csr = convert(original, "csr");
      const std::vector<int64_t> pos = csr.level(1).pos.toIndexVector();
      for (size_t r = 0; r + 1 < pos.size(); ++r) {
        if (pos[r + 1] - pos[r] > 8) return false;
      }
      return true;
    }();
    for (const std::string format :
         {"csr", "csc", "coo", "dcsr", "bsr:4x4", "bsr:1x8", "ell:8", "hyb"}) {
      SCOPED_TRACE(format);
      ToolResult to = run("sparseflow", {"convert", source, "--to", format, "-o", "x.sft"});
      if (format == "ell:8" && !fitsEll8) {
        EXPECT_EQ(to.status, 1) << to.err;
        EXPECT_FALSE(fs::exists(path("x.sft")));
        continue;
      }
      ASSERT_EQ(to.status, 0) << to.err;
      // The report compared against the source: nothing changed.
      EXPECT_NE(to.out.find(" 0 "), std::string::npos) << to.out;
      ToolResult back = run("sparseflow", {"convert", "x.sft", "--to", "coo", "-o", "back.mtx"});
      ASSERT_EQ(back.status, 0) << back.err;
      const Tensor again = read(path("back.mtx"));
      EXPECT_EQ(again.dtype(), original.dtype());
      const bool fills = format.starts_with("bsr") || format.starts_with("ell") || format == "hyb";
      ASSERT_EQ(entryBits(again, fills), entryBits(original, fills));
      fs::remove(path("x.sft"));
      fs::remove(path("back.mtx"));
    }
  }
}

TEST_F(ConvertExact, TheReportComparesWithTheSourceAndNamesWhatADTypeChangeRounded) {
  const std::string groebner = kData + "/suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx";
  ToolResult info = run("sparseflow", {"info", groebner});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("dtype      f64"), std::string::npos) << info.out;

  ToolResult exact =
      run("sparseflow", {"convert", groebner, "--to", "csr", "-o", "g.sft", "--json"});
  ASSERT_EQ(exact.status, 0) << exact.err;
  const Json e = Json::parse(exact.out)["tensors"][0];
  EXPECT_EQ(e["dtype"], "f64");
  EXPECT_EQ(e["dtype_after"], "f64");
  EXPECT_EQ(e["impact"]["changed"], 0);
  EXPECT_EQ(e["impact"]["rounded"], 0);
  EXPECT_EQ(e["impact"]["max_error"], 0.0);

  ToolResult narrowed = run("sparseflow", {"convert", groebner, "--to", "csr", "--dtype", "f32",
                                           "-o", "g32.sft", "--json"});
  ASSERT_EQ(narrowed.status, 0) << narrowed.err;
  const Json n = Json::parse(narrowed.out)["tensors"][0];
  EXPECT_EQ(n["dtype_after"], "f32");
  EXPECT_GT(n["impact"]["changed"].get<int64_t>(), 0);
  EXPECT_EQ(n["impact"]["changed"], n["impact"]["rounded"]);
  EXPECT_EQ(n["impact"]["max_error"], 1.0);  // 27852657 -> 27852656
  EXPECT_NE(n["impact"]["first_change"].get<std::string>().find("27852657 -> 27852656"),
            std::string::npos);
  // The file holds what --dtype asked for, and says so.
  EXPECT_EQ(read(path("g32.sft")).dtype(), DType::kF32);
  ToolResult info32 = run("sparseflow", {"info", "g32.sft"});
  EXPECT_NE(info32.out.find("dtype      f32 (as stored)"), std::string::npos) << info32.out;
  // The text report says it too.
  ToolResult text =
      run("sparseflow", {"convert", groebner, "--to", "coo", "--dtype", "f32", "-o", "g32.mtx"});
  EXPECT_NE(text.out.find("values rounded to f32 (from f64)"), std::string::npos) << text.out;
}

TEST_F(ConvertExact, NaNAndInfinityConvertExactly) {
  {
    std::ofstream f(path("special.mtx"));
    f << "%%MatrixMarket matrix coordinate real general\n4 5 4\n1 1 nan\n2 3 inf\n3 5 -inf\n"
         "4 2 1.5\n";
  }
  for (const std::string format : {"csr", "bsr:2x2", "hyb", "coo"}) {
    ToolResult r = run("sparseflow", {"convert", "special.mtx", "--to", format, "-o", "s.mtx"});
    ASSERT_EQ(r.status, 0) << format << ": " << r.err;
    const std::vector<double> dense = toDense(read(path("s.mtx")));
    EXPECT_TRUE(std::isnan(dense[0])) << format;
    EXPECT_EQ(dense[1 * 5 + 2], INFINITY) << format;
    EXPECT_EQ(dense[2 * 5 + 4], -INFINITY) << format;
    EXPECT_EQ(dense[3 * 5 + 1], 1.5) << format;
  }
}

/// A Matrix Market file of `entries` random positions in rows x cols with random values.
void writeRandomMtx(const std::string& file, int64_t rows, int64_t cols, int64_t entries,
                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream out(file, std::ios::binary);
  out << "%%MatrixMarket matrix coordinate real general\n"
      << rows << " " << cols << " " << entries << "\n";
  std::string chunk;
  char buffer[64];
  for (int64_t e = 0; e < entries; ++e) {
    chunk += std::to_string(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(rows)));
    chunk += ' ';
    chunk += std::to_string(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(cols)));
    chunk += ' ';
    const double v = static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5;
    chunk.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
    chunk += '\n';
    if (chunk.size() > (1 << 20)) out << chunk, chunk.clear();
  }
  out << chunk;
}

TEST_F(ConvertExact, TenMillionEntriesInAMillionSquaredMatrixStayInProportionalMemory) {
#ifdef SPARSEFLOW_SANITIZED
  const int64_t entries = 1000000;  // the sanitizers' shadow memory and speed: a tenth
  const int64_t baseKb = 1 << 20;   // and their own ~0.5-1 GiB of shadow and quarantine
#else
  const int64_t entries = 10000000;
  const int64_t baseKb = 256 << 10;
#endif
  const int64_t n = 1000000;
  writeRandomMtx(path("big.mtx"), n, n, entries, 7);
  // Dense would be 8 TB; the coordinate list alone is 24 bytes an entry. The ceiling allows the
  // reader's coordinates, the built tensor and the report's check: ~100 bytes an entry.
  const int64_t ceilingKb = entries * 100 / 1024 + baseKb;
  for (const std::string format : {"csr", "hyb", "coo"}) {
    SCOPED_TRACE(format);
    ToolResult r = run("sparseflow", {"convert", "big.mtx", "--to", format, "-o", "big.sft"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_LT(r.peakRssKb, ceilingKb) << "peak " << r.peakRssKb / 1024 << " MiB";
    std::printf("[ convert %s ] 10^6 x 10^6, %lld entries: peak RSS %lld MiB\n", format.c_str(),
                static_cast<long long>(entries), static_cast<long long>(r.peakRssKb / 1024));
  }
  ToolResult back = run("sparseflow", {"convert", "big.sft", "--to", "csr", "-o", "big2.mtx"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_LT(back.peakRssKb, ceilingKb);
  const Tensor a = read(path("big.mtx")), b = read(path("big2.mtx"));
  EXPECT_EQ(compareValues(a, b).changed, 0);
  EXPECT_EQ(b.dtype(), DType::kF64);
}

}  // namespace
}  // namespace sparseflow
