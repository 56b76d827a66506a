// The autoconfigurator's feature extraction against one SpMM call on the same matrix (issue 15:
// features must cost at most 5% of it): for each matrix, the median of 51 matrixFeatures calls and
// of 15 `kernel.run` calls of `C(i,j) = A(i,k) * B(k,j)` (A csr f32, 64 dense columns, the default
// configuration, 2 threads), and their ratio. Usage: bench_tune_features [MATRIX...] (default:
// the matrices below, under data/).
#include <omp.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/driver.h"
#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"
#include "tune/features.h"

int main(int argc, char** argv) {
  using namespace sparseflow;
  std::vector<std::string> files(argv + 1, argv + argc);
  if (files.empty()) {
    const std::string d = SPARSEFLOW_DATA_DIR;
    files = {d + "/dlmc/transformer/magnitude_pruning/0.5/"
                 "body_encoder_layer_0_ffn_conv1_fully_connected.smtx",
             d + "/suitesparse/LAGraph/data/pushpull.mtx", d + "/suitesparse/ParU/Matrix/arrow.mtx",
             d + "/suitesparse/LAGraph/data/bcsstk13.mtx"};
  }
  std::printf(
      "| matrix | rows x cols | nnz | SpMM 64 cols (ms) | features (ms) | features / SpMM |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const std::string& file : files) {
    ReadOptions options;
    options.format = "csr";
    options.dtype = DType::kF32;
    options.fill = ValueFill::kRandom;
    const Tensor a = read(file, options);
    const int64_t rows = a.shape()[0], cols = a.shape()[1];
    std::vector<double> bv(static_cast<size_t>(cols * 64));
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : bv) v = u(rng);
    const Tensor b = fromDense({cols, 64}, bv.data(), Format::parse("dense", 2), DType::kF32);
    // The features first, before any parallel region leaves OpenMP's threads spinning.
    tune::Features f;
    const double features =
        1e3 * bench::timeMedian([&] { f = tune::matrixFeatures(a); }, {.reps = 51});
    KernelOptions ko;
    ko.formats = {{"A", "csr"}};
    const Kernel k = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", ko);
    Tensor c = k.run({{"A", &a}, {"B", &b}});
    const double spmm = 1e3 * bench::timeMedian(
                                  [&] {
                                    c = k.run({{"A", &a}, {"B", &b}});
                                  },
                                  {.reps = 15});
    const std::string name = file.substr(file.rfind('/') + 1);
    std::printf("| %s | %lld x %lld | %lld | %.3f | %.4f | %.1f%% |\n", name.c_str(),
                static_cast<long long>(rows), static_cast<long long>(cols),
                static_cast<long long>(a.numStored()), spmm, features, 100 * features / spmm);
  }
  std::printf("(threads: %d)\n", omp_get_max_threads());
  return 0;
}
