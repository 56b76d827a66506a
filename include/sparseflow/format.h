// Storage formats: per-level types, the dimension→level map, index widths, presets and hybrids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparseflow {

/// Kind of one storage level. Values are stable (C ABI, .sft files): append only.
enum class LevelKind : int32_t {
  kDense = 0,       ///< all coordinates of the extent; stores nothing
  kCompressed = 1,  ///< pos[] + crd[] (sparse_variable)
  kSingleton = 2,   ///< one crd per parent position, no pos (COO's lower levels)
  kRagged = 3,      ///< pos[] only: coordinates 0..len-1 of each parent (dense_variable)
  kFixed = 4,       ///< exactly k crd per parent, padding slots hold crd -1 (ELL, sparse_fixed)
  kNM = 5,          ///< n stored of every group of m coordinates, packed in-group offsets
};

/// The arrays a level of this kind stores (LevelStorage's pos, crd and meta; the others are
/// empty).
struct LevelArrays {
  bool pos = false;
  bool crd = false;
  bool meta = false;  ///< packed metadata (n:m offsets)
};
LevelArrays storedArrays(LevelKind kind);

/// Per-level properties (a struct, never a row of booleans in signatures).
struct LevelProperties {
  bool ordered = true;  ///< coordinates increase within a parent
  bool unique = true;   ///< no coordinate repeats within a parent
  bool operator==(const LevelProperties&) const = default;
};

/// The type of one level: its kind, properties and parameters.
struct LevelType {
  LevelKind kind = LevelKind::kDense;
  LevelProperties props;
  int64_t k = 0;  ///< kFixed: slots per parent (0 = choose from the data when building)
  int32_t n = 0;  ///< kNM: stored per group
  int32_t m = 0;  ///< kNM: group size

  static LevelType dense() { return {}; }
  static LevelType compressed(LevelProperties p = {}) { return {LevelKind::kCompressed, p}; }
  static LevelType singleton(LevelProperties p = {}) { return {LevelKind::kSingleton, p}; }
  static LevelType ragged() { return {LevelKind::kRagged, {}}; }
  static LevelType fixed(int64_t k) { return {LevelKind::kFixed, {}, k}; }
  static LevelType nm(int32_t n, int32_t m) { return {LevelKind::kNM, {}, 0, n, m}; }
  bool operator==(const LevelType&) const = default;
};

/// How a level's coordinate derives from one tensor dimension: d, d / b (block index) or d % b
/// (offset in the block). Blocking i→(i/b, i%b) uses two levels on the same dimension.
struct LevelExpr {
  enum class Op : int32_t { kIdentity = 0, kDiv = 1, kMod = 2 };
  int32_t dim = 0;
  Op op = Op::kIdentity;
  int64_t block = 1;  ///< b for kDiv and kMod
  bool operator==(const LevelExpr&) const = default;
};

/// One level of a format: its type and the dimension expression it stores.
struct LevelSpec {
  LevelType type;
  LevelExpr expr;
  bool operator==(const LevelSpec&) const = default;
};

/// A storage format for a tensor of a fixed rank: the ordered levels (outermost first), each with
/// the dimension expression it stores, and the index widths. A hybrid format instead holds parts
/// (each a plain format) whose tensors sum to the whole, e.g. `hyb` = ELL part + COO remainder.
class Format {
 public:
  Format() = default;
  /// A plain format from levels; checks that the levels cover each dimension exactly once
  /// (identity, or one kDiv and one kMod level with the same block).
  Format(int32_t rank, std::vector<LevelSpec> levels, int32_t posWidth = 32, int32_t crdWidth = 32);
  /// A hybrid of plain parts of the same rank. `splitK` is the ELL width of `hyb` (0 = auto).
  static Format hybrid(std::vector<Format> parts, int64_t splitK = 0);

  /// Parses a preset or the general `levels[...]` form for a tensor of `rank` dimensions:
  /// dense, csr, csc, coo, dcsr, dcsc, bsr:RxC, ell[:K], hyb[:K], N:M, csf, dcsf, with an optional
  /// `@i64` (positions and coordinates) or `@p64` (positions only) width suffix.
  /// The general form: `levels[d0:dense, d1/4:compressed, d1%4:fixed(4), d0:compressed(nu,no)]`.
  static Format parse(std::string_view text, int32_t rank);
  /// The preset name when the format is one (as parse accepts it), else the general form.
  std::string toString() const;

  int32_t rank() const { return rank_; }
  int32_t numLevels() const { return static_cast<int32_t>(levels_.size()); }
  const std::vector<LevelSpec>& levels() const { return levels_; }
  const LevelSpec& level(int32_t l) const { return levels_.at(static_cast<size_t>(l)); }
  int32_t posWidth() const { return posWidth_; }
  int32_t crdWidth() const { return crdWidth_; }

  bool isHybrid() const { return !parts_.empty(); }
  const std::vector<Format>& parts() const { return parts_; }
  int64_t splitK() const { return splitK_; }

  /// True when every level is dense with identity expressions in dimension order (row-major).
  bool isDenseRowMajor() const;
  /// True when some level's parameters are to be chosen from the data (ell without K, hyb).
  bool needsData() const;
  /// Extent of level l for a tensor of the given shape (d, ceil(d/b) or b).
  int64_t levelExtent(int32_t l, const std::vector<int64_t>& shape) const;
  /// The same format with other index widths (hybrid parts included).
  Format withWidths(int32_t posWidth, int32_t crdWidth) const;
  /// The same format with a level's fixed width set (used when `ell` learns K from the data).
  Format withFixedK(int32_t level, int64_t k) const;

  bool operator==(const Format& other) const = default;

 private:
  int32_t rank_ = 0;
  std::vector<LevelSpec> levels_;
  int32_t posWidth_ = 32;
  int32_t crdWidth_ = 32;
  std::vector<Format> parts_;
  int64_t splitK_ = 0;
};

/// The names parse accepts as presets, for help texts.
std::vector<std::string> formatPresetNames();

}  // namespace sparseflow
