// Benchmarks compiled kernels (sparseflow::Kernel, A as f32 CSR, default schedule) on the bundled
// real matrices: SpMV, SpMM with 32 and 128 dense columns, SDDMM (k = 32) and SpGEMM, each checked
// against a float64 reference first, then timed beside scipy, torch.sparse, Eigen and
// SuiteSparse:GraphBLAS in the same run. Prints GFLOP/s, GB/s, the fraction of the measured
// bandwidth, the ratio to the best peer per case and the geometric mean per kernel.
//
//   build-bench/bin/bench_compiler [--limits=FILE] [--rows=FILE] [--python=.venv/bin/python]
//       [--matrices=a.mtx,b.smtx | --matrices=none | --all]
//       [--synthetic=banded:ROWS:PER_ROW[:BAND]]...
//       [--kernels=spmv,spmm32,spmm128,sddmm32,spgemm] [--reps=5]
//       [--data=DIR] [--peer-script=bench/peers/sparse_peers.py]
// Threads: OMP_NUM_THREADS (ours, Eigen, GraphBLAS, torch); scipy runs on one. docs/compiler.md.
// The cases (kernels, operands, checks, peers) are common/kernel_case, which `sparseflow
// benchmark` runs too (docs/tools.md).
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

#include "common/compiler_inputs.h"
#include "common/driver.h"
#include "common/kernel_case.h"
#include "common/machine_limits.h"
#include "common/report.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "support/cache_info.h"

namespace sparseflow::bench {
namespace {

/// The default kernels, all on A (SDDMM's M) in csr.
std::vector<KernelSpec> defaultKernels() {
  std::vector<KernelSpec> kernels;
  for (const char* name : {"spmv", "spmm:32", "spmm:128", "sddmm:32", "spgemm"}) {
    kernels.push_back(parseKernelSpec(name));
  }
  return kernels;
}

struct Options {
  std::string limitsPath, rowsPath;
  std::string python;  ///< empty: no Python peers
  std::string peerScript = SPARSEFLOW_BENCH_DIR "/peers/sparse_peers.py";
  std::string dataDir = SPARSEFLOW_DATA_DIR;
  std::vector<std::string> matrices;  ///< empty: the default selection (or all with --all)
  /// --synthetic=banded:ROWS:PER_ROW[:BAND] (repeatable): generated matrices, run after the files
  /// (the default selection, --matrices or --all).
  std::vector<std::string> synthetic;
  bool noFiles = false;  ///< --matrices=none
  bool all = false;
  std::vector<KernelSpec> kernels = defaultKernels();
  int reps = 5;
  std::vector<std::string> given;  ///< result-changing flags as typed, for the reproducers
};

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
      o.noFiles = value == "none";  // only the --synthetic ones
      if (o.noFiles) o.matrices.clear();
    } else if (key == "--all") {
      o.all = true;
    } else if (key == "--synthetic") {
      o.synthetic.push_back(value);
      continue;  // the reproducers name their own input
    } else if (key == "--kernels") {
      o.kernels.clear();
      for (const std::string& name : splitList(value)) {
        try {
          o.kernels.push_back(parseKernelSpec(name));
        } catch (const std::invalid_argument& e) {
          throw std::runtime_error(std::string("--kernels: ") + e.what());
        }
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

std::string fmt(const char* pattern, double a, double b = 0) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

struct MatrixRun {
  const Options& o;
  const MachineLimits& limits;
  int threads;
  const char* program;
  std::map<std::string, Kernel>& compiled;
  std::vector<std::string>& failures;
};

/// The flags that name this matrix again (shell-quoted): its file, or its synthetic spec alone.
std::string inputFlags(const Matrix& m) {
  const std::string prefix = "synthetic ";
  return m.path.rfind(prefix, 0) == 0
             ? "--matrices=none " + shellQuote("--synthetic=" + m.path.substr(prefix.size()))
             : shellQuote("--matrices=" + m.path);
}

std::string reproducer(const MatrixRun& r, const std::string& kernels, const std::string& what) {
  std::string line = "OMP_NUM_THREADS=" + std::to_string(r.threads) + " " + shellQuote(r.program);
  for (const std::string& flag : r.o.given) line += " " + shellQuote(flag);
  return line + " " + shellQuote("--kernels=" + kernels) + (what.empty() ? "" : " " + what);
}

/// Runs one kernel on one matrix: ours checked then timed, then every peer; null when skipped or
/// wrong (a failure is recorded).
std::optional<ResultRow> runCase(const MatrixRun& r, const KernelSpec& k, const Matrix& m,
                                 const Operands& ops, const PeerRun& python) {
  const std::string name = "compiler/" + k.id() + "/csr/" + m.label;
  if (const std::string why = skipReason(k, m); !why.empty()) {
    std::cerr << name << ": skipped, " << why << "\n";
    return std::nullopt;
  }
  auto found = r.compiled.find(k.id());
  if (found == r.compiled.end()) return std::nullopt;  // compile failed, already reported
  const Kernel& kernel = found->second;

  // Correctness first: a benchmark of a wrong kernel is worthless.
  const BoundCase bound(k, m, ops);
  const CaseCheck check = checkKernel(kernel, bound, k, m, ops);
  if (!check.wrong.empty()) {
    r.failures.push_back(name + " (" + m.path + "): " + check.wrong);
    std::cerr << "FAILED " << r.failures.back() << "\n";
    return std::nullopt;
  }

  ResultRow row;
  row.name = name;
  row.threads = r.threads;
  omp_set_num_threads(r.threads);
  row.seconds = timeKernel(kernel, bound, r.o.reps);

  // Peers: Eigen and GraphBLAS here, scipy and torch from the Python run.
  const SparseProblem p = sparseProblem(k, m, ops, r.threads);
  std::vector<PeerTime> peers;
  std::vector<std::string> absent;
  for (const char* peer : {"eigen", "graphblas"}) {
    PeerTime t = measurePeer(peer, p, check, r.o.reps);
    if (t.name.empty()) {
      absent.push_back(t.problem);
    } else {
      peers.push_back(t);
    }
  }
  for (const char* lib : {"scipy", "torch"}) {
    if (python.name.empty()) continue;
    peers.push_back(pythonPeerTime(python, lib, pythonCase(0, lib, k.id()), check, r.threads));
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
  if (const double l2 = r.limits.l2ReadBandwidth(r.threads); k.op == SparseOp::kSpmm && l2 > 0) {
    // Every entry reads a row of B (n floats) into L1: from L2 (or further) unless rows repeat.
    const double rowBytes = static_cast<double>(m.nnz) * static_cast<double>(k.n) * 4;
    row.note += fmt("; B rows read per call %.3g MB = %.0f%% of the L2 read bandwidth",
                    rowBytes / 1e6, 100 * rowBytes / row.seconds / l2);
  }
  if (k.op == SparseOp::kSpgemm) {
    row.note +=
        fmt("; product assembled into csr, %.0f entries", static_cast<double>(m.spgemmEntries()));
  }
  row.note += "; peers:";
  for (const PeerTime& t : peers) {
    row.note += " " + t.name + " (" + t.how + ") ";
    row.note += t.problem.empty() ? formatSeconds(t.seconds)
                : t.wrong         ? "WRONG: " + t.problem
                                  : "failed: " + t.problem;
    row.note += ";";
    if (t.problem.empty() && !(t.seconds >= row.peerSeconds)) {
      row.peerSeconds = t.seconds;
      row.peer = t.name;
    }
  }
  for (const std::string& a : absent) row.note += " " + a + ";";
  row.reproducer = reproducer(r, k.id(), inputFlags(m));
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
    if (row.name.rfind("compiler/" + k.id() + "/", 0) != 0 || std::isnan(row.peerSeconds)) continue;
    ours.push_back(row.seconds);
    peer.push_back(row.peerSeconds);
    floor.push_back(row.floorSeconds);
    wins += row.ratio() > 1;
  }
  ResultRow s;
  s.name = "compiler/" + k.id() + "/csr/geomean";
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
  std::string inputs = !list.empty() ? shellQuote("--matrices=" + list)
                       : r.o.all     ? "--all"
                       : r.o.noFiles ? "--matrices=none"
                                     : "";
  for (const std::string& spec : r.o.synthetic)
    inputs += (inputs.empty() ? "" : " ") + shellQuote("--synthetic=" + spec);
  s.reproducer = reproducer(r, k.id(), inputs);
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
  if (paths.empty() && !o.noFiles) {
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
    const auto t0 = std::chrono::steady_clock::now();
    try {
      compiled.emplace(k.id(), Kernel::compile(k.text(), k.options()));
    } catch (const std::exception& e) {
      failures.push_back(k.id() + ": compile failed: " + e.what());
      std::cerr << "FAILED " << failures.back() << "\n";
      continue;
    }
    std::cerr << k.id() << ": compiled in "
              << formatSeconds(
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
              << "\n"
              << compiled.at(k.id()).describe();
  }

  std::string pattern = (std::filesystem::temp_directory_path() / "bench_compiler.XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder");
  const std::string workDir = pattern;
  const MatrixRun r{o, limits, threads, argv[0], compiled, failures};
  warmUpThreads(threads);
  std::vector<ResultRow> rows;
  std::vector<double> llcFractions;
  int64_t largest = 0;
  for (size_t i = 0; i < paths.size() + o.synthetic.size(); ++i) {
    Matrix m;
    const bool generated = i >= paths.size();
    const std::string& source = generated ? o.synthetic[i - paths.size()] : paths[i];
    try {
      m = generated ? syntheticMatrix(source) : loadMatrix(source, labels[i]);
    } catch (const std::exception& e) {  // not a matrix the benchmark can use: say so, go on
      std::cerr << "skipping " << source << ": " << e.what() << "\n";
      continue;
    }
    std::cerr << "== " << m.label << " (" << m.path << "): " << m.csr.summary() << "\n";
    const Operands ops = makeOperands(m, o.kernels);
    PeerRun python;
    if (!o.python.empty()) {
      PythonInput input{workDir + "/" + std::to_string(i), {}};
      writePeerInputs(input.dir, m, ops);
      for (const KernelSpec& k : o.kernels) {
        if (skipReason(k, m).empty()) input.kernels.push_back(k.id());
      }
      try {
        python =
            runPythonPeers({o.python, o.peerScript, {"scipy", "torch"}, o.reps, threads}, {input});
      } catch (const std::exception& e) {  // the table still shows the other peers
        std::cerr << "the Python peers failed: " << e.what() << "\n";
      }
      std::filesystem::remove_all(input.dir);
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
