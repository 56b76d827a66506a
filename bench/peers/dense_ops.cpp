// The dense peer of the compiled-kernel benchmarks: A stored dense and multiplied by OpenBLAS
// (what a user without a sparse library runs). SPARSEFLOW_HAVE_OPENBLAS says whether it was found.
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
    openblas_set_num_threads(p.threads);
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
        cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, a_.data(), k, p_.b, 1, 0.0f,
                    out_.data(), 1);
        break;
      case SparseOp::kSpmm:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a_.data(), k, p_.b, n,
                    0.0f, out_.data(), n);
        break;
      case SparseOp::kSddmm: {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, p_.x, n, p_.z, n, 0.0f,
                    out_.data(), k);
        // One thread: an OpenMP team here would fight OpenBLAS's spinning workers for the cores.
        const size_t count = out_.size();
        for (size_t e = 0; e < count; ++e) out_[e] *= a_[e];
        break;
      }
      case SparseOp::kSpgemm:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, k, 1.0f, a_.data(), k,
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
  return std::make_unique<OpenBlasDense>(p);
#else
  if (why) *why = peerNotBuilt("dense");
  return nullptr;
#endif
}

}  // namespace sparseflow::bench
