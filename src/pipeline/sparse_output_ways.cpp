// lowerSparseOutputAnotherWay (see sparse_output_ways.h).
#include "pipeline/sparse_output_ways.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lower/nest_builder.h"
#include "lower/normalize.h"
#include "sparseflow/error.h"

namespace sparseflow::pipeline {
namespace {

using Lowered = std::optional<lower::LoweredKernel>;

Lowered lowerWith(const CheckedStage& checked, const lower::LowerOptions& options) {
  try {
    return lower::lowerKernel(checked.checked, options);
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// The kernel with its output in `format` or, when lowering does not assemble that (dcsr, coo, bsr,
/// csf, a permuted level order...), assembled in dense levels over a last compressed one, in that
/// format's dimension order (else another), then converted by the runtime.
Lowered withAssembledOutput(const CheckedStage& checked, lower::LowerOptions options,
                            const Format& format) {
  const std::string& output = checked.checked.output;
  options.formats[output] = format;
  if (auto done = lowerWith(checked, options)) return done;
  for (const Format& assembly : lower::assemblyFormatsFor(format)) {
    if (assembly == format) continue;
    options.formats[output] = assembly;
    auto done = lowerWith(checked, options);
    if (!done) continue;
    done->convertOutputTo = format;
    done->notes.push_back("output " + output + " (" + format.toString() + ") is assembled as " +
                          assembly.toString() + ", then converted (one pass over its entries)");
    return done;
  }
  return std::nullopt;
}

/// Every sparse input not already dense levels over a last compressed one, read through such a
/// copy in its level order (csr for coo, bsr, ell and hyb), converted once while its contents do
/// not change (runtime/conversion_cache.h): the options, and a note per copied input.
std::pair<lower::LowerOptions, std::map<std::string, std::string>> levelOrderCopies(
    const CheckedStage& checked) {
  lower::LowerOptions copies = checked.lowerOptions;
  std::map<std::string, std::string> notes;
  for (auto& [name, f] : copies.formats) {
    if (name == checked.checked.output || lower::isDenseFormat(f)) continue;
    const Format compressed = lower::assemblyFormatsFor(f).front();
    if (compressed == f) continue;
    notes[name] = "input " + name + " (" + f.toString() + ") is read through a " +
                  compressed.toString() + " copy (converted once while its contents do not change)";
    f = compressed;
  }
  return {copies, notes};
}

/// The compressed copy of `access`'s tensor (in `format`) whose levels take the output's indices
/// first, in the output's order, then the others in their storage order.
Format outputOrderCopy(const expr::Access& access, const Format& format,
                       const std::vector<std::string>& outputIndices) {
  std::vector<int32_t> dims;
  auto add = [&](int32_t d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
  };
  for (const std::string& index : outputIndices) {
    for (size_t d = 0; d < access.indices.size(); ++d)
      if (access.indices[d] == index) add(static_cast<int32_t>(d));
  }
  for (int32_t d : lower::storageDimensions(format)) add(d);
  return lower::compressedInOrder(format.isHybrid() ? format.parts().front() : format, dims);
}

}  // namespace

std::optional<lower::LoweredKernel> lowerSparseOutputAnotherWay(const CheckedStage& checked) {
  const std::string& output = checked.checked.output;
  const auto format = checked.lowerOptions.formats.find(output);
  if (format == checked.lowerOptions.formats.end() || format->second.rank() < 1)
    return std::nullopt;
  // 1. The output assembled in another format and converted.
  if (auto done = withAssembledOutput(checked, checked.lowerOptions, format->second)) return done;
  // 2. Inputs whose storage reaches an output row more than once (coo's row level, bsr blocks,
  // ell slots, a hybrid's parts) through compressed copies in their level order.
  auto [copies, copyNotes] = levelOrderCopies(checked);
  if (!copyNotes.empty()) {
    if (auto done = withAssembledOutput(checked, copies, format->second)) {
      for (const auto& [name, note] : copyNotes) done->notes.push_back(note);
      return done;
    }
  }
  // 3. One sparse input at a time through a copy in the output's index order, over step 2's
  // copies of the others (A^T B into csr: A as csc, so the loops walk C's rows outermost and
  // locate B's rows, Gustavson's order; reordering B as well would make it an inner product over
  // every (i, j)).
  std::set<std::string> seen;
  for (const expr::Access* a : lower::allAccesses(*checked.checked.statement.rhs)) {
    const auto it = checked.lowerOptions.formats.find(a->tensor);
    if (it == checked.lowerOptions.formats.end() || a->tensor == output ||
        lower::isDenseFormat(it->second) || !seen.insert(a->tensor).second) {
      continue;
    }
    const Format copy = outputOrderCopy(*a, it->second, checked.checked.statement.lhs.indices);
    if (copy == it->second) continue;
    lower::LowerOptions reordered = copies;
    reordered.formats[a->tensor] = copy;
    if (auto done = withAssembledOutput(checked, reordered, format->second)) {
      for (const auto& [name, note] : copyNotes)
        if (name != a->tensor) done->notes.push_back(note);
      done->notes.push_back("input " + a->tensor + " (" + it->second.toString() +
                            ") is read through a " + copy.toString() +
                            " copy in the output's index order (converted once while its "
                            "contents do not change)");
      return done;
    }
  }
  // 4. The writes collected as a list, then sorted and summed into the format
  // (lower/assembly.h), one thread: the inputs as given, else through step 2's copies.
  lower::LowerOptions options = checked.lowerOptions;
  options.formats[output] = lower::listFormat(format->second.rank());
  options.listOutput = true;
  Lowered done = lowerWith(checked, options);
  if (!done && !copyNotes.empty()) {
    copies.formats[output] = options.formats[output];
    copies.listOutput = true;
    done = lowerWith(checked, copies);
    if (done) {
      for (const auto& [name, note] : copyNotes) done->notes.push_back(note);
    }
  }
  if (!done) return std::nullopt;
  done->convertOutputTo = format->second;
  done->notes.push_back("output " + output + " (" + format->second.toString() +
                        ") is collected as a list of its writes in the loops' order, then "
                        "sorted and its repeated coordinates summed (one thread)");
  return done;
}

}  // namespace sparseflow::pipeline
