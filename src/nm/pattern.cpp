// NMPattern text, argument checks, and the n:m checks of dense matrices: validate and isNM.
#include <charconv>
#include <cstdio>

#include "format/format_shapes.h"
#include "nm/nm_kernels.h"
#include "sparseflow/build.h"
#include "sparseflow/nm.h"
#include "support/check.h"

namespace sparseflow::nm {

using detail::DenseMatrix;

namespace {

/// A decimal integer filling all of `text`, or -1.
int64_t parseCount(std::string_view text) {
  int64_t value = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty() ? value : -1;
}

}  // namespace

NMPattern NMPattern::parse(std::string_view text) {
  const auto colon = text.find(':');
  SF_USER_CHECK(colon != std::string_view::npos)
      << "n:m pattern '" << text << "': expected N:M, as in 2:4";
  const int64_t n = parseCount(text.substr(0, colon));
  const int64_t m = parseCount(text.substr(colon + 1));
  SF_USER_CHECK(n >= 0 && m >= 0) << "n:m pattern '" << text
                                  << "': expected N:M with two decimal integers, as in 2:4";
  SF_USER_CHECK(n > 0 && n < m && m <= kMaxGroupSize)
      << "n:m pattern '" << text << "': needs 0 < N < M <= " << kMaxGroupSize;
  return {static_cast<int32_t>(n), static_cast<int32_t>(m)};
}

std::string NMPattern::toString() const {
  return std::to_string(n) + ":" + std::to_string(m);
}

NMPattern patternOf(const Tensor& nmTensor) {
  const Format& f = nmTensor.format();
  SF_USER_CHECK(format::isMatrixNM(f))
      << "expected a matrix in an n:m format (such as 2:4), got a rank-" << nmTensor.rank()
      << " tensor in " << f.toString();
  return {f.level(1).type.n, f.level(1).type.m};
}

namespace detail {

void checkPattern(NMPattern pattern, const char* what) {
  SF_USER_CHECK(pattern.n > 0 && pattern.n < pattern.m && pattern.m <= kMaxGroupSize)
      << what << ": pattern " << pattern.n << ":" << pattern.m
      << " needs 0 < n < m <= " << kMaxGroupSize;
}

DenseMatrix denseMatrix(const Tensor& tensor, const char* what) {
  SF_USER_CHECK(tensor.rank() == 2)
      << what << ": expects a matrix (out_features x in_features), not a rank-" << tensor.rank()
      << " tensor";
  DenseMatrix matrix;
  matrix.rows = tensor.shape()[0];
  matrix.cols = tensor.shape()[1];
  const Format& f = tensor.format();
  if (!f.isHybrid() && f.isDenseRowMajor()) {
    matrix.tensor = tensor;  // shares the arrays
  } else if (format::isMatrixNM(f)) {
    matrix.tensor = decompress(tensor);
  } else {
    // Through toDense, not convert(): sf_convert's n:m paths call into sf_nm. Equal to convert()
    // but for -0 entries, which come out +0 (no n:m function tells them apart).
    const std::vector<double> dense = toDense(tensor);
    matrix.tensor =
        fromDense(tensor.shape(), dense.data(), Format::parse("dense", 2), tensor.dtype());
  }
  SF_CHECK_CODE(matrix.tensor.values().size() == matrix.rows * matrix.cols,
                ErrorCode::kInvalidFormat)
      << what << ": a dense " << matrix.rows << "x" << matrix.cols << " matrix holds "
      << matrix.tensor.values().size() << " values";
  return matrix;
}

Tensor zeroMatrix(DType type, int64_t rows, int64_t cols) {
  std::vector<LevelStorage> levels(2);
  return Tensor({rows, cols}, type, Format::parse("dense", 2), std::move(levels),
                Buffer::zeros(type, rows * cols));
}

std::string describeElement(int64_t index, int64_t cols) {
  return "row " + std::to_string(index / cols) + ", column " + std::to_string(index % cols);
}

std::string describeNonFinite(const DenseMatrix& matrix, int64_t index) {
  const double v = matrix.tensor.values().value(index);
  return std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
}

double impactScale(const DenseMatrix& a, const DenseMatrix* b) {
  uint64_t largest = 0;  // the bits of the largest f64 magnitude
  for (const DenseMatrix* matrix : {&a, b}) {
    if (matrix == nullptr || matrix->tensor.dtype() != DType::kF64) continue;
    const auto* x = static_cast<const double*>(matrix->data());
    const int64_t count = matrix->rows * matrix->cols;
    uint64_t top = 0;
#pragma omp parallel for reduction(max : top) if (count > (int64_t{1} << 16))
    for (int64_t i = 0; i < count; ++i) top = std::max(top, F64::magnitude(x[i]));
    largest = std::max(largest, top);
  }
  if (largest == 0) return 1.0;
  int exponent = 0;
  std::frexp(std::bit_cast<double>(largest), &exponent);
  return std::ldexp(1.0, -exponent);
}

int64_t findNonFinite(const DenseMatrix& matrix) {
  return dispatchDType(matrix.tensor.dtype(), [&](auto traits) {
    using Tr = decltype(traits);
    const auto* x = static_cast<const typename Tr::Storage*>(matrix.data());
    const int64_t cols = matrix.cols;
    return forEachChunk(matrix.rows, chunkRowsFor(cols, 1), matrix.rows * cols,
                        [&](int64_t begin, int64_t end) -> int64_t {
                          for (int64_t i = begin * cols; i < end * cols; ++i) {
                            if (Tr::nonFinite(x[i])) return i;
                          }
                          return -1;
                        });
  });
}

std::string describeBadGroup(const DenseMatrix& matrix, NMPattern pattern, int64_t index) {
  const int64_t row = index / matrix.cols, first = index % matrix.cols / pattern.m * pattern.m;
  const int64_t last = std::min(matrix.cols, first + pattern.m) - 1;
  int64_t count = 0;
  for (int64_t c = first; c <= last; ++c) {
    const double v = matrix.tensor.values().value(row * matrix.cols + c);
    count += v != 0 || std::isnan(v);
  }
  return "row " + std::to_string(row) + ", columns " + std::to_string(first) + ".." +
         std::to_string(last) + " hold " + std::to_string(count) + " nonzeros; " +
         pattern.toString() + " keeps at most " + std::to_string(pattern.n);
}

int64_t findBadGroup(const DenseMatrix& matrix, NMPattern pattern) {
  return dispatchDType(matrix.tensor.dtype(), [&](auto traits) {
    using Tr = decltype(traits);
    const auto* x = static_cast<const typename Tr::Storage*>(matrix.data());
    const int64_t cols = matrix.cols, m = pattern.m, n = pattern.n;
    return forEachChunk(matrix.rows, chunkRowsFor(cols, 1), matrix.rows * cols,
                        [&](int64_t begin, int64_t end) -> int64_t {
                          for (int64_t r = begin; r < end; ++r) {
                            const auto* row = x + r * cols;
                            for (int64_t c0 = 0; c0 < cols; c0 += m) {
                              const int64_t c1 = std::min(cols, c0 + m);
                              int64_t count = 0;
                              for (int64_t c = c0; c < c1; ++c) count += Tr::magnitude(row[c]) != 0;
                              if (count > n) return r * cols + c0;
                            }
                          }
                          return -1;
                        });
  });
}

}  // namespace detail

void validate(const Tensor& dense, NMPattern pattern) {
  detail::checkPattern(pattern, "nm::validate");
  const DenseMatrix matrix = detail::denseMatrix(dense, "nm::validate");
  const int64_t bad = detail::findBadGroup(matrix, pattern);
  SF_USER_CHECK(bad < 0) << "nm::validate: " << detail::describeBadGroup(matrix, pattern, bad);
}

bool isNM(const Tensor& dense, NMPattern pattern) {
  detail::checkPattern(pattern, "nm::isNM");
  return detail::findBadGroup(detail::denseMatrix(dense, "nm::isNM"), pattern) < 0;
}

}  // namespace sparseflow::nm
