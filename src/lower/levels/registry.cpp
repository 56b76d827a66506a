// The level-kind → LevelIteration table, and the default locate() (an error for searched levels).
#include "lower/levels/level_kinds.h"
#include "support/check.h"

namespace sparseflow::lower {

ir::Expr LevelIteration::locate(const LevelContext&, const ir::Expr&) const {
  SF_FAIL(kInternal) << "locate() on a level without random access";
}

const LevelIteration& levelIteration(LevelKind kind) {
  switch (kind) {
    case LevelKind::kDense: return denseIteration();
    case LevelKind::kCompressed: return compressedIteration();
    case LevelKind::kSingleton: return singletonIteration();
    case LevelKind::kRagged: return raggedIteration();
    case LevelKind::kFixed: return fixedIteration();
    case LevelKind::kNM: return nmIteration();
  }
  SF_FAIL(kNotSupported) << "no loop lowering for level kind " << static_cast<int>(kind);
}

}  // namespace sparseflow::lower
