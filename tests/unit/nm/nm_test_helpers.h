// Helpers for the n:m tests: random matrices per dtype, a float64 reference pruner and impact,
// exact array comparisons and error expectations.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/random_coo.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"

namespace sparseflow::nm::testing {

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

/// How random values are drawn.
enum class Values {
  kNormal,  ///< N(0, 1): distinct magnitudes almost always
  kTies,    ///< small integers and ±0: many ties, zero groups and rows of zeros
};

/// A dense row-major matrix holding `values` rounded to `dtype`.
inline Tensor denseMatrix(int64_t rows, int64_t cols, const std::vector<double>& values,
                          DType dtype) {
  return fromDense({rows, cols}, values.data(), Format::parse("dense", 2), dtype);
}

/// Random values, already representable in `dtype` (so the reference sees what the tensor holds).
inline std::vector<double> randomValues(int64_t rows, int64_t cols, DType dtype, Values kind,
                                        std::mt19937_64& rng) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> small(-3, 3), rowKind(0, 7);
  for (int64_t r = 0; r < rows; ++r) {
    const bool zeroRow = kind == Values::kTies && rowKind(rng) == 0;
    for (int64_t c = 0; c < cols; ++c) {
      double x = kind == Values::kNormal ? normal(rng) : small(rng) * 0.5;
      if (x == 0 && (rng() & 1)) x = -0.0;
      v[static_cast<size_t>(r * cols + c)] = zeroRow ? 0.0 : x;
    }
  }
  return toDense(denseMatrix(rows, cols, v, dtype));
}

/// Reference magnitude pruning in float64: per group the n largest |x|, ties to the lower column.
inline std::vector<double> referencePrune(const std::vector<double>& x, int64_t rows, int64_t cols,
                                          NMPattern p) {
  std::vector<double> out(x.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c0 = 0; c0 < cols; c0 += p.m) {
      std::vector<int64_t> idx;
      for (int64_t c = c0; c < std::min(cols, c0 + p.m); ++c) idx.push_back(r * cols + c);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return std::fabs(x[static_cast<size_t>(a)]) > std::fabs(x[static_cast<size_t>(b)]);
      });
      for (size_t k = 0; k < idx.size() && k < static_cast<size_t>(p.n); ++k) {
        out[static_cast<size_t>(idx[k])] = x[static_cast<size_t>(idx[k])];
      }
    }
  }
  return out;
}

/// The Impact definitions of nm.h, computed plainly in float64.
inline Impact referenceImpact(const std::vector<double>& a, const std::vector<double>& b) {
  Impact i;
  double sumAbs = 0, sumSq = 0, origSq = 0, origAbs = 0, keptAbs = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double e = std::fabs(a[k] - b[k]);
    i.maxAbsError = std::max(i.maxAbsError, e);
    sumAbs += e;
    sumSq += e * e;
    origSq += a[k] * a[k];
    origAbs += std::fabs(a[k]);
    if (b[k] != 0) {
      keptAbs += std::fabs(a[k]);
      ++i.kept;
    }
  }
  i.total = static_cast<int64_t>(a.size());
  i.meanAbsError = a.empty() ? 0 : sumAbs / static_cast<double>(a.size());
  i.relativeFrobeniusError = origSq > 0 ? std::sqrt(sumSq / origSq) : (sumSq > 0 ? INFINITY : 0.0);
  i.keptMagnitudeFraction = origAbs > 0 ? keptAbs / origAbs : 1.0;
  return i;
}

/// Impacts agree to rounding (sums in another order or precision).
inline void expectImpactNear(const Impact& got, const Impact& want) {
  auto near = [](double x, double y) { return std::fabs(x - y) <= 1e-12 * std::max(1.0, y); };
  EXPECT_TRUE(near(got.maxAbsError, want.maxAbsError))
      << got.maxAbsError << " vs " << want.maxAbsError;
  EXPECT_TRUE(near(got.meanAbsError, want.meanAbsError))
      << got.meanAbsError << " vs " << want.meanAbsError;
  EXPECT_TRUE(near(got.relativeFrobeniusError, want.relativeFrobeniusError))
      << got.relativeFrobeniusError << " vs " << want.relativeFrobeniusError;
  EXPECT_TRUE(near(got.keptMagnitudeFraction, want.keptMagnitudeFraction))
      << got.keptMagnitudeFraction << " vs " << want.keptMagnitudeFraction;
  EXPECT_EQ(got.kept, want.kept);
  EXPECT_EQ(got.total, want.total);
}

/// Impacts are bit-for-bit equal.
inline void expectImpactEqual(const Impact& got, const Impact& want) {
  EXPECT_EQ(got.maxAbsError, want.maxAbsError);
  EXPECT_EQ(got.meanAbsError, want.meanAbsError);
  EXPECT_EQ(got.relativeFrobeniusError, want.relativeFrobeniusError);
  EXPECT_EQ(got.keptMagnitudeFraction, want.keptMagnitudeFraction);
  EXPECT_EQ(got.kept, want.kept);
  EXPECT_EQ(got.total, want.total);
}

/// Two buffers hold the same bytes.
inline bool sameBytes(const Buffer& a, const Buffer& b) {
  return a.dtype() == b.dtype() && a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())) == 0);
}

/// Same shape, dtype and format, and the same bytes in values and every level array.
inline void expectSameArrays(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.format().toString(), want.format().toString());
  EXPECT_TRUE(got.format() == want.format());
  EXPECT_TRUE(sameBytes(got.values(), want.values())) << "values differ";
  ASSERT_EQ(got.levels().size(), want.levels().size());
  for (size_t l = 0; l < got.levels().size(); ++l) {
    EXPECT_TRUE(sameBytes(got.levels()[l].meta, want.levels()[l].meta)) << "meta of level " << l;
    EXPECT_TRUE(sameBytes(got.levels()[l].pos, want.levels()[l].pos)) << "pos of level " << l;
    EXPECT_TRUE(sameBytes(got.levels()[l].crd, want.levels()[l].crd)) << "crd of level " << l;
  }
}

/// Runs `body`, expects a sparseflow::Error with `code` containing every needle; returns the text.
template <typename Body>
std::string expectError(Body&& body, ErrorCode code,
                        std::initializer_list<std::string_view> needles) {
  try {
    body();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << message;
    for (std::string_view needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos)
          << "'" << needle << "' not in: " << message;
    }
    return message;
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

}  // namespace sparseflow::nm::testing
