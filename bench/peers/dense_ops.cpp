// The dense peer of the compiled-kernel benchmarks: A stored dense and multiplied by OpenBLAS
// (what a user without a sparse library runs). SPARSEFLOW_HAVE_OPENBLAS says whether its header
// was found; the library itself is loaded (dlopen) only when this peer is built, never linked:
// linked into the `sparseflow` command, OpenBLAS started a worker thread at load that yield-spins
// beside every kernel, and a two-thread kernel's barrier then waited whole scheduler slices
// (8 ms calls of a 25 us SDDMM through `sparseflow run`).
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/report.h"
#include "peers/sparse_ops.h"

#if SPARSEFLOW_HAVE_OPENBLAS
#include <openblas-pthread/cblas.h>
#endif

namespace sparseflow::bench {
namespace {

#if SPARSEFLOW_HAVE_OPENBLAS
/// The few OpenBLAS entry points the peer calls, from the library loaded on first use.
struct OpenBlas {
  decltype(&cblas_sgemv) sgemv = nullptr;
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) setThreads = nullptr;
  std::string error;  ///< why it could not be loaded ("" when it was)
};

const OpenBlas& openBlas() {
  static const OpenBlas blas = [] {
    OpenBlas b;
    void* lib = dlopen(SPARSEFLOW_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      b.error = std::string("cannot load OpenBLAS: ") + (e ? e : "dlopen failed");
      return b;
    }
    b.sgemv = reinterpret_cast<decltype(b.sgemv)>(dlsym(lib, "cblas_sgemv"));
    b.sgemm = reinterpret_cast<decltype(b.sgemm)>(dlsym(lib, "cblas_sgemm"));
    b.setThreads = reinterpret_cast<decltype(b.setThreads)>(dlsym(lib, "openblas_set_num_threads"));
    if (!b.sgemv || !b.sgemm || !b.setThreads) b.error = "OpenBLAS lacks cblas_sgemv/sgemm";
    return b;
  }();
  return blas;
}

/// A (or SDDMM's M) as a dense row-major matrix.
std::vector<float> denseA(const SparseProblem& p) {
  std::vector<float> a(static_cast<size_t>(p.rows * p.cols), 0.0f);
  for (int64_t i = 0; i < p.rows; ++i) {
    for (int64_t e = p.pos[i]; e < p.pos[i + 1]; ++e) {
      a[static_cast<size_t>(i * p.cols + p.crd[e])] += p.vals[e];
    }
  }
  return a;
}

class OpenBlasDense final : public SparsePeer {
 public:
  explicit OpenBlasDense(const SparseProblem& p) : p_(p), a_(denseA(p)) {
    const int64_t outCols = p.op == SparseOp::kSpmv ? 1 : p.op == SparseOp::kSpmm ? p.n : p.cols;
    out_.assign(static_cast<size_t>(p.rows * outCols), 0.0f);
    openBlas().setThreads(p.threads);
  }
  std::string name() const override {
    std::string version = OPENBLAS_VERSION;  // " OpenBLAS 0.3.21 "
    version.erase(0, version.find_first_not_of(' '));
    version.erase(version.find_last_not_of(' ') + 1);
    return version;
  }
  std::string how() const override {
    const std::string threads =
        p_.threads == 1 ? "1 thread" : std::to_string(p_.threads) + " threads";
    switch (p_.op) {
      case SparseOp::kSpmv: return threads + ", sgemv on dense A";
      case SparseOp::kSpmm: return threads + ", sgemm on dense A";
      case SparseOp::kSddmm: return threads + ", sgemm X*Z^T, then * dense M on 1 thread";
      case SparseOp::kSpgemm: return threads + ", sgemm dense A*A";
    }
    return threads;
  }
  void run() override {
    const auto m = static_cast<blasint>(p_.rows), k = static_cast<blasint>(p_.cols),
               n = static_cast<blasint>(p_.n);
    switch (p_.op) {
      case SparseOp::kSpmv:
        openBlas().sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, a_.data(), k, p_.b, 1, 0.0f,
                         out_.data(), 1);
        break;
      case SparseOp::kSpmm:
        openBlas().sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a_.data(), k,
                         p_.b, n, 0.0f, out_.data(), n);
        break;
      case SparseOp::kSddmm: {
        openBlas().sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, p_.x, n, p_.z, n,
                         0.0f, out_.data(), k);
        // One thread: an OpenMP team here would fight OpenBLAS's spinning workers for the cores.
        const size_t count = out_.size();
        for (size_t e = 0; e < count; ++e) out_[e] *= a_[e];
        break;
      }
      case SparseOp::kSpgemm:
        openBlas().sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, k, 1.0f, a_.data(), k,
                         a_.data(), k, 0.0f, out_.data(), k);
        break;
    }
  }
  void check(double* sum, int64_t* stored) override {
    double s = 0;
    for (float v : out_) s += v;
    *sum = s;
    *stored = static_cast<int64_t>(out_.size());
  }

 private:
  SparseProblem p_;
  std::vector<float> a_, out_;
};
#endif

}  // namespace

std::unique_ptr<SparsePeer> makeDensePeer(const SparseProblem& p, std::string* why) {
  const double bytes = static_cast<double>(p.rows) * static_cast<double>(p.cols) * 4;
  if (bytes > kDenseLimitBytes) {
    if (why) {
      *why = "dense A would take " + formatBytes(bytes) + " (limit " +
             formatBytes(kDenseLimitBytes) + ")";
    }
    return nullptr;
  }
#if SPARSEFLOW_HAVE_OPENBLAS
  if (!openBlas().error.empty()) {
    if (why) *why = openBlas().error;
    return nullptr;
  }
  return std::make_unique<OpenBlasDense>(p);
#else
  if (why) *why = peerNotBuilt("dense");
  return nullptr;
#endif
}

}  // namespace sparseflow::bench
