// The per-kind implementations of LevelIteration (one file each) and the registry's view of them.
#pragma once

#include "lower/level_iteration.h"

namespace sparseflow::lower {

const LevelIteration& denseIteration();
const LevelIteration& compressedIteration();
const LevelIteration& singletonIteration();
const LevelIteration& raggedIteration();
const LevelIteration& fixedIteration();
const LevelIteration& nmIteration();

}  // namespace sparseflow::lower
