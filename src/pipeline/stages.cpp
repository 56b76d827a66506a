// The pipeline's stages (see stages.h); pipeline.cpp runs them in order.
#include "pipeline/stages.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c/emit_cpp.h"
#include "ir/ir.h"
#include "lower/nest_builder.h"
#include "lower/normalize.h"
#include "support/check.h"

namespace sparseflow::pipeline {
namespace {

/// Every tensor of the statement with the number of indices it is used with.
void collectRanks(const expr::Expr& e, std::map<std::string, size_t>& ranks) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    ranks.emplace(a->tensor, a->indices.size());
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    collectRanks(*u->operand, ranks);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    collectRanks(*b->lhs, ranks);
    collectRanks(*b->rhs, ranks);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
    collectRanks(*r->body, ranks);
  }
}

/// The output as precompute() may take it: its values array and element count, when it is dense
/// (no index arrays of its own or shared with an input).
std::vector<schedule::DenseOutput> denseOutputOf(const lower::LoweredKernel& lowered,
                                                 const std::vector<std::string>& indices) {
  const ir::Array* values = nullptr;
  for (const lower::ArrayBinding& b : lowered.arrays) {
    if (b.tensor != 0) continue;
    if (b.kind != lower::ArrayBinding::Kind::kValues) return {};
    values = &b.array;
  }
  if (values == nullptr || !lowered.outputPatternFrom.empty() || lowered.assembledLevel >= 0)
    return {};
  ir::Expr size = ir::intImm(1);
  for (const std::string& index : indices)
    size = ir::mul(size, ir::var(lower::extentName(index), ir::ScalarType::kI64));
  return {{lowered.tensors.at(0).name, *values, size}};
}

}  // namespace

CheckedStage checkStage(const expr::Statement& statement, const KernelOptions& options,
                        const std::map<std::string, std::string>& indexCopies) {
  const std::string& text = statement.text;
  std::map<std::string, size_t> ranks;
  ranks.emplace(statement.lhs.tensor, statement.lhs.indices.size());
  collectRanks(*statement.rhs, ranks);
  CheckedStage out;
  out.schedule = options.schedule;
  lower::LowerOptions& lowerOptions = out.lowerOptions;
  lowerOptions.parallel = options.parallel && !schedule::hasParallel(out.schedule);
  lowerOptions.order = schedule::requestedOrder(out.schedule);
  lowerOptions.levelOrders = schedule::sparseLevelOrders(out.schedule);
  lowerOptions.fusedLevels = schedule::sparseFusions(out.schedule);
  // Shapes are not known until run(): check with every extent 1 (always consistent) to get the
  // kernel's structure; run() checks the real shapes.
  std::map<std::string, expr::TensorInfo> infos;
  for (const auto& [name, rank] : ranks) {
    auto dtype = options.dtypes.find(name);
    infos[name] = {std::vector<int64_t>(rank, 1),
                   dtype != options.dtypes.end() ? dtype->second : DType::kF32};
  }
  for (const auto& [name, dtype] : options.dtypes) {
    SF_USER_CHECK(ranks.count(name))
        << "dtype given for '" << name << "', which the kernel '" << text << "' does not use";
  }
  for (const auto& [name, format] : options.formats) {
    auto it = ranks.find(name);
    SF_USER_CHECK(it != ranks.end())
        << "format given for '" << name << "', which the kernel '" << text << "' does not use";
    lowerOptions.formats[name] = Format::parse(format, static_cast<int32_t>(it->second));
  }
  // decompose(A, K): A runs as hyb:K, one kernel per part (each compiled without the directive).
  for (const auto& [name, width] : schedule::decompositions(out.schedule)) {
    auto it = ranks.find(name);
    SF_USER_CHECK(it != ranks.end() && name != statement.lhs.tensor)
        << "decompose(" << name << ", " << width << "): '" << name
        << "' is not an input of the kernel '" << text << "'";
    SF_USER_CHECK(it->second == 2)
        << "decompose(" << name << ", " << width << "): hybrid formats are for matrices; '" << name
        << "' has " << it->second << " indices";
    lowerOptions.formats[name] = Format::parse("hyb:" + std::to_string(width), 2);
  }
  out.checked = expr::check(statement, infos, indexCopies);
  // A hybrid input with a sparse output is read through one csr copy (lowerStage) unless the
  // schedule asks for its parts (then each part's output, their entries summed).
  const auto outFormat = lowerOptions.formats.find(statement.lhs.tensor);
  const bool sparseOutput =
      outFormat != lowerOptions.formats.end() && !lower::isDenseFormat(outFormat->second);
  if (!sparseOutput || !schedule::decompositions(out.schedule).empty())
    out.decomposition = runtime::decompose(out.checked, lowerOptions.formats);
  return out;
}

std::string printChecked(const CheckedStage& c) {
  std::ostringstream text;
  text << expr::toString(c.checked.statement) << "\n";
  auto declare = [&](const std::string& keyword, const std::string& name) {
    const expr::TensorInfo& info = c.checked.tensors.at(name);
    auto f = c.lowerOptions.formats.find(name);
    text << keyword << " " << name << ": "
         << (f != c.lowerOptions.formats.end()
                 ? f->second.toString()
                 : Format::parse("dense", static_cast<int32_t>(info.shape.size())).toString())
         << " " << dtypeName(info.dtype) << "\n";
  };
  for (const auto& [name, info] : c.checked.tensors) {
    if (name != c.checked.output) declare("tensor", name);
  }
  declare("output", c.checked.output);
  for (const auto& [copy, index] : c.checked.indexCopyOf)
    text << "index " << copy << ": copy of " << index << "\n";
  if (!c.schedule.empty()) text << "schedule: " << c.schedule.toString() << "\n";
  if (c.decomposition) {
    text << "# format decomposition of " << c.decomposition->tensor << ": "
         << c.decomposition->partTexts.size() << " parts\n";
  }
  return text.str();
}

CanonicalStage canonicalizeStage(const CheckedStage& checked) {
  CanonicalStage out;
  out.contraction =
      recognizeContraction(checked.checked, checked.lowerOptions.formats, &out.notContraction);
  return out;
}

std::string printCanonical(const CanonicalStage& canonical) {
  if (canonical.contraction) return "contraction: " + canonical.contraction->toString() + "\n";
  return "# not a contraction: " + canonical.notContraction + "\n";
}

namespace {

std::optional<lower::LoweredKernel> lowered(const CheckedStage& checked,
                                            const lower::LowerOptions& options) {
  try {
    return lower::lowerKernel(checked.checked, options);
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// The kernel with its output in `format` or, when lowering does not assemble that (dcsr, coo, bsr,
/// csf, a permuted level order...), assembled in dense levels over a last compressed one, in that
/// format's dimension order (else another), then converted by the runtime.
std::optional<lower::LoweredKernel> withAssembledOutput(const CheckedStage& checked,
                                                        lower::LowerOptions options,
                                                        const Format& format) {
  const std::string& output = checked.checked.output;
  options.formats[output] = format;
  if (auto done = lowered(checked, options)) return done;
  for (const Format& assembly : lower::assemblyFormatsFor(format)) {
    if (assembly == format) continue;
    options.formats[output] = assembly;
    auto done = lowered(checked, options);
    if (!done) continue;
    done->convertOutputTo = format;
    done->notes.push_back("output " + output + " (" + format.toString() + ") is assembled as " +
                          assembly.toString() + ", then converted (one pass over its entries)");
    return done;
  }
  return std::nullopt;
}

}  // namespace

lower::LoweredKernel lowerStage(const CheckedStage& checked) {
  try {
    return lower::lowerKernel(checked.checked, checked.lowerOptions);
  } catch (const Error& e) {
    // A sparse output the kernel cannot produce as asked. When none of the ways below lowers, the
    // first error stands.
    if (e.code() != ErrorCode::kNotSupported) throw;
    const std::exception_ptr first = std::current_exception();
    const std::string& output = checked.checked.output;
    const auto format = checked.lowerOptions.formats.find(output);
    if (format == checked.lowerOptions.formats.end() || format->second.rank() < 1) throw;
    // 1. The output assembled in another format and converted.
    if (auto done = withAssembledOutput(checked, checked.lowerOptions, format->second))
      return std::move(*done);
    // 2. Sparse inputs whose storage reaches an output row more than once (coo's row level, bsr
    // blocks, ell slots, a hybrid's parts...) read through a compressed copy in their level order
    // (csr for coo, bsr and hyb), converted once while the input's contents do not change
    // (runtime/conversion_cache.h).
    lower::LowerOptions copies = checked.lowerOptions;
    std::vector<std::string> notes;
    std::map<std::string, std::string> copyNotes;
    for (auto& [name, f] : copies.formats) {
      if (name == output || lower::isDenseFormat(f)) continue;
      const Format compressed = lower::assemblyFormatsFor(f).front();
      if (compressed == f) continue;
      notes.push_back("input " + name + " (" + f.toString() + ") is read through a " +
                      compressed.toString() +
                      " copy (converted once while its contents do not change)");
      copyNotes[name] = notes.back();
      f = compressed;
    }
    if (!notes.empty()) {
      if (auto done = withAssembledOutput(checked, copies, format->second)) {
        done->notes.insert(done->notes.end(), notes.begin(), notes.end());
        return std::move(*done);
      }
    }
    // 3. One sparse input at a time read through a compressed copy whose levels take the
    // output's indices first, in the output's order (A^T B into csr: A as csc, so the loops walk
    // C's rows outermost and locate B's rows, Gustavson's order; reordering B as well would make
    // it an inner product over every (i, j)).
    std::set<std::string> seen;
    const std::vector<std::string>& outIndices = checked.checked.statement.lhs.indices;
    for (const expr::Access* a : lower::allAccesses(*checked.checked.statement.rhs)) {
      const auto it = checked.lowerOptions.formats.find(a->tensor);
      if (it == checked.lowerOptions.formats.end() || a->tensor == output ||
          lower::isDenseFormat(it->second) || !seen.insert(a->tensor).second) {
        continue;
      }
      std::vector<int32_t> dims;
      auto add = [&](int32_t d) {
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
      };
      for (const std::string& index : outIndices) {
        for (size_t d = 0; d < a->indices.size(); ++d)
          if (a->indices[d] == index) add(static_cast<int32_t>(d));
      }
      for (int32_t d : lower::storageDimensions(it->second)) add(d);
      const Format& plain = it->second.isHybrid() ? it->second.parts().front() : it->second;
      const Format copy = lower::compressedInOrder(plain, dims);
      if (copy == it->second) continue;
      // Over step 2's copies of the others (coo's rows are not located by their index).
      lower::LowerOptions reordered = copies;
      reordered.formats[a->tensor] = copy;
      if (auto done = withAssembledOutput(checked, reordered, format->second)) {
        for (const auto& [name, note] : copyNotes)
          if (name != a->tensor) done->notes.push_back(note);
        done->notes.push_back("input " + a->tensor + " (" + it->second.toString() +
                              ") is read through a " + copy.toString() +
                              " copy in the output's index order (converted once while its "
                              "contents do not change)");
        return std::move(*done);
      }
    }
    // 4. The writes collected as a list, then sorted and summed into the format
    // (lower/assembly.h), one thread: the inputs as given, else through the copies.
    lower::LowerOptions options = checked.lowerOptions;
    options.formats[output] = lower::listFormat(format->second.rank());
    options.listOutput = true;
    auto done = lowered(checked, options);
    if (!done && !notes.empty()) {
      copies.formats[output] = options.formats[output];
      copies.listOutput = true;
      done = lowered(checked, copies);
      if (done) done->notes.insert(done->notes.end(), notes.begin(), notes.end());
    }
    if (!done) std::rethrow_exception(first);
    done->convertOutputTo = format->second;
    done->notes.push_back("output " + output + " (" + format->second.toString() +
                          ") is collected as a list of its writes in the loops' order, then "
                          "sorted and its repeated coordinates summed (one thread)");
    return std::move(*done);
  }
}

lower::LoweredKernel scheduleStage(lower::LoweredKernel lowered, const schedule::Schedule& sched) {
  SF_CHECK_CODE(lowered.assembledLevel < 0 || !schedule::hasParallel(sched),
                ErrorCode::kNotSupported)
      << "output " << lowered.tensors.at(0).name
      << (lowered.listOutput
              ? " is collected as a list of its writes (one cursor, one thread): a schedule may "
                "not add parallel loops to it ('"
              : " is assembled row by row (per-thread workspaces over the default parallel row "
                "loop): a schedule may not choose other parallel loops for it ('")
      << sched.toString() << "')";
  const std::vector<schedule::DenseOutput> denseOutputs =
      denseOutputOf(lowered, lowered.outputIndices);
  lowered.body = schedule::applySchedule(lowered.body, sched, denseOutputs);
  if (lowered.symbolic)
    lowered.symbolic = schedule::applySchedule(lowered.symbolic, sched, denseOutputs);
  return lowered;
}

lower::LoweredKernel defaultTransformsStage(lower::LoweredKernel lowered) {
  std::vector<schedule::Temporary> temporaries;
  for (const lower::LoweredKernel::TemporaryArray& t : lowered.temporaries) {
    if (t.indices.empty()) continue;  // a scalar: no row to keep
    ir::Expr rowSize = ir::intImm(1);
    for (size_t k = 1; k < t.indices.size(); ++k)
      rowSize = ir::mul(rowSize, ir::var(lower::extentName(t.indices[k]), ir::ScalarType::kI64));
    temporaries.push_back({t.values, t.indices.front(), rowSize});
  }
  lowered.body = schedule::hoistInvariantReductions(lowered.body);
  lowered.body = schedule::fuseTemporaries(lowered.body, temporaries, lowered.outputIndices);
  const lower::TensorArg& output = lowered.tensors.front();
  if (output.rank >= 1 && output.format == lower::denseFormat(output.rank) &&
      lowered.outputPatternFrom.empty() && lowered.assembledLevel < 0) {
    ir::Expr rowSize = ir::intImm(1);
    for (size_t k = 1; k < lowered.outputIndices.size(); ++k) {
      rowSize = ir::mul(rowSize,
                        ir::var(lower::extentName(lowered.outputIndices[k]), ir::ScalarType::kI64));
    }
    lowered.body =
        schedule::sumOutputRows(lowered.body, {{lower::valuesName(output.name), output.valueType},
                                               lowered.outputIndices.front(),
                                               rowSize});
  }
  lowered.body = schedule::specializeExtents(schedule::splitAccumulators(lowered.body));
  if (lowered.symbolic) lowered.symbolic = schedule::specializeExtents(lowered.symbolic);
  return lowered;
}

std::string printLowered(const lower::LoweredKernel& lowered) {
  if (!lowered.symbolic) return ir::toString(lowered.body);
  return "# phase 1 of 2: symbolic (entries per row)\n" + ir::toString(lowered.symbolic) +
         "# phase 2 of 2: numeric\n" + ir::toString(lowered.body);
}

Selection selectProviderStage(const CheckedStage& checked, const CanonicalStage& canonical,
                              const KernelOptions& options) {
  ProviderRequest request;
  request.checked = &checked.checked;
  request.formats = &checked.lowerOptions.formats;
  request.contraction = &canonical.contraction;
  request.notContraction = canonical.notContraction;
  request.scheduled = !checked.schedule.empty();
  request.options = &options;
  Selection selection;
  for (const std::unique_ptr<Provider>& provider : providerRegistry()) {
    Offer offer = provider->offer(request);
    if (offer.executable || offer.generate) {
      selection.provider = provider.get();
      selection.offer = std::move(offer);
      return selection;
    }
    selection.declined.emplace_back(provider->name(), offer.declined);
  }
  SF_FAIL(kInternal) << "no provider accepted the kernel '" << checked.checked.statement.text
                     << "' (generated code always should)";
}

std::string printSelection(const Selection& selection) {
  std::string text;
  for (const auto& [name, why] : selection.declined)
    text += "# " + name + " declined: " + why + "\n";
  return text + "provider: " + selection.provider->name() + "\n";
}

std::string codegenStage(const lower::LoweredKernel& lowered, const Schedule& userSchedule) {
  if (schedule::hasBoundLoops(lowered.body)) {
    SF_FAIL(kNotSupported) << "the schedule '" << userSchedule.toString()
                           << "' binds loops to GPU axes; bound loops run on the CUDA backend, "
                              "which this build does not have (remove bind() to run on the "
                              "CPU). The scheduled loop IR:\n"
                           << ir::toString(lowered.body);
  }
  return codegen::emitCpp(lowered);
}

}  // namespace sparseflow::pipeline
