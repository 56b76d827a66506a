// `sparseflow benchmark` (also `sparseflow-benchmark`): compiled kernels over matrix files against
// dense and sparse peers, as a table on stdout and as --json, --csv and a --plot of the speed-ups
// (docs/tools.md). Validates everything it was given before it measures anything.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "benchmark/benchmark_output.h"
#include "benchmark/benchmark_run.h"
#include "common/peer.h"
#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/format.h"
#include "sparseflow/quick_timing.h"

namespace sparseflow::tools {
namespace {

namespace fs = std::filesystem;
using benchmark::fail;
using benchmark::Plan;

struct BenchmarkArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> kernels = {"spmv", "spmm:32", "spmm:128", "sddmm:32", "spgemm"};
  std::vector<std::string> peers;
  std::vector<std::string> formats;
  int repeat = 5, threads = 0;
  std::string json, csv, plot, limits, saveLimits, python;
};

/// share/sparseflow beside the binary's bin/ folder, in the build tree and after install; empty
/// (and why in `problem`) when it is not there.
std::string findScript(const std::string& relative, std::string* problem) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path path = exe.parent_path().parent_path() / "share" / "sparseflow" / relative;
  if (!ec && fs::is_regular_file(path)) return path.string();
  *problem = "cannot find " + path.string() +
             " (sparseflow's scripts belong in share/sparseflow beside its bin/ folder)";
  return "";
}

std::string script(const std::string& relative) {
  std::string problem;
  std::string path = findScript(relative, &problem);
  if (path.empty()) fail(problem, ErrorCode::kIoError);
  return path;
}

/// --python, else $SPARSEFLOW_PYTHON, else the project's .venv, else python3 on PATH.
std::string python(const std::string& given) {
  if (!given.empty()) {
    if (given.find('/') != std::string::npos && ::access(given.c_str(), X_OK) != 0) {
      fail("--python '" + given + "': no such program");
    }
    return given;
  }
  if (const char* env = std::getenv("SPARSEFLOW_PYTHON"); env && *env) return env;
  const std::string venv = SPARSEFLOW_SOURCE_DIR "/.venv/bin/python";
  return ::access(venv.c_str(), X_OK) == 0 ? venv : "python3";
}

Plan makePlan(const BenchmarkArgs& args) {
  Plan plan;
  if (args.inputs.empty()) fail("--inputs: give at least one matrix file or folder");
  plan.inputs = args.inputs;
  if (args.repeat < 1 || args.repeat > 1000) {
    fail("--repeat " + std::to_string(args.repeat) + ": expected 1 to 1000 timed runs");
  }
  plan.repeat = quickTiming() ? 1 : args.repeat;
  plan.threads = args.threads == 0 ? omp_get_max_threads() : args.threads;
  if (plan.threads < 1 || plan.threads > 1024) {
    fail("--threads " + std::to_string(args.threads) + ": expected 1 to 1024");
  }
  const std::vector<std::string> formats =
      args.formats.empty() ? std::vector<std::string>{"csr"} : args.formats;
  for (const std::string& f : formats) {
    try {
      Format::parse(f, 2);
    } catch (const Error& e) {
      fail("--format '" + f + "': " + e.what());
    }
  }
  if (args.kernels.empty()) fail("--kernels: give at least one of spmv, spmm:N, sddmm:K, spgemm");
  for (const std::string& f : formats) {
    for (const std::string& name : args.kernels) {
      try {
        plan.kernels.push_back(bench::parseKernelSpec(name, f));
      } catch (const std::invalid_argument& e) {
        fail(std::string("--kernels: ") + e.what());
      }
    }
  }
  plan.peersGiven = !args.peers.empty();
  const auto& known = benchmark::knownPeers();
  if (plan.peersGiven && !(args.peers.size() == 1 && args.peers[0] == "none")) {
    std::set<std::string> given(args.peers.begin(), args.peers.end());
    for (const std::string& p : args.peers) {
      if (std::find(known.begin(), known.end(), p) == known.end()) {
        fail("--peers: unknown peer '" + p +
             "' (expected dense, numpy, scipy, torch, eigen, graphblas or none)");
      }
    }
    for (const std::string& p : known) {
      if (given.count(p)) plan.peers.push_back(p);
    }
  } else if (!plan.peersGiven) {
    plan.peers = known;
  }
  plan.python = python(args.python);
  plan.peerScript = findScript("peers/sparse_peers.py", &plan.peerScriptProblem);
  plan.limitsPath = args.limits;
  if (!args.limits.empty() && !fs::is_regular_file(args.limits)) {
    fail("--limits '" + args.limits + "': no such file", ErrorCode::kIoError);
  }
  return plan;
}

/// The outputs: each a distinct file in a folder that exists; --plot needs matplotlib.
void checkOutputs(const BenchmarkArgs& args, const Plan& plan) {
  std::set<std::string> seen;
  for (const auto& [option, path] : {std::pair<std::string, std::string>{"--json", args.json},
                                     {"--csv", args.csv},
                                     {"--plot", args.plot},
                                     {"--save-limits", args.saveLimits}}) {
    if (path.empty()) continue;
    benchmark::checkOutputPath(option, path);
    if (!seen.insert(fs::weakly_canonical(path).string()).second) {
      fail(option + " '" + path + "': another option writes the same file");
    }
  }
  if (args.plot.empty()) return;
  script("plot_speedups.py");
  bench::PeerRunOptions quiet;
  quiet.captureStderr = true;
  try {
    bench::runPeer({plan.python, "-c", "import matplotlib"}, quiet);
  } catch (const std::exception& e) {
    fail(
        "--plot needs Python with matplotlib (Debian: apt-get install python3-matplotlib; "
        "--python PATH picks the interpreter): " +
            std::string(e.what()),
        ErrorCode::kNotSupported);
  }
}

int runBenchmarkCommand(const BenchmarkArgs& args) {
  const Plan plan = makePlan(args);
  checkOutputs(args, plan);
  const benchmark::Results results = benchmark::runBenchmark(plan);
  benchmark::printTable(std::cout, results);
  std::cout.flush();

  benchmark::StagedOutputs outputs;
  const std::string json = benchmark::toJson(results);
  if (!args.json.empty()) outputs.write(args.json, json);
  if (!args.csv.empty()) outputs.write(args.csv, benchmark::toCsv(results));
  if (!args.saveLimits.empty()) bench::saveLimits(outputs.stage(args.saveLimits), results.limits);
  if (!args.plot.empty()) {
    const std::string png = outputs.stage(args.plot);
    benchmark::StagedOutputs scratch;  // removes the plot's input however it ends
    const std::string data = scratch.write(args.plot + ".json", json);
    bench::PeerRunOptions quiet;
    quiet.captureStderr = true;
    try {
      bench::runPeer({plan.python, script("plot_speedups.py"), data, png}, quiet);
    } catch (const std::exception& e) {
      fail("--plot '" + args.plot + "': " + e.what(), ErrorCode::kIoError);
    }
  }
  outputs.commit();
  for (const std::string& path : {args.json, args.csv, args.plot, args.saveLimits}) {
    if (!path.empty()) std::cerr << "wrote " << path << "\n";
  }
  if (const int failures = results.failures()) {
    fail(std::to_string(failures) + (failures == 1 ? " case" : " cases") +
             " of sparseflow disagreed with the float64 reference or failed (rows marked WRONG "
             "or FAILED; the outputs say so too)",
         ErrorCode::kInternal);
  }
  return 0;
}

}  // namespace

void addBenchmarkCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "benchmark", "Time compiled kernels on matrix files against dense and sparse peers");
  auto args = std::make_shared<BenchmarkArgs>();
  cmd->add_option("--inputs,inputs", args->inputs,
                  "matrix files (.mtx, .smtx, .sft, ...) and folders searched for .mtx, .smtx "
                  "and .sft files")
      ->delimiter(',');
  cmd->add_option("--kernels", args->kernels, "spmv, spmm:N, sddmm:K, spgemm")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--peers", args->peers,
                  "dense (OpenBLAS), numpy (dense), scipy, torch, eigen, graphblas, or none "
                  "(default: every one available)")
      ->delimiter(',');
  cmd->add_option(
      "--format", args->formats,
      "format of the sparse operand, repeatable: csr (default), csc, bsr:4x4, ell, ...");
  cmd->add_option("--repeat", args->repeat, "timed runs per case; the median counts")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "threads (default: OMP_NUM_THREADS or every core)");
  cmd->add_option("--json", args->json, "write every result as JSON to FILE");
  cmd->add_option("--csv", args->csv, "write one line per case as CSV to FILE");
  cmd->add_option("--plot", args->plot, "draw the speed-ups per input as a PNG (matplotlib)");
  cmd->add_option("--limits", args->limits,
                  "read the machine's bandwidth and FMA peak from FILE instead of measuring them");
  cmd->add_option("--save-limits", args->saveLimits, "write the limits used to FILE");
  cmd->add_option("--python", args->python,
                  "Python for numpy, scipy, torch and the plot (default: $SPARSEFLOW_PYTHON, the "
                  "project's .venv, python3)");
  cmd->callback([&action, args] { action = [args] { return runBenchmarkCommand(*args); }; });
}

}  // namespace sparseflow::tools
