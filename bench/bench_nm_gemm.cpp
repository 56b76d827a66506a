// Benchmarks the 2:4 GEMM (NMLinear: y = epilogue(x · Wᵀ + b)) on transformer layer shapes
// against dense OpenBLAS, oneDNN and our own dense path (DenseLinear) on the same, unpruned-shape
// weights in the same run, and prints the speedup over each and the fraction of the machine's
// limit (weight bytes over bandwidth for batch ≤ 8, flops over FMA peak above). The row's peer
// is the fastest dense peer at the row's dtype; at bf16 and f16 that is DenseLinear alone here
// (the OpenBLAS and oneDNN builds have none), and their f32 times are listed beside it.
//
//   build-bench/bin/bench_nm_gemm [--limits=FILE] [--rows=FILE] [--shapes=768x768,4096x11008]
//       [--batches=1,8,32,128] [--dtypes=f32,bf16,f16] [--epilogues=bias+gelu_erf,none]
//       [--min-seconds=0.3] [--reps=5] [--no-pipeline]
// It also times the compression pipeline (nm::sparsify on 4096x11008 against a copy of the
// input; nm::compress against the generic format builder); --no-pipeline skips that.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/driver.h"
#include "common/machine_limits.h"
#include "common/report.h"
#include "peers/dense_gemm.h"
#include "peers/sparseflow_dense.h"
#include "sparseflow/build.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"
#include "sparseflow/nm_linear.h"
#include "support/half.h"

namespace sparseflow::bench {
namespace {

struct Shape {
  int64_t out, in;
};

struct Options {
  std::string limitsPath, rowsPath;
  std::vector<Shape> shapes = {{768, 768},   {3072, 768},   {768, 3072},
                               {4096, 4096}, {11008, 4096}, {4096, 11008}};
  std::vector<int64_t> batches = {1, 8, 32, 128};
  std::vector<DType> dtypes = {DType::kF32, DType::kBF16, DType::kF16};
  std::vector<Epilogue> epilogues = {Epilogue::parse("bias+gelu_erf")};
  double minSeconds = 0.3;
  int reps = 5;
  bool pipeline = true;  ///< also time sparsify and compress (--pipeline / --no-pipeline)
};

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "--limits") {
      o.limitsPath = value;
    } else if (key == "--rows") {
      o.rowsPath = value;
    } else if (key == "--shapes") {
      o.shapes.clear();
      for (const std::string& s : splitList(value)) {
        if (s == "none") continue;  // the pipeline rows alone
        const auto x = s.find('x');
        if (x == std::string::npos) throw std::runtime_error("--shapes: '" + s + "' is not OUTxIN");
        o.shapes.push_back({std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1))});
      }
    } else if (key == "--batches") {
      o.batches.clear();
      for (const std::string& s : splitList(value)) o.batches.push_back(std::stoll(s));
    } else if (key == "--dtypes") {
      o.dtypes.clear();
      for (const std::string& s : splitList(value)) o.dtypes.push_back(parseDType(s));
    } else if (key == "--epilogues") {
      o.epilogues.clear();
      for (const std::string& s : splitList(value)) o.epilogues.push_back(Epilogue::parse(s));
    } else if (key == "--min-seconds") {
      o.minSeconds = std::stod(value);
    } else if (key == "--pipeline" || key == "--no-pipeline") {
      o.pipeline = key == "--pipeline";
    } else if (key == "--reps") {
      o.reps = std::stoi(value);
    } else {
      throw std::runtime_error("unknown option '" + arg + "' (see the comment atop bench_nm_gemm)");
    }
  }
  return o;
}

/// A dense tensor of `dtype` holding `values` (rounded).
Tensor denseTensor(const std::vector<float>& values, int64_t rows, int64_t cols, DType dtype) {
  Buffer buffer = Buffer::zeros(dtype, rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = values[static_cast<size_t>(i)];
    if (dtype == DType::kF32) buffer.as<float>()[i] = v;
    if (dtype == DType::kBF16) buffer.as<uint16_t>()[i] = floatToBf16(v);
    if (dtype == DType::kF16) buffer.as<uint16_t>()[i] = floatToF16(v);
  }
  return Tensor({rows, cols}, dtype, Format::parse("dense", 2), std::vector<LevelStorage>(2),
                std::move(buffer));
}

std::string caseName(const Shape& s, int64_t batch, DType dtype, const Epilogue& e) {
  return "nm_gemm/2:4/" + std::string(dtypeName(dtype)) + "/" + std::to_string(s.out) + "x" +
         std::to_string(s.in) + "/b" + std::to_string(batch) + "/" + e.toString();
}

std::vector<ResultRow> runShape(const Options& o, const Shape& s, const MachineLimits& limits,
                                int threads, const char* program) {
  std::vector<ResultRow> rows;
  std::mt19937 rng(static_cast<uint32_t>(s.out * 31 + s.in));
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> w(static_cast<size_t>(s.out * s.in));
  for (float& v : w) v = normal(rng);
  std::vector<float> bias(static_cast<size_t>(s.out));
  for (float& v : bias) v = normal(rng);
  const int64_t maxBatch = *std::max_element(o.batches.begin(), o.batches.end());
  std::vector<float> x(static_cast<size_t>(maxBatch * s.in));
  for (float& v : x) v = normal(rng) * 20.0f;
  std::vector<float> yPeer(static_cast<size_t>(maxBatch * s.out));

  for (DType dtype : o.dtypes) {
    const Tensor dense = denseTensor(w, s.out, s.in, dtype);
    const nm::Sparsified sparse = nm::sparsify(dense, {2, 4});
    const Tensor xTensor = denseTensor(x, maxBatch, s.in, dtype);
    Buffer y = Buffer::zeros(dtype, maxBatch * s.out);
    for (const Epilogue& epilogue : o.epilogues) {
      const std::vector<float> layerBias = epilogue.bias ? bias : std::vector<float>{};
      const NMLinear layer(sparse.compressed, layerBias, epilogue);
      const DenseLinear ourDense(dense, layerBias, epilogue);
      for (int64_t batch : o.batches) {
        ResultRow row;
        row.name = caseName(s, batch, dtype, epilogue);
        row.threads = threads;
        row.seconds =
            timeMedian([&] { layer.forward(xTensor.values().data(), dtype, batch, y.data()); },
                       TimingOptions{o.reps, o.minSeconds, 0.0});
        // Dense peers on the dense weights; the fastest one at the row's dtype is the row's peer.
        DenseProblem problem{batch,        s.out,    s.in,
                             x.data(),     w.data(), epilogue.bias ? bias.data() : nullptr,
                             yPeer.data(), epilogue};
        std::vector<std::string> missing;
        std::string why;
        std::vector<std::unique_ptr<DensePeer>> peers;
        if (auto p = makeOpenBlasPeer(problem, dtype, threads, &why)) {
          peers.push_back(std::move(p));
        } else {
          missing.push_back(why);
        }
        if (auto p = makeOneDnnPeer(problem, dtype, &why)) {
          peers.push_back(std::move(p));
        } else {
          missing.push_back(why);
        }
        const size_t sameDtype = peers.size() + 1;  // the external ones at dtype, and ours
        if (peers.empty()) {
          missing.push_back(std::string("sparseflow dense is the only dense peer at ") +
                            dtypeName(dtype) + " (OpenBLAS and oneDNN at f32 for reference)");
        }
        peers.push_back(makeSparseflowDensePeer(ourDense, xTensor, batch));
        if (sameDtype == 1) {  // no external dense kernel at this dtype: list them at f32
          if (auto p = makeOpenBlasPeer(problem, DType::kF32, threads, &why)) {
            peers.push_back(std::move(p));
          }
          if (auto p = makeOneDnnPeer(problem, DType::kF32, &why)) peers.push_back(std::move(p));
        }
        std::string peerTimes;
        for (size_t i = 0; i < peers.size(); ++i) {
          const double t =
              timeMedian([&] { peers[i]->run(); }, TimingOptions{o.reps, o.minSeconds, 0.0});
          if (i < sameDtype && !(t >= row.peerSeconds)) {
            row.peerSeconds = t;
            row.peer = peers[i]->name();
          }
          std::ostringstream ratio;
          ratio.precision(2);
          ratio << std::fixed << t / row.seconds;
          peerTimes += (peerTimes.empty() ? "" : "; ") + peers[i]->name() + " " + formatSeconds(t) +
                       " (" + ratio.str() + "x)";
        }
        if (batch <= 8) {
          setBandwidthFloor(row, static_cast<double>(layer.weightBytes()),
                            limits.readBandwidth(threads));
        }
        const std::string plan = layer.describe(batch, dtype);
        // vdpbf16ps does 32 multiply-adds an instruction at the FMA's rate (1 a cycle per core
        // on Zen 4, measured): the bf16 dot path's compute limit is twice the FP32 FMA peak.
        const bool bf16Dot = plan.find("bf16-dot") != std::string::npos;
        if (batch > 8) {
          setComputeFloor(row, 2.0 * batch * s.out * (s.in / 2.0),
                          (bf16Dot ? 2.0 : 1.0) * limits.fmaPeak(threads));
        }
        row.note = plan + " | peers: " + peerTimes;
        if (bf16Dot && batch > 8) row.note += " | limit: bf16 dot peak = 2 x FP32 FMA peak";
        for (const std::string& m : missing) row.note += " | " + m;
        row.reproducer = std::string(program) + " --shapes=" + std::to_string(s.out) + "x" +
                         std::to_string(s.in) + " --batches=" + std::to_string(batch) +
                         " --dtypes=" + dtypeName(dtype) + " --epilogues=" + epilogue.toString();
        std::cerr << row.name << ": " << formatSeconds(row.seconds) << ", best peer " << row.peer
                  << " " << formatSeconds(row.peerSeconds) << " -> " << row.ratio() << "x, "
                  << 100.0 * row.fractionOfLimit() << "% of limit\n";
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

/// The compression pipeline's speed (what the NMSpeed test used to time): one-pass sparsify of a
/// 7B-class layer against a copy of its input, and the direct 2:4 compress against the generic
/// level-by-level builder on a BERT-sized layer. Floors: the bytes read and written at the
/// streaming bandwidth.
std::vector<ResultRow> runPipeline(const Options& o, const MachineLimits& limits, int threads,
                                   const char* program) {
  std::vector<ResultRow> rows;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  const auto randomDense = [&](int64_t r, int64_t c) {
    std::vector<float> v(static_cast<size_t>(r * c));
    for (float& x : v) x = normal(rng);
    return denseTensor(v, r, c, DType::kF32);
  };
  const TimingOptions timing{o.reps, o.minSeconds, 0.0};
  {
    const Tensor w = randomDense(4096, 11008);
    ResultRow row;
    row.name = "nm_sparsify/2:4/f32/4096x11008";
    row.threads = threads;
    row.seconds = timeMedian([&] { (void)nm::sparsify(w, {2, 4}); }, timing);
    row.peer = "copy of the input (Tensor::clone)";
    row.peerSeconds = timeMedian([&] { (void)w.clone(); }, timing);
    const double in = static_cast<double>(w.values().bytes());
    setBandwidthFloor(row, in + in / 2 + in / 32, limits.readBandwidth(threads));
    row.note = "one pass: prune, compress and the float64 impact";
    row.reproducer = std::string(program) + " --shapes=none --pipeline";
    rows.push_back(std::move(row));
  }
  {
    const Tensor pruned = nm::prune(randomDense(768, 3072), {2, 4});
    std::vector<double> dense(static_cast<size_t>(768 * 3072));
    for (size_t i = 0; i < dense.size(); ++i)
      dense[i] = pruned.values().value(static_cast<int64_t>(i));
    ResultRow row;
    row.name = "nm_compress/2:4/f32/768x3072";
    row.threads = threads;
    row.seconds = timeMedian([&] { (void)nm::compress(pruned, {2, 4}); }, timing);
    row.peer = "sparseflow generic format builder (fromDense)";
    row.peerSeconds = timeMedian(
        [&] {
          (void)fromDense({768, 3072}, dense.data(), Format::parse("2:4", 2));
        },
        TimingOptions{3, 0.1, 0.0});
    const double in = static_cast<double>(pruned.values().bytes());
    setBandwidthFloor(row, in + in / 2 + in / 32, limits.readBandwidth(threads));
    row.note = "dense pruned f32 in, 2:4 values + 2-bit offsets out";
    row.reproducer = std::string(program) + " --shapes=none --pipeline";
    rows.push_back(std::move(row));
  }
  for (const ResultRow& row : rows) {
    std::cerr << row.name << ": " << formatSeconds(row.seconds) << ", " << row.peer << " "
              << formatSeconds(row.peerSeconds) << " -> " << row.ratio() << "x\n";
  }
  return rows;
}

int run(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  const MachineLimits limits =
      o.limitsPath.empty() ? measureMachineLimits() : loadLimits(o.limitsPath);
  const int threads = omp_get_max_threads();
  std::cerr << limits.toString() << "\n";
  std::vector<ResultRow> rows;
  for (const Shape& s : o.shapes) {
    std::vector<ResultRow> shapeRows = runShape(o, s, limits, threads, argv[0]);
    rows.insert(rows.end(), shapeRows.begin(), shapeRows.end());
  }
  if (o.pipeline) {
    std::vector<ResultRow> pipelineRows = runPipeline(o, limits, threads, argv[0]);
    rows.insert(rows.end(), pipelineRows.begin(), pipelineRows.end());
  }
  if (!o.rowsPath.empty()) appendRows(o.rowsPath, rows);
  printTable(std::cout, rows);
  return 0;
}

}  // namespace
}  // namespace sparseflow::bench

int main(int argc, char** argv) {
  return sparseflow::bench::runDriver("bench_nm_gemm", sparseflow::bench::run, argc, argv);
}
