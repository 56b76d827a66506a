// The tuning database (docs/tune.md): the autoconfigurator's decisions on disk, as JSON lines keyed
// by kernel, machine and input fingerprint, so that a later call on the same problem reuses the
// choice without timing anything. Appending is one write per record; the last record of a key wins;
// lines that do not parse (a write cut short) are skipped. A lookup reads only the lines of its
// inputs: each process keeps an index of the file's lines by their inputs field, extended by the
// lines appended since its last lookup (a file replaced at the path is indexed again).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "sparseflow/kernel.h"
#include "sparseflow/tensor.h"
#include "tune/space.h"

namespace sparseflow::tune {

/// The machine as the database keys it: the CPU model, the SIMD lanes Highway dispatches to and
/// the OpenMP thread count ("AMD EPYC | f32x16 | 2 threads").
std::string machineFingerprint();

/// The inputs as the database keys them, per input by name: dtype, format, shape, and for stored
/// sparse inputs the stored count and a hash of their index arrays at up to 4,096 evenly spaced
/// positions per array (`A:f32:csr:13436x13436:stored=94926:h=1f0c...; B:f32:dense:13436x64`). The
/// values do not enter it: the best configuration depends on the pattern, not on the numbers.
/// Costs microseconds on any size (the database's hit path must stay far below a kernel call).
std::string inputFingerprint(const std::map<std::string, const Tensor*>& inputs);

/// The database key's kernel part: the text without blanks, the dtypes asked for, the formats
/// pinned for operands that are not searched, and the searched operands' names
/// ("C(i,j)=A(i,k)*B(k,j) | pinned X=csr | tuning A"). A decision found under it never overrides
/// what the caller pinned.
std::string decisionKey(const std::string& text, const KernelOptions& options,
                        const std::map<std::string, const Tensor*>& tuned);

/// One decision.
struct TuningRecord {
  std::string kernel, machine, inputs;  ///< the key
  Config chosen;
  double medianMs = 0, defaultMs = 0;
  int64_t space = 0;
  int measured = 0;
  std::string model;  ///< the cost model that ranked the space ("" when exhaustive)
};

class TuningDatabase {
 public:
  /// The file at `path`; empty: $SPARSEFLOW_TUNE_DB, else `tuning.jsonl` in the kernel cache's
  /// directory (docs/jit.md); "-", or none of them set: no database (find finds nothing, add
  /// writes nothing, path() is empty).
  explicit TuningDatabase(std::filesystem::path path = {});

  const std::filesystem::path& path() const { return path_; }

  /// The last record of this key, if any.
  std::optional<TuningRecord> find(const std::string& kernel, const std::string& machine,
                                   const std::string& inputs) const;

  /// Appends `record` (creating the file and its directory). Errors name the file.
  void add(const TuningRecord& record) const;

 private:
  std::filesystem::path path_;
};

}  // namespace sparseflow::tune
