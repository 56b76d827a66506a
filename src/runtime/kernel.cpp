// Kernel::compile (parse → check → lower → emit C++ → JIT) and Kernel::run (bind → call).
#include "sparseflow/kernel.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "codegen/c/emit_cpp.h"
#include "codegen/mlir/emit_mlir.h"
#include "expr/expr.h"
#include "jit/jit.h"
#include "lower/lower.h"
#include "runtime/assembled_output.h"
#include "runtime/csr_spmm_match.h"
#include "runtime/format_decomposition.h"
#include "runtime/kernel_args.h"
#include "runtime/nm_linear_match.h"
#include "schedule/schedule.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow {

struct Kernel::Impl {
  std::string text;
  expr::Statement statement;
  expr::CheckedKernel checked;            ///< for mlir(): the kernel as checked at compile time
  std::map<std::string, Format> formats;  ///< for mlir(): the formats bound at compile time
  lower::LoweredKernel lowered;
  std::string source;
  std::string ir;
  jit::CompileResult compiled;
  runtime::KernelEntry entry;    ///< the generated code's, or a hand-tuned kernel's (CSR SpMM)
  std::string handTuned;         ///< what describe() says of the hand-tuned kernel, if one runs
  bool entryOverwrites = false;  ///< the entry writes every output element (no zeroing first)
  mutable runtime::ShapeCache shapes;  ///< the last input shapes' check, reused per call
  runtime::KernelEntry symbolic;       ///< the first phase of a kernel that assembles its output
  /// Set when the kernel is the 2:4 linear layer: the hand-tuned NMLinear runs instead.
  std::shared_ptr<runtime::NMLinearRunner> nmLinear;
  DType outputType = DType::kF32;
  /// Set when an input is hybrid: one kernel per part (format decomposition).
  std::optional<runtime::Decomposition> decomposition;
  std::vector<Kernel> parts;
};

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

}  // namespace

namespace {

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

Kernel Kernel::compile(const std::string& text, const KernelOptions& options) {
  auto impl = std::make_shared<Impl>();
  impl->text = text;
  impl->statement = expr::parse(text);
  std::map<std::string, size_t> ranks;
  ranks.emplace(impl->statement.lhs.tensor, impl->statement.lhs.indices.size());
  collectRanks(*impl->statement.rhs, ranks);
  // Shapes are not known until run(): check with every extent 1 (always consistent) to get the
  // kernel's structure; run() checks the real shapes.
  std::map<std::string, expr::TensorInfo> infos;
  const schedule::Schedule sched = schedule::Schedule::parse(options.schedule.text());
  lower::LowerOptions lowerOptions;
  lowerOptions.parallel = options.parallel && !sched.hasParallel();
  lowerOptions.order = sched.requestedOrder();
  lowerOptions.levelOrders = sched.sparseLevelOrders();
  lowerOptions.fusedLevels = sched.sparseFusions();
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
  for (const auto& [name, width] : sched.decompositions()) {
    auto it = ranks.find(name);
    SF_USER_CHECK(it != ranks.end() && name != impl->statement.lhs.tensor)
        << "decompose(" << name << ", " << width << "): '" << name
        << "' is not an input of the kernel '" << text << "'";
    SF_USER_CHECK(it->second == 2)
        << "decompose(" << name << ", " << width << "): hybrid formats are for matrices; '" << name
        << "' has " << it->second << " indices";
    lowerOptions.formats[name] = Format::parse("hyb:" + std::to_string(width), 2);
  }
  const expr::CheckedKernel checked = expr::check(impl->statement, infos);
  if (auto decomposition = runtime::decompose(checked, lowerOptions.formats)) {
    impl->checked = checked;
    impl->formats = lowerOptions.formats;
    impl->outputType = checked.tensors.at(checked.output).dtype;
    for (size_t p = 0; p < decomposition->partTexts.size(); ++p) {
      KernelOptions part = options;
      part.formats[decomposition->tensor] = decomposition->partFormats[p];
      part.schedule = sched.withoutDecompositions().toString();
      impl->parts.push_back(Kernel::compile(decomposition->partTexts[p], part));
      const std::string title = "part " + std::to_string(p) + " of " + decomposition->tensor +
                                " (" + decomposition->partFormats[p] +
                                "): " + decomposition->partTexts[p] + "\n";
      impl->source += "// " + title + impl->parts.back().source();
      impl->ir += "# " + title + impl->parts.back().ir();
    }
    impl->decomposition = std::move(decomposition);
    Kernel kernel;
    kernel.impl_ = std::move(impl);
    return kernel;
  }
  impl->lowered = lower::lowerKernel(checked, lowerOptions);
  SF_CHECK_CODE(impl->lowered.assembledLevel < 0 || !sched.hasParallel(), ErrorCode::kNotSupported)
      << "output " << checked.output << " is assembled row by row (per-thread workspaces over the "
      << "default parallel row loop): a schedule may not choose other parallel loops for it";
  const std::vector<schedule::DenseOutput> denseOutputs =
      denseOutputOf(impl->lowered, impl->statement.lhs.indices);
  impl->lowered.body = schedule::applySchedule(impl->lowered.body, sched, denseOutputs);
  if (impl->lowered.symbolic)
    impl->lowered.symbolic = schedule::applySchedule(impl->lowered.symbolic, sched, denseOutputs);
  if (schedule::hasBoundLoops(impl->lowered.body)) {
    SF_FAIL(kNotSupported) << "the schedule '" << options.schedule.text()
                           << "' binds loops to GPU axes; bound loops run on the CUDA backend, "
                              "which this build does not have (remove bind() to run on the "
                              "CPU). The scheduled loop IR:\n"
                           << ir::toString(impl->lowered.body);
  }
  impl->checked = checked;
  impl->formats = lowerOptions.formats;
  impl->ir = impl->lowered.symbolic
                 ? "# phase 1 of 2: symbolic (entries per row)\n" +
                       ir::toString(impl->lowered.symbolic) + "# phase 2 of 2: numeric\n" +
                       ir::toString(impl->lowered.body)
                 : ir::toString(impl->lowered.body);
  impl->outputType = checked.tensors.at(checked.output).dtype;
  const bool handTuned = sched.empty() && options.handTuned;
  if (auto match =
          handTuned ? runtime::matchNMLinear(checked, lowerOptions.formats) : std::nullopt) {
    impl->nmLinear = std::make_shared<runtime::NMLinearRunner>(*match);
    impl->source =
        "// Hand-tuned kernel, no generated code: sparseflow::NMLinear (src/kernels/nm_gemm),\n"
        "// " +
        match->y + " = " + match->epilogue.toString() + "(" + match->x + " . " + match->w + "^T" +
        (match->bias.empty() ? "" : " + " + match->bias) + ") with " + match->w + " in 2:4.\n";
    Kernel kernel;
    kernel.impl_ = std::move(impl);
    return kernel;
  }
  if (auto match = handTuned ? runtime::matchCsrSpmm(checked, impl->lowered) : std::nullopt) {
    impl->entry = runtime::csrSpmmEntry(*match);
    impl->entryOverwrites = match->overwrite;
    impl->handTuned = runtime::describeCsrSpmm(*match);
    impl->source =
        "// Hand-tuned kernel, no generated code: the CSR SpMM of src/kernels/csr_spmm,\n// " +
        impl->handTuned + ".\n";
    Kernel kernel;
    kernel.impl_ = std::move(impl);
    return kernel;
  }
  // The C++ gets the default extent versioning (constant widths the compiler unrolls); the loop
  // IR users schedule and print stays the generic one.
  lower::LoweredKernel versioned = impl->lowered;
  versioned.body = schedule::specializeExtents(schedule::splitAccumulators(versioned.body));
  if (versioned.symbolic) versioned.symbolic = schedule::specializeExtents(versioned.symbolic);
  impl->source = codegen::emitCpp(versioned);
  jit::CompilerOptions jitOptions = jit::defaultCompilerOptions();
  jitOptions.useCache = options.useCache;
  impl->compiled = jit::compile(impl->source, jitOptions);
  impl->entry = impl->compiled.module->function<sf_kernel_entry>(SF_KERNEL_ENTRY_NAME);
  if (impl->lowered.symbolic) {
    impl->symbolic =
        impl->compiled.module->function<sf_kernel_entry>(SF_KERNEL_SYMBOLIC_ENTRY_NAME);
  }
  Kernel kernel;
  kernel.impl_ = std::move(impl);
  return kernel;
}

Tensor Kernel::run(const std::map<std::string, const Tensor*>& inputs,
                   const std::map<std::string, double>& params) const {
  SF_USER_CHECK(impl_ != nullptr) << "run() on a kernel that was never compiled";
  if (impl_->decomposition) {
    Tensor output;
    runParts(inputs, &output, params);
    return output;
  }
  if (impl_->nmLinear) {
    SF_USER_CHECK(params.empty()) << "the kernel '" << impl_->text << "' has no scalar parameters";
    return impl_->nmLinear->run(inputs, impl_->outputType);
  }
  const runtime::BoundInputs bound =
      runtime::bindInputs(impl_->statement, impl_->lowered, inputs, params, &impl_->shapes);
  if (impl_->symbolic)
    return runtime::runAssembling(impl_->lowered, bound, impl_->symbolic, impl_->entry,
                                  impl_->text);
  Tensor output = runtime::makeOutput(impl_->lowered, bound);
  const std::vector<sf_tensor_arg> args = runtime::tensorArgs(impl_->lowered, bound, output);
  runtime::callEntry(impl_->entry, args, bound, impl_->text);
  return output;
}

void Kernel::run(const std::map<std::string, const Tensor*>& inputs, Tensor& output,
                 const std::map<std::string, double>& params) const {
  SF_USER_CHECK(impl_ != nullptr) << "run() on a kernel that was never compiled";
  if (impl_->decomposition) {
    runParts(inputs, &output, params, /*into=*/true);
    return;
  }
  if (impl_->nmLinear) {
    const Tensor y = run(inputs, params);
    SF_USER_CHECK(output.shape() == y.shape() && output.dtype() == y.dtype() &&
                  output.format() == y.format())
        << "output '" << impl_->nmLinear->match().y << "' must be " << y.summary();
    std::memcpy(output.mutableValues().data(), y.values().data(),
                static_cast<size_t>(y.values().bytes()));
    return;
  }
  const runtime::BoundInputs bound =
      runtime::bindInputs(impl_->statement, impl_->lowered, inputs, params, &impl_->shapes);
  const lower::TensorArg& out = impl_->lowered.tensors[0];
  SF_USER_CHECK(output.shape() == bound.outputShape)
      << "output '" << out.name << "' has the wrong shape for these inputs";
  if (impl_->symbolic) {  // a new pattern: the output is replaced, in its format
    SF_USER_CHECK(output.format() == out.format)
        << "output '" << out.name << "' is " << output.format().toString()
        << "; the kernel assembles " << out.format.toString();
    output =
        runtime::runAssembling(impl_->lowered, bound, impl_->symbolic, impl_->entry, impl_->text);
    return;
  }
  SF_USER_CHECK(output.dtype() ==
                (out.valueType == ir::ScalarType::kF64 ? DType::kF64 : DType::kF32))
      << "output '" << out.name << "' is " << dtypeName(output.dtype()) << ", the kernel writes "
      << ir::cppTypeName(out.valueType);
  const runtime::OutputLayout expected = runtime::outputLayout(impl_->lowered, bound);
  SF_USER_CHECK(output.format() == expected.format && output.values().size() == expected.values)
      << "output '" << out.name << "' is " << output.format().toString() << " with "
      << output.values().size() << " values; the kernel writes " << expected.format.toString()
      << " with " << expected.values;
  if (!impl_->lowered.accumulate && !impl_->entryOverwrites) {
    std::memset(output.mutableValues().data(), 0, static_cast<size_t>(output.values().bytes()));
  }
  const std::vector<sf_tensor_arg> args = runtime::tensorArgs(impl_->lowered, bound, output);
  runtime::callEntry(impl_->entry, args, bound, impl_->text);
}

void Kernel::runParts(const std::map<std::string, const Tensor*>& inputs, Tensor* output,
                      const std::map<std::string, double>& params, bool into) const {
  const runtime::Decomposition& d = *impl_->decomposition;
  auto it = inputs.find(d.tensor);
  SF_USER_CHECK(it != inputs.end() && it->second != nullptr)
      << "the kernel '" << impl_->text << "' needs tensor '" << d.tensor << "' ("
      << d.format.toString() << ")";
  const Tensor* whole = it->second;
  Tensor converted;
  if (!whole->format().isHybrid() || whole->format().parts().size() != d.format.parts().size()) {
    converted = convert(*whole, d.format);
    whole = &converted;
  }
  std::map<std::string, const Tensor*> partInputs = inputs;
  for (size_t p = 0; p < impl_->parts.size(); ++p) {
    partInputs[d.tensor] = &whole->parts()[p];
    if (p == 0 && !into) {
      *output = impl_->parts[p].run(partInputs, params);
    } else {
      impl_->parts[p].run(partInputs, *output, params);
    }
  }
}

const std::string& Kernel::text() const {
  return impl_->text;
}
const std::string& Kernel::source() const {
  return impl_->source;
}
const std::string& Kernel::ir() const {
  return impl_->ir;
}
bool Kernel::fromCache() const {
  if (impl_->decomposition) {
    bool all = true;
    for (const Kernel& part : impl_->parts) all = all && part.fromCache();
    return all;
  }
  return impl_->compiled.fromCache;
}

std::string Kernel::mlir() const {
  SF_USER_CHECK(impl_ != nullptr) << "mlir() on a kernel that was never compiled";
  // A compiled kernel fixes no shapes (run() checks them), so the export is shape-generic.
  expr::CheckedKernel generic = impl_->checked;
  for (auto& [name, info] : generic.tensors) {
    std::fill(info.shape.begin(), info.shape.end(), codegen::kDynamicExtent);
  }
  for (auto& [index, extent] : generic.indexExtents) extent = codegen::kDynamicExtent;
  return codegen::emitMlir(generic, impl_->formats);
}

std::string Kernel::describe() const {
  std::ostringstream out;
  out << "kernel: " << expr::toString(impl_->statement) << "\n";
  for (const lower::TensorArg& t : impl_->lowered.tensors) {
    out << "  " << t.name << ": " << t.format.toString() << " " << ir::cppTypeName(t.valueType)
        << (t.densify ? " (read as dense)" : "") << "\n";
  }
  for (size_t n = 0; n < impl_->lowered.loopOrders.size(); ++n) {
    out << "  nest " << n << " loops: " << impl_->lowered.loopOrders[n] << "\n";
  }
  if (!impl_->lowered.outputPatternFrom.empty()) {
    out << "  output pattern: " << impl_->lowered.outputPatternFrom << "\n";
  }
  if (impl_->lowered.symbolic) {
    out << "  output assembled: symbolic phase (entries per row), then numeric\n";
  }
  if (impl_->decomposition) {
    out << "  format decomposition: " << impl_->decomposition->tensor << " ("
        << impl_->decomposition->format.toString() << ") runs as one kernel per part, "
        << "accumulated into " << impl_->checked.output << "\n";
    for (const Kernel& part : impl_->parts) out << part.describe();
    return out.str();
  }
  if (impl_->nmLinear) {
    const auto& m = impl_->nmLinear->match();
    out << "  hand-tuned: NMLinear 2:4 GEMM, epilogue " << m.epilogue.toString() << " (weights "
        << m.w << " packed once per weight buffer)\n";
    return out.str();
  }
  for (const std::string& note : impl_->lowered.notes) out << "  note: " << note << "\n";
  if (!impl_->handTuned.empty()) {
    out << "  " << impl_->handTuned << "\n";
    return out.str();
  }
  out << "  compiled: " << (impl_->compiled.fromCache ? "from cache" : "now") << ", "
      << impl_->compiled.libraryPath.string() << "\n";
  if (!impl_->compiled.note.empty()) out << "  cache: " << impl_->compiled.note << "\n";
  return out.str();
}

}  // namespace sparseflow
