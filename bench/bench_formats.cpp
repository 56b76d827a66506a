// Benchmarks COO→CSR builds, CSR→CSC conversions and Matrix Market reads against scipy on the same
// inputs in the same run, and prints each case's speedup and fraction of the machine's limit; the
// direct CSR↔BSR, CSR→ELL and CSR→hyb paths also against convert()'s general path (direct/general),
// and the f64 -> f32 value cast against numpy's astype.
//
//   build-bench/bin/bench_formats --python=.venv/bin/python [--limits=FILE] [--rows=FILE]
//       [--real-mtx=PATH] [--dim=N] [--nnz=N] [--mtx-mb=MB] [--reps=N] [--benchmark_filter=RE]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/driver.h"
#include "common/gbench_medians.h"
#include "common/machine_limits.h"
#include "common/peer.h"
#include "common/report.h"
#include "formats_inputs.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"

namespace sparseflow::bench {
namespace {

struct Options {
  std::string python;  ///< the peer's interpreter; empty: no peer
  std::string peerScript = SPARSEFLOW_BENCH_DIR "/peers/scipy_formats.py";
  std::string limitsPath;  ///< from bench_limits; empty: measure here
  std::string rowsPath;    ///< append the result rows here (for bench_report)
  std::string dataDir;     ///< inputs go here; empty: a temporary folder removed at exit
  std::string realMtx = SPARSEFLOW_DATA_DIR "/suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx";
  int64_t dim = 1'000'000;
  int64_t nnz = 10'000'000;
  int64_t mtxMegabytes = 100;
  int reps = 5;
  std::vector<std::string> given;  ///< our flags as typed, for the reproducers
};

/// Takes our --key=value flags out of argv and leaves the rest to Google Benchmark.
Options parseOptions(int& argc, char** argv) {
  Options o;
  using Setter = std::function<void(const std::string&)>;
  const std::map<std::string, Setter> flags = {
      {"--python", [&](const std::string& v) { o.python = v; }},
      {"--peer-script", [&](const std::string& v) { o.peerScript = v; }},
      {"--limits", [&](const std::string& v) { o.limitsPath = v; }},
      {"--rows", [&](const std::string& v) { o.rowsPath = v; }},
      {"--data-dir", [&](const std::string& v) { o.dataDir = v; }},
      {"--real-mtx", [&](const std::string& v) { o.realMtx = v; }},
      {"--dim", [&](const std::string& v) { o.dim = std::stoll(v); }},
      {"--nnz", [&](const std::string& v) { o.nnz = std::stoll(v); }},
      {"--mtx-mb", [&](const std::string& v) { o.mtxMegabytes = std::stoll(v); }},
      {"--reps", [&](const std::string& v) { o.reps = std::stoi(v); }},
  };
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    auto flag = flags.find(key);
    if (flag == flags.end()) {
      argv[kept++] = argv[i];
      continue;
    }
    flag->second(eq == std::string::npos ? "" : arg.substr(eq + 1));
    // Where the limits, rows and inputs go changes no result; the other flags do.
    if (key != "--limits" && key != "--rows" && key != "--data-dir") o.given.push_back(arg);
  }
  argc = kept;
  return o;
}

/// What a timed call leaves behind: a count to check against the peer, and the result, freed
/// outside the timed region (as Python frees the peer's result after its clock stops).
struct Outcome {
  int64_t count = 0;
  std::shared_ptr<const void> keep;
};

struct Case {
  std::string name;      ///< "coo_to_csr/rand_1000000x1000000_10000000/threads:2"
  std::string peerCase;  ///< the name without "/threads:N", as the peer knows it
  std::string peerArg;   ///< the peer's input: an .npy prefix or an .mtx path
  int threads = 1;
  double bytes = 0;      ///< traffic of the floor: bytes read plus bytes written, at least once
  double fileBytes = 0;  ///< for reads: the file size (the note gives MB/s)
  std::function<Outcome()> run;
  int64_t count = -1;      ///< from the last timed call
  bool hasPeer = true;     ///< false: the peer has no such case
  std::string peerCall;    ///< what the peer script times, when it is not scipy itself
  int reps = 0;            ///< repetitions when not the run's (the slow general-path cases)
  std::string comparedTo;  ///< the general-path case whose time the note compares with
};

int64_t fileSize(const std::string& path) {
  return static_cast<int64_t>(std::filesystem::file_size(path));
}

/// A data set the conversions run on: its triplets (for the peer), our Coo and our CSR.
struct MatrixInput {
  std::string label;
  std::string npyPrefix;
  int64_t rows = 0, cols = 0, entries = 0;
  std::shared_ptr<Coo> coo;
  std::shared_ptr<Tensor> csr;
};

MatrixInput prepareMatrix(const std::string& label, const Triplets& t, const std::string& dir) {
  MatrixInput m;
  m.label = label;
  m.npyPrefix = dir + "/" + label;
  m.rows = t.rows;
  m.cols = t.cols;
  m.entries = t.size();
  writeTripletsNpy(m.npyPrefix, t);
  m.coo = std::make_shared<Coo>(cooFromTriplets(t));
  m.csr = std::make_shared<Tensor>(fromCoo(*m.coo, Format::parse("csr", 2)));
  return m;
}

void addConversionCases(const MatrixInput& m, const std::vector<int>& threadCounts,
                        std::vector<Case>& cases) {
  const auto n = static_cast<double>(m.entries);
  const double csrBytes = n * 8 + static_cast<double>(m.rows + 1) * 4;
  const double cscBytes = n * 8 + static_cast<double>(m.cols + 1) * 4;
  for (int threads : threadCounts) {
    Case build;
    build.peerCase = "coo_to_csr/" + m.label;
    build.name = build.peerCase + "/threads:" + std::to_string(threads);
    build.peerArg = m.npyPrefix;
    build.threads = threads;
    build.bytes = n * 24 + csrBytes;  // Coo: int64 coordinate pairs and double values
    build.run = [coo = m.coo] {
      auto t = std::make_shared<Tensor>(fromCoo(*coo, Format::parse("csr", 2)));
      return Outcome{t->numStored(), t};
    };
    cases.push_back(build);

    Case transpose;
    transpose.peerCase = "csr_to_csc/" + m.label;
    transpose.name = transpose.peerCase + "/threads:" + std::to_string(threads);
    transpose.peerArg = m.npyPrefix;
    transpose.threads = threads;
    transpose.bytes = csrBytes + cscBytes;
    transpose.run = [csr = m.csr] {
      auto t = std::make_shared<Tensor>(convert(*csr, Format::parse("csc", 2)));
      return Outcome{t->numStored(), t};
    };
    cases.push_back(transpose);
  }
}

/// One conversion of `m.csr` (or of `source` when given) to `target`, by the direct path and by the
/// general path through coordinates (ConvertOptions::forceGeneral), for each thread count.
void addDirectCase(const MatrixInput& m, const std::string& kind, const std::string& target,
                   std::shared_ptr<Tensor> source, bool hasPeer,
                   const std::vector<int>& threadCounts, std::vector<Case>& cases) {
  const Format format = Format::parse(target, 2);
  // Bytes of the floor: the source read and the result written once.
  const double bytes = static_cast<double>(source->storageBytes()) +
                       static_cast<double>(convert(*source, format).storageBytes());
  for (int threads : threadCounts) {
    Case general;
    general.peerCase = kind + "_general/" + m.label;
    general.name = general.peerCase + "/threads:" + std::to_string(threads);
    general.threads = threads;
    general.bytes = bytes;
    general.hasPeer = false;
    general.reps = 3;
    general.run = [source, format] {
      ConvertOptions options;
      options.forceGeneral = true;
      auto t = std::make_shared<Tensor>(convert(*source, format, options));
      return Outcome{t->numStored(), t};
    };
    Case direct;
    direct.peerCase = kind + "/" + m.label;
    direct.name = direct.peerCase + "/threads:" + std::to_string(threads);
    direct.peerArg = m.npyPrefix;
    direct.threads = threads;
    direct.bytes = bytes;
    direct.hasPeer = hasPeer;
    direct.comparedTo = general.name;
    direct.run = [source, format] {
      auto t = std::make_shared<Tensor>(convert(*source, format));
      return Outcome{t->numStored(), t};
    };
    cases.push_back(direct);
    cases.push_back(general);
  }
}

/// The direct paths out of CSR (to bsr:4x4, ell, hyb) and back from bsr:4x4. ELL is left out for a
/// matrix whose longest row would pad it to more than 8 times the CSR.
void addDirectCases(const MatrixInput& m, const std::vector<int>& threadCounts,
                    std::vector<Case>& cases) {
  auto bsr = std::make_shared<Tensor>(convert(*m.csr, Format::parse("bsr:4x4", 2)));
  // scipy's tobsr takes only shapes that the block divides.
  const bool scipyTakes = m.rows % 4 == 0 && m.cols % 4 == 0;
  addDirectCase(m, "csr_to_bsr4x4", "bsr:4x4", m.csr, scipyTakes, threadCounts, cases);
  addDirectCase(m, "bsr4x4_to_csr", "csr", bsr, false, threadCounts, cases);
  const auto* pos = m.csr->level(1).pos.as<int32_t>();
  int64_t widest = 0;
  for (int64_t r = 0; r < m.rows; ++r) widest = std::max<int64_t>(widest, pos[r + 1] - pos[r]);
  if (static_cast<double>(m.rows) * static_cast<double>(widest) <=
      8.0 * static_cast<double>(m.entries)) {
    addDirectCase(m, "csr_to_ell", "ell", m.csr, false, threadCounts, cases);
  }
  addDirectCase(m, "csr_to_hyb", "hyb", m.csr, false, threadCounts, cases);
}

void addReadCases(const std::string& label, const std::string& path, int64_t rows, int64_t entries,
                  const std::vector<int>& threadCounts, std::vector<Case>& cases) {
  const auto size = static_cast<double>(fileSize(path));
  const auto n = static_cast<double>(entries);
  Case coo;  // parsing alone runs on one thread
  coo.peerCase = "mm_read_coo/" + label;
  coo.name = coo.peerCase + "/threads:1";
  coo.peerArg = path;
  coo.threads = 1;
  coo.bytes = size + n * 24;  // the file, then the Coo: int64 coordinate pairs, double values
  coo.fileBytes = size;
  coo.run = [path] {
    auto c = std::make_shared<Coo>(readCoo(path));
    return Outcome{c->numEntries(), c};
  };
  cases.push_back(coo);
  for (int threads : threadCounts) {
    Case csr;
    csr.peerCase = "mm_read_csr/" + label;
    csr.name = csr.peerCase + "/threads:" + std::to_string(threads);
    csr.peerArg = path;
    csr.threads = threads;
    csr.bytes = size + n * 8 + static_cast<double>(rows + 1) * 4;  // the file, then the CSR
    csr.fileBytes = size;
    csr.run = [path] {
      auto t = std::make_shared<Tensor>(read(path));
      return Outcome{t->numStored(), t};
    };
    cases.push_back(csr);
  }
}

/// A value type change of a dense array of `n` doubles to f32 (convert()'s cast pass, allocation
/// included), against numpy's astype on as many values.
void addCastCases(int64_t n, const std::vector<int>& threadCounts, std::vector<Case>& cases) {
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = 0.37 * static_cast<double>(i);
  auto dense = std::make_shared<Tensor>(
      fromDense({n}, values.data(), Format::parse("dense", 1), DType::kF64));
  for (int threads : threadCounts) {
    Case cast;
    cast.peerCase = "cast_f64_to_f32/dense_" + std::to_string(n);
    cast.name = cast.peerCase + "/threads:" + std::to_string(threads);
    cast.peerArg = std::to_string(n);
    cast.peerCall = "numpy astype";
    cast.threads = threads;
    cast.bytes = static_cast<double>(n) * 12;  // 8 read, 4 written
    cast.run = [dense] {
      ConvertOptions options;
      options.changeDType = true;
      options.dtype = DType::kF32;
      auto t = std::make_shared<Tensor>(convert(*dense, dense->format(), options));
      return Outcome{t->numStored(), t};
    };
    cases.push_back(cast);
  }
}

void registerCase(Case& c, int reps) {
  benchmark::RegisterBenchmark(c.name.c_str(),
                               [&c](benchmark::State& state) {
                                 omp_set_num_threads(c.threads);
                                 for (auto _ : state) {
                                   Outcome out;
                                   try {
                                     out = c.run();
                                   } catch (const std::exception& e) {
                                     state.SkipWithError(e.what());
                                     break;
                                   }
                                   state.PauseTiming();
                                   c.count = out.count;
                                   out.keep.reset();
                                   state.ResumeTiming();
                                 }
                               })
      ->MinTime(0.05)  // small cases repeat within a repetition; large ones run once
      ->Repetitions(c.reps > 0 ? std::min(c.reps, reps) : reps)
      ->ReportAggregatesOnly(true)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

std::string reproducer(const std::string& program, const Options& o, const Case& c) {
  std::string line = "OMP_NUM_THREADS=" + std::to_string(c.threads) + " " + shellQuote(program);
  for (const std::string& flag : o.given) line += " " + shellQuote(flag);
  // Google Benchmark appends "/min_time:.../repeats:N" to the name the filter sees.
  return line + " " + shellQuote("--benchmark_filter=^" + c.name + "/");
}

int run(int argc, char** argv) {
  Options o = parseOptions(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  MachineLimits limits = o.limitsPath.empty() ? measureMachineLimits() : loadLimits(o.limitsPath);
  std::cerr << "limits: " << limits.toString() << "\n";

  bool temporary = o.dataDir.empty();
  if (temporary) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "bench_formats.XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder");
    o.dataDir = pattern;
  }
  std::filesystem::create_directories(o.dataDir);
  std::vector<int> threadCounts = {1};
  if (limits.threads > 1) threadCounts.push_back(limits.threads);

  // Inputs: random triplets, the real matrix's triplets, the generated and the real .mtx file.
  std::cerr << "preparing inputs in " << o.dataDir << "\n";
  std::vector<Case> cases;
  const std::string randLabel =
      "rand_" + std::to_string(o.dim) + "x" + std::to_string(o.dim) + "_" + std::to_string(o.nnz);
  const MatrixInput rand =
      prepareMatrix(randLabel, randomTriplets(o.dim, o.dim, o.nnz, 42), o.dataDir);
  addConversionCases(rand, threadCounts, cases);
  const std::string realLabel = std::filesystem::path(o.realMtx).stem().string();
  Coo realCoo = readCoo(o.realMtx);
  const MatrixInput real = prepareMatrix(realLabel, tripletsFromCoo(realCoo), o.dataDir);
  addConversionCases(real, threadCounts, cases);
  addDirectCases(rand, threadCounts, cases);
  addDirectCases(real, threadCounts, cases);
  const std::string genPath = o.dataDir + "/gen_" + std::to_string(o.mtxMegabytes) + "MB.mtx";
  const int64_t genEntries =
      writeRandomMatrixMarket(genPath, o.dim, o.dim, o.mtxMegabytes * 1'000'000, 7);
  addReadCases(std::filesystem::path(genPath).stem().string(), genPath, o.dim, genEntries,
               threadCounts, cases);
  addReadCases(realLabel, o.realMtx, realCoo.shape[0], realCoo.numEntries(), threadCounts, cases);
  addCastCases(int64_t{1} << 22, threadCounts, cases);

  for (Case& c : cases) registerCase(c, o.reps);
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // The peer, on the inputs of the cases that ran.
  PeerRun peer;
  if (!o.python.empty()) {
    std::vector<std::string> command = {o.python, o.peerScript, "--reps", std::to_string(o.reps)};
    std::vector<std::string> seen;
    for (const Case& c : cases) {
      if (!c.hasPeer || !reporter.medians().count(c.name)) continue;
      if (std::find(seen.begin(), seen.end(), c.peerCase) != seen.end()) continue;
      seen.push_back(c.peerCase);
      command.push_back("--case");
      command.push_back(c.peerCase + "=" + c.peerArg);
    }
    if (!seen.empty()) {
      std::cerr << "running the peer: " << o.python << " " << o.peerScript << "\n";
      try {
        peer = runPeer(command);
      } catch (const std::exception& e) {  // the table still shows our side
        std::cerr << "the peer failed: " << e.what() << "\n";
      }
    }
  }

  std::vector<ResultRow> rows;
  for (const Case& c : cases) {
    auto found = reporter.medians().find(c.name);
    if (found == reporter.medians().end()) continue;
    ResultRow row;
    row.name = c.name;
    row.threads = c.threads;
    row.seconds = found->second;
    setBandwidthFloor(row, c.bytes, limits.readBandwidth(c.threads));
    char note[128];
    if (c.fileBytes > 0) {
      std::snprintf(note, sizeof note, "%.0f MB/s", c.fileBytes / row.seconds / 1e6);
    } else {
      std::snprintf(note, sizeof note, "%.0f M nnz/s",
                    static_cast<double>(c.count) / row.seconds / 1e6);
    }
    row.note = note;
    if (auto general = reporter.medians().find(c.comparedTo);
        !c.comparedTo.empty() && general != reporter.medians().end()) {
      std::snprintf(note, sizeof note, "; general path %s, direct/general = %.3f",
                    formatSeconds(general->second).c_str(), row.seconds / general->second);
      row.note += note;
    }
    auto p = c.hasPeer ? peer.results.find(c.peerCase) : peer.results.end();
    if (p != peer.results.end()) {
      row.peer = c.peerCall.empty() ? peer.name : c.peerCall + " (in the " + peer.name + " peer)";
      row.peerSeconds = p->second.seconds;
      if (p->second.check != "nnz=" + std::to_string(c.count)) {
        row.note += "; MISMATCH: ours nnz=" + std::to_string(c.count) + ", peer " + p->second.check;
      }
    }
    row.reproducer = reproducer(argv[0], o, c);
    rows.push_back(std::move(row));
  }
  for (const auto& [name, message] : reporter.errors()) {
    std::cerr << "FAILED " << name << ": " << message << "\n";
  }
  std::cout << "\n" << limits.toString() << "\n\n";
  printTable(std::cout, rows);
  if (!o.rowsPath.empty()) appendRows(o.rowsPath, rows);
  if (temporary) std::filesystem::remove_all(o.dataDir);
  return reporter.errors().empty() ? 0 : 1;
}

}  // namespace
}  // namespace sparseflow::bench

int main(int argc, char** argv) {
  return sparseflow::bench::runDriver("bench_formats", sparseflow::bench::run, argc, argv);
}
