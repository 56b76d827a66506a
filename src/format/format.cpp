// Format: construction checks and queries over levels, dimension expressions and widths.
#include "sparseflow/format.h"

#include "format/levels/level_impl.h"
#include "support/check.h"

namespace sparseflow {

Format::Format(int32_t rank, std::vector<LevelSpec> levels, int32_t posWidth, int32_t crdWidth)
    : rank_(rank), levels_(std::move(levels)), posWidth_(posWidth), crdWidth_(crdWidth) {
  SF_USER_CHECK(rank >= 0 && rank <= 64) << "format rank " << rank << " is outside [0, 64]";
  SF_USER_CHECK((posWidth == 32 || posWidth == 64) && (crdWidth == 32 || crdWidth == 64))
      << "index widths must be 32 or 64 (got pos " << posWidth << ", crd " << crdWidth << ")";
  std::vector<int> identity(static_cast<size_t>(rank), 0), div(identity), mod(identity);
  std::vector<int64_t> divBlock(static_cast<size_t>(rank), 0), modBlock(divBlock);
  for (size_t l = 0; l < levels_.size(); ++l) {
    const LevelExpr& e = levels_[l].expr;
    SF_USER_CHECK(e.dim >= 0 && e.dim < rank) << "format level " << l << " names dimension d"
                                              << e.dim << " of a rank-" << rank << " tensor";
    auto d = static_cast<size_t>(e.dim);
    switch (e.op) {
      case LevelExpr::Op::kIdentity: ++identity[d]; break;
      case LevelExpr::Op::kDiv: ++div[d], divBlock[d] = e.block; break;
      case LevelExpr::Op::kMod: ++mod[d], modBlock[d] = e.block; break;
    }
    SF_USER_CHECK(e.op == LevelExpr::Op::kIdentity || e.block > 0)
        << "format level " << l << ": block size must be positive";
    const LevelType& t = levels_[l].type;
    const std::string invalid = format::levelImpl(t.kind).invalidParameters(t);
    SF_USER_CHECK(invalid.empty()) << "format level " << l << ": " << invalid;
  }
  for (int32_t d = 0; d < rank; ++d) {
    auto i = static_cast<size_t>(d);
    bool plain = identity[i] == 1 && div[i] == 0 && mod[i] == 0;
    bool blocked = identity[i] == 0 && div[i] == 1 && mod[i] == 1 && divBlock[i] == modBlock[i];
    SF_USER_CHECK(plain || blocked)
        << "format: dimension d" << d << " must be stored by exactly one level (d" << d
        << "), or by two levels d" << d << "/b and d" << d << "%b with the same b";
  }
  SF_USER_CHECK(!levels_.empty() || rank == 0)
      << "format: a rank-" << rank << " tensor needs levels";
}

Format Format::hybrid(std::vector<Format> parts, int64_t splitK) {
  SF_USER_CHECK(parts.size() >= 2) << "a hybrid format needs at least two parts";
  Format f;
  f.rank_ = parts.front().rank();
  for (const Format& p : parts) {
    SF_USER_CHECK(!p.isHybrid()) << "hybrid parts must be plain formats";
    SF_USER_CHECK(p.rank() == f.rank_) << "hybrid parts must have the same rank";
  }
  f.posWidth_ = parts.front().posWidth();
  f.crdWidth_ = parts.front().crdWidth();
  f.parts_ = std::move(parts);
  f.splitK_ = splitK;
  return f;
}

bool Format::isDenseRowMajor() const {
  if (isHybrid() || static_cast<int32_t>(levels_.size()) != rank_) return false;
  for (int32_t l = 0; l < rank_; ++l) {
    const LevelSpec& s = levels_[static_cast<size_t>(l)];
    if (!format::levelImpl(s.type.kind).capabilities().allCoordinates || s.expr.dim != l ||
        s.expr.op != LevelExpr::Op::kIdentity) {
      return false;
    }
  }
  return true;
}

bool Format::needsData() const {
  if (isHybrid()) return true;
  for (const LevelSpec& s : levels_) {
    if (format::levelImpl(s.type.kind).chosenByData(s.type)) return true;
  }
  return false;
}

int64_t Format::levelExtent(int32_t l, const std::vector<int64_t>& shape) const {
  const LevelExpr& e = level(l).expr;
  int64_t size = shape.at(static_cast<size_t>(e.dim));
  switch (e.op) {
    case LevelExpr::Op::kIdentity: return size;
    case LevelExpr::Op::kDiv: return size / e.block + (size % e.block != 0 ? 1 : 0);
    case LevelExpr::Op::kMod: return e.block;
  }
  return size;
}

Format Format::withWidths(int32_t posWidth, int32_t crdWidth) const {
  if (isHybrid()) {
    std::vector<Format> parts;
    for (const Format& p : parts_) parts.push_back(p.withWidths(posWidth, crdWidth));
    return hybrid(std::move(parts), splitK_);
  }
  return Format(rank_, levels_, posWidth, crdWidth);
}

Format Format::withFixedK(int32_t level, int64_t k) const {
  std::vector<LevelSpec> levels = levels_;
  levels.at(static_cast<size_t>(level)).type.k = k;
  return Format(rank_, std::move(levels), posWidth_, crdWidth_);
}

}  // namespace sparseflow
