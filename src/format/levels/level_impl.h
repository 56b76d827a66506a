// The capability interface every level kind implements; the rest of sparseflow never switches on
// the kind. A new level kind is one new file in this folder plus one line in registry.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sparseflow/format.h"
#include "sparseflow/tensor.h"

namespace sparseflow::format {

/// parents × perParent positions of a level; throws kOutOfMemory when the count passes 2^63 (a
/// shape whose positions no machine could store), so no level's arithmetic wraps around.
int64_t childPositions(int64_t parents, int64_t perParent);

/// What a level kind can do and what it stores.
struct LevelCapabilities {
  bool hasPos = false;   ///< stores pos[] (parent count + 1 entries)
  bool hasCrd = false;   ///< stores crd[]
  bool hasMeta = false;  ///< stores packed metadata (n:m offsets)
  /// Stores positions for coordinates that may hold no entry (dense, ragged, n:m padding):
  /// zeros reached through such a leaf are fill, not entries, when coordinates are extracted.
  bool fillsZeros = false;
  /// Locating a coordinate under a parent is O(1) without a search (dense).
  bool randomAccess = false;
  /// Stores every coordinate of its extent under each parent, in order, with no arrays of its own
  /// (dense): a tensor whose levels all do is a plain array, and such levels index an assembled
  /// output by arithmetic.
  bool allCoordinates = false;
  /// Its number of children follows from the parents, the extent and the parameters alone, not
  /// from the entries (dense, n:m, fixed(k)): a build bounds it before allocating.
  bool childrenFromShape = false;
  /// The kind's name in MLIR 16's sparse_tensor encoding ("dense", "compressed", "singleton"), or
  /// empty where MLIR has none (codegen/mlir refuses such a level).
  std::string_view mlirName;
};

/// Input of one level's build step. Entries are sorted by level coordinates and unique; each
/// parent position covers a contiguous run of entries, [parentSeg[p], parentSeg[p+1]).
struct LevelBuildInput {
  const LevelType& type;
  int64_t extent;         ///< extent of this level's coordinate
  const int64_t* coords;  ///< coordinate at this level of entry e: coords[e * stride]
  int64_t stride;
  const std::vector<int64_t>& parentSeg;
  const std::string& where;  ///< "level 1 (compressed, d1)" for messages
};

/// Output of one level's build step.
struct LevelBuildOutput {
  std::vector<int64_t> pos;
  std::vector<int64_t> crd;
  std::vector<uint8_t> meta;
  std::vector<int64_t> childSeg;  ///< child positions' entry runs (numChildren + 1 entries)
  LevelType resolved;             ///< the type with data-chosen parameters filled in (ell's k)
};

/// Stored children of a list of parent positions, in storage order.
struct LevelExpansion {
  std::vector<int64_t> childPos;
  std::vector<int64_t> coord;
  std::vector<int64_t> parent;  ///< index into the parent list
};

class LevelImpl {
 public:
  virtual ~LevelImpl() = default;
  virtual LevelKind kind() const = 0;
  /// The name used in format text: "dense", "compressed", "singleton", "ragged", "fixed", "nm".
  virtual std::string_view name() const = 0;
  virtual LevelCapabilities capabilities() const = 0;
  /// Text of a level type: "compressed(nu)", "fixed(4)", "nm(2,4)".
  virtual std::string print(const LevelType& type) const;
  /// Builds a type from the parameter list inside the parentheses (may be empty).
  virtual LevelType parse(const std::vector<std::string>& params, std::string_view text) const = 0;
  /// What is wrong with a type's parameters however it was made (text or code), or empty.
  virtual std::string invalidParameters(const LevelType& type) const { return {}; }
  /// Whether a parameter of `type` is left for the data to choose when a tensor is built (ell's
  /// `fixed` without k): a kernel compiled for it reads the value from the tensor at run time.
  virtual bool chosenByData(const LevelType& type) const { return false; }
  /// Builds this level's arrays from sorted entries; throws on data the level cannot hold.
  virtual LevelBuildOutput build(const LevelBuildInput& in) const = 0;
  /// Number of positions this level holds under `numParents` parent positions.
  virtual int64_t numChildren(const LevelType& type, int64_t extent, const LevelStorage& storage,
                              int64_t numParents) const = 0;
  /// Appends the stored children (padding skipped) of each parent position in `parents`.
  virtual void expand(const LevelType& type, int64_t extent, const LevelStorage& storage,
                      const std::vector<int64_t>& parents, LevelExpansion& out) const = 0;
  /// Checks the arrays against the level's invariants; throws kInvalidFormat naming `where` and
  /// the offending position.
  virtual void validate(const LevelType& type, int64_t extent, const LevelStorage& storage,
                        int64_t numParents, const std::string& where) const = 0;
};

/// The implementation of a level kind (never null; throws for an unknown kind).
const LevelImpl& levelImpl(LevelKind kind);
/// The implementation whose name() is `name`, or null.
const LevelImpl* findLevelImpl(std::string_view name);

/// "level 1 (compressed, d1)": how messages name a level.
std::string describeLevel(const Format& format, int32_t level);

/// Bits per packed n:m offset: 2 for m ≤ 4, 4 for m ≤ 16, 8 for m ≤ 256.
int32_t nmMetaBits(int32_t m);
/// The offset stored for slot s in packed metadata.
inline int64_t readNMOffset(const uint8_t* meta, int64_t slot, int32_t bits) {
  int64_t bit = slot * bits;
  return (meta[bit >> 3] >> (bit & 7)) & ((1 << bits) - 1);
}

}  // namespace sparseflow::format
