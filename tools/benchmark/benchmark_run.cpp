// The run of `sparseflow benchmark` (see benchmark_run.h): inputs, kernels, the Python peers in one
// process, then each case checked and timed beside the in-process peers.
#include "benchmark/benchmark_run.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "sparseflow/error.h"
#include "sparseflow/progress.h"

namespace sparseflow::tools::benchmark {
namespace {

namespace fs = std::filesystem;
using bench::KernelSpec;
using bench::Matrix;

bool isPythonPeer(const std::string& peer) {
  const auto& python = bench::pythonPeers();
  return std::find(python.begin(), python.end(), peer) != python.end();
}

/// A reader's message names the file already; others get it in front.
std::string naming(const std::string& path, const std::string& what) {
  return what.find(path) != std::string::npos ? what : path + ": " + what;
}

/// The matrices --inputs names: files as given (a bad one is an error), folders searched for
/// .mtx, .smtx and .sft files (one that cannot be benchmarked is left out, with why).
std::vector<Matrix> loadInputs(const std::vector<std::string>& inputs,
                               std::vector<std::pair<std::string, std::string>>& leftOut) {
  std::vector<std::string> paths;
  std::vector<bool> fromFolder;
  std::set<std::string> seen;
  auto add = [&](const std::string& path, bool inFolder) {
    if (seen.insert(fs::weakly_canonical(path).string()).second) {
      paths.push_back(path);
      fromFolder.push_back(inFolder);
    }
  };
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      const size_t before = leftOut.size();
      const std::vector<bench::MatrixFile> files = bench::listMatrixFiles(input, &leftOut);
      if (files.empty() && leftOut.size() == before) {
        fail("--inputs '" + input + "': no .mtx, .smtx or .sft file in this folder",
             ErrorCode::kIoError);
      }
      for (const bench::MatrixFile& f : files) add(f.path, true);
    } else if (fs::exists(input, ec)) {
      add(input, false);
    } else {
      fail("--inputs '" + input + "': no such file or directory", ErrorCode::kIoError);
    }
  }
  const std::vector<std::string> labels = bench::uniqueLabels(paths);
  std::vector<Matrix> matrices;
  for (size_t i = 0; i < paths.size(); ++i) {
    try {
      matrices.push_back(bench::loadMatrix(paths[i], labels[i]));
    } catch (const std::exception& e) {
      if (!fromFolder[i]) fail("--inputs: " + naming(paths[i], e.what()), ErrorCode::kParseError);
      leftOut.emplace_back(paths[i], e.what());
    }
  }
  if (matrices.empty()) {
    fail("--inputs: no matrix to benchmark (" + std::to_string(leftOut.size()) +
         " files left out, e.g. " + leftOut.front().first + ": " + leftOut.front().second + ")");
  }
  return matrices;
}

std::string caseKey(const KernelSpec& k) {
  return k.name() + "@" + k.format;
}

std::map<std::string, Kernel> compileKernels(const std::vector<KernelSpec>& kernels) {
  std::map<std::string, Kernel> compiled;
  for (const KernelSpec& k : kernels) {
    try {
      compiled.emplace(caseKey(k), Kernel::compile(k.text(), k.options()));
    } catch (const Error& e) {
      throw Error(e.code(), "kernel " + k.name() + " (" + k.text() + ") in format " + k.format +
                                " does not compile: " + e.what());
    }
  }
  return compiled;
}

/// A temporary folder removed with everything in it when the run ends, however it ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sparseflow-benchmark.XXXXXX").string();
    if (!::mkdtemp(pattern.data())) fail("cannot make a temporary folder", ErrorCode::kIoError);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Runs the Python peers of the plan over every matrix at once (one interpreter start), with a
/// progress bar fed by the script's DONE lines. Fills `peers` with names or why they cannot run.
bench::PeerRun runPython(const Plan& plan, const std::vector<Matrix>& matrices,
                         const std::vector<bench::Operands>& operands,
                         std::vector<PeerInfo>& peers) {
  bench::PythonRun run{plan.python, plan.peerScript, {},
                       plan.repeat, plan.threads,    plan.peersGiven};
  for (const PeerInfo& p : peers) {
    if (isPythonPeer(p.peer)) run.libraries.push_back(p.peer);
  }
  if (run.libraries.empty()) return {};
  TempDir work;
  std::vector<bench::PythonInput> inputs;
  int64_t steps = 0;
  for (size_t i = 0; i < matrices.size(); ++i) {
    bench::PythonInput input{work.path() + "/" + std::to_string(i), {}};
    for (const KernelSpec& k : plan.kernels) {  // the peers have no format: each kernel once
      const std::string id = k.id();
      if (bench::skipReason(k, matrices[i]).empty() &&
          std::find(input.kernels.begin(), input.kernels.end(), id) == input.kernels.end()) {
        input.kernels.push_back(id);
      }
    }
    steps += static_cast<int64_t>(input.kernels.size());
    if (!input.kernels.empty()) bench::writePeerInputs(input.dir, matrices[i], operands[i]);
    inputs.push_back(input);  // even with no kernel: the script numbers the folders it is given
  }
  std::string names;
  for (const std::string& lib : run.libraries) names += (names.empty() ? "" : ", ") + lib;
  Progress bar("benchmark " + names, steps);
  bench::PeerRunOptions options;
  options.captureStderr = true;
  options.onDone = [&](const std::string& what) {  // "<input>/<kernel id>"
    const size_t input = std::strtoul(what.c_str(), nullptr, 10);
    const size_t slash = what.find('/');
    bar.step(input < matrices.size() && slash != std::string::npos
                 ? matrices[input].label + " " + what.substr(slash + 1)
                 : what);
  };
  bench::PeerRun result;
  try {
    if (run.script.empty()) fail(plan.peerScriptProblem, ErrorCode::kIoError);
    result = bench::runPythonPeers(run, inputs, options);
  } catch (const std::exception& e) {
    bar.clear();
    const std::string why = std::string("the Python peers did not run: ") + e.what();
    if (plan.peersGiven) {
      fail("--peers " + names + ": " + why +
           "\n  (--python PATH picks the interpreter; leave a peer out of --peers to run without "
           "it)");
    }
    for (PeerInfo& p : peers) {
      if (isPythonPeer(p.peer)) p.unavailable = why;
    }
    return {};
  }
  for (PeerInfo& p : peers) {
    if (!isPythonPeer(p.peer)) continue;
    const auto missing = result.unavailable.find(p.peer);
    if (missing != result.unavailable.end()) p.unavailable = "not installed: " + missing->second;
    const auto at = result.name.find(p.peer + " ");
    if (at != std::string::npos) p.name = result.name.substr(at, result.name.find(';', at) - at);
  }
  return result;
}

PeerCell peerCell(const bench::PeerTime& t, const CaseResult& ours) {
  PeerCell cell;
  cell.peer = t.peer;
  cell.how = t.how;
  cell.detail = t.problem;
  if (t.problem.empty()) {
    cell.status = "ok";
    cell.seconds = t.seconds;
    cell.speedup = t.seconds / ours.seconds;
  } else if (t.wrong) {
    cell.status = "wrong";
  } else if (t.name.empty() || t.problem.rfind("n/a: ", 0) == 0) {
    cell.status = "n/a";  // the peer declined the case: no such operation, or too large
    if (t.problem.rfind("n/a: ", 0) == 0) cell.detail = t.problem.substr(5);
  } else {
    cell.status = "failed";
  }
  return cell;
}

/// Puts peer `j`'s time into the case; the first time that names the library names the peer.
void setPeer(CaseResult& c, size_t j, const bench::PeerTime& t, PeerInfo& info) {
  c.peers[j] = peerCell(t, c);
  if (info.name.empty() && !t.name.empty() && t.name != info.peer) info.name = t.name;
}

struct CaseContext {
  const Plan& plan;
  const bench::MachineLimits& limits;
  const std::map<std::string, Kernel>& kernels;
  const bench::PeerRun& python;
  std::vector<PeerInfo>& peers;
};

/// OpenBLAS's worker threads spin for about 0.1 s after each call and would share the cores with
/// whatever is timed next, so the dense peer is timed after every other measurement.
constexpr const char* kTimedLast = "dense";

/// Ours checked and timed, then every peer but kTimedLast; `check` keeps the reference's sums.
CaseResult runCase(const CaseContext& ctx, size_t input, const Matrix& m,
                   const bench::Operands& ops, const KernelSpec& k, bench::CaseCheck& check) {
  CaseResult c;
  c.input = m.label;
  c.path = m.path;
  c.kernel = k.name();
  c.format = k.format;
  c.rows = m.rows;
  c.cols = m.cols;
  c.nnz = m.nnz;
  for (const PeerInfo& p : ctx.peers) {
    PeerCell cell;
    cell.peer = p.peer;
    if (!p.unavailable.empty()) {
      cell.status = "unavailable";
      cell.detail = p.unavailable;
    }
    c.peers.push_back(cell);
  }
  if (std::string why = bench::skipReason(k, m); !why.empty()) {
    c.status = "skipped";
    c.detail = why;
    return c;
  }
  std::optional<bench::BoundCase> bound;
  try {
    bound.emplace(k, m, ops);
  } catch (const std::exception& e) {
    c.status = "skipped";
    c.detail = "cannot convert to " + k.format + ": " + e.what();
    return c;
  }
  const Kernel& kernel = ctx.kernels.at(caseKey(k));
  // Correctness first: a benchmark of a wrong kernel is worthless.
  check = bench::checkKernel(kernel, *bound, k, m, ops);
  if (!check.wrong.empty()) {
    c.status = check.wrong.rfind("run failed: ", 0) == 0 ? "failed" : "wrong";
    c.detail = check.wrong;
    return c;
  }
  omp_set_num_threads(ctx.plan.threads);
  c.seconds = bench::timeKernel(kernel, *bound, ctx.plan.repeat);
  const bench::Work work = bench::workOf(k, m);
  c.flops = work.flops;
  c.bytes = work.bytes;
  c.bandwidthFraction = work.bytes / c.seconds / ctx.limits.readBandwidth(ctx.plan.threads);

  const bench::SparseProblem problem = bench::sparseProblem(k, m, ops, ctx.plan.threads);
  for (size_t j = 0; j < ctx.peers.size(); ++j) {
    PeerInfo& info = ctx.peers[j];
    if (!info.unavailable.empty() || info.peer == kTimedLast) continue;
    const bench::PeerTime t =
        isPythonPeer(info.peer) ? bench::pythonPeerTime(ctx.python, info.peer,
                                                        bench::pythonCase(input, info.peer, k.id()),
                                                        check, ctx.plan.threads)
                                : bench::measurePeer(info.peer, problem, check, ctx.plan.repeat);
    setPeer(c, j, t, info);
  }
  return c;
}

}  // namespace

const std::vector<std::string>& knownPeers() {
  static const std::vector<std::string> peers = {"dense", "numpy", "scipy",
                                                 "torch", "eigen", "graphblas"};
  return peers;
}

int Results::failures() const {
  return static_cast<int>(std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) {
    return c.status == "wrong" || c.status == "failed";
  }));
}

Results runBenchmark(const Plan& plan) {
  Results r;
  r.plan = plan;
  std::ifstream("/proc/loadavg") >> r.loadAverage;
  const std::vector<Matrix> matrices = loadInputs(plan.inputs, r.leftOut);
  for (const Matrix& m : matrices) r.inputs.push_back({m.path, m.label, m.rows, m.cols, m.nnz});
  for (const std::string& peer : plan.peers) {
    PeerInfo info{peer, "", isPythonPeer(peer) ? "" : bench::peerNotBuilt(peer)};
    if (plan.peersGiven && !info.unavailable.empty())
      fail("--peers " + peer + ": " + info.unavailable);
    r.peers.push_back(info);
  }
  const std::map<std::string, Kernel> kernels = compileKernels(plan.kernels);

  omp_set_num_threads(plan.threads);
  if (plan.limitsPath.empty()) {
    std::cerr << "measuring this machine's streaming bandwidth and FMA peak on " << plan.threads
              << (plan.threads == 1 ? " thread" : " threads")
              << " (--limits FILE reuses saved ones)\n";
    bench::LimitsOptions options;
    options.bandwidthBytes = int64_t{512} << 20;
    r.limits = bench::measureMachineLimits(options);
    r.limitsSource = "measured";
  } else {
    try {
      r.limits = bench::loadLimits(plan.limitsPath);
    } catch (const std::exception& e) {
      fail(std::string("--limits: ") + e.what(), ErrorCode::kIoError);
    }
    r.limitsSource = plan.limitsPath;
  }

  std::vector<bench::Operands> operands;
  for (const Matrix& m : matrices) operands.push_back(bench::makeOperands(m, plan.kernels));
  const bench::PeerRun python = runPython(plan, matrices, operands, r.peers);

  bench::warmUpThreads(plan.threads);
  std::vector<bench::CaseCheck> checks(matrices.size() * plan.kernels.size());
  {
    Progress bar("benchmark", static_cast<int64_t>(checks.size()));
    const CaseContext ctx{plan, r.limits, kernels, python, r.peers};
    for (size_t i = 0; i < matrices.size(); ++i) {
      for (const KernelSpec& k : plan.kernels) {
        bar.step(matrices[i].label + " " + k.name() + " " + k.format);
        r.cases.push_back(runCase(ctx, i, matrices[i], operands[i], k, checks[r.cases.size()]));
      }
    }
  }
  const auto last = std::find_if(r.peers.begin(), r.peers.end(),
                                 [](const PeerInfo& p) { return p.peer == kTimedLast; });
  if (last == r.peers.end() || !last->unavailable.empty()) return r;
  const auto j = static_cast<size_t>(last - r.peers.begin());
  Progress bar(std::string("benchmark ") + kTimedLast, static_cast<int64_t>(r.cases.size()));
  for (size_t n = 0; n < r.cases.size(); ++n) {
    CaseResult& c = r.cases[n];
    const size_t i = n / plan.kernels.size();
    const KernelSpec& k = plan.kernels[n % plan.kernels.size()];
    bar.step(c.input + " " + c.kernel);
    if (c.status != "ok") continue;
    setPeer(c, j,
            bench::measurePeer(kTimedLast,
                               bench::sparseProblem(k, matrices[i], operands[i], plan.threads),
                               checks[n], plan.repeat),
            *last);
  }
  return r;
}

}  // namespace sparseflow::tools::benchmark
