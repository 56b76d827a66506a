// Eigen and SuiteSparse:GraphBLAS peers of the compiled-kernel benchmarks: operands copied in
// once, each run() one library call (two for GraphBLAS SDDMM) that allocates its result as a
// user's code would. SPARSEFLOW_HAVE_EIGEN / SPARSEFLOW_HAVE_GRAPHBLAS say which were found.
#include "peers/sparse_ops.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#if SPARSEFLOW_HAVE_EIGEN
#include <Eigen/SparseCore>
#endif
#if SPARSEFLOW_HAVE_GRAPHBLAS
extern "C" {
#include <GraphBLAS.h>
}
#endif

namespace sparseflow::bench {
namespace {

[[maybe_unused]] std::string threadsText(int threads, const char* how) {
  return threads == 1 ? "1 thread" : std::to_string(threads) + " threads, " + how;
}

#if SPARSEFLOW_HAVE_EIGEN
// ---------------------------------------------------------------- Eigen

using EigenCsr = Eigen::SparseMatrix<float, Eigen::RowMajor, int32_t>;
using EigenDense = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class EigenPeer final : public SparsePeer {
 public:
  explicit EigenPeer(const SparseProblem& p) : p_(p) {
    a_ = Eigen::Map<const EigenCsr>(p.rows, p.cols, p.nnz, p.pos, p.crd, p.vals);
    a_.makeCompressed();
    if (p.op == SparseOp::kSpmv) x_ = Eigen::Map<const Eigen::VectorXf>(p.b, p.cols);
    if (p.op == SparseOp::kSpmm) b_ = Eigen::Map<const EigenDense>(p.b, p.cols, p.n);
    Eigen::setNbThreads(p.threads);
  }
  std::string name() const override {
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
           std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
  }
  std::string how() const override {
    // Eigen runs sparse × dense rows in parallel above ~20k nonzero·columns, sparse × sparse on
    // one thread.
    if (p_.op == SparseOp::kSpgemm) return "1 thread";
    return threadsText(p_.threads, "OpenMP above 20k nnz x cols");
  }
  void run() override {
    switch (p_.op) {
      // noalias(): without it Eigen evaluates into a temporary, up to 100x slower on DLMC 2048x512.
      case SparseOp::kSpmv: y_.noalias() = a_ * x_; break;
      case SparseOp::kSpmm: c_.noalias() = a_ * b_; break;
      case SparseOp::kSpgemm: s_ = a_ * a_; break;
      case SparseOp::kSddmm: break;
    }
  }
  void check(double* sum, int64_t* stored) override {
    double s = 0;
    if (p_.op == SparseOp::kSpmv) {
      for (Eigen::Index i = 0; i < y_.size(); ++i) s += y_[i];
      *stored = y_.size();
    } else if (p_.op == SparseOp::kSpmm) {
      for (Eigen::Index i = 0; i < c_.size(); ++i) s += c_.data()[i];
      *stored = c_.size();
    } else {
      for (Eigen::Index i = 0; i < s_.nonZeros(); ++i) s += s_.valuePtr()[i];
      *stored = s_.nonZeros();
    }
    *sum = s;
  }

 private:
  SparseProblem p_;
  EigenCsr a_, s_;
  Eigen::VectorXf x_, y_;
  EigenDense b_, c_;
};

#endif  // SPARSEFLOW_HAVE_EIGEN

#if SPARSEFLOW_HAVE_GRAPHBLAS
// ---------------------------------------------------------------- GraphBLAS

void grbCheck(GrB_Info info, const char* what) {
  if (info != GrB_SUCCESS && info != GrB_NO_VALUE) {
    throw std::runtime_error(std::string("GraphBLAS ") + what + " failed (GrB_Info " +
                             std::to_string(static_cast<int>(info)) + ")");
  }
}

/// A full row-major matrix (or vector when cols is 0) holding a copy of `values`.
GrB_Matrix fullMatrix(const float* values, int64_t rows, int64_t cols) {
  GrB_Matrix m = nullptr;
  grbCheck(GrB_Matrix_new(&m, GrB_FP32, static_cast<GrB_Index>(rows), static_cast<GrB_Index>(cols)),
           "GrB_Matrix_new");
  const auto bytes = static_cast<size_t>(rows * cols) * sizeof(float);
  void* data = std::malloc(bytes);  // GraphBLAS takes it over and frees it with free()
  if (data == nullptr) throw std::runtime_error("out of memory for a GraphBLAS matrix");
  std::memcpy(data, values, bytes);
  grbCheck(GxB_Matrix_pack_FullR(m, &data, bytes, false, nullptr), "GxB_Matrix_pack_FullR");
  return m;
}

class GraphBlasPeer final : public SparsePeer {
 public:
  explicit GraphBlasPeer(const SparseProblem& p) : p_(p) {
    static std::once_flag once;
    std::call_once(once, [] { grbCheck(GrB_init(GrB_BLOCKING), "GrB_init"); });
    grbCheck(GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS, p.threads), "GxB_set(GxB_NTHREADS)");
    std::vector<GrB_Index> ap(p.pos, p.pos + p.rows + 1), aj(p.crd, p.crd + p.nnz);
    grbCheck(
        GrB_Matrix_import_FP32(&a_, GrB_FP32, static_cast<GrB_Index>(p.rows),
                               static_cast<GrB_Index>(p.cols), ap.data(), aj.data(), p.vals,
                               ap.size(), aj.size(), static_cast<GrB_Index>(p.nnz), GrB_CSR_FORMAT),
        "GrB_Matrix_import_FP32");
    switch (p.op) {
      case SparseOp::kSpmv: {
        grbCheck(GrB_Vector_new(&u_, GrB_FP32, static_cast<GrB_Index>(p.cols)), "GrB_Vector_new");
        const auto bytes = static_cast<size_t>(p.cols) * sizeof(float);
        void* data = std::malloc(bytes);
        if (data == nullptr) throw std::runtime_error("out of memory for a GraphBLAS vector");
        std::memcpy(data, p.b, bytes);
        grbCheck(GxB_Vector_pack_Full(u_, &data, bytes, false, nullptr), "GxB_Vector_pack_Full");
        grbCheck(GrB_Vector_new(&w_, GrB_FP32, static_cast<GrB_Index>(p.rows)), "GrB_Vector_new");
        break;
      }
      case SparseOp::kSpmm:
        b_ = fullMatrix(p.b, p.cols, p.n);
        newOutput(p.rows, p.n);
        break;
      case SparseOp::kSddmm:
        x_ = fullMatrix(p.x, p.rows, p.n);
        z_ = fullMatrix(p.z, p.cols, p.n);
        newOutput(p.rows, p.cols);
        grbCheck(GrB_Descriptor_new(&sddmm_), "GrB_Descriptor_new");
        grbCheck(GrB_Descriptor_set(sddmm_, GrB_MASK, GrB_STRUCTURE), "GrB_Descriptor_set");
        grbCheck(GrB_Descriptor_set(sddmm_, GrB_INP1, GrB_TRAN), "GrB_Descriptor_set");
        grbCheck(GrB_Descriptor_set(sddmm_, GrB_OUTP, GrB_REPLACE), "GrB_Descriptor_set");
        grbCheck(GrB_Descriptor_set(sddmm_, GxB_AxB_METHOD, GxB_AxB_DOT), "GrB_Descriptor_set");
        break;
      case SparseOp::kSpgemm: newOutput(p.rows, p.cols); break;
    }
  }
  ~GraphBlasPeer() override {
    for (GrB_Matrix* m : {&a_, &b_, &c_, &x_, &z_}) {
      if (*m) GrB_Matrix_free(m);
    }
    if (u_) GrB_Vector_free(&u_);
    if (w_) GrB_Vector_free(&w_);
    if (sddmm_) GrB_Descriptor_free(&sddmm_);
  }
  GraphBlasPeer(const GraphBlasPeer&) = delete;
  GraphBlasPeer& operator=(const GraphBlasPeer&) = delete;

  std::string name() const override {
    return "SuiteSparse:GraphBLAS " + std::to_string(GxB_IMPLEMENTATION_MAJOR) + "." +
           std::to_string(GxB_IMPLEMENTATION_MINOR) + "." + std::to_string(GxB_IMPLEMENTATION_SUB);
  }
  std::string how() const override { return threadsText(p_.threads, "OpenMP"); }
  void run() override {
    const GrB_Semiring plusTimes = GrB_PLUS_TIMES_SEMIRING_FP32;
    switch (p_.op) {
      case SparseOp::kSpmv:
        grbCheck(GrB_mxv(w_, nullptr, nullptr, plusTimes, a_, u_, nullptr), "GrB_mxv");
        break;
      case SparseOp::kSpmm:
        grbCheck(GrB_mxm(c_, nullptr, nullptr, plusTimes, a_, b_, nullptr), "GrB_mxm");
        break;
      case SparseOp::kSddmm:
        // C<M,struct> = X·Zᵀ by dot products, then C = C .* M (GraphBLAS's SDDMM idiom).
        grbCheck(GrB_mxm(c_, a_, nullptr, plusTimes, x_, z_, sddmm_), "GrB_mxm (masked)");
        grbCheck(
            GrB_Matrix_eWiseMult_BinaryOp(c_, nullptr, nullptr, GrB_TIMES_FP32, c_, a_, nullptr),
            "GrB_eWiseMult");
        break;
      case SparseOp::kSpgemm:
        grbCheck(GrB_mxm(c_, nullptr, nullptr, plusTimes, a_, a_, nullptr), "GrB_mxm");
        break;
    }
  }
  void check(double* sum, int64_t* stored) override {
    GrB_Index nvals = 0;
    *sum = 0;
    if (p_.op == SparseOp::kSpmv) {
      grbCheck(GrB_Vector_reduce_FP64(sum, nullptr, GrB_PLUS_MONOID_FP64, w_, nullptr),
               "GrB_reduce");
      grbCheck(GrB_Vector_nvals(&nvals, w_), "GrB_Vector_nvals");
    } else {
      grbCheck(GrB_Matrix_reduce_FP64(sum, nullptr, GrB_PLUS_MONOID_FP64, c_, nullptr),
               "GrB_reduce");
      grbCheck(GrB_Matrix_nvals(&nvals, c_), "GrB_Matrix_nvals");
    }
    *stored = static_cast<int64_t>(nvals);
  }

 private:
  void newOutput(int64_t rows, int64_t cols) {
    grbCheck(
        GrB_Matrix_new(&c_, GrB_FP32, static_cast<GrB_Index>(rows), static_cast<GrB_Index>(cols)),
        "GrB_Matrix_new");
  }

  SparseProblem p_;
  GrB_Matrix a_ = nullptr, b_ = nullptr, c_ = nullptr, x_ = nullptr, z_ = nullptr;
  GrB_Vector u_ = nullptr, w_ = nullptr;
  GrB_Descriptor sddmm_ = nullptr;
};
#endif  // SPARSEFLOW_HAVE_GRAPHBLAS

/// Null with the reason `peer` was not compiled in.
[[maybe_unused]] std::unique_ptr<SparsePeer> notBuilt(const std::string& peer, std::string* why) {
  if (why) *why = peerNotBuilt(peer);
  return nullptr;
}

}  // namespace

std::string peerNotBuilt(const std::string& peer) {
  const char* package = nullptr;
  if (peer == "eigen" && !SPARSEFLOW_HAVE_EIGEN) package = "libeigen3-dev";
  if (peer == "graphblas" && !SPARSEFLOW_HAVE_GRAPHBLAS) package = "libgraphblas-dev";
  if (peer == "dense" && !SPARSEFLOW_HAVE_OPENBLAS) package = "libopenblas-dev";
  if (!package) return "";
  return std::string("not built: ") + package +
         " was not installed when sparseflow was configured (install it and reconfigure)";
}

std::unique_ptr<SparsePeer> makeEigenPeer(const SparseProblem& p, std::string* why) {
#if SPARSEFLOW_HAVE_EIGEN
  if (p.op == SparseOp::kSddmm) {
    if (why) *why = "Eigen has no SDDMM";
    return nullptr;
  }
  return std::make_unique<EigenPeer>(p);
#else
  return notBuilt("eigen", why);
#endif
}

std::unique_ptr<SparsePeer> makeGraphBlasPeer(const SparseProblem& p, std::string* why) {
#if SPARSEFLOW_HAVE_GRAPHBLAS
  try {
    return std::make_unique<GraphBlasPeer>(p);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
#else
  return notBuilt("graphblas", why);
#endif
}

}  // namespace sparseflow::bench
