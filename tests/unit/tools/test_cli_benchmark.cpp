// `sparseflow-benchmark` as users run it, on three small bundled real matrices (a square
// SuiteSparse one, a square TACO one, a 64x256 DLMC layer): the JSON (every case checked and
// correct, each peer checked, numbers consistent with the file's shape), the CSV, the PNG, the
// table; and bad input, which must name what is wrong, exit non-zero and leave no output file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "unit/tools/tool_process.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kData = SPARSEFLOW_DATA_DIR;
const std::string kWest = kData + "/suitesparse/LAGraph/data/west0067.mtx";  // 67x67, 294
const std::string kRua = kData + "/taco/test/data/rua_32.mtx";               // 32x32, 126
const std::string kDlmc =
    kData + "/dlmc/rn50/magnitude_pruning/0.98/bottleneck_1_block_group1_1_1.smtx";  // 64x256

/// Machine limits as `--limits` reads them, so the tests do not spend seconds measuring.
const char* kLimits =
    "cpu test machine\nsimd AVX2\nthreads 2\nread_bandwidth_1 2e10\nread_bandwidth_all 4e10\n"
    "fma_peak_1 1e11\nfma_peak_all 2e11\n";

// Every in-process peer (scripts/install_deps.sh core installs their libraries) and the Python
// peers that start quickly (torch takes seconds to import; it runs through the same code).
const std::string kPeers = "dense,numpy,scipy,eigen,graphblas";

class Benchmark : public testing::ToolTest {
 protected:
  void SetUp() override {
    testing::ToolTest::SetUp();
    std::ofstream(path("limits.txt")) << kLimits;
  }
  /// The tool with the test's limits, on 2 threads and (unless `args` say) one timed run per case.
  testing::ToolResult bench(std::vector<std::string> args) {
    if (std::find(args.begin(), args.end(), "--repeat") == args.end()) {
      args.insert(args.end(), {"--repeat", "1"});
    }
    args.insert(args.end(), {"--limits", "limits.txt", "--threads", "2"});
    return run("sparseflow-benchmark", args);
  }
  /// Runs the tool with every output requested; it must fail, say `message`, and write nothing.
  void expectRefused(std::vector<std::string> args, const std::string& message) {
    args.insert(args.end(), {"--json", "x.json", "--csv", "x.csv", "--plot", "x.png"});
    const testing::ToolResult r = bench(args);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    for (const char* f : {"x.json", "x.csv", "x.png"}) {
      EXPECT_FALSE(fs::exists(path(f))) << f;
    }
  }
};

bool isPng(const std::string& bytes) {
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n", 8) == 0;
}

std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

TEST_F(Benchmark, ChecksTimesAndWritesJsonCsvAndPlot) {
  testing::ToolResult r =
      bench({"--inputs", kWest + "," + kRua, kDlmc, "--kernels", "spmv,spmm:32,sddmm:16,spgemm",
             "--peers", kPeers, "--json", "out.json", "--csv", "out.csv", "--plot", "out.png"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress bar when piped";
  EXPECT_EQ(files(), (std::vector<std::string>{"limits.txt", "out.csv", "out.json", "out.png"}));

  const Json j = Json::parse(testing::slurpFile(path("out.json")));
  EXPECT_EQ(j["tool"], "sparseflow benchmark");
  EXPECT_EQ(j["machine"]["cpu"], "test machine");
  EXPECT_EQ(j["machine"]["limits"], "limits.txt");
  EXPECT_DOUBLE_EQ(j["machine"]["read_bandwidth_bytes_per_second"].get<double>(), 4e10);
  EXPECT_EQ(j["settings"]["kernels"], Json::array({"spmv", "spmm:32", "sddmm:16", "spgemm"}));
  EXPECT_EQ(j["settings"]["formats"], Json::array({"csr"}));
  EXPECT_EQ(j["settings"]["repeat"], 1);
  EXPECT_EQ(j["settings"]["threads"], 2);
  ASSERT_EQ(j["peers"].size(), 5u);
  for (const Json& p : j["peers"]) {
    EXPECT_TRUE(p["available"].get<bool>()) << p.dump();
    EXPECT_TRUE(p["name"].is_string()) << p.dump();  // "Eigen 3.4.0", "scipy 1.10.1", ...
  }
  ASSERT_EQ(j["inputs"].size(), 3u);
  EXPECT_EQ(j["inputs"][0]["label"], "west0067");
  EXPECT_EQ(j["inputs"][0]["rows"], 67);
  EXPECT_EQ(j["inputs"][0]["nnz"], 294);
  EXPECT_EQ(j["inputs"][2]["cols"], 256);
  EXPECT_EQ(j["failures"], 0);

  ASSERT_EQ(j["results"].size(), 12u);  // 3 inputs x 4 kernels
  int timed = 0;
  for (const Json& c : j["results"]) {
    SCOPED_TRACE(c.dump());
    if (c["kernel"] == "spgemm" && c["cols"] != c["rows"]) {  // A*A of the 64x256 layer
      EXPECT_EQ(c["status"], "skipped");
      EXPECT_FALSE(c["correct"].get<bool>());
      EXPECT_NE(c["detail"].get<std::string>().find("square"), std::string::npos);
      continue;
    }
    ++timed;
    EXPECT_EQ(c["status"], "ok");
    EXPECT_TRUE(c["correct"].get<bool>());
    EXPECT_EQ(c["checked_against"], "float64 reference");
    EXPECT_GT(c["seconds"].get<double>(), 0);
    EXPECT_GT(c["gflops"].get<double>(), 0);
    EXPECT_GT(c["bandwidth_fraction"].get<double>(), 0);
    // GB/s is the case's bytes over its time; the fraction is that over the limits file's 40 GB/s.
    EXPECT_NEAR(c["gbytes_per_second"].get<double>(),
                c["bytes"].get<double>() / c["seconds"].get<double>() / 1e9,
                1e-9 * c["gbytes_per_second"].get<double>());
    EXPECT_NEAR(c["bandwidth_fraction"].get<double>(), c["gbytes_per_second"].get<double>() / 40,
                1e-9);
    const double nnz = c["nnz"].get<double>();
    const std::map<std::string, double> flopsPerEntry = {
        {"spmv", 2}, {"spmm:32", 64}, {"sddmm:16", 33}};
    const auto perEntry = flopsPerEntry.find(c["kernel"].get<std::string>());
    if (perEntry != flopsPerEntry.end()) {
      EXPECT_EQ(c["flops"].get<double>(), perEntry->second * nnz);
    }
    ASSERT_EQ(c["peers"].size(), 5u);
    for (const Json& p : c["peers"]) {
      if (p["peer"] == "eigen" && c["kernel"] == "sddmm:16") {
        EXPECT_EQ(p["status"], "n/a");  // Eigen has no SDDMM
        EXPECT_NE(p["detail"].get<std::string>().find("SDDMM"), std::string::npos);
        continue;
      }
      EXPECT_EQ(p["status"], "ok") << p.dump();
      EXPECT_TRUE(p["correct"].get<bool>());
      EXPECT_GT(p["seconds"].get<double>(), 0);
      EXPECT_NEAR(p["speedup"].get<double>(),
                  p["seconds"].get<double>() / c["seconds"].get<double>(),
                  1e-9 * p["speedup"].get<double>());
    }
    EXPECT_NE(
        c["reproducer"].get<std::string>().find("--kernels " + c["kernel"].get<std::string>()),
        std::string::npos);
  }
  EXPECT_EQ(timed, 11);
  ASSERT_EQ(j["geomean"].size(), 4u * 5u);
  for (const Json& g : j["geomean"]) {
    if (g["peer"] == "eigen" && g["kernel"] == "sddmm:16") {
      EXPECT_EQ(g["cases"], 0);
      EXPECT_TRUE(g["speedup"].is_null());
    } else {
      EXPECT_EQ(g["cases"], g["kernel"] == "spgemm" ? 2 : 3) << g.dump();
      EXPECT_GT(g["speedup"].get<double>(), 0) << g.dump();
    }
  }

  // The CSV: a header naming three columns per peer, then one line per case.
  std::ifstream csv(path("out.csv"));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  const std::vector<std::string> header = splitCsvLine(line);
  ASSERT_EQ(header.size(), 13u + 3 * 5 + 1);
  EXPECT_EQ(header[0], "input");
  EXPECT_EQ(header[7], "status");
  EXPECT_EQ(header[8], "correct");
  EXPECT_EQ(header[9], "seconds");
  EXPECT_EQ(header[13], "dense_status");
  EXPECT_EQ(header[15], "dense_speedup");
  EXPECT_EQ(header[25], "graphblas_status");
  EXPECT_EQ(header.back(), "detail");
  int rows = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = splitCsvLine(line);
    ASSERT_EQ(f.size(), header.size()) << line;
    const bool skipped = f[2] == "spgemm" && f[0] == "bottleneck_1_block_group1_1_1";
    EXPECT_EQ(f[7], skipped ? "skipped" : "ok") << line;
    EXPECT_EQ(f[8], skipped ? "false" : "true") << line;
    if (!skipped) {
      EXPECT_GT(std::stod(f[9]), 0) << line;
    }
    ++rows;
  }
  EXPECT_EQ(rows, 12);

  EXPECT_TRUE(isPng(testing::slurpFile(path("out.png"))));

  // The table: a row per case with its time and each peer, then the geometric means.
  EXPECT_NE(r.out.find("machine: test machine (AVX2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("graphblas"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A is 64x256: A*A needs a square matrix"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geomean speed-up"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eigen n/a: Eigen has no SDDMM"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("wrote out.png"), std::string::npos) << r.err;
}

TEST_F(Benchmark, QuickTimingTimesEachCaseOnceAndSaysSo) {
  // SPARSEFLOW_QUICK_TIMING=1 (the docs tests' smoke runs): --repeat 9 becomes one timed run, the
  // JSON records what was done, and stderr says the times are not meaningful.
  ASSERT_EQ(setenv("SPARSEFLOW_QUICK_TIMING", "1", 1), 0);
  testing::ToolResult r = bench({"--inputs", kRua, "--kernels", "spmv", "--peers", "none",
                                 "--repeat", "9", "--json", "q.json"});
  unsetenv("SPARSEFLOW_QUICK_TIMING");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("SPARSEFLOW_QUICK_TIMING is set"), std::string::npos) << r.err;
  EXPECT_EQ(Json::parse(testing::slurpFile(path("q.json")))["settings"]["repeat"], 1);
  // Without it, --repeat is honoured and nothing is said.
  r = bench({"--inputs", kRua, "--kernels", "spmv", "--peers", "none", "--repeat", "3", "--json",
             "r.json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.err.find("SPARSEFLOW_QUICK_TIMING"), std::string::npos) << r.err;
  EXPECT_EQ(Json::parse(testing::slurpFile(path("r.json")))["settings"]["repeat"], 3);
}

TEST_F(Benchmark, FolderInputsLeaveOutWhatCannotBeBenchmarked) {
  fs::create_directory(dir_ / "m");
  fs::copy_file(kRua, dir_ / "m" / "rua_32.mtx");
  fs::copy_file(kData + "/suitesparse/LAGraph/data/complex.mtx", dir_ / "m" / "complex.mtx");
  std::ofstream(dir_ / "m" / "notes.txt") << "not a matrix";
  testing::ToolResult r =
      run("sparseflow",
          {"benchmark", "m", "--kernels", "spmv", "--format", "csr", "--format", "bsr:2x2",
           "--peers", "none", "--json", "m.json", "--limits", "limits.txt", "--repeat", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(testing::slurpFile(path("m.json")));
  ASSERT_EQ(j["inputs"].size(), 1u);
  ASSERT_EQ(j["left_out"].size(), 1u);
  EXPECT_NE(j["left_out"][0]["path"].get<std::string>().find("complex.mtx"), std::string::npos);
  EXPECT_NE(j["left_out"][0]["why"].get<std::string>().find("a dense 'array' file"),
            std::string::npos);
  ASSERT_EQ(j["results"].size(), 2u);  // spmv in csr and in bsr:2x2
  for (const Json& c : j["results"]) {
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_TRUE(c["correct"].get<bool>());
    EXPECT_TRUE(c["peers"].empty());
  }
  EXPECT_EQ(j["results"][1]["format"], "bsr:2x2");
  EXPECT_NE(r.out.find("left out"), std::string::npos) << r.out;
}

TEST_F(Benchmark, BadInputIsNamedAndWritesNothing) {
  expectRefused({"--inputs", "missing.mtx"}, "--inputs 'missing.mtx': no such file or directory");
  expectRefused({"--inputs", kRua, "--kernels", "spmv,spmx"}, "unknown kernel 'spmx'");
  expectRefused({"--inputs", kRua, "--kernels", "spmm:0"}, "unknown kernel 'spmm:0'");
  expectRefused({"--inputs", kRua, "--peers", "scipy,mkl"}, "unknown peer 'mkl'");
  expectRefused({"--inputs", kRua, "--format", "cssr"}, "--format 'cssr'");
  expectRefused({"--inputs", kRua, "--repeat", "0"}, "--repeat 0");
  std::ofstream(path("bad.mtx")) << "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n"
                                    "4 1 2\n";
  expectRefused({"--inputs", "bad.mtx"}, "bad.mtx:4");
  expectRefused({"--inputs", kData + "/suitesparse/LAGraph/data/complex.mtx"}, "complex.mtx");
  EXPECT_EQ(files(), (std::vector<std::string>{"bad.mtx", "limits.txt"}));
}

TEST_F(Benchmark, UnwritableOutputsAndMissingToolsAreRefusedBeforeRunning) {
  testing::ToolResult r = bench({"--inputs", kRua, "--json", "no/such/folder/x.json"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(
      r.err.find("--json 'no/such/folder/x.json': the folder 'no/such/folder' does not exist"),
      std::string::npos)
      << r.err;
  r = bench({"--inputs", kRua, "--json", "same", "--csv", "same"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--csv 'same': another option writes the same file"), std::string::npos)
      << r.err;
  // A Python without matplotlib (here: one that fails on every import) cannot draw the plot; a
  // Python peer named by --peers cannot run either. Both are said before anything is measured.
  expectRefused({"--inputs", kRua, "--python", "/bin/false"},
                "--plot needs Python with matplotlib");
  r = bench({"--inputs", kRua, "--kernels", "spmv", "--peers", "scipy", "--python", "/bin/false",
             "--json", "y.json"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--peers scipy: the Python peers did not run"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("y.json")));
  // Without --peers, a peer that cannot run is a note in the table, not an error.
  r = bench({"--inputs", kRua, "--kernels", "spmv", "--python", "/bin/false"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("scipy unavailable: the Python peers did not run"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace sparseflow
