// Lowering (stages I and II): a checked index-notation kernel plus the formats of its tensors
// become one loop-IR statement, with the list of arrays, extents and parameters it reads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/ir.h"
#include "lower/array_names.h"
#include "sparseflow/format.h"

namespace sparseflow::lower {

/// A tensor argument of the lowered kernel: the output first, then the inputs.
struct TensorArg {
  std::string name;
  Format format;  ///< the format the kernel reads (dense when `densify`)
  int32_t rank = 0;
  ir::ScalarType valueType = ir::ScalarType::kF32;
  /// The runtime converts this input to dense before the call: it appears where the kernel cannot
  /// skip its zeros (e.g. `exp(A(i,j))`) or in a max reduction.
  bool densify = false;
};

/// Which array of which tensor argument an ir::Array stands for.
struct ArrayBinding {
  enum class Kind { kValues, kPos, kCrd, kMeta, kSlots };  ///< kSlots: a scalar, fixed(k)'s k
  ir::Array array;
  int32_t tensor = 0;  ///< index into LoweredKernel::tensors
  Kind kind = Kind::kValues;
  int32_t level = 0;
};

struct LoweredKernel {
  ir::Stmt body;
  std::vector<TensorArg> tensors;      ///< [0] is the output
  std::vector<ArrayBinding> arrays;    ///< every tensor array the body may use
  std::vector<std::string> indexVars;  ///< extents array order; named n_<var> in the body
  std::vector<std::string> params;     ///< params array order; named p_<name>
  ir::ScalarType computeType = ir::ScalarType::kF32;
  /// A sparse output shares the pattern (pos/crd arrays) of this input; empty for dense output.
  std::string outputPatternFrom;
  bool accumulate = false;  ///< `+=`: the output is not cleared first
  /// A sparse output with a pattern of its own is assembled in two phases: `symbolic` counts the
  /// entries under each parent of level `assembledLevel` (its last, compressed level) into
  /// pos[p + 1]; `body` then writes coordinates and values at the summed positions.
  int32_t assembledLevel = -1;
  ir::Stmt symbolic;
  /// The output is collected as a list (format listFormat(rank), assembledLevel 0): the symbolic
  /// phase counts the writes into pos[1], the numeric phase stores each write's coordinates and
  /// value as the loops reach them, repeats included; the runtime sorts the list and sums repeats
  /// into convertOutputTo (lower/assembly.h). Runs on one thread.
  bool listOutput = false;
  /// The assembly has a hash-workspace version: the runtime passes its capacity as one more
  /// extent after the index variables' (sf_ws_capacity, see lower/assembly.h).
  bool hashCapacity = false;
  std::vector<std::string> loopOrders;  ///< per loop nest: "i, k, j"
  /// The dense temporaries the body allocates around its nests (a reduction under a function),
  /// row-major over their indices, and the output's indices: what schedule::fuseTemporaries needs.
  struct TemporaryArray {
    ir::Array values;
    std::vector<std::string> indices;
  };
  std::vector<TemporaryArray> temporaries;
  std::vector<std::string> outputIndices;
  std::vector<std::string> notes;  ///< decisions a user should see (densified operands...)
  /// The output's format when the kernel assembles another (assemblyFormatFor): the runtime
  /// converts the assembled output to this one (one pass over its entries). Unset: none.
  std::optional<Format> convertOutputTo;
};

struct LowerOptions {
  /// Format of each tensor by name; absent means dense (row-major).
  std::map<std::string, Format> formats;
  /// Run the outermost loop of each nest in parallel where that cannot race.
  bool parallel = true;
  /// Loop names in the order a schedule's reorder() asks for ("i", "k", "j"; blocked indices as
  /// "i_blk"/"i_in"); empty: the default order. Must respect the sparse operands' storage order.
  std::vector<std::string> order;
  /// sparse_reorder(): inputs read through a copy whose levels follow these index orders.
  std::map<std::string, std::vector<std::string>> levelOrders;
  /// sparse_fuse(): inputs read through a coordinate (coo) copy with levels in these orders.
  std::map<std::string, std::vector<std::string>> fusedLevels;
  /// A sparse output given as listFormat(rank) is collected as a list of writes (LoweredKernel::
  /// listOutput) instead of being refused where its rows cannot be assembled one at a time.
  bool listOutput = false;
};

/// The formats an output of format `f` can be assembled in when lowering cannot produce `f`
/// itself, best first: dense levels over one last compressed level (ordered, unique), over the
/// dimensions in the order `f`'s levels first store them (dcsr, coo, bsr, ell, hyb -> csr; dcsc
/// -> csc; csf -> levels[d0:dense, d1:dense, d2:compressed]), then in every other order up to
/// rank 3 (a csr output of csc inputs is assembled as csc) or, beyond rank 3, in dimension order
/// only; `f`'s index widths. The runtime converts.
std::vector<Format> assemblyFormatsFor(const Format& f);

/// Dense levels over one last compressed level, over the dimensions `dims` in that order, with
/// `widthsOf`'s index widths (csr for {0, 1}, csc for {1, 0}).
Format compressedInOrder(const Format& widthsOf, const std::vector<int32_t>& dims);

/// The dimensions in the order `f`'s levels first store them (a hybrid: its first part's).
std::vector<int32_t> storageDimensions(const Format& f);

/// The format of an output collected as a list (LowerOptions::listOutput): the dimensions in
/// order, a first compressed level and singletons below it, unordered, repeats allowed, 64-bit
/// positions and coordinates.
Format listFormat(int32_t rank);

/// Lowers a checked kernel. Throws kNotSupported naming the tensors and index for what this
/// version cannot do yet (co-iteration of several sparse operands over one index, sparse outputs
/// other than the pattern of a sparse input).
LoweredKernel lowerKernel(const expr::CheckedKernel& kernel, const LowerOptions& options);

}  // namespace sparseflow::lower
