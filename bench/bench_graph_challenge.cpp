// The Graph Challenge sparse DNN (LAGraph's subset: 1024 neurons, 30 layers, 1200 images) through
// the graph executor as a user runs it (Executor::run per inference, allocation included), against
// SuiteSparse:GraphBLAS doing the challenge's reference loop (Y = Y*W, + bias on stored entries,
// select > 0, min 32; Y kept sparse) in the same process, and against the executor with every
// weight dense (DenseLinear: what the model costs without sparsity). All give the same categories.
// Usage: bench_graph_challenge [--layers=30] [--reps=5] [--threads=2]
#include <omp.h>

extern "C" {
#include <GraphBLAS.h>
}

#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

#include "common/driver.h"
#include "graph/exec/executor.h"
#include "graph/import/graph_challenge.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"

namespace {

using namespace sparseflow;
using namespace sparseflow::graph;

void grb(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE) {
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(info));
  }
}

GrB_Matrix toGrb(const Tensor& t) {
  const Coo coo = toCoo(t);
  std::vector<GrB_Index> i, j;
  std::vector<float> x;
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    i.push_back(static_cast<GrB_Index>(coo.coords[static_cast<size_t>(2 * e)]));
    j.push_back(static_cast<GrB_Index>(coo.coords[static_cast<size_t>(2 * e + 1)]));
    x.push_back(static_cast<float>(coo.values[static_cast<size_t>(e)]));
  }
  GrB_Matrix m = nullptr;
  grb(GrB_Matrix_new(&m, GrB_FP32, static_cast<GrB_Index>(coo.shape[0]),
                     static_cast<GrB_Index>(coo.shape[1])),
      "GrB_Matrix_new");
  grb(GrB_Matrix_build_FP32(m, i.data(), j.data(), x.data(), i.size(), GrB_PLUS_FP32),
      "GrB_Matrix_build");
  return m;
}

std::set<int64_t> nonzeroRows(const DenseValue<float>& y) {
  std::set<int64_t> rows;
  const int64_t n = y.shape[1];
  for (int64_t r = 0; r < y.shape[0]; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      if (y.data[static_cast<size_t>(r * n + j)] != 0) {
        rows.insert(r);
        break;
      }
    }
  }
  return rows;
}

int run(int argc, char** argv) {
  int layers = 30, reps = 5, threads = 2;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a.rfind("--layers=", 0) == 0)
      layers = std::stoi(a.substr(9));
    else if (a.rfind("--reps=", 0) == 0)
      reps = std::stoi(a.substr(7));
    else if (a.rfind("--threads=", 0) == 0)
      threads = std::stoi(a.substr(10));
    else
      throw std::runtime_error("unknown argument " + a);
  }
  omp_set_num_threads(threads);
  const std::string dir = std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/dnn_data";
  GraphChallengeOptions options;
  options.layers = layers;
  options.rows = 1200;
  const Model model = graphChallengeModel(dir, options);
  const Tensor images = read(dir + "/sparse-images-1024_subset.mtx");
  const std::vector<double> dense = toDense(images);
  const std::map<std::string, DenseValue<float>> inputs = {
      {"Y0", {{1200, 1024}, std::vector<float>(dense.begin(), dense.end())}}};

  bench::warmUpThreads(threads);
  const auto t0 = std::chrono::steady_clock::now();
  const Executor sparse = Executor::build(model);
  const double buildS =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SpecializeOptions allDense;
  for (int k = 1; k <= layers; ++k) allDense.formats["W" + std::to_string(k)] = "dense";
  const Executor denseExec = Executor::build(model, allDense);

  bench::TimingOptions timing;
  timing.reps = reps;
  std::set<int64_t> catSparse, catDense, catGrb;
  const double sparseS =
      bench::timeMedian([&] { catSparse = nonzeroRows(sparse.run(inputs)[0]); }, timing);
  const double denseS =
      bench::timeMedian([&] { catDense = nonzeroRows(denseExec.run(inputs)[0]); }, timing);

  grb(GrB_init(GrB_NONBLOCKING), "GrB_init");
  grb(GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS, threads), "GxB_set(NTHREADS)");
  std::vector<GrB_Matrix> w;
  for (int k = 1; k <= layers; ++k) w.push_back(toGrb(model.params.at("W" + std::to_string(k))));
  GrB_Matrix y0 = toGrb(images);
  const double grbS = bench::timeMedian(
      [&] {
        GrB_Matrix y = nullptr;
        grb(GrB_Matrix_dup(&y, y0), "dup");
        for (GrB_Matrix wk : w) {
          grb(GrB_mxm(y, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, y, wk, nullptr), "mxm");
          grb(GrB_Matrix_apply_BinaryOp2nd_FP32(y, nullptr, nullptr, GrB_PLUS_FP32, y, -0.3f,
                                                nullptr),
              "bias");
          grb(GrB_Matrix_select_FP32(y, nullptr, nullptr, GrB_VALUEGT_FP32, y, 0.0f, nullptr),
              "select");
          grb(GrB_Matrix_apply_BinaryOp2nd_FP32(y, nullptr, nullptr, GrB_MIN_FP32, y, 32.0f,
                                                nullptr),
              "min");
        }
        grb(GrB_Matrix_wait(y, GrB_MATERIALIZE), "wait");
        // Categories: rows with an entry.
        GrB_Index nvals = 0;
        grb(GrB_Matrix_nvals(&nvals, y), "nvals");
        std::vector<GrB_Index> i(nvals), j(nvals);
        std::vector<float> x(nvals);
        grb(GrB_Matrix_extractTuples_FP32(i.data(), j.data(), x.data(), &nvals, y), "extract");
        catGrb.clear();
        for (GrB_Index e = 0; e < nvals; ++e) {
          if (x[e] != 0) catGrb.insert(static_cast<int64_t>(i[e]));
        }
        GrB_Matrix_free(&y);
      },
      timing);
  if (catSparse != catGrb || catDense != catGrb) throw std::runtime_error("the categories differ");

  const double flops = 2.0 * 32768.0 * 1200.0 * layers;  // 32 per weight column, dense Y
  std::printf(
      "Graph Challenge DNN, %d layers x 1024 neurons, 1200 images, %d threads; %zu "
      "categories (all three agree)\n\n",
      layers, threads, catSparse.size());
  std::printf("| engine | per inference (ms) | vs GraphBLAS | note |\n|---|---:|---:|---|\n");
  std::printf(
      "| sparseflow executor (measured formats) | %.1f | %.2fx | W as %s, provider %s; "
      "%.1f GFLOP/s over dense Y; specialization took %.2f s |\n",
      sparseS * 1e3, grbS / sparseS, sparse.steps()[0].format.c_str(),
      sparse.steps()[0].provider.c_str(), flops / sparseS * 1e-9, buildS);
  std::printf("| sparseflow executor, every weight dense | %.1f | %.2fx | provider %s |\n",
              denseS * 1e3, grbS / denseS, denseExec.steps()[0].provider.c_str());
  std::printf("| SuiteSparse:GraphBLAS %d.%d (Y sparse) | %.1f | 1.00x | LAGraph's loop |\n",
              GxB_IMPLEMENTATION_MAJOR, GxB_IMPLEMENTATION_MINOR, grbS * 1e3);
  std::vector<double> stepMs;
  sparse.run(inputs, &stepMs);
  std::printf("\nPer layer (one profiled run of the measured executor), ms:");
  for (size_t s = 0; s < stepMs.size(); ++s)
    std::printf("%s%.2f", s % 10 ? " " : "\n  ", stepMs[s]);
  std::printf("\n\nPer step (sparseflow):\n%s", sparse.describe().substr(0, 600).c_str());
  for (GrB_Matrix& m : w) GrB_Matrix_free(&m);
  GrB_Matrix_free(&y0);
  GrB_finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sparseflow::bench::runDriver("bench_graph_challenge", run, argc, argv);
}
