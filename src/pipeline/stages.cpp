// The pipeline's stages (see stages.h); pipeline.cpp runs them in order.
#include "pipeline/stages.h"

#include <optional>
#include <sstream>

#include "codegen/c/emit_cpp.h"
#include "ir/ir.h"
#include "lower/nest_builder.h"
#include "pipeline/sparse_output_ways.h"
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

lower::LoweredKernel lowerStage(const CheckedStage& checked) {
  try {
    return lower::lowerKernel(checked.checked, checked.lowerOptions);
  } catch (const Error& e) {
    // A sparse output the kernel cannot produce as asked: produced another way
    // (sparse_output_ways.h), else the first error stands.
    if (e.code() != ErrorCode::kNotSupported) throw;
    if (auto done = lowerSparseOutputAnotherWay(checked)) return std::move(*done);
    throw;
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
