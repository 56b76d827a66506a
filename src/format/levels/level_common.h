// Helpers shared by the level kinds: property text, and the checks of pos[] and crd[] runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "format/levels/level_impl.h"
#include "support/check.h"

namespace sparseflow::format {

/// "compressed", "compressed(nu)", "compressed(nu,no)": nu = not unique, no = not ordered.
std::string printWithProps(std::string_view name, const LevelType& type);
/// Parses "nu"/"no" (also "nonunique"/"unordered") parameters.
LevelProperties parseProps(const std::vector<std::string>& params, std::string_view text);
/// Parses a positive integer parameter; names the level text in the error.
int64_t parsePositiveParam(const std::string& param, std::string_view text);

/// pos has numParents+1 entries, starts at 0, never decreases and ends at crdSize.
void validatePositions(const Buffer& pos, int64_t numParents, int64_t crdSize,
                       const std::string& where);
/// crd[begin..end) lies in [0, extent) and, as the properties demand, increases (ordered) and
/// does not repeat (unique).
void validateRun(const LevelType& type, int64_t extent, const Buffer& crd, int64_t begin,
                 int64_t end, int64_t parent, const std::string& where);

const LevelImpl& denseLevelImpl();
const LevelImpl& compressedLevelImpl();
const LevelImpl& singletonLevelImpl();
const LevelImpl& raggedLevelImpl();
const LevelImpl& fixedLevelImpl();
const LevelImpl& nmLevelImpl();

}  // namespace sparseflow::format
