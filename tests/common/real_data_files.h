// The bundled real data files the tests read: which ones must be refused (and with what), and
// the lists of readable files, shared by the io, convert and compiler tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sparseflow/io.h"

namespace sparseflow::testing {

/// Files that must be refused, with a fragment of the error each must give (data/PROVENANCE.md).
inline const std::vector<std::pair<std::string, std::string>>& brokenDataFiles() {
  static const std::vector<std::pair<std::string, std::string>> kBroken = {
      {"debian-r-cran-matrix/external/wrong.mtx", "wrong.mtx:3: row index 0 is out of range"},
      {"suitesparse/LAGraph/data/complex.mtx", "complex Matrix Market files are not supported"},
      {"suitesparse/LAGraph/data/mangled1.mtx", "mangled1.mtx:1: unknown object 'mangled'"},
      {"suitesparse/ParU/Matrix/young1c.mtx", "complex"},
      {"suitesparse/KLU/Matrix/GD99_cc.mtx", "complex"},
      {"suitesparse/KLU/Matrix/arrowc.mtx", "complex"},
      {"suitesparse/KLU/Matrix/w156.mtx", "complex"},
      {"suitesparse/CXSparse/Matrix/mhd1280b", "complex"},
      {"suitesparse/CXSparse/Matrix/neumann", "complex"},
      {"mlir/test/Integration/data/coordinate_zero.tns", "coordinate"},
      {"mlir/test/Integration/data/coordinate_negative.tns", "coordinate"},
      {"mlir/test/Integration/data/coordinate_overflow.tns", "coordinate_overflow.tns:"},
      {"mlir/test/Integration/data/coordinate_above_dimension.tns", "coordinate"},
      {"mlir/test/Integration/data/rank_511.tns", "rank"},
      // TACO's 4x3x2 array lists 32 values; TACO reads the first 24 and drops the rest.
      {"taco/test/data/d432.ttx", "d432.ttx:28: more values than the 24 declared on line 3"},
  };
  return kBroken;
}

inline bool isBrokenDataFile(const std::filesystem::path& dataDir, const std::filesystem::path& p) {
  for (const auto& [name, fragment] : brokenDataFiles()) {
    if (p == dataDir / name) return true;
  }
  return false;
}

/// Every file the readers take: matrix, tensor and weight files, and CSparse's headerless
/// triplets; sorted.
inline std::vector<std::filesystem::path> readableDataFiles(const std::filesystem::path& dataDir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dataDir)) {
    if (!entry.is_regular_file() || isBrokenDataFile(dataDir, entry.path())) continue;
    const std::filesystem::path& p = entry.path();
    const FileKind kind = fileKindFromPath(p.string());
    const bool triplet =
        kind == FileKind::kAuto && !p.has_extension() && p.parent_path().filename() == "Matrix";
    // coordinate_narrow.tns is valid FROSTT; only an 8-bit crd would refuse it.
    if (kind != FileKind::kAuto || triplet) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The readable Matrix Market files (all of them read as matrices).
inline std::vector<std::filesystem::path> readableMatrixMarketFiles(
    const std::filesystem::path& dataDir) {
  std::vector<std::filesystem::path> out;
  for (const auto& p : readableDataFiles(dataDir)) {
    if (p.extension() == ".mtx") out.push_back(p);
  }
  return out;
}

/// The files a per-file test is instantiated for: all of them, except under the sanitizers, where
/// every third file of each kind (extension) is taken, the first of each kind always. The
/// sanitizers look for memory errors along code paths that a third of the files walk as well as
/// all of them; the release run checks every file's values (make test must stay under 25 minutes).
inline std::vector<std::filesystem::path> perFileTestFiles(
    const std::vector<std::filesystem::path>& files) {
#ifdef SPARSEFLOW_SANITIZED
  std::vector<std::filesystem::path> out;
  std::vector<std::pair<std::string, int>> seen;  // extension -> files of it so far
  for (const auto& p : files) {
    const std::string kind = p.extension().string();
    auto it =
        std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == kind; });
    if (it == seen.end()) it = seen.insert(seen.end(), {kind, 0});
    if (it->second++ % 3 == 0) out.push_back(p);
  }
  return out;
#else
  return files;
#endif
}

}  // namespace sparseflow::testing
