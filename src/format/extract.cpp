// Reading entries back out of any format: level-by-level expansion of the stored positions.
#include <cmath>

#include "format/build_fast.h"
#include "format/levels/level_impl.h"
#include "sparseflow/build.h"
#include "support/check.h"
#include "support/memory.h"

namespace sparseflow {
namespace {

using format::LevelExpansion;
using format::levelImpl;

/// Calls emit(dimCoords, valuePosition) for every stored leaf position in storage order.
template <typename Emit>
void forEachLeaf(const Tensor& t, Emit&& emit) {
  const Format& f = t.format();
  const int32_t L = f.numLevels(), rank = t.rank();
  if (L == 0) {  // a rank-0 tensor: one value
    if (t.values().size() == 1) emit(static_cast<const int64_t*>(nullptr), int64_t{0});
    return;
  }
  // No stored values, no leaves: a 2^62 x 0 matrix must not expand its 2^62 rows.
  if (t.values().size() == 0) return;
  std::vector<LevelExpansion> levels(static_cast<size_t>(L));
  std::vector<int64_t> parents = {0};
  for (int32_t l = 0; l < L; ++l) {
    levelImpl(f.level(l).type.kind)
        .expand(f.level(l).type, f.levelExtent(l, t.shape()), t.level(l), parents,
                levels[static_cast<size_t>(l)]);
    parents = levels[static_cast<size_t>(l)].childPos;
  }
  const LevelExpansion& leaf = levels.back();
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (size_t i = 0; i < leaf.childPos.size(); ++i) {
    std::fill(dims.begin(), dims.end(), 0);
    size_t at = i;
    for (int32_t l = L - 1; l >= 0; --l) {
      const LevelExpansion& x = levels[static_cast<size_t>(l)];
      const LevelExpr& e = f.level(l).expr;
      int64_t c = x.coord[at];
      dims[static_cast<size_t>(e.dim)] += e.op == LevelExpr::Op::kDiv ? c * e.block : c;
      at = static_cast<size_t>(x.parent[at]);
    }
    bool inside = true;
    for (int32_t d = 0; d < rank; ++d) inside &= dims[static_cast<size_t>(d)] < t.shape()[d];
    if (inside) emit(dims.data(), leaf.childPos[i]);
  }
}

void appendCoo(const Tensor& t, Coo& out) {
  if (t.isHybrid()) {
    for (const Tensor& p : t.parts()) appendCoo(p, out);
    return;
  }
  if (format::extractFast(t, out)) return;
  const bool dropZeros =
      t.format().numLevels() == 0 ||
      levelImpl(t.format().levels().back().type.kind).capabilities().fillsZeros;
  const int32_t rank = t.rank();
  forEachLeaf(t, [&](const int64_t* dims, int64_t pos) {
    double v = t.values().value(pos);
    if (dropZeros && v == 0) return;
    if (rank > 0) out.coords.insert(out.coords.end(), dims, dims + rank);
    out.values.push_back(v);
  });
}

}  // namespace

Coo toCoo(const Tensor& tensor) {
  Coo out;
  out.shape = tensor.shape();
  appendCoo(tensor, out);
  return out;
}

std::vector<double> toDense(const Tensor& tensor) {
  const int64_t total = numElements(tensor.shape());
  // A sparse tensor of a large shape densifies to more than the machine holds: a named error,
  // not the OOM killer (the vector's zero fill touches every page).
  checkAllocation(total <= INT64_MAX / 8 ? total * 8 : -1, "a dense copy of the tensor");
  std::vector<double> dense(static_cast<size_t>(total), 0.0);
  if (!tensor.isHybrid() && tensor.format().isDenseRowMajor()) {
    for (int64_t i = 0; i < total; ++i) dense[static_cast<size_t>(i)] = tensor.values().value(i);
    return dense;
  }
  Coo coo = toCoo(tensor);
  const int32_t rank = coo.rank();
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    int64_t offset = 0;
    for (int32_t d = 0; d < rank; ++d) {
      offset = offset * coo.shape[static_cast<size_t>(d)] +
               coo.coords[static_cast<size_t>(e * rank + d)];
    }
    dense[static_cast<size_t>(offset)] += coo.values[static_cast<size_t>(e)];
  }
  return dense;
}

}  // namespace sparseflow
