// Peers in the same process on SpMV, SpMM, SDDMM, SpGEMM: Eigen (SparseMatrix<float, RowMajor>),
// SuiteSparse:GraphBLAS (GrB_mxv / GrB_mxm, plus-times over FP32) and dense OpenBLAS (sgemv/sgemm
// on A stored dense). Each is compiled in only where its library was found when sparseflow was
// configured; otherwise its factory says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace sparseflow::bench {

enum class SparseOp { kSpmv, kSpmm, kSddmm, kSpgemm };

/// Dense arrays (SpGEMM's dense output, the dense peers' copy of A) larger than this are skipped.
constexpr double kDenseLimitBytes = 256e6;

/// One case's operands, f32 in memory; the peer copies them into its own structures once.
struct SparseProblem {
  SparseOp op = SparseOp::kSpmv;
  int64_t rows = 0, cols = 0, nnz = 0;
  const int32_t* pos = nullptr;  ///< A (or SDDMM's M) as CSR
  const int32_t* crd = nullptr;
  const float* vals = nullptr;
  int64_t n = 1;             ///< SpMM: columns of B; SDDMM: k of X and Z
  const float* b = nullptr;  ///< SpMV: x (cols); SpMM: B cols × n row-major
  const float* x = nullptr;  ///< SDDMM: rows × k row-major
  const float* z = nullptr;  ///< SDDMM: cols × k row-major
  int threads = 1;
};

/// A peer prepared for one case: run() computes the whole result into the peer's own output
/// object (kept between runs, as a user's loop would); check() reports what the last run computed.
class SparsePeer {
 public:
  virtual ~SparsePeer() = default;
  /// "Eigen 3.4.0", "SuiteSparse:GraphBLAS 7.4.0".
  virtual std::string name() const = 0;
  /// How it runs, for the note: "1 thread" or "2 threads (OpenMP)".
  virtual std::string how() const = 0;
  virtual void run() = 0;
  /// Sum of the result's values in float64 and the number stored.
  virtual void check(double* sum, int64_t* stored) = 0;
};

/// Eigen: sparse × dense vector/matrix (OpenMP-parallel over rows), sparse × sparse (one thread).
/// Null with `why` for SDDMM, which Eigen has no operation for.
std::unique_ptr<SparsePeer> makeEigenPeer(const SparseProblem& p, std::string* why);
/// Dense OpenBLAS on A stored dense: sgemv (SpMV), sgemm (SpMM, SpGEMM as A·A), SDDMM as the full
/// X·Zᵀ by sgemm times M elementwise. Null with `why` when dense A would pass 256 MB.
std::unique_ptr<SparsePeer> makeDensePeer(const SparseProblem& p, std::string* why);
/// GraphBLAS with GxB_NTHREADS = p.threads: mxv, mxm with a full B, C<M,struct> = X·Zᵀ by the dot
/// method followed by C = C .* M, and mxm of two sparse matrices.
std::unique_ptr<SparsePeer> makeGraphBlasPeer(const SparseProblem& p, std::string* why);

/// Empty when the in-process peer ("dense", "eigen", "graphblas") is compiled in; else why not,
/// naming the Debian package that was missing when sparseflow was configured.
std::string peerNotBuilt(const std::string& peer);

}  // namespace sparseflow::bench
