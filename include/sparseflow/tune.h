// The autoconfigurator's C++ API (docs/tune.md): choose the formats of a kernel's sparse operands
// and its schedule for the inputs at hand, by a learned cost model plus a little timing, and
// remember the decision (a tuning database keyed by kernel, machine and input pattern) so that
// later calls on the same problem reuse it without timing. Link sf_tune.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sparseflow/kernel.h"
#include "sparseflow/tensor.h"

namespace sparseflow {

struct TuneOptions {
  /// The tuning database (JSON lines); empty: $SPARSEFLOW_TUNE_DB, else tuning.jsonl in the
  /// kernel cache's directory (docs/jit.md). "-": none (nothing read or recorded).
  std::string database;
  /// The cost model; empty: $SPARSEFLOW_TUNE_MODEL, else the model that ships in data/tune/.
  std::string model;
  /// Configurations timed besides the default, at most (and at most 5% of the space).
  int budget = 16;
  /// Time every configuration (evaluation; no model needed). Slow: minutes.
  bool exhaustive = false;
  /// Search even when the database holds a decision (the new one is recorded and wins).
  bool retune = false;
  /// The operands whose format is searched; empty: every input stored sparse. The others keep
  /// their format in KernelOptions::formats.
  std::vector<std::string> tuned;
};

/// One configuration the search timed.
struct TuneCandidate {
  std::map<std::string, std::string> formats;
  std::string schedule;
  bool handTuned = true;
  bool parallel = true;  ///< false: one thread (`sparseflow run --serial`)
  double predicted = 0;  ///< the model's score (higher: predicted faster); NaN when unranked
  double medianMs = 0;   ///< NaN when it failed
  std::string error;
};

/// What was chosen and why: the configuration, its `sparseflow run` spelling, and the times.
struct TuneResult {
  std::map<std::string, std::string> formats;  ///< every bound operand's format
  std::string schedule;                        ///< "" = the default schedule
  bool handTuned = true;
  bool parallel = true;   ///< false: one thread (KernelOptions::parallel, `--serial`)
  std::string arguments;  ///< `--format A=bsr:4x4 --schedule '...'`, as sparseflow run takes it
  double medianMs = 0;    ///< the chosen configuration's steady-state time per call
  double defaultMs = 0;   ///< the configuration as given
  int64_t space = 0;      ///< legal configurations (0 when it came from the database)
  int measured = 0;       ///< configurations timed now (0 when it came from the database)
  bool fromDatabase = false;
  std::string database, model, machine, inputs;  ///< the files and the key
  std::vector<TuneCandidate> candidates;         ///< the timed ones, best-ranked first
};

/// The key the tuning database gives `inputs`: dtypes, formats, shapes and the stored pattern
/// (sampled), not the values. Inputs with the same fingerprint get the same decision.
std::string tuningFingerprint(const std::map<std::string, const Tensor*>& inputs);

/// Tunes `text` for `inputs` (by name, in the formats the caller holds them): the database's
/// decision for this kernel, machine and input pattern if it has one (and not `retune`), else a
/// search whose decision is recorded. Errors: those of Kernel::compile; kInvalidArgument when no
/// input is sparse or a tuned name is not an input; kIoError naming a model or database file.
TuneResult tuneKernel(const std::string& text, const std::map<std::string, const Tensor*>& inputs,
                      const KernelOptions& options = {}, const TuneOptions& tuneOptions = {});

/// Compiles `text` for `inputs` as KernelOptions::tune says: kOff compiles `options` as given;
/// kDatabase uses the database's decision when there is one (never times anything); kSearch
/// uses it or searches (tuneKernel()). `result` (optional) receives the decision; with kDatabase
/// and no decision, its fromDatabase is false and it describes `options` as given.
Kernel compileTuned(const std::string& text, const std::map<std::string, const Tensor*>& inputs,
                    const KernelOptions& options, const TuneOptions& tuneOptions = {},
                    TuneResult* result = nullptr);

}  // namespace sparseflow
