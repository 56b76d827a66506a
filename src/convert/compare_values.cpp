// compareValues: a converted tensor against its source, entry by entry in float64, in memory
// proportional to the stored entries (rows merged for matrices, sorted coordinates otherwise).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "convert/csr_rows.h"
#include "convert/direct_common.h"
#include "format/format_shapes.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow {
namespace {

/// Sums over the compared positions (see ValueComparison).
class Tally {
 public:
  explicit Tally(const std::vector<int64_t>& shape) : shape_(shape) {}

  /// A position with value a in the source and b in the result (0 where one does not store it).
  void add(const int64_t* coords, double a, double b) {
    const bool finiteBoth = std::isfinite(a) && std::isfinite(b);
    ++c_.compared;
    if (b != 0) ++c_.kept;
    if (!std::isfinite(a)) ++c_.nonFinite;
    const bool same = a == b || (std::isnan(a) && std::isnan(b));
    if (!same) {
      ++c_.changed;
      if (c_.firstChange.empty()) c_.firstChange = describe(coords, a, b);
    }
    if (!finiteBoth) {
      if (!same) c_.maxAbsError = std::numeric_limits<double>::infinity();
      return;
    }
    const double error = std::fabs(a - b), magnitude = std::fabs(a);
    c_.maxAbsError = std::max(c_.maxAbsError, error);
    if (a != 0) c_.maxRelError = std::max(c_.maxRelError, error / magnitude);
    sumAbsError_ += error;
    sumSqError_ += error * error;
    sumAbs_ += magnitude;
    sumSq_ += a * a;
    if (b != 0) sumAbsKept_ += magnitude;
  }

  ValueComparison finish() {
    c_.total = numElements(shape_);
    c_.meanAbsError = c_.total ? sumAbsError_ / static_cast<double>(c_.total) : 0;
    c_.relativeFrobeniusError =
        sumSq_ > 0 ? std::sqrt(sumSqError_ / sumSq_)
                   : (sumSqError_ > 0 ? std::numeric_limits<double>::infinity() : 0);
    c_.keptMagnitudeFraction = sumAbs_ > 0 ? sumAbsKept_ / sumAbs_ : 1.0;
    return c_;
  }

 private:
  std::string describe(const int64_t* coords, double a, double b) const {
    std::string where = "(";
    for (size_t d = 0; d < shape_.size(); ++d) {
      where += (d ? ", " : "") + std::to_string(coords[d]);
    }
    char text[128];
    std::snprintf(text, sizeof text, "): %.17g -> %.17g", a, b);
    return where + text;
  }

  std::vector<int64_t> shape_;
  ValueComparison c_;
  double sumAbsError_ = 0, sumSqError_ = 0, sumAbs_ = 0, sumSq_ = 0, sumAbsKept_ = 0;
};

/// A matrix as sorted, duplicate-free rows: the tensor itself when it is such a csr, else a
/// float64 csr built from its entries (O(stored entries)).
Tensor canonicalCsr(const Tensor& t) {
  const Format csr = Format::parse("csr", 2);
  int32_t rowDim = -1;
  if (!t.isHybrid() && format::isCompressedRows(t.format(), rowDim) && rowDim == 0) {
    const LevelStorage& level = t.level(1);
    const bool ordered = conversion::withIndex(t.format().posWidth(), [&](auto p) {
      return conversion::withIndex(t.format().crdWidth(), [&](auto c) {
        using P = decltype(p);
        using C = decltype(c);
        return conversion::csrRowsAreOrdered(level.pos.as<P>(), level.crd.as<C>(), t.shape()[0],
                                             t.shape()[1]);
      });
    });
    if (ordered) return t;
  }
  BuildOptions build;
  build.dtype = DType::kF64;
  return fromCoo(toCoo(t), Format::parse("csr@i64", 2), build);
}

template <typename P, typename C>
struct CsrView {
  const P* pos;
  const C* crd;
  const Buffer* values;
  explicit CsrView(const Tensor& t)
      : pos(t.level(1).pos.as<P>()), crd(t.level(1).crd.as<C>()), values(&t.values()) {}
};

void compareMatrices(const Tensor& a, const Tensor& b, Tally& tally) {
  const Tensor ca = canonicalCsr(a), cb = canonicalCsr(b);
  const int64_t rows = a.shape()[0];
  auto run = [&](auto pa, auto ia, auto pb, auto ib) {
    const CsrView<decltype(pa), decltype(ia)> x(ca);
    const CsrView<decltype(pb), decltype(ib)> y(cb);
    int64_t coords[2];
    for (int64_t r = 0; r < rows; ++r) {
      coords[0] = r;
      int64_t p = x.pos[r], q = y.pos[r];
      const int64_t pe = x.pos[r + 1], qe = y.pos[r + 1];
      while (p < pe || q < qe) {
        const int64_t cp = p < pe ? static_cast<int64_t>(x.crd[p]) : INT64_MAX;
        const int64_t cq = q < qe ? static_cast<int64_t>(y.crd[q]) : INT64_MAX;
        const int64_t c = std::min(cp, cq);
        coords[1] = c;
        const double va = cp == c ? x.values->value(p++) : 0.0;
        const double vb = cq == c ? y.values->value(q++) : 0.0;
        tally.add(coords, va, vb);
      }
    }
  };
  conversion::withIndex(ca.format().posWidth(), [&](auto pa) {
    conversion::withIndex(ca.format().crdWidth(), [&](auto ia) {
      conversion::withIndex(cb.format().posWidth(), [&](auto pb) {
        conversion::withIndex(cb.format().crdWidth(), [&](auto ib) { run(pa, ia, pb, ib); });
      });
    });
  });
}

/// Entries sorted by coordinates with repeated coordinates summed.
struct SortedEntries {
  int32_t rank;
  std::vector<int64_t> coords;
  std::vector<double> values;
  explicit SortedEntries(const Tensor& t) : rank(t.rank()) {
    Coo coo = toCoo(t);
    const int64_t n = coo.numEntries();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    const int64_t* c = coo.coords.data();
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return std::lexicographical_compare(c + x * rank, c + x * rank + rank, c + y * rank,
                                          c + y * rank + rank);
    });
    for (int64_t e : order) {
      const int64_t* at = c + e * rank;
      if (!values.empty() && std::equal(at, at + rank, coords.end() - rank)) {
        values.back() += coo.values[static_cast<size_t>(e)];
        continue;
      }
      coords.insert(coords.end(), at, at + rank);
      values.push_back(coo.values[static_cast<size_t>(e)]);
    }
  }
  size_t size() const { return values.size(); }
  const int64_t* at(size_t e) const { return coords.data() + e * static_cast<size_t>(rank); }
};

void compareTensors(const Tensor& a, const Tensor& b, Tally& tally) {
  const SortedEntries x(a), y(b);
  const int32_t rank = a.rank();
  size_t p = 0, q = 0;
  while (p < x.size() || q < y.size()) {
    int order = 0;  // <0: x's entry first, >0: y's first, 0: the same position
    if (p == x.size()) {
      order = 1;
    } else if (q == y.size()) {
      order = -1;
    } else {
      const int64_t *cx = x.at(p), *cy = y.at(q);
      order = std::lexicographical_compare(cx, cx + rank, cy, cy + rank)   ? -1
              : std::lexicographical_compare(cy, cy + rank, cx, cx + rank) ? 1
                                                                           : 0;
    }
    if (order < 0) {
      tally.add(x.at(p), x.values[p], 0.0), ++p;
    } else if (order > 0) {
      tally.add(y.at(q), 0.0, y.values[q]), ++q;
    } else {
      tally.add(x.at(p), x.values[p], y.values[q]), ++p, ++q;
    }
  }
}

}  // namespace

std::string ValueComparison::toString() const {
  char text[256];
  std::snprintf(text, sizeof text,
                "%lld of %lld positions compared changed, max abs error %.4g, max rel error "
                "%.4g, relative Frobenius error %.4g",
                static_cast<long long>(changed), static_cast<long long>(compared), maxAbsError,
                maxRelError, relativeFrobeniusError);
  return std::string(text) + (firstChange.empty() ? "" : "; first change at " + firstChange);
}

ValueComparison compareValues(const Tensor& source, const Tensor& converted) {
  SF_USER_CHECK(source.shape() == converted.shape())
      << "compareValues: the source (" << source.summary() << ") and the converted tensor ("
      << converted.summary() << ") differ in shape";
  Tally tally(source.shape());
  if (source.rank() == 2) {
    compareMatrices(source, converted, tally);
  } else {
    compareTensors(source, converted, tally);
  }
  return tally.finish();
}

}  // namespace sparseflow
