// `sparseflow run` and `sparseflow compile` as a user runs them: SpMV on a real .mtx against a
// float64 reference from its triplets, and bad arguments that must name themselves and write
// nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "unit/tools/tool_process.h"

namespace {

namespace fs = std::filesystem;

const std::string kMatrix =
    std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/west0067.mtx";

using Result = sparseflow::testing::ToolResult;

std::string slurp(const fs::path& p) {
  return sparseflow::testing::slurpFile(p);
}

/// A scratch directory per test (tool_process.h); compiled kernels go to the tests' cache.
class CliRun : public sparseflow::testing::ToolTest {
 protected:
  /// Runs the built `sparseflow` with `args` in the test's directory (argv, no shell).
  Result run(const std::vector<std::string>& args) const {
    return ToolTest::run("sparseflow", args);
  }
};

/// Writes a little-endian float32 .npy (format 1.0) by hand, independent of sparseflow's io: 1-d,
/// or `cols` values per row.
void writeNpy(const fs::path& path, const std::vector<float>& values, size_t cols = 0) {
  const std::string shape =
      cols == 0 ? std::to_string(values.size()) + ","
                : std::to_string(values.size() / cols) + ", " + std::to_string(cols);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xff)).put(static_cast<char>(len >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * 4));
}

/// Reads a 1-d .npy of '<f4' or '<f8' back as doubles (shape checked by the caller).
std::vector<double> readNpy(const fs::path& path) {
  const std::string bytes = slurp(path);
  EXPECT_GE(bytes.size(), 10u);
  if (bytes.size() < 10) return {};
  const size_t len = static_cast<unsigned char>(bytes[8]) |
                     (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  const std::string header = bytes.substr(10, len);
  const bool f64 = header.find("'<f8'") != std::string::npos;
  EXPECT_TRUE(f64 || header.find("'<f4'") != std::string::npos) << header;
  const size_t width = f64 ? 8 : 4;
  std::vector<double> out;
  for (size_t at = 10 + len; at + width <= bytes.size(); at += width) {
    if (f64) {
      double v;
      std::memcpy(&v, bytes.data() + at, 8);
      out.push_back(v);
    } else {
      float v;
      std::memcpy(&v, bytes.data() + at, 4);
      out.push_back(v);
    }
  }
  return out;
}

struct Triplets {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> i, j;
  std::vector<double> v;
};

/// A general real coordinate .mtx read by hand (1-based indices).
Triplets readMtx(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  Triplets t;
  int64_t nnz = 0;
  bool sized = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    std::istringstream s(line);
    if (!sized) {
      s >> t.rows >> t.cols >> nnz;
      sized = true;
      continue;
    }
    int64_t r, c;
    double v;
    s >> r >> c >> v;
    t.i.push_back(r - 1);
    t.j.push_back(c - 1);
    t.v.push_back(v);
  }
  EXPECT_EQ(static_cast<int64_t>(t.v.size()), nnz);
  return t;
}

std::vector<float> randomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

void expectSpmv(const Triplets& a, const std::vector<float>& x, const std::vector<double>& y,
                double scale) {
  ASSERT_EQ(static_cast<int64_t>(y.size()), a.rows);
  std::vector<double> ref(static_cast<size_t>(a.rows), 0.0), mag(static_cast<size_t>(a.rows), 0.0);
  for (size_t n = 0; n < a.v.size(); ++n) {
    ref[a.i[n]] += scale * a.v[n] * x[a.j[n]];
    mag[a.i[n]] += std::abs(scale * a.v[n] * x[a.j[n]]);
  }
  for (size_t r = 0; r < ref.size(); ++r) {
    EXPECT_NEAR(y[r], ref[r], 1e-5 * mag[r] + 1e-30) << "row " << r;
  }
}

// The command links no library that starts threads at load: OpenBLAS (the benchmark's dense peer,
// loaded with dlopen when that peer runs) started a worker that yield-spins, and beside it a
// two-thread kernel's barrier waited whole scheduler slices (8 ms calls of a 25 us SDDMM).
TEST(CliLinking, TheCommandDoesNotLinkOpenBlas) {
  const std::string command =
      "readelf -d '" + std::string(SPARSEFLOW_TOOLS_DIR) + "/sparseflow' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << out;  // readelf comes with binutils, which the JIT's g++ needs
  ASSERT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  EXPECT_NE(out.find("libgomp"), std::string::npos) << out;  // the check reads the right list
  EXPECT_EQ(out.find("openblas"), std::string::npos) << out;
}

TEST_F(CliRun, SpmvCsrOnRealMatrixMatchesFloat64Reference) {
  const Triplets a = readMtx(kMatrix);
  const std::vector<float> x = randomVector(static_cast<size_t>(a.cols), std::random_device{}());
  writeNpy(dir_ / "x.npy", x);
  const Result r = run({"run", "y(i) = A(i,j) * x(j)", "--format", "A=csr", "--in", "A=" + kMatrix,
                        "--in", "x=x.npy", "--out", "y=y.npy"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ran in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A: csr"), std::string::npos) << r.out;  // describe()
  expectSpmv(a, x, readNpy(dir_ / "y.npy"), 1.0);
  EXPECT_EQ(files(), (std::vector<std::string>{"x.npy", "y.npy"}));  // nothing else written
}

TEST_F(CliRun, ASparseFileWithoutFormatKeepsItsFormatAndDenseIsAsked) {
  // No --format: the matrix read from a Matrix Market file stays csr (the CSR provider runs, a
  // line says so) instead of being densified for a dense kernel; --format A=dense computes it
  // densely. Both match float64.
  const Triplets a = readMtx(kMatrix);
  const std::vector<float> x = randomVector(static_cast<size_t>(a.cols), std::random_device{}());
  writeNpy(dir_ / "x.npy", x);
  const Result r = run({"run", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy",
                        "--out", "y=y.npy"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("format of A: csr, the format read from " + kMatrix +
                       " (--format A=dense to compute it densely)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("provider: csr_spmm"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("format of x"), std::string::npos) << r.out;  // a .npy is dense
  expectSpmv(a, x, readNpy(dir_ / "y.npy"), 1.0);
  const Result dense = run({"run", "y(i) = A(i,j) * x(j)", "--format", "A=dense", "--in",
                            "A=" + kMatrix, "--in", "x=x.npy", "--out", "y=y.npy"});
  ASSERT_EQ(dense.status, 0) << dense.err;
  EXPECT_EQ(dense.out.find("format of A"), std::string::npos) << dense.out;
  EXPECT_NE(dense.out.find("A: dense"), std::string::npos) << dense.out;
  expectSpmv(a, x, readNpy(dir_ / "y.npy"), 1.0);
}

TEST_F(CliRun, ScheduleRepeatAndPrintFlags) {
  const Triplets a = readMtx(kMatrix);
  const std::vector<float> x = randomVector(static_cast<size_t>(a.cols), std::random_device{}());
  writeNpy(dir_ / "x.npy", x);
  const Result r =
      run({"run", "y(i) = A(i,j) * x(j)", "--format", "A=csr", "--in", "A=" + kMatrix, "--in",
           "x=x.npy", "--out", "y=y.npy", "--schedule", "split(i, i0, i1, 8); parallel(i0)",
           "--print-ir", "--print-source", "--emit-mlir", "--repeat", "5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("for v_i0 in"), std::string::npos) << r.out;     // --print-ir
  EXPECT_NE(r.out.find("sf_kernel_main"), std::string::npos) << r.out;  // --print-source
  EXPECT_NE(r.out.find("linalg.generic"), std::string::npos) << r.out;  // --emit-mlir
  const size_t at = r.out.find("median_ms: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GT(std::stod(r.out.substr(at + 11)), 0.0) << r.out;
  expectSpmv(a, x, readNpy(dir_ / "y.npy"), 1.0);
  const Result bad = run({"run", "y(i) = A(i,j) * x(j)", "--format", "A=csr", "--schedule",
                          "parallel(q)", "--no-run"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("no loop named 'q'"), std::string::npos) << bad.err;
}

TEST_F(CliRun, GeneratedOnlyTurnsTheHandTunedKernelOff) {
  for (const bool generatedOnly : {false, true}) {
    std::vector<std::string> args{
        "run", "C(i,j) = A(i,k) * B(k,j)", "--format", "A=csr", "--print", "plan", "--no-run"};
    if (generatedOnly) args.push_back("--generated-only");
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("provider: csr_spmm, the hand-tuned CSR SpMM") == std::string::npos,
              generatedOnly)
        << r.out;
  }
}

TEST_F(CliRun, SparseInputsAndOutputAsSft) {
  // SpGEMM with both operands read from .sft and the product assembled into csr, written as .sft.
  const Triplets t = readMtx(kMatrix);
  sparseflow::write((dir_ / "a.sft").string(),
                    sparseflow::convert(sparseflow::read(kMatrix), "csr"));
  const Result r =
      run({"run", "C(i,j) = A(i,k) * B(k,j)", "--format", "A=csr", "--format", "B=csr", "--format",
           "C=csr", "--in", "A=a.sft", "--in", "B=a.sft", "--out", "C=c.sft"});
  ASSERT_EQ(r.status, 0) << r.err;
  const sparseflow::Tensor c = sparseflow::read((dir_ / "c.sft").string());
  EXPECT_EQ(c.format().toString(), "csr");
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{t.rows, t.cols}));
  std::vector<double> a(static_cast<size_t>(t.rows * t.cols), 0.0);
  for (size_t n = 0; n < t.v.size(); ++n)
    a[static_cast<size_t>(t.i[n] * t.cols + t.j[n])] += t.v[n];
  const std::vector<double> got = sparseflow::toDense(c);
  for (int64_t i = 0; i < t.rows; ++i) {
    for (int64_t j = 0; j < t.cols; ++j) {
      double want = 0, mag = 0;
      for (int64_t k = 0; k < t.cols; ++k) {
        const double term =
            static_cast<double>(static_cast<float>(a[static_cast<size_t>(i * t.cols + k)])) *
            static_cast<float>(a[static_cast<size_t>(k * t.cols + j)]);
        want += term;
        mag += std::abs(term);
      }
      ASSERT_NEAR(got[static_cast<size_t>(i * t.cols + j)], want, 1e-5 * mag + 1e-30)
          << "(" << i << ", " << j << ")";
    }
  }
  EXPECT_EQ(files(), (std::vector<std::string>{"a.sft", "c.sft"}));
}

TEST_F(CliRun, ParamAndF64) {
  const Triplets a = readMtx(kMatrix);
  const std::vector<float> x = randomVector(static_cast<size_t>(a.cols), std::random_device{}());
  writeNpy(dir_ / "x.npy", x);
  const Result r =
      run({"run", "y(i) = alpha * A(i,j) * x(j)", "--format", "A=csr", "--dtype", "A=f64", "--in",
           "A=" + kMatrix, "--in", "x=x.npy", "--param", "alpha=-2.5", "--out", "y=y.npy"});
  ASSERT_EQ(r.status, 0) << r.err;
  expectSpmv(a, x, readNpy(dir_ / "y.npy"), -2.5);
}

TEST_F(CliRun, PrintMlirWithoutRunning) {
  const Result r =
      run({"run", "y(i) = A(i,j) * x(j)", "--format", "A=csr", "--print", "mlir", "--no-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(
                "func.func @kernel(%A: tensor<?x?xf32, #CSR>, %x: tensor<?xf32>) -> tensor<?xf32>"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("linalg.generic"), std::string::npos);
  EXPECT_TRUE(files().empty());
}

TEST_F(CliRun, CompileEmitsToAFile) {
  Result r = run({"compile", "C(i,j) = A(i,k) * B(k,j)", "--format", "A=csc", "--emit", "mlir",
                  "-o", "k.mlir"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = slurp(dir_ / "k.mlir");
  EXPECT_NE(text.find("dimOrdering = affine_map<(d0, d1) -> (d1, d0)>"), std::string::npos) << text;
  EXPECT_EQ(files(), (std::vector<std::string>{"k.mlir"}));
  r = run({"compile", "C(i,j) = A(i,k) * B(k,j)", "--format", "A=csc", "--emit", "cpp"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sf_kernel"), std::string::npos);
  r = run({"compile", "C(i,j) = A(i,k) * B(k,j)", "--format", "A=bsr:2x2", "--emit", "mlir"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("bsr:2x2"), std::string::npos) << r.err;
}

TEST_F(CliRun, CompilePrintsEveryStageAndEmitsWithoutACompiler) {
  // No working C++ compiler: --emit ir and cpp still work (the pipeline stops before the JIT).
  const char* saved = std::getenv("SPARSEFLOW_CXX");
  const std::string restore = saved ? saved : "";
  ASSERT_EQ(setenv("SPARSEFLOW_CXX", "/nonexistent/c++", 1), 0);
  const std::string kernel = "C(i,j) = sqrt(A(i,k)) * B(k,j) + 0.25";
  Result r = run(
      {"compile", kernel, "--format", "A=csr", "--emit", "ir", "--print-after-all", "--no-cache"});
  ASSERT_EQ(r.status, 0) << r.err;
  size_t at = 0;
  for (const char* stage :
       {"parse", "check", "canonicalize", "lower", "schedule", "default-transforms"}) {
    const size_t next = r.out.find(std::string("// ----- after ") + stage + " -----\n", at);
    ASSERT_NE(next, std::string::npos) << stage << " missing or out of order:\n" << r.out;
    at = next;
  }
  EXPECT_EQ(r.out.find("after select-provider"), std::string::npos) << r.out;
  r = run({"compile", kernel, "--format", "A=csr", "--emit", "cpp", "--no-cache"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sf_kernel_main"), std::string::npos) << r.out;
  r = run({"run", kernel, "--format", "A=csr", "--no-cache", "--no-run"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/c++"), std::string::npos) << r.err;
  if (saved) {
    setenv("SPARSEFLOW_CXX", restore.c_str(), 1);
  } else {
    unsetenv("SPARSEFLOW_CXX");
  }
  // --stop-after: printed, not run; SPARSEFLOW_TIME_PASSES times every stage that ran.
  ASSERT_EQ(setenv("SPARSEFLOW_TIME_PASSES", "1", 1), 0);
  r = run({"compile", "y(i) = relu(A(i,j) * x(j) + b(i))", "--format", "A=csr", "--stop-after",
           "select-provider", "--print-after-all"});
  unsetenv("SPARSEFLOW_TIME_PASSES");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("provider: csr_spmm\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("pass timing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("select-provider"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("codegen"), std::string::npos) << r.err;
  r = run({"compile", "y(i) = A(i,j) * x(j)", "--stop-after", "optimize", "--emit", "ir"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("unknown pipeline stage 'optimize'"), std::string::npos) << r.err;
  EXPECT_TRUE(files().empty());
}

/// Each bad invocation fails, names the argument at fault and leaves no output behind.
struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> mentions;
};

TEST_F(CliRun, BadArgumentsNameThemselvesAndWriteNothing) {
  writeNpy(dir_ / "x.npy", randomVector(67, 1));
  writeNpy(dir_ / "x10.npy", randomVector(10, 2));
  const std::string spmv = "y(i) = A(i,j) * x(j)";
  const std::vector<BadCase> cases = {
      {"missing --in", {"run", spmv, "--in", "A=" + kMatrix, "--out", "y=y.npy"}, {"'x'", "--in"}},
      {"bad format",
       {"run", spmv, "--format", "A=foo", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--out",
        "y=y.npy"},
       {"--format", "foo"}},
      {"shape mismatch",
       {"run", spmv, "--in", "A=" + kMatrix, "--in", "x=x10.npy", "--out", "y=y.npy"},
       {"'x'", "--in x=x10.npy"}},
      {"no '='",
       {"run", spmv, "--in", "Ax.mtx", "--in", "x=x.npy", "--out", "y=y.npy"},
       {"--in 'Ax.mtx'"}},
      {"missing file",
       {"run", spmv, "--in", "A=missing.mtx", "--in", "x=x.npy", "--out", "y=y.npy"},
       {"--in A=missing.mtx"}},
      {"wrong output name",
       {"run", spmv, "--in", "A=" + kMatrix, "--in", "x=x.npy", "--out", "z=y.npy"},
       {"--out z=y.npy"}},
      {"bad param",
       {"run", "y(i) = alpha * A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--param",
        "alpha=two", "--out", "y=y.npy"},
       {"--param", "two"}},
      {"malformed kernel",
       {"run", "y(i) = A(i,j", "--in", "A=" + kMatrix, "--out", "y=y.npy"},
       {"line 1, column 13", "expected ')'"}},
      {"missing param",
       {"run", "y(i) = alpha * A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--out",
        "y=y.npy"},
       {"'alpha'", "--param"}},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Result r = run(c.args);
    EXPECT_NE(r.status, 0) << r.out;
    for (const std::string& m : c.mentions)
      EXPECT_NE(r.err.find(m), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(files(), (std::vector<std::string>{"x.npy", "x10.npy"}));
  }
}

}  // namespace

namespace {

TEST_F(CliRun, TuneCollectTrainAndSearchAndTheirArgumentsReproduceIt) {
  std::vector<float> x(67);
  for (size_t k = 0; k < x.size(); ++k) x[k] = 0.25f * static_cast<float>(k % 7) - 0.5f;
  writeNpy(dir_ / "x.npy", x);
  const Result r = run({"tune", "collect", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in",
                        "x=x.npy", "--sample", "2", "--seed", "3", "-o", "data.jsonl"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("legal; timing 2"), std::string::npos) << r.err;
  std::istringstream lines(slurp(dir_ / "data.jsonl"));
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["arguments"], "--format A=csr");  // the default first
  EXPECT_TRUE(rows[0]["default"].get<bool>());
  for (const nlohmann::json& row : rows) {
    EXPECT_GT(row["median_ms"].get<double>(), 0.0) << row.dump();
    EXPECT_GE(row["first_ms"].get<double>(), row["median_ms"].get<double>()) << row.dump();
    for (const char* f : {"A.nnz_log2", "A.block_fill_4", "kernel.dense_extent_log2",
                          "machine.threads", "cfg.A.is_csr", "cfg.split_log2"})
      EXPECT_TRUE(row["features"].contains(f)) << f;
  }
  EXPECT_DOUBLE_EQ(rows[0]["features"]["A.rows_log2"].get<double>(), std::log2(68.0));
  // The second configuration, spelled for `sparseflow run`, runs.
  std::vector<std::string> args = {
      "run", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--repeat", "2"};
  for (const auto& [name, format] : rows[1]["formats"].items())
    args.insert(args.end(), {"--format", name + "=" + format.get<std::string>()});
  if (!rows[1]["schedule"].get<std::string>().empty())
    args.insert(args.end(), {"--schedule", rows[1]["schedule"].get<std::string>()});
  if (!rows[1]["hand_tuned"].get<bool>()) args.push_back("--generated-only");
  const Result again = run(args);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("median_ms"), std::string::npos) << again.out;
  // A line that is not JSON (a collection cut short) is an error naming the file and line.
  {
    std::ofstream bad(dir_ / "bad.jsonl");
    bad << slurp(dir_ / "data.jsonl").substr(0, slurp(dir_ / "data.jsonl").find('\n') + 1)
        << "{\"kernel\": \"y(i) = A(i,j) * x(j)\", \"median_ms\": 0.1, \"feat\n";
  }
  const Result badTrain = run({"tune", "train", "bad.jsonl", "-o", "bad_model.json"});
  EXPECT_NE(badTrain.status, 0);
  EXPECT_NE(badTrain.err.find("bad.jsonl:2: not a JSON line"), std::string::npos) << badTrain.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad_model.json"));
  // A pinned format (an SDDMM's output in A's pattern) is in every configuration timed, and
  // never searched.
  std::vector<float> d(67 * 8);
  for (size_t k = 0; k < d.size(); ++k) d[k] = 0.125f * static_cast<float>(k % 11) - 0.5f;
  writeNpy(dir_ / "d.npy", d, 8);
  const Result pinned = run({"tune", "collect", "C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k))", "--in",
                             "A=" + kMatrix, "--in", "X=d.npy", "--in", "Y=d.npy", "--format",
                             "C=csr", "--tune", "A", "--sample", "4", "-o", "pinned.jsonl"});
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  std::istringstream pinnedLines(slurp(dir_ / "pinned.jsonl"));
  int pinnedRows = 0;
  for (std::string line; std::getline(pinnedLines, line); ++pinnedRows) {
    const nlohmann::json row = nlohmann::json::parse(line);
    EXPECT_EQ(row["formats"]["C"], "csr") << line;
    EXPECT_NE(row["arguments"].get<std::string>().find("--format C=csr"), std::string::npos);
    EXPECT_GT(row["median_ms"].get<double>(), 0.0) << line;
  }
  EXPECT_EQ(pinnedRows, 4);
  const Result badPin = run({"tune", "collect", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix,
                             "--in", "x=x.npy", "--format", "A", "-o", "bad_pin.jsonl"});
  EXPECT_NE(badPin.status, 0);
  EXPECT_NE(badPin.err.find("--format"), std::string::npos) << badPin.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad_pin.jsonl"));
  // A pin the compiler refuses (an unknown format, a tensor the kernel lacks) is an error that
  // says why, and nothing is written (it had written an empty file and exited 0).
  for (const auto& [pin, why] : std::vector<std::pair<std::string, std::string>>{
           {"C=bogus", "unknown format 'bogus'"}, {"Z=csr", "format given for 'Z'"}}) {
    const Result refused = run({"tune", "collect", "C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k))",
                                "--in", "A=" + kMatrix, "--in", "X=d.npy", "--in", "Y=d.npy",
                                "--format", pin, "--tune", "A", "-o", "refused.jsonl"});
    EXPECT_NE(refused.status, 0) << pin;
    EXPECT_NE(refused.err.find("no legal configuration"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find(why), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(dir_ / "refused.jsonl")) << pin;
  }
#ifdef SPARSEFLOW_SANITIZED
  // Under the sanitizers the search's space and timing took 10 s of make test's 25 minutes; the
  // cost model and the search run under them in test_tune, and through the CLI in release.
  return;
#endif
  // The lines train a model; holding out the only problem leaves nothing to learn from.
  const Result trained = run({"tune", "train", "data.jsonl", "-o", "model.json", "--rounds", "5"});
  EXPECT_EQ(trained.status, 0) << trained.err;
  EXPECT_NE(trained.out.find("trained on 1 problems"), std::string::npos) << trained.out;
  EXPECT_TRUE(fs::exists(dir_ / "model.json"));
  const Result empty =
      run({"tune", "train", "data.jsonl", "-o", "m2.json", "--holdout", "west0067"});
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.err.find("no group with two or more timed configurations"), std::string::npos)
      << empty.err;
  EXPECT_FALSE(fs::exists(dir_ / "m2.json"));

  // The search: the model ranks the space, the default and the top one are timed (budget 1), and
  // the chosen configuration's spelling runs through `sparseflow run`.
  const Result searched =
      run({"tune", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--model",
           "model.json", "--budget", "1", "--db", "db.jsonl", "--json", "result.json"});
  ASSERT_EQ(searched.status, 0) << searched.err;
  EXPECT_NE(searched.out.find("chosen: --format A="), std::string::npos) << searched.out;
  const nlohmann::json result = nlohmann::json::parse(slurp(dir_ / "result.json"));
  EXPECT_EQ(result["measured"].get<int>(), 2);
  EXPECT_GE(result["space"].get<int>(), 300);  // SpMV: no unrolled dense inner loop
  ASSERT_EQ(result["candidates"].size(), 2u);
  EXPECT_EQ(result["candidates"][0]["arguments"], "--format A=csr");
  EXPECT_DOUBLE_EQ(result["default_ms"].get<double>(),
                   result["candidates"][0]["median_ms"].get<double>());
  EXPECT_LE(result["median_ms"].get<double>(), result["default_ms"].get<double>());
  EXPECT_TRUE(result["candidates"][1].contains("predicted"));
  std::vector<std::string> chosen = {
      "run", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--repeat", "2"};
  for (const auto& [name, format] : result["formats"].items())
    chosen.insert(chosen.end(), {"--format", name + "=" + format.get<std::string>()});
  if (!result["schedule"].get<std::string>().empty())
    chosen.insert(chosen.end(), {"--schedule", result["schedule"].get<std::string>()});
  if (!result["hand_tuned"].get<bool>()) chosen.push_back("--generated-only");
  if (!result["parallel"].get<bool>()) chosen.push_back("--serial");
  EXPECT_EQ(run(chosen).status, 0);
  // The decision was recorded: the same problem again (the kernel spelled with other blanks)
  // reuses it without timing, with or without a model; --retune searches again.
  const Result reused = run({"tune", "y(i)=A(i,j)*x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy",
                             "--db", "db.jsonl", "--json", "again.json"});
  ASSERT_EQ(reused.status, 0) << reused.err;
  EXPECT_NE(reused.out.find("from the tuning database"), std::string::npos) << reused.out;
  const nlohmann::json recorded = nlohmann::json::parse(slurp(dir_ / "again.json"));
  EXPECT_TRUE(recorded["from_database"].get<bool>());
  EXPECT_EQ(recorded["measured"].get<int>(), 0);
  EXPECT_EQ(recorded["arguments"], result["arguments"]);
  const Result retuned =
      run({"tune", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in", "x=x.npy", "--model",
           "model.json", "--budget", "1", "--db", "db.jsonl", "--retune"});
  ASSERT_EQ(retuned.status, 0) << retuned.err;
  EXPECT_NE(retuned.out.find("timed 2 of"), std::string::npos) << retuned.out;
  const std::string db = slurp(dir_ / "db.jsonl");
  EXPECT_EQ(std::count(db.begin(), db.end(), '\n'), 2);
  const Result noModel = run({"tune", "y(i) = A(i,j) * x(j)", "--in", "A=" + kMatrix, "--in",
                              "x=x.npy", "--model", "absent.json", "--no-db"});
  EXPECT_EQ(noModel.status, 1);
  EXPECT_NE(noModel.err.find("absent.json"), std::string::npos) << noModel.err;
}

}  // namespace
