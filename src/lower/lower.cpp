// lowerKernel: passes (normalize.h) → loop nests. Sparse operands in factor position drive the
// loops over their levels; every other operand is located (dense levels) at the positions the
// loops reach; the output is dense or shares the pattern of the operand that drives it.
#include "lower/lower.h"

#include <algorithm>
#include <map>
#include <set>

#include "format/levels/level_impl.h"
#include "lower/assembly.h"
#include "lower/driver_plan.h"
#include "lower/level_iteration.h"
#include "lower/nest_builder.h"
#include "lower/normalize.h"
#include "support/check.h"

namespace sparseflow::lower {

namespace {

using ir::Expr;
using ir::ScalarType;
using ir::Stmt;

ScalarType valueScalarType(DType dtype) {
  return dtype == DType::kF64 ? ScalarType::kF64 : ScalarType::kF32;
}

}  // namespace

namespace {

/// A sparse output without an input's pattern is assembled: one pass, `=`, a sum, and dense levels
/// over a last compressed level with ordered, unique coordinates (csr, csc, a sparse vector...).
void checkAssemblable(const TensorArg& arg, const Normalized& normalized, bool accumulate,
                      bool list) {
  const std::string what = "output " + arg.name + " (" + arg.format.toString() + ")";
  SF_CHECK_CODE(normalized.passes.size() == 1, ErrorCode::kNotSupported)
      << what << ": a sparse output is assembled by one loop nest, and this kernel needs "
      << normalized.passes.size() << " (a reduction under a function, or a sum of reductions); "
      << "bind the output as dense";
  SF_CHECK_CODE(!accumulate, ErrorCode::kNotSupported)
      << what << ": `+=` into a sparse output would change its pattern; use `=` or a dense output";
  SF_CHECK_CODE(normalized.passes[0].op == expr::ReduceOp::kSum, ErrorCode::kNotSupported)
      << what << ": a max reduction into a sparse output is not supported; bind it as dense";
  if (list) {
    SF_ICHECK(arg.format == listFormat(arg.rank)) << "a list output is " << arg.format.toString();
    return;
  }
  const int32_t last = arg.format.numLevels() - 1;
  for (int32_t l = 0; l <= last; ++l) {
    const LevelSpec& spec = arg.format.level(l);
    const bool ok = spec.expr.op == LevelExpr::Op::kIdentity &&
                    (l < last ? format::levelImpl(spec.type.kind).capabilities().allCoordinates
                              : levelIteration(spec.type.kind).coIterable(spec.type));
    SF_CHECK_CODE(ok, ErrorCode::kNotSupported)
        << what << ": sparse outputs are assembled as dense levels over one last compressed level "
        << "(csr, csc, a compressed vector, levels[dense, ..., compressed]); convert the result "
        << "afterwards for other formats";
  }
}

/// An assembly nest whose rows go through a dense workspace, and, when they do, the same nest
/// with a hash workspace for coordinate extents a dense one per thread would not fit: the code
/// picks at run time (dense up to max(2^16, 4 x the hash capacity) coordinates).
Stmt withHashVersion(NestInput input, std::set<std::string>* namesUsed, LoweredKernel* out) {
  std::string order;
  NestInfo info;
  input.hashWorkspace = false;
  Stmt dense = buildNest(input, &order, namesUsed, &info);
  if (!info.workspaceExtent) return dense;
  input.hashWorkspace = true;
  Stmt hash = buildNest(input, &order, namesUsed);
  out->hashCapacity = true;
  const Expr capacity = ir::var(kHashCapacity, ScalarType::kI64);
  const Expr limit = ir::binary(ir::BinaryOp::kMax, ir::intImm(int64_t{1} << 16),
                                ir::mul(capacity, ir::intImm(4)));
  return ir::ifThen(
      ir::binary(ir::BinaryOp::kLe, info.workspaceExtent, limit), dense,
      ir::block(
          {ir::comment("coordinates too many for a dense workspace: a hash workspace"), hash}));
}

}  // namespace

Format listFormat(int32_t rank) {
  SF_ICHECK(rank >= 1) << "a list of rank " << rank;
  const LevelProperties any{false, false};  // unordered, repeats allowed
  std::vector<LevelSpec> levels;
  for (int32_t d = 0; d < rank; ++d) {
    LevelSpec spec;
    spec.expr.dim = d;
    spec.type = d == 0 ? LevelType::compressed(any) : LevelType::singleton(any);
    levels.push_back(spec);
  }
  return Format(rank, std::move(levels), 64, 64);
}

Format compressedInOrder(const Format& widthsOf, const std::vector<int32_t>& dims) {
  std::vector<LevelSpec> levels;
  for (size_t l = 0; l < dims.size(); ++l) {
    LevelSpec spec;
    spec.expr.dim = dims[l];
    spec.type = l + 1 < dims.size() ? LevelType::dense() : LevelType::compressed();
    levels.push_back(spec);
  }
  return Format(static_cast<int32_t>(dims.size()), std::move(levels), widthsOf.posWidth(),
                widthsOf.crdWidth());
}

std::vector<int32_t> storageDimensions(const Format& f) {
  const Format& plain = f.isHybrid() ? f.parts().front() : f;
  std::vector<int32_t> dims;
  for (const LevelSpec& spec : plain.levels()) {
    if (std::find(dims.begin(), dims.end(), spec.expr.dim) == dims.end())
      dims.push_back(spec.expr.dim);
  }
  return dims;
}

std::vector<Format> assemblyFormatsFor(const Format& f) {
  const Format& plain = f.isHybrid() ? f.parts().front() : f;
  const std::vector<int32_t> dims = storageDimensions(f);
  auto inOrder = [&](const std::vector<int32_t>& order) { return compressedInOrder(plain, order); };
  std::vector<Format> out{inOrder(dims)};
  std::vector<int32_t> order = dims;
  std::sort(order.begin(), order.end());
  // Every order up to rank 3 (6); beyond, the dimension order only: rank! lowerings (40,320 at
  // rank 8) would stall a kernel that none of them can assemble.
  if (dims.size() > 3) {
    if (order != dims) out.push_back(inOrder(order));
    return out;
  }
  do {
    if (order != dims) out.push_back(inOrder(order));
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

LoweredKernel lowerKernel(const expr::CheckedKernel& kernel, const LowerOptions& options) {
  LoweredKernel out;
  out.computeType = kernel.computeType == DType::kF64 ? ScalarType::kF64 : ScalarType::kF32;
  out.accumulate = kernel.statement.accumulate;
  const Normalized normalized = normalize(kernel);

  auto formatOf = [&](const std::string& name, int32_t rank) {
    auto it = options.formats.find(name);
    return it != options.formats.end() ? it->second : denseFormat(rank);
  };
  // Tensor arguments: the output, then the inputs.
  std::vector<std::string> names{kernel.output};
  names.insert(names.end(), kernel.inputs.begin(), kernel.inputs.end());
  for (const std::string& name : names) {
    const expr::TensorInfo& info = kernel.tensors.at(name);
    TensorArg arg;
    arg.name = name;
    arg.rank = static_cast<int32_t>(info.shape.size());
    arg.format = formatOf(name, arg.rank);
    SF_CHECK_CODE(!arg.format.isHybrid(), ErrorCode::kNotSupported)
        << "tensor " << name << ": hybrid formats (" << arg.format.toString()
        << ") are not yet lowered as one kernel per part; convert it first";
    arg.valueType = valueScalarType(info.dtype);
    out.tensors.push_back(arg);
  }
  auto argIndex = [&](const std::string& name) -> int {
    for (size_t k = 0; k < out.tensors.size(); ++k) {
      if (out.tensors[k].name == name) return static_cast<int>(k);
    }
    return -1;
  };
  // How each input is read: driving its loops, as dense, or as a copy in another level order.
  const DriverPlan plan =
      planDrivers(kernel, normalized, options.formats, options.levelOrders, options.fusedLevels);
  for (size_t k = 1; k < out.tensors.size(); ++k) {
    TensorArg& arg = out.tensors[k];
    arg.densify = plan.densified.at(arg.name);
    arg.format = arg.densify ? denseFormat(arg.rank) : plan.formats.at(arg.name);
  }
  out.notes = plan.notes;
  // Scalar parameters.
  std::map<std::string, Expr> scalars;
  std::vector<Stmt> top;
  for (size_t p = 0; p < kernel.params.size(); ++p) {
    out.params.push_back(kernel.params[p]);
    top.push_back(ir::let(
        paramName(kernel.params[p]),
        ir::cast(ir::load({"sf_params", ScalarType::kF64}, ir::intImm(static_cast<int64_t>(p))),
                 out.computeType)));
    scalars[kernel.params[p]] = ir::var(paramName(kernel.params[p]), out.computeType);
  }
  for (const auto& [index, extent] : kernel.indexExtents) out.indexVars.push_back(index);

  // Passes.
  std::vector<Stmt> nests;
  std::set<std::string> requestedSeen;
  for (size_t n = 0; n < normalized.passes.size(); ++n) {
    const Pass& pass = normalized.passes[n];
    std::vector<Operand> operands;
    const auto factors = factorAccesses(*pass.body);
    for (const expr::Access* a : allAccesses(*pass.body)) {
      bool seen = false;
      for (const Operand& op : operands)
        seen = seen || (op.tensor == a->tensor && op.indices == a->indices);
      if (seen) continue;
      Operand op;
      op.tensor = a->tensor;
      op.indices = a->indices;
      op.arrayPrefix = tensorPrefix(a->tensor);
      const int k = argIndex(a->tensor);
      if (k < 0) {  // a temporary
        op.format = denseFormat(static_cast<int32_t>(a->indices.size()));
        op.valueType = out.computeType;
      } else {
        const TensorArg& arg = out.tensors[static_cast<size_t>(k)];
        op.format = arg.format;
        op.valueType = arg.valueType;
        op.driver = !isDenseFormat(op.format);
        // Its zeros may be fill (not entries): padding under a zero-filling leaf level (bsr
        // blocks, n:m slots, ragged rows), or the zeros of a sparse input read as dense.
        op.zeroFill =
            arg.densify ||
            (op.driver &&
             format::levelImpl(op.format.levels().back().type.kind).capabilities().fillsZeros);
      }
      operands.push_back(op);
    }
    // The target: dense (output or temporary), or a sparse output with a driver's pattern.
    Operand target;
    target.tensor = pass.target;
    target.indices = pass.targetIndices;
    target.arrayPrefix = tensorPrefix(pass.target);
    const int targetArg = argIndex(pass.target);
    if (targetArg < 0) {
      target.format = denseFormat(static_cast<int32_t>(pass.targetIndices.size()));
      target.valueType = out.computeType;
    } else {
      const TensorArg& arg = out.tensors[static_cast<size_t>(targetArg)];
      target.valueType = arg.valueType;
      target.format = arg.format;
      if (!isDenseFormat(arg.format)) {
        // The output shares the pattern of a factor with its indices and format (SDDMM): the
        // body is zero wherever that factor has no entry. Only when it is the one sparse factor:
        // with another (A(i,j) * B(i,j), both sparse), the result's pattern is their
        // intersection, and copying one factor's would store zeros where the other has none.
        Operand* pattern = nullptr;
        int sparseFactors = 0;
        for (Operand& op : operands) {
          const bool factor = std::any_of(factors.begin(), factors.end(), [&](const auto* a) {
            return a->tensor == op.tensor && a->indices == op.indices;
          });
          sparseFactors += op.driver && factor;
          if (op.driver && factor && op.indices == target.indices && op.format == arg.format)
            pattern = &op;
        }
        if (sparseFactors > 1) pattern = nullptr;
        if (pattern != nullptr && normalized.passes.size() == 1) {
          pattern->outputPattern = true;
          out.outputPatternFrom = pattern->tensor;
        } else {
          checkAssemblable(arg, normalized, out.accumulate, options.listOutput);
          out.assembledLevel = options.listOutput ? 0 : arg.format.numLevels() - 1;
          out.listOutput = options.listOutput;
        }
      }
    }
    NestInput input{pass,
                    std::move(operands),
                    target,
                    scalars,
                    out.computeType,
                    options.parallel,
                    static_cast<int>(n),
                    options.order};
    input.listOutput = out.listOutput;
    if (out.assembledLevel >= 0) {  // the symbolic phase first, from the same pass
      input.assembly = AssemblyPhase::kSymbolic;
      std::string symbolicOrder;
      std::vector<Stmt> symbolic = top;
      symbolic.push_back(ir::comment("nest " + std::to_string(n) + ": " + pass.target +
                                     (out.listOutput ? ", symbolic phase (writes counted)"
                                                     : ", symbolic phase (entries per row)")));
      symbolic.push_back(withHashVersion(input, &requestedSeen, &out));
      out.symbolic = ir::block(std::move(symbolic));
      input.assembly = AssemblyPhase::kNumeric;
    }
    std::string orderText;
    nests.push_back(ir::comment("nest " + std::to_string(n) + ": " + pass.target));
    nests.push_back(out.assembledLevel >= 0 ? withHashVersion(input, &requestedSeen, &out)
                                            : buildNest(input, &orderText, &requestedSeen));
    if (out.assembledLevel >= 0) buildNest(input, &orderText, &requestedSeen);  // its order text
    out.loopOrders.push_back(orderText);
  }
  for (const std::string& name : options.order) {
    SF_USER_CHECK(requestedSeen.count(name)) << "reorder: no loop named '" << name
                                             << "' (the loops are those of the kernel's indices; a "
                                             << "blocked index has two, e.g. i_blk and i_in)";
  }
  // Temporaries wrap the nests (innermost last).
  Stmt body = ir::block(std::move(nests));
  for (auto t = normalized.temporaries.rbegin(); t != normalized.temporaries.rend(); ++t) {
    Expr size = ir::intImm(1);
    for (const std::string& index : t->indices)
      size = ir::mul(size, ir::var(extentName(index), ScalarType::kI64));
    body = ir::allocate({valuesName(t->name), out.computeType}, size, body);
  }
  for (const Temporary& t : normalized.temporaries)
    out.temporaries.push_back({{valuesName(t.name), out.computeType}, t.indices});
  out.outputIndices = kernel.statement.lhs.indices;
  top.push_back(body);
  out.body = ir::block(std::move(top));

  // Arrays of the tensor arguments.
  for (size_t k = 0; k < out.tensors.size(); ++k) {
    const TensorArg& arg = out.tensors[k];
    const std::string prefix = tensorPrefix(arg.name);
    out.arrays.push_back({{valuesArray(prefix), arg.valueType},
                          static_cast<int32_t>(k),
                          ArrayBinding::Kind::kValues,
                          0});
    for (int32_t l = 0; l < arg.format.numLevels(); ++l) {
      const auto caps = format::levelImpl(arg.format.level(l).type.kind).capabilities();
      if (caps.hasPos) {
        out.arrays.push_back({{posArray(prefix, l), widthType(arg.format.posWidth())},
                              static_cast<int32_t>(k),
                              ArrayBinding::Kind::kPos,
                              l});
      }
      if (caps.hasCrd) {
        out.arrays.push_back({{crdArray(prefix, l), widthType(arg.format.crdWidth())},
                              static_cast<int32_t>(k),
                              ArrayBinding::Kind::kCrd,
                              l});
      }
      if (format::levelImpl(arg.format.level(l).type.kind).chosenByData(arg.format.level(l).type)) {
        out.arrays.push_back({{slotsArray(prefix, l), ScalarType::kI64},
                              static_cast<int32_t>(k),
                              ArrayBinding::Kind::kSlots,
                              l});
      }
      if (caps.hasMeta) {
        out.arrays.push_back({{metaArray(prefix, l), ScalarType::kU8},
                              static_cast<int32_t>(k),
                              ArrayBinding::Kind::kMeta,
                              l});
      }
    }
  }
  return out;
}

}  // namespace sparseflow::lower
