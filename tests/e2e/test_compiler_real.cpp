// The compiler on bundled real matrices: SpGEMM into csr (assembled through workspaces), a
// sparse add of a matrix and its transpose into csr (co-iterated, the transpose read through a
// copy in the first operand's level order), the hand-tuned CSR SpMM and csr linear layer, SpMV,
// transposed SpMV and SDDMM in every sparse format, and MTTKRP/TTV/TTM on the bundled FROSTT
// tensors, against float64 references computed from the entries.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <map>

#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

/// Rows of a matrix as (column, value) lists in float64.
using Rows = std::vector<std::vector<std::pair<int64_t, double>>>;

Rows rowsOf(const Tensor& csr) {
  Rows rows(static_cast<size_t>(csr.shape()[0]));
  for (int64_t i = 0; i < csr.shape()[0]; ++i) {
    for (int64_t q = csr.level(1).pos.index(i); q < csr.level(1).pos.index(i + 1); ++q) {
      rows[static_cast<size_t>(i)].emplace_back(csr.level(1).crd.index(q), csr.values().value(q));
    }
  }
  return rows;
}

/// Checks a csr result against float64 row maps: same pattern of nonzeros up to explicit zeros,
/// values within tolerance of the terms' magnitude.
void expectRowsMatch(const Tensor& got,
                     const std::vector<std::map<int64_t, std::pair<double, double>>>& want,
                     const std::string& what) {
  ASSERT_EQ(got.format().toString(), "csr") << what;
  const Rows rows = rowsOf(got);
  int64_t bad = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t previous = -1;
    for (const auto& [j, v] : rows[i]) {
      EXPECT_GT(j, previous) << what << ": row " << i << " is not sorted";
      previous = j;
      auto it = want[i].find(j);
      const double expected = it == want[i].end() ? 0.0 : it->second.first;
      const double scale = it == want[i].end() ? 0.0 : it->second.second;
      if (!(std::fabs(v - expected) <= 1e-5 * scale + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << what << ": (" << i << ", " << j << ") = " << v << ", want " << expected;
    }
    EXPECT_EQ(static_cast<int64_t>(rows[i].size()), static_cast<int64_t>(want[i].size()))
        << what << ": row " << i << " has the wrong number of entries";
  }
  EXPECT_EQ(bad, 0) << what;
}

/// A data file's test name: its file name with every non-alphanumeric character as '_'.
std::string fileTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.rfind('/') + 1);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

class RealMatrixKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(RealMatrixKernels, SpGEMMAndAddIntoCsr) {
  const std::string path = std::string(SPARSEFLOW_DATA_DIR) + "/" + GetParam();
  const Tensor A = convert(read(path), "csr");
  ASSERT_EQ(A.shape()[0], A.shape()[1]) << path;
  const Rows a = rowsOf(A);
  const size_t n = a.size();

  KernelOptions options;
  options.formats = {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}};
  // C = A·A: Gustavson rows through per-thread workspaces.
  const Tensor product =
      Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options).run({{"A", &A}, {"B", &A}});
  std::vector<std::map<int64_t, std::pair<double, double>>> want(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [k, x] : a[i]) {
      for (const auto& [j, y] : a[static_cast<size_t>(k)]) {
        auto& [sum, scale] = want[i][j];
        sum += x * y;
        scale += std::fabs(x * y);
      }
    }
  }
  expectRowsMatch(product, want, GetParam() + " A*A");

  // C = A + 2·Aᵀ: co-iterated, Aᵀ read through a copy in A's level order.
  const Tensor sum =
      Kernel::compile("C(i,j) = A(i,j) + 2 * B(j,i)", options).run({{"A", &A}, {"B", &A}});
  std::vector<std::map<int64_t, std::pair<double, double>>> added(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [j, x] : a[i]) {
      auto& [s1, m1] = added[i][j];
      s1 += x;
      m1 += std::fabs(x);
      auto& [s2, m2] = added[static_cast<size_t>(j)][static_cast<int64_t>(i)];
      s2 += 2 * x;
      m2 += std::fabs(2 * x);
    }
  }
  expectRowsMatch(sum, added, GetParam() + " A+2A^T");
}

TEST_P(RealMatrixKernels, HandTunedSpMMAndLinearLayer) {
  // The CSR SpMM micro-kernel (C = A·B) and the csr linear layer (Y = X·Aᵀ) on real rows,
  // against float64 from the entries; widths around the vector and panel sizes.
  const std::string path = std::string(SPARSEFLOW_DATA_DIR) + "/" + GetParam();
  const Tensor A = convert(read(path), "csr");
  const Rows a = rowsOf(A);
  const int64_t rows = A.shape()[0], cols = A.shape()[1];
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const Kernel spmm = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  const Kernel linear = Kernel::compile("Y(b,o) = X(b,i) * A(o,i)", options);
  ASSERT_EQ(spmm.provider(), "csr_spmm") << spmm.describe();
  ASSERT_EQ(linear.provider(), "csr_spmm") << linear.describe();
  for (const int64_t n : {int64_t{33}, int64_t{128}}) {
    std::vector<double> b(static_cast<size_t>(cols * n));
    for (size_t e = 0; e < b.size(); ++e) b[e] = static_cast<float>(std::sin(0.37 * e + n));
    const Tensor B = fromDense({cols, n}, b.data(), Format::parse("dense", 2));
    const std::vector<double> c = toDense(spmm.run({{"A", &A}, {"B", &B}}));
    // X = Bᵀ (n × cols), so Y = X·Aᵀ is (A·B)ᵀ.
    std::vector<double> x(static_cast<size_t>(n * cols));
    for (int64_t k = 0; k < cols; ++k) {
      for (int64_t j = 0; j < n; ++j)
        x[static_cast<size_t>(j * cols + k)] = b[static_cast<size_t>(k * n + j)];
    }
    const Tensor X = fromDense({n, cols}, x.data(), Format::parse("dense", 2));
    const std::vector<double> y = toDense(linear.run({{"X", &X}, {"A", &A}}));
    int64_t bad = 0;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (const auto& [k, v] : a[static_cast<size_t>(i)]) {
          const double term =
              static_cast<double>(static_cast<float>(v)) * b[static_cast<size_t>(k * n + j)];
          want += term;
          scale += std::fabs(term);
        }
        const double tol = 1e-5 * scale + 1e-30;
        if (!(std::fabs(c[static_cast<size_t>(i * n + j)] - want) <= tol) && ++bad <= 5)
          ADD_FAILURE() << GetParam() << " SpMM " << n << ": (" << i << ", " << j << ")";
        if (!(std::fabs(y[static_cast<size_t>(j * rows + i)] - want) <= tol) && ++bad <= 5)
          ADD_FAILURE() << GetParam() << " linear " << n << ": (" << j << ", " << i << ")";
      }
    }
    EXPECT_EQ(bad, 0) << GetParam() << " width " << n;
  }
}

TEST_P(RealMatrixKernels, SpMVTransposedSpMVAndSDDMMInEveryFormat) {
  // y = A·x, z = Aᵀ·x and Y = A ⊙ (U·Vᵀ) (SDDMM) with A bound in each sparse format (converted
  // from the file), against float64 from the entries; generated code only (no hand-tuned match).
  const std::string path = std::string(SPARSEFLOW_DATA_DIR) + "/" + GetParam();
  const Tensor A = convert(read(path), "csr");
  const Rows a = rowsOf(A);
  const int64_t rows = A.shape()[0], cols = A.shape()[1], rank = 8;
  std::vector<double> x(static_cast<size_t>(std::max(rows, cols)));
  for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(std::cos(0.91 * e + 0.3));
  std::vector<double> u(static_cast<size_t>(rows * rank)), v(static_cast<size_t>(cols * rank));
  for (size_t e = 0; e < u.size(); ++e) u[e] = static_cast<float>(std::sin(0.13 * e));
  for (size_t e = 0; e < v.size(); ++e) v[e] = static_cast<float>(std::cos(0.29 * e + 1));
  const Tensor xr = fromDense({cols}, x.data(), Format::parse("dense", 1));
  const Tensor xc = fromDense({rows}, x.data(), Format::parse("dense", 1));
  const Tensor U = fromDense({rows, rank}, u.data(), Format::parse("dense", 2));
  const Tensor V = fromDense({cols, rank}, v.data(), Format::parse("dense", 2));
  // float64 references and the magnitudes of their terms.
  std::vector<double> y(static_cast<size_t>(rows)), ys(y.size());
  std::vector<double> z(static_cast<size_t>(cols)), zs(z.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (const auto& [j, w] : a[static_cast<size_t>(i)]) {
      const double wf = static_cast<float>(w);
      y[static_cast<size_t>(i)] += wf * x[static_cast<size_t>(j)];
      ys[static_cast<size_t>(i)] += std::fabs(wf * x[static_cast<size_t>(j)]);
      z[static_cast<size_t>(j)] += wf * x[static_cast<size_t>(i)];
      zs[static_cast<size_t>(j)] += std::fabs(wf * x[static_cast<size_t>(i)]);
    }
  }
  for (const std::string f : {"csr", "csc", "coo", "dcsr", "bsr:4x4", "ell", "hyb"}) {
    SCOPED_TRACE(GetParam() + " as " + f);
    KernelOptions options;
    options.formats = {{"A", f}};
    const Tensor Af = convert(A, f);
    const std::vector<double> gy =
        toDense(Kernel::compile("y(i) = A(i,j) * x(j)", options).run({{"A", &Af}, {"x", &xr}}));
    const std::vector<double> gz =
        toDense(Kernel::compile("z(j) = A(i,j) * x(i)", options).run({{"A", &Af}, {"x", &xc}}));
    const std::string sddmm = "Y(i,j) = A(i,j) * sum(k, U(i,k) * V(j,k))";
    const std::vector<double> gs =
        toDense(Kernel::compile(sddmm, options).run({{"A", &Af}, {"U", &U}, {"V", &V}}));
    // The same into a csr Y: A's pattern, or its csr copy's where A's storage reaches a row more
    // than once (coo, bsr, ell, hyb; pipeline/sparse_output_ways.cpp).
    KernelOptions csrOut = options;
    csrOut.formats["Y"] = "csr";
    const Tensor sparseY = Kernel::compile(sddmm, csrOut).run({{"A", &Af}, {"U", &U}, {"V", &V}});
    EXPECT_EQ(sparseY.format(), Format::parse("csr", 2));
    const std::vector<double> gsc = toDense(sparseY);
    int64_t bad = 0;
    for (int64_t i = 0; i < rows; ++i) {
      if (!(std::fabs(gy[static_cast<size_t>(i)] - y[static_cast<size_t>(i)]) <=
            1e-5 * ys[static_cast<size_t>(i)] + 1e-30) &&
          ++bad <= 5)
        ADD_FAILURE() << "SpMV row " << i;
    }
    for (int64_t j = 0; j < cols; ++j) {
      if (!(std::fabs(gz[static_cast<size_t>(j)] - z[static_cast<size_t>(j)]) <=
            1e-5 * zs[static_cast<size_t>(j)] + 1e-30) &&
          ++bad <= 5)
        ADD_FAILURE() << "transposed SpMV column " << j;
    }
    ASSERT_EQ(static_cast<int64_t>(gs.size()), rows * cols);
    ASSERT_EQ(gsc.size(), gs.size());
    std::vector<double> expect(gs.size(), 0.0), scale(gs.size(), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      for (const auto& [j, w] : a[static_cast<size_t>(i)]) {
        for (int64_t k = 0; k < rank; ++k) {
          const double t = static_cast<double>(static_cast<float>(w)) *
                           u[static_cast<size_t>(i * rank + k)] *
                           v[static_cast<size_t>(j * rank + k)];
          expect[static_cast<size_t>(i * cols + j)] += t;
          scale[static_cast<size_t>(i * cols + j)] += std::fabs(t);
        }
      }
    }
    for (size_t e = 0; e < gs.size(); ++e) {
      if (!(std::fabs(gs[e] - expect[e]) <= 1e-5 * scale[e] + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << "SDDMM element " << e << ": " << gs[e] << " vs " << expect[e];
      if (!(std::fabs(gsc[e] - expect[e]) <= 1e-5 * scale[e] + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << "SDDMM into csr, element " << e << ": " << gsc[e] << " vs " << expect[e];
    }
    EXPECT_EQ(bad, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Data, RealMatrixKernels,
                         ::testing::Values("suitesparse/ParU/Matrix/nnc1374.mtx",
                                           "suitesparse/ParU/Matrix/watt_2.mtx",
                                           "suitesparse/ParU/Matrix/hangGlider_2.mtx",
                                           "suitesparse/ParU/Matrix/adder_dcop_05.mtx",
                                           "suitesparse/Mongoose/Matrix/dwt_992.mtx",
                                           "suitesparse/LAGraph/data/olm1000.mtx",
                                           "suitesparse/LAGraph/data/dnn_data/n1024-l1.mtx"),
                         fileTestName);

/// MTTKRP, TTV and TTM on the bundled FROSTT tensors (csf and coo), against float64 from their
/// entries.
class RealTensorKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTensorKernels, MttkrpTtvTtm) {
  const std::string path = std::string(SPARSEFLOW_DATA_DIR) + "/" + GetParam();
  const Tensor T = convert(read(path), "coo");
  ASSERT_EQ(T.rank(), 3) << path;
  const std::vector<int64_t> dims = T.shape();
  const int64_t r = 5;
  // The entries (coo: level 0 compressed non-unique, levels 1-2 singleton).
  std::vector<std::array<int64_t, 3>> at;
  std::vector<double> val;
  for (int64_t q = 0; q < T.numStored(); ++q) {
    at.push_back({T.level(0).crd.index(q), T.level(1).crd.index(q), T.level(2).crd.index(q)});
    val.push_back(static_cast<float>(T.values().value(q)));
  }
  auto dense = [](int64_t n, int64_t m, double phase) {
    std::vector<double> d(static_cast<size_t>(n * m));
    for (size_t e = 0; e < d.size(); ++e) d[e] = static_cast<float>(std::sin(0.7 * e + phase));
    return d;
  };
  const std::vector<double> c = dense(dims[1], r, 0.1), d = dense(dims[2], r, 0.2);
  const std::vector<double> w = dense(dims[2], 1, 0.3), m = dense(r, dims[2], 0.4);
  const Tensor C = fromDense({dims[1], r}, c.data(), Format::parse("dense", 2));
  const Tensor D = fromDense({dims[2], r}, d.data(), Format::parse("dense", 2));
  const Tensor W = fromDense({dims[2]}, w.data(), Format::parse("dense", 1));
  const Tensor M = fromDense({r, dims[2]}, m.data(), Format::parse("dense", 2));
  std::vector<double> mttkrp(static_cast<size_t>(dims[0] * r)),
      ttv(static_cast<size_t>(dims[0] * dims[1]));
  std::vector<double> ttm(static_cast<size_t>(dims[0] * dims[1] * r));
  for (size_t e = 0; e < val.size(); ++e) {
    const auto [i, k, l] = at[e];
    for (int64_t j = 0; j < r; ++j) {
      mttkrp[static_cast<size_t>(i * r + j)] +=
          val[e] * c[static_cast<size_t>(k * r + j)] * d[static_cast<size_t>(l * r + j)];
      ttm[static_cast<size_t>((i * dims[1] + k) * r + j)] +=
          val[e] * m[static_cast<size_t>(j * dims[2] + l)];
    }
    ttv[static_cast<size_t>(i * dims[1] + k)] += val[e] * w[static_cast<size_t>(l)];
  }
  auto expectNear = [](const std::vector<double>& got, const std::vector<double>& want,
                       const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t e = 0; e < got.size(); ++e) {
      ASSERT_NEAR(got[e], want[e], 1e-5 * (1 + std::fabs(want[e]))) << what << " element " << e;
    }
  };
  for (const std::string f : {"csf", "coo"}) {
    KernelOptions options;
    options.formats = {{"B", f}};
    const Tensor B = convert(T, f);
    expectNear(toDense(Kernel::compile("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", options)
                           .run({{"B", &B}, {"C", &C}, {"D", &D}})),
               mttkrp, GetParam() + " MTTKRP " + f);
    expectNear(
        toDense(Kernel::compile("Z(i,j) = B(i,j,k) * c(k)", options).run({{"B", &B}, {"c", &W}})),
        ttv, GetParam() + " TTV " + f);
    expectNear(
        toDense(
            Kernel::compile("Z(i,j,k) = B(i,j,l) * C(k,l)", options).run({{"B", &B}, {"C", &M}})),
        ttm, GetParam() + " TTM " + f);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Data, RealTensorKernels,
    ::testing::Values("mlir/test/Integration/data/mttkrp_b.tns",
                      "mlir/test/Integration/Dialect/SparseTensor/taco/data/nell-2.tns",
                      "taco/test/data/3tensor.tns"),
    fileTestName);

}  // namespace
}  // namespace sparseflow
