// The tuning database's hit path (issue 15: at most 1 ms): a database of N decisions for other
// inputs plus the one asked for, then the median of 51 `tuneKernel` calls (after a warm-up call)
// that find it (the input fingerprint, the lines of its inputs read through the process's index of
// the file, one JSON parse), and the process's first lookup (which indexes the file), against one
// SpMM call of the chosen kernel on the same matrix (64 dense columns, 2 threads). Usage:
// bench_tune_database [RECORDS] (default 1000) [MATRIX...] (default: the matrices below, under
// data/).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/driver.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"
#include "sparseflow/tune.h"
#include "tune/database.h"

int main(int argc, char** argv) {
  using namespace sparseflow;
  int records = 1000;
  std::vector<std::string> files;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (k == 1 && arg.find_first_not_of("0123456789") == std::string::npos) {
      records = std::stoi(arg);
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    const std::string d = SPARSEFLOW_DATA_DIR;
    files = {d + "/dlmc/transformer/magnitude_pruning/0.5/"
                 "body_encoder_layer_0_ffn_conv1_fully_connected.smtx",
             d + "/suitesparse/ParU/Matrix/arrow.mtx",
             d + "/suitesparse/LAGraph/data/bcsstk13.mtx"};
  }
  const std::filesystem::path db =
      std::filesystem::temp_directory_path() / "sparseflow_bench_tune_database.jsonl";
  std::printf(
      "| matrix | nnz | records | first hit in the process (ms) | hit (ms) | SpMM 64 cols (ms) | "
      "hit / SpMM |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const std::string& file : files) {
    ReadOptions options;
    options.format = "csr";
    options.dtype = DType::kF32;
    options.fill = ValueFill::kRandom;
    const Tensor a = read(file, options);
    std::vector<double> bv(static_cast<size_t>(a.shape()[1] * 64));
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : bv) v = u(rng);
    const Tensor b = fromDense({a.shape()[1], 64}, bv.data(), Format::parse("dense", 2));
    const std::map<std::string, const Tensor*> inputs{{"A", &a}, {"B", &b}};
    const std::string kernel = "C(i,j) = A(i,k) * B(k,j)";
    // N decisions for other inputs (another stored count each), then this one's.
    std::filesystem::remove(db);
    const tune::TuningDatabase database(db);
    tune::TuningRecord r;
    r.kernel = tune::decisionKey(kernel, {}, {{"A", &a}});
    r.machine = tune::machineFingerprint();
    r.chosen.formats = {{"A", "csr"}};
    r.chosen.schedule = "split(i, i0, i1, 16); parallel(i0)";
    r.chosen.handTuned = false;
    for (int n = 0; n < records; ++n) {
      r.inputs = "A:f32:csr:4096x4096:stored=" + std::to_string(100000 + n) +
                 ":h=0123456789abcdef; B:f32:dense:4096x64";
      database.add(r);
    }
    r.inputs = tune::inputFingerprint(inputs);
    database.add(r);
    TuneOptions t;
    t.database = db.string();
    TuneResult found;
    // The process's first lookup in this file reads and indexes all of it; later ones read only
    // the lines of their inputs.
    const auto t0 = std::chrono::steady_clock::now();
    found = tuneKernel(kernel, inputs, {}, t);
    const double first =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double hit =
        1e3 * bench::timeMedian([&] { found = tuneKernel(kernel, inputs, {}, t); }, {.reps = 51});
    if (!found.fromDatabase) {
      std::fprintf(stderr, "%s: the decision was not found\n", file.c_str());
      return 1;
    }
    KernelOptions chosen;
    chosen.formats = found.formats;
    chosen.schedule = Schedule::parse(found.schedule);
    chosen.handTuned = found.handTuned;
    const Kernel k = Kernel::compile(kernel, chosen);
    Tensor out = k.run(inputs);
    const double spmm = 1e3 * bench::timeMedian([&] { k.run(inputs, out); }, {.reps = 15});
    const std::string name = std::filesystem::path(file).filename().string();
    std::printf("| %s | %lld | %d | %.4f | %.4f | %.4f | %.1f%% |\n", name.c_str(),
                static_cast<long long>(a.numStored()), records + 1, first, hit, spmm,
                100 * hit / spmm);
  }
  std::filesystem::remove(db);
  return 0;
}
