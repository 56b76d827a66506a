// Benchmarks compiled kernels (sparseflow::Kernel, A as f32 CSR, default schedule) on the bundled
// real matrices: SpMV, SpMM with 32 and 128 dense columns, SDDMM (k = 32) and SpGEMM, each checked
// against a float64 reference first, then timed beside scipy, torch.sparse, Eigen and
// SuiteSparse:GraphBLAS in the same run. Prints GFLOP/s, GB/s, the fraction of the measured
// bandwidth, the ratio to the best peer per case and the geometric mean per kernel.
//
//   build-bench/bin/bench_compiler [--limits=FILE] [--rows=FILE] [--python=.venv/bin/python]
//       [--matrices=a.mtx,b.smtx | --all] [--kernels=spmv,spmm32,spmm128,sddmm,spgemm] [--reps=5]
//       [--data=DIR] [--peer-script=bench/peers/sparse_peers.py]
// Threads: OMP_NUM_THREADS (ours, Eigen, GraphBLAS, torch); scipy runs on one. docs/compiler.md.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/driver.h"
#include "common/machine_limits.h"
#include "common/npy_file.h"
#include "common/peer.h"
#include "common/report.h"
#include "compiler_inputs.h"
#include "peers/sparse_ops.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "support/cache_info.h"

namespace sparseflow::bench {
namespace {

constexpr int64_t kSddmmK = 32;
constexpr double kSpgemmDenseLimit = 256e6;  // bytes of SpGEMM's dense output we allow

struct KernelSpec {
  std::string id;  ///< "spmm32", as --kernels names it
  SparseOp op;
  int64_t n;  ///< SpMM: columns of B; SDDMM: k
  std::string text;
  std::map<std::string, std::string> formats;
};

const std::vector<KernelSpec>& allKernels() {
  static const std::vector<KernelSpec> kernels = {
      {"spmv", SparseOp::kSpmv, 1, "y(i) = A(i,j) * x(j)", {{"A", "csr"}}},
      {"spmm32", SparseOp::kSpmm, 32, "C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}}},
      {"spmm128", SparseOp::kSpmm, 128, "C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}}},
      {"sddmm",
       SparseOp::kSddmm,
       kSddmmK,
       "Y(i,j) = M(i,j) * sum(k, X(i,k) * Z(j,k))",
       {{"M", "csr"}, {"Y", "csr"}}},
      {"spgemm", SparseOp::kSpgemm, 0, "C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}}},
  };
  return kernels;
}

struct Options {
  std::string limitsPath, rowsPath;
  std::string python;  ///< empty: no Python peers
  std::string peerScript = SPARSEFLOW_BENCH_DIR "/peers/sparse_peers.py";
  std::string dataDir = SPARSEFLOW_DATA_DIR;
  std::vector<std::string> matrices;  ///< empty: the default selection (or all with --all)
  bool all = false;
  std::vector<KernelSpec> kernels = allKernels();
  int reps = 5;
  std::vector<std::string> given;  ///< result-changing flags as typed, for the reproducers
};

/// `reps` samples; calls under 10 ms timed in batches of about 10 ms, as the Python peers do.
TimingOptions batched(int reps) {
  return TimingOptions{reps, 0.0, 0.01};
}

Options parseOptions(int argc, char** argv) {
  Options o;
  const std::string venv = SPARSEFLOW_SOURCE_DIR "/.venv/bin/python";
  if (access(venv.c_str(), X_OK) == 0) o.python = venv;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "--limits") {
      o.limitsPath = value;
    } else if (key == "--rows") {
      o.rowsPath = value;
    } else if (key == "--python") {
      o.python = value;
    } else if (key == "--peer-script") {
      o.peerScript = value;
    } else if (key == "--data") {
      o.dataDir = value;
    } else if (key == "--matrices") {
      o.matrices = splitList(value);
    } else if (key == "--all") {
      o.all = true;
    } else if (key == "--kernels") {
      o.kernels.clear();
      for (const std::string& id : splitList(value)) {
        bool found = false;
        for (const KernelSpec& k : allKernels()) {
          if (k.id == id) {
            o.kernels.push_back(k);
            found = true;
          }
        }
        if (!found) throw std::runtime_error("--kernels: unknown kernel '" + id + "'");
      }
      continue;  // the reproducers name their own kernel
    } else if (key == "--reps") {
      o.reps = std::stoi(value);
    } else {
      throw std::runtime_error("unknown option '" + arg +
                               "' (see the comment atop bench_compiler)");
    }
    if (key == "--reps" || key == "--python") o.given.push_back(arg);
  }
  return o;
}

/// The dense operands of one matrix, drawn once and shared by our kernels and all peers.
struct Operands {
  std::vector<float> x, b32, b128, xs, zs;  ///< x: cols; bN: cols × N; xs: rows × k; zs: cols × k
  const std::vector<float>& b(int64_t n) const { return n == 32 ? b32 : b128; }
};

Operands makeOperands(const Matrix& m) {
  Operands o;
  o.x = randomValues(m.cols, 1);
  o.b32 = randomValues(m.cols * 32, 2);
  o.b128 = randomValues(m.cols * 128, 3);
  o.xs = randomValues(m.rows * kSddmmK, 4);
  o.zs = randomValues(m.cols * kSddmmK, 5);
  return o;
}

void writePeerInputs(const std::string& dir, const Matrix& m, const Operands& o) {
  std::filesystem::create_directories(dir);
  writeNpy(dir + "/A_pos.npy", m.pos, m.rows + 1);
  writeNpy(dir + "/A_crd.npy", m.crd, m.nnz);
  writeNpy(dir + "/A_vals.npy", m.vals, m.nnz);
  const int64_t dims[4] = {m.rows, m.cols, m.nnz, kSddmmK};
  writeNpy(dir + "/dims.npy", dims, 4);
  writeNpy(dir + "/x.npy", o.x.data(), static_cast<int64_t>(o.x.size()));
  writeNpy(dir + "/B32.npy", o.b32.data(), static_cast<int64_t>(o.b32.size()));
  writeNpy(dir + "/B128.npy", o.b128.data(), static_cast<int64_t>(o.b128.size()));
  writeNpy(dir + "/X.npy", o.xs.data(), static_cast<int64_t>(o.xs.size()));
  writeNpy(dir + "/Z.npy", o.zs.data(), static_cast<int64_t>(o.zs.size()));
}

/// Bytes moved at least once (A's arrays, dense operands, output) and flops of one case.
struct Work {
  double bytes = 0, flops = 0;
};

Work workOf(const KernelSpec& k, const Matrix& m) {
  const double nnz = static_cast<double>(m.nnz), rows = static_cast<double>(m.rows),
               cols = static_cast<double>(m.cols), n = static_cast<double>(k.n);
  switch (k.op) {
    case SparseOp::kSpmv: return {m.bytes() + (cols + rows) * 4, 2 * nnz};
    case SparseOp::kSpmm: return {m.bytes() + (cols + rows) * n * 4, 2 * nnz * n};
    case SparseOp::kSddmm:  // output: M's pattern with new values
      return {m.bytes() + (rows + cols) * n * 4 + nnz * 4, 2 * nnz * n + nnz};
    case SparseOp::kSpgemm:  // our output is dense: rows × cols written
      return {m.bytes() + rows * cols * 4, m.spgemmFlops()};
  }
  return {};
}

std::string fmt(const char* pattern, double a, double b = 0) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

/// A peer's time on one case, after its result's sum was checked against the reference.
struct PeerTime {
  std::string name, how;
  double seconds = NAN;
  std::string problem;  ///< non-empty: the peer's result disagrees; its time does not count
};

/// Checks a peer's float64 result sum against the reference sum.
std::string checkSum(double got, double want, double scaleSum) {
  if (std::fabs(got - want) <= 1e-4 * scaleSum + 1e-20) return "";
  return fmt("sum %.9g, reference %.9g", got, want);
}

struct MatrixRun {
  const Options& o;
  const MachineLimits& limits;
  int threads;
  const char* program;
  std::map<std::string, Kernel>& compiled;
  std::vector<std::string>& failures;
};

std::string reproducer(const MatrixRun& r, const std::string& kernels, const std::string& what) {
  std::string line = "OMP_NUM_THREADS=" + std::to_string(r.threads) + " " + shellQuote(r.program);
  for (const std::string& flag : r.o.given) line += " " + shellQuote(flag);
  return line + " " + shellQuote("--kernels=" + kernels) + (what.empty() ? "" : " " + what);
}

/// Runs one kernel on one matrix: ours checked then timed, then every peer; null when skipped or
/// wrong (a failure is recorded).
std::optional<ResultRow> runCase(const MatrixRun& r, const KernelSpec& k, const Matrix& m,
                                 const Operands& ops, const PeerRun& python) {
  const std::string name = "compiler/" + k.id + "/csr/" + m.label;
  if (k.op == SparseOp::kSpgemm) {
    if (m.rows != m.cols) return std::nullopt;  // A·A needs a square A
    if (static_cast<double>(m.rows) * static_cast<double>(m.cols) * 4 >= kSpgemmDenseLimit) {
      std::cerr << name << ": skipped, the dense output would be "
                << formatBytes(static_cast<double>(m.rows) * static_cast<double>(m.cols) * 4)
                << "\n";
      return std::nullopt;
    }
  }
  // Our inputs, as the kernel binds them.
  std::map<std::string, const Tensor*> inputs;
  Tensor x, b, xs, zs;
  switch (k.op) {
    case SparseOp::kSpmv:
      x = denseView({m.cols}, ops.x.data());
      inputs = {{"A", &m.csr}, {"x", &x}};
      break;
    case SparseOp::kSpmm:
      b = denseView({m.cols, k.n}, ops.b(k.n).data());
      inputs = {{"A", &m.csr}, {"B", &b}};
      break;
    case SparseOp::kSddmm:
      xs = denseView({m.rows, k.n}, ops.xs.data());
      zs = denseView({m.cols, k.n}, ops.zs.data());
      inputs = {{"M", &m.csr}, {"X", &xs}, {"Z", &zs}};
      break;
    case SparseOp::kSpgemm: inputs = {{"A", &m.csr}, {"B", &m.csr}}; break;
  }
  auto found = r.compiled.find(k.id);
  if (found == r.compiled.end()) return std::nullopt;  // compile failed, already reported
  const Kernel& kernel = found->second;

  // Correctness first: a benchmark of a wrong kernel is worthless.
  double refSum = 0, refScale = 0;
  std::string wrong;
  try {
    const Tensor out = kernel.run(inputs);
    if (k.op == SparseOp::kSpgemm) {
      wrong = compareSpgemm(m, out.values().as<float>(), &refSum, &refScale);
    } else {
      const Reference ref =
          k.op == SparseOp::kSddmm
              ? referenceSddmm(m, ops.xs.data(), ops.zs.data(), k.n)
              : referenceSpmm(m, k.op == SparseOp::kSpmv ? ops.x.data() : ops.b(k.n).data(), k.n);
      if (out.values().size() != static_cast<int64_t>(ref.values.size())) {
        wrong = "the result has " + std::to_string(out.values().size()) + " values, expected " +
                std::to_string(ref.values.size());
      } else {
        wrong = compareToReference(out.values().as<float>(), ref);
      }
      refSum = ref.sum();
      refScale = ref.scaleSum();
    }
  } catch (const std::exception& e) {
    wrong = std::string("run failed: ") + e.what();
  }
  if (!wrong.empty()) {
    r.failures.push_back(name + " (" + m.path + "): " + wrong);
    std::cerr << "FAILED " << r.failures.back() << "\n";
    return std::nullopt;
  }

  ResultRow row;
  row.name = name;
  row.threads = r.threads;
  omp_set_num_threads(r.threads);
  // Steady state: the output is allocated once and overwritten by each run (as Eigen's
  // `C.noalias() = A * B` reuses C), so fresh pages are not faulted in on every call.
  Tensor reused = kernel.run(inputs);
  row.seconds = timeMedian([&] { kernel.run(inputs, reused); }, batched(r.o.reps));

  // Peers: Eigen and GraphBLAS here, scipy and torch from the Python run.
  SparseProblem p;
  p.op = k.op;
  p.rows = m.rows;
  p.cols = m.cols;
  p.nnz = m.nnz;
  p.pos = m.pos;
  p.crd = m.crd;
  p.vals = m.vals;
  p.n = k.n;
  p.b = k.op == SparseOp::kSpmv   ? ops.x.data()
        : k.op == SparseOp::kSpmm ? ops.b(k.n).data()
                                  : nullptr;
  p.x = ops.xs.data();
  p.z = ops.zs.data();
  p.threads = r.threads;
  std::vector<PeerTime> peers;
  std::vector<std::string> absent;
  for (auto make : {&makeEigenPeer, &makeGraphBlasPeer}) {
    std::string why;
    std::unique_ptr<SparsePeer> peer = make(p, &why);
    if (!peer) {
      absent.push_back(why);
      continue;
    }
    PeerTime t;
    t.name = peer->name();
    t.how = peer->how();
    try {
      peer->run();
      double sum = 0;
      int64_t stored = 0;
      peer->check(&sum, &stored);
      t.problem = checkSum(sum, refSum, refScale);
      if (t.problem.empty()) t.seconds = timeMedian([&] { peer->run(); }, batched(r.o.reps));
    } catch (const std::exception& e) {
      t.problem = e.what();
    }
    peers.push_back(t);
  }
  const std::string pythonName = python.name;
  for (const char* libName : {"scipy", "torch"}) {
    const std::string lib = libName;
    auto res = python.results.find(lib + "/" + k.id);
    if (res == python.results.end()) {
      if (!pythonName.empty()) absent.push_back(lib + ": no result");
      continue;
    }
    PeerTime t;
    // "scipy 1.10.1; torch 1.13.0a0" → this library's part.
    const auto at = pythonName.find(lib + " ");
    t.name = at == std::string::npos ? lib : pythonName.substr(at, pythonName.find(';', at) - at);
    t.how = lib == "scipy" ? "1 thread" : std::to_string(r.threads) + " threads";
    std::istringstream check(res->second.check);
    double sum = NAN;
    for (std::string field; check >> field;) {
      if (field.rfind("sum=", 0) == 0) sum = std::stod(field.substr(4));
      if (field.rfind("via=", 0) == 0) t.how += ", " + field.substr(4);
    }
    t.problem = checkSum(sum, refSum, refScale);
    if (t.problem.empty()) t.seconds = res->second.seconds;
    peers.push_back(t);
  }

  // Floors: the binding one of bandwidth (bytes once) and FMA peak (flops).
  const Work w = workOf(k, m);
  const double bandwidth = r.limits.readBandwidth(r.threads);
  const double peak = r.limits.fmaPeak(r.threads);
  if (w.bytes / bandwidth >= w.flops / peak) {
    setBandwidthFloor(row, w.bytes, bandwidth);
    row.floorBasis += ", bandwidth-bound";
  } else {
    setComputeFloor(row, w.flops, peak);
    row.floorBasis += ", compute-bound";
  }
  row.note =
      fmt("%.2f GFLOP/s, %.2f GB/s", w.flops / row.seconds / 1e9, w.bytes / row.seconds / 1e9) +
      fmt(" = %.0f%% of bandwidth, %.1f%% of FMA peak", 100 * w.bytes / row.seconds / bandwidth,
          100 * w.flops / row.seconds / peak) +
      fmt("; %.0fx%.0f", static_cast<double>(m.rows), static_cast<double>(m.cols)) +
      fmt(", nnz %.0f", static_cast<double>(m.nnz));
  if (k.op == SparseOp::kSpgemm) {
    row.note += "; ours writes a DENSE output (" +
                formatBytes(static_cast<double>(m.rows * m.cols) * 4) + "), the peers a sparse one";
  }
  row.note += "; peers:";
  for (const PeerTime& t : peers) {
    row.note += " " + t.name + " (" + t.how + ") ";
    row.note += t.problem.empty() ? formatSeconds(t.seconds) : "WRONG: " + t.problem;
    row.note += ";";
    if (t.problem.empty() && !(t.seconds >= row.peerSeconds)) {
      row.peerSeconds = t.seconds;
      row.peer = t.name;
    }
  }
  for (const std::string& a : absent) row.note += " " + a + ";";
  row.reproducer = reproducer(r, k.id, shellQuote("--matrices=" + m.path));
  std::cerr << row.name << ": " << formatSeconds(row.seconds) << ", best peer " << row.peer << " "
            << formatSeconds(row.peerSeconds) << " -> " << fmt("%.2fx", row.ratio()) << ", "
            << fmt("%.0f%% of limit", 100 * row.fractionOfLimit()) << "\n";
  return row;
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? NAN : std::exp(s / static_cast<double>(v.size()));
}

/// One row per kernel: geometric means of our times, the best peers' and the floors, so that its
/// speedup and fraction are the geometric means of the cases'.
ResultRow summaryRow(const MatrixRun& r, const KernelSpec& k, const std::vector<ResultRow>& rows,
                     const std::vector<double>& llcFractions, int64_t largest) {
  std::vector<double> ours, peer, floor;
  int wins = 0;
  for (const ResultRow& row : rows) {
    if (row.name.rfind("compiler/" + k.id + "/", 0) != 0 || std::isnan(row.peerSeconds)) continue;
    ours.push_back(row.seconds);
    peer.push_back(row.peerSeconds);
    floor.push_back(row.floorSeconds);
    wins += row.ratio() > 1;
  }
  ResultRow s;
  s.name = "compiler/" + k.id + "/csr/geomean";
  s.threads = r.threads;
  s.seconds = geomean(ours);
  s.peer = "best peer per matrix";
  s.peerSeconds = geomean(peer);
  s.floorSeconds = geomean(floor);
  s.floorBasis = "geomean of the cases' floors";
  const double speedup = s.ratio();
  s.note = fmt("geomean over %.0f matrices: %.2fx the best peer", static_cast<double>(ours.size()),
               speedup) +
           fmt(", faster on %.0f of %.0f", wins, static_cast<double>(ours.size()));
  if (k.op == SparseOp::kSpmm) {
    s.note += speedup >= 1.5 ? "; target >= 1.5x: met" : "; target >= 1.5x: NOT met";
  } else if (k.op == SparseOp::kSddmm || k.op == SparseOp::kSpgemm) {
    s.note += speedup > 1 ? "; target > 1x: met" : "; target > 1x: NOT met";
  } else {
    const std::string llc = formatBytes(static_cast<double>(support::cacheSizes().l3));
    if (llcFractions.empty()) {
      s.note += "; target >= 70% of bandwidth on matrices larger than the LLC (" + llc +
                "): none of these is (largest working set " +
                formatBytes(static_cast<double>(largest)) + "), so it is not checked here";
    } else {
      const double f = geomean(llcFractions);
      s.note += fmt("; on the %.0f matrices larger than the LLC: %.0f%% of bandwidth (geomean)",
                    static_cast<double>(llcFractions.size()), 100 * f) +
                (f >= 0.7 ? ", target >= 70%: met" : ", target >= 70%: NOT met");
    }
  }
  std::string list;
  for (const std::string& path : r.o.matrices) list += (list.empty() ? "" : ",") + path;
  s.reproducer = reproducer(r, k.id,
                            !list.empty() ? shellQuote("--matrices=" + list)
                            : r.o.all     ? "--all"
                                          : "");
  return s;
}

int run(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  const MachineLimits limits =
      o.limitsPath.empty() ? measureMachineLimits() : loadLimits(o.limitsPath);
  const int threads = omp_get_max_threads();
  std::cerr << limits.toString() << "\nLLC " << support::cacheSizes().toString() << "\n";

  const std::vector<MatrixFile> files = listMatrixFiles(o.dataDir);
  std::vector<std::string> paths = o.matrices;
  if (paths.empty()) {
    for (const MatrixFile& f : o.all ? files : defaultSelection(files)) paths.push_back(f.path);
  }
  // Labels unique among every bundled matrix, so a case keeps its name whatever else runs.
  auto canonical = [](const std::string& p) {
    return std::filesystem::weakly_canonical(p).string();
  };
  std::vector<std::string> everything;
  for (const MatrixFile& f : files) everything.push_back(canonical(f.path));
  for (const std::string& p : paths) {
    if (std::find(everything.begin(), everything.end(), canonical(p)) == everything.end()) {
      everything.push_back(canonical(p));
    }
  }
  const std::vector<std::string> allLabels = uniqueLabels(everything);
  std::vector<std::string> labels;
  for (const std::string& p : paths) {
    const auto at = std::find(everything.begin(), everything.end(), canonical(p));
    labels.push_back(allLabels[static_cast<size_t>(at - everything.begin())]);
  }
  std::cerr << paths.size() << " matrices:";
  for (const std::string& label : labels) std::cerr << " " << label;
  std::cerr << "\n";

  std::map<std::string, Kernel> compiled;
  std::vector<std::string> failures;
  for (const KernelSpec& k : o.kernels) {
    KernelOptions options;
    options.formats = k.formats;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      compiled.emplace(k.id, Kernel::compile(k.text, options));
    } catch (const std::exception& e) {
      failures.push_back(k.id + ": compile failed: " + e.what());
      std::cerr << "FAILED " << failures.back() << "\n";
      continue;
    }
    std::cerr << k.id << ": compiled in "
              << formatSeconds(
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
              << "\n"
              << compiled.at(k.id).describe();
  }

  std::string pattern = (std::filesystem::temp_directory_path() / "bench_compiler.XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder");
  const std::string workDir = pattern;
  const MatrixRun r{o, limits, threads, argv[0], compiled, failures};
  std::vector<ResultRow> rows;
  std::vector<double> llcFractions;
  int64_t largest = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    Matrix m;
    try {
      m = loadMatrix(paths[i], labels[i]);
    } catch (const std::exception& e) {  // not a matrix the benchmark can use: say so, go on
      std::cerr << "skipping " << paths[i] << ": " << e.what() << "\n";
      continue;
    }
    std::cerr << "== " << m.label << " (" << m.path << "): " << m.csr.summary() << "\n";
    const Operands ops = makeOperands(m);
    PeerRun python;
    if (!o.python.empty()) {
      const std::string dir = workDir + "/" + std::to_string(i);
      writePeerInputs(dir, m, ops);
      std::string kernels;
      for (const KernelSpec& k : o.kernels) {
        if (k.op != SparseOp::kSpgemm ||
            (m.rows == m.cols &&
             static_cast<double>(m.rows) * static_cast<double>(m.cols) * 4 < kSpgemmDenseLimit)) {
          kernels += (kernels.empty() ? "" : ",") + k.id;
        }
      }
      try {
        python = runPeer({o.python, o.peerScript, "--dir", dir, "--kernels", kernels, "--reps",
                          std::to_string(o.reps), "--threads", std::to_string(threads)});
      } catch (const std::exception& e) {  // the table still shows the other peers
        std::cerr << "the Python peers failed: " << e.what() << "\n";
      }
      std::filesystem::remove_all(dir);
    }
    for (const KernelSpec& k : o.kernels) {
      if (auto row = runCase(r, k, m, ops, python)) {
        if (k.op == SparseOp::kSpmv) {
          const Work w = workOf(k, m);
          largest = std::max(largest, static_cast<int64_t>(w.bytes));
          if (w.bytes > static_cast<double>(support::cacheSizes().l3)) {
            llcFractions.push_back(w.bytes / row->seconds / limits.readBandwidth(threads));
          }
        }
        rows.push_back(std::move(*row));
      }
    }
  }
  std::filesystem::remove_all(workDir);
  for (const KernelSpec& k : o.kernels)
    rows.push_back(summaryRow(r, k, rows, llcFractions, largest));

  std::cout << "\n" << limits.toString() << "\n\n";
  printTable(std::cout, rows);
  for (const ResultRow& s : rows) {
    if (s.name.size() > 8 && s.name.substr(s.name.size() - 8) == "/geomean") {
      std::cout << s.name << ": " << s.note << "\n";
    }
  }
  if (!o.rowsPath.empty()) appendRows(o.rowsPath, rows);
  for (const std::string& f : failures) std::cerr << "FAILED " << f << "\n";
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace sparseflow::bench

int main(int argc, char** argv) {
  return sparseflow::bench::runDriver("bench_compiler", sparseflow::bench::run, argc, argv);
}
