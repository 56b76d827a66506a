// Checked kernel → textual MLIR 16: sparse_tensor encodings, then one func.func of linalg.generic
// steps (see emit_mlir.h and plan.h).
#include "codegen/mlir/emit_mlir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "codegen/mlir/encoding.h"
#include "codegen/mlir/plan.h"
#include "support/check.h"

namespace sparseflow::codegen {
namespace {

using mlir::Combine;
using mlir::Step;

const char* elemType(DType t) {
  return t == DType::kF64 ? "f64" : "f32";
}

/// A float literal MLIR's parser reads back exactly: the shortest round-tripping decimal with a
/// '.', or the bit pattern in hex for infinities and NaN.
std::string floatLiteral(double v, DType type) {
  if (!std::isfinite(v)) {
    if (type == DType::kF64) {
      return std::isnan(v) ? "0x7FF8000000000000"
                           : (v > 0 ? "0x7FF0000000000000" : "0xFFF0000000000000");
    }
    return std::isnan(v) ? "0x7FC00000" : (v > 0 ? "0x7F800000" : "0xFF800000");
  }
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*e", precision - 1, v);
    text = buffer;
    if (std::strtod(buffer, nullptr) == v) break;
  }
  if (text.find('.') == std::string::npos) text.insert(text.find('e'), ".0");  // "2e+00": no '.'
  return text;
}

/// One element of the emitted function's region being built: its block arguments by operand.
struct Region {
  std::ostringstream ops;
  std::vector<std::pair<std::string, std::vector<std::string>>> operands;  // (tensor, indices)
  std::vector<std::string> args;       // block argument names, operands order
  std::vector<std::string> converted;  // the argument in the compute type (after extf)
};

class Emitter {
 public:
  Emitter(const expr::CheckedKernel& kernel, const std::map<std::string, Format>& formats)
      : k_(kernel), compute_(elemType(kernel.computeType)) {
    for (const auto& [name, format] : formats) {
      SF_USER_CHECK(kernel.tensors.count(name))
          << "format given for '" << name << "', which the kernel '" << kernel.statement.text
          << "' does not use";
      if (const auto enc = mlir::encodingAttr(name, format)) {
        encoding_[name] = aliasFor(*enc, mlir::encodingAliasBase(format));
        sparse_[name] = mlir::hasSparseLevel(format);
      }
    }
  }

  std::string emit() {
    const mlir::Plan plan = mlir::planSteps(k_, [&](const std::string& name) {
      auto it = sparse_.find(name);
      return it != sparse_.end() && it->second;
    });
    const std::string& out = k_.output;
    const std::string outType = argType(out);
    // Signature.
    std::ostringstream sig;
    auto addArg = [&](const std::string& name, const std::string& type) {
      sig << (sig.tellp() > 0 ? ", " : "") << "%" << name << ": " << type;
    };
    for (const std::string& in : k_.inputs) {
      addArg(in, argType(in));
      setValue(in, "%" + in, argType(in));
    }
    if (k_.statement.accumulate) addArg(out, outType);
    for (const std::string& p : k_.params) addArg(p, compute_);
    // Densified inputs.
    for (const std::string& in : plan.densified) {
      const std::string dense =
          tensorType(k_.tensors.at(in).shape, elemType(k_.tensors.at(in).dtype), "");
      const std::string v = fresh();
      body_ << "  " << v << " = sparse_tensor.convert %" << in << " : " << argType(in) << " to "
            << dense << "\n";
      setValue(in, v, dense);
    }
    // The output is written directly when it is dense in the compute type, or sparse in it and
    // written by one non-max step (MLIR 16 sparsifies that as SDDMM); else through a dense
    // working tensor in the compute type (the sparsifier crashes on f32 += f64 reductions).
    const std::string outElem = elemType(k_.tensors.at(out).dtype);
    const bool sameType = outElem == compute_;
    const bool outSparse = sparse_.count(out) && sparse_.at(out);
    const auto writesOut = std::count_if(plan.steps.begin(), plan.steps.end(),
                                         [&](const Step& s) { return s.target == out; });
    const bool direct =
        sameType &&
        (!outSparse || (!k_.statement.accumulate && writesOut == 1 &&
                        std::none_of(plan.steps.begin(), plan.steps.end(), [&](const Step& s) {
                          return s.target == out && s.combine == Combine::kMax;
                        })));
    const std::vector<int64_t>& outShape = k_.tensors.at(out).shape;
    const std::string workType = direct ? outType : tensorType(outShape, compute_, "");
    const std::string denseOutType = tensorType(outShape, outElem, "");
    targetType_[out] = workType;
    targetElem_[out] = direct ? outElem : compute_;
    targetIndices_[out] = k_.statement.lhs.indices;
    outSparseDirect_ = outSparse && direct;
    if (k_.statement.accumulate) {
      std::string v = "%" + out;
      if (outSparse && !direct) v = sparseConvert(v, outType, denseOutType);
      if (!sameType) v = castGeneric(v, denseOutType, outElem, workType, compute_);
      setValue(out, v, workType);
    }
    for (const mlir::Temporary& t : plan.temporaries) {
      std::vector<int64_t> shape;
      for (const std::string& i : t.indices) shape.push_back(k_.indexExtents.at(i));
      targetType_[t.name] = tensorType(shape, compute_, "");
      targetIndices_[t.name] = t.indices;
    }
    for (const Step& step : plan.steps) emitStep(step);
    std::string result = value_.at(out);
    if (!sameType) result = castGeneric(result, workType, compute_, denseOutType, outElem);
    if (outSparse && !direct) result = sparseConvert(result, denseOutType, outType);
    // Assemble: header comment, encodings, function.
    std::ostringstream text;
    text << "// sparseflow kernel: " << expr::toString(k_.statement) << "\n";
    text << "// MLIR 16 syntax; lower with: mlir-opt-16 --sparse-compiler\n";
    for (const std::string& note : plan.notes) text << "// note: " << note << "\n";
    for (const auto& [alias, enc] : aliases_) text << "#" << alias << " = " << enc << "\n";
    text << "func.func @kernel(" << sig.str() << ") -> " << outType << " {\n";
    text << body_.str();
    text << "  return " << result << " : " << outType << "\n}\n";
    return text.str();
  }

 private:
  std::string aliasFor(const std::string& enc, const std::string& base) {
    for (const auto& [alias, text] : aliases_) {
      if (text == enc) return alias;
    }
    std::string alias = base;
    for (int n = 1; std::any_of(aliases_.begin(), aliases_.end(),
                                [&](const auto& a) { return a.first == alias; });
         ++n) {
      alias = base + "_" + std::to_string(n);
    }
    aliases_.emplace_back(alias, enc);
    return alias;
  }

  static std::string tensorType(const std::vector<int64_t>& shape, const std::string& elem,
                                const std::string& alias) {
    std::string t = "tensor<";
    for (int64_t d : shape) t += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
    t += elem;
    if (!alias.empty()) t += ", #" + alias;
    return t + ">";
  }

  std::string argType(const std::string& name) const {
    const expr::TensorInfo& info = k_.tensors.at(name);
    auto enc = encoding_.find(name);
    return tensorType(info.shape, elemType(info.dtype), enc != encoding_.end() ? enc->second : "");
  }

  std::string fresh() { return "%" + std::to_string(next_++); }

  void setValue(const std::string& name, const std::string& v, const std::string& type) {
    value_[name] = v;
    valueType_[name] = type;
  }

  /// A function-scope constant, made once.
  std::string constant(const std::string& literal, const std::string& type) {
    const std::string key = literal + " : " + type;
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    const std::string v = fresh();
    body_ << "  " << v << " = arith.constant " << key << "\n";
    constants_[key] = v;
    return v;
  }
  std::string floatConstant(double value) {
    return constant(floatLiteral(value, k_.computeType), compute_);
  }

  /// The extent of `index` as an SSA `index` value, read from an argument that uses it.
  std::string extentValue(const std::string& index) {
    auto cached = extents_.find(index);
    if (cached != extents_.end()) return cached->second;
    std::vector<std::string> candidates = k_.inputs;
    if (k_.statement.accumulate) candidates.push_back(k_.output);
    for (const std::string& name : candidates) {
      const std::vector<std::string>* indices = accessIndices(name, *k_.statement.rhs);
      if (name == k_.output) indices = &k_.statement.lhs.indices;
      if (indices == nullptr) continue;
      for (size_t d = 0; d < indices->size(); ++d) {
        if ((*indices)[d] != index) continue;
        const std::string c = constant(std::to_string(d), "index");
        const std::string v = fresh();
        body_ << "  " << v << " = tensor.dim %" << name << ", " << c << " : " << argType(name)
              << "\n";
        extents_[index] = v;
        return v;
      }
    }
    // A copy made by a written-out row function (layernorm's row count uses no tensor).
    if (const auto copy = k_.indexCopyOf.find(index); copy != k_.indexCopyOf.end()) {
      return extents_[index] = extentValue(copy->second);
    }
    SF_FAIL(kNotSupported) << "index '" << index << "' of " << k_.output
                           << " has no known extent: no input uses it; export with known shapes";
  }

  static const std::vector<std::string>* accessIndices(const std::string& tensor,
                                                       const expr::Expr& e) {
    if (const auto* a = std::get_if<expr::Access>(&e.node))
      return a->tensor == tensor ? &a->indices : nullptr;
    if (const auto* u = std::get_if<expr::Unary>(&e.node))
      return accessIndices(tensor, *u->operand);
    if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      const auto* l = accessIndices(tensor, *b->lhs);
      return l ? l : accessIndices(tensor, *b->rhs);
    }
    if (const auto* r = std::get_if<expr::Reduce>(&e.node)) return accessIndices(tensor, *r->body);
    return nullptr;
  }

  /// The first value of a target: uninitialized, zero-filled or -inf-filled as its step needs.
  void initTarget(const Step& step) {
    const std::string& type = targetType_.at(step.target);
    std::string sizes;
    const std::vector<std::string>& indices = targetIndices_.at(step.target);
    for (const std::string& i : indices) {
      if (k_.indexExtents.at(i) < 0) sizes += (sizes.empty() ? "" : ", ") + extentValue(i);
    }
    if (step.target == k_.output && outSparseDirect_) {
      const std::string v = fresh();
      body_ << "  " << v << " = bufferization.alloc_tensor(" << sizes << ") : " << type << "\n";
      setValue(step.target, v, type);
      return;
    }
    const std::string elem = targetElem(step.target);
    std::string fill;
    if (step.combine == Combine::kMax) {
      fill = constant(
          floatLiteral(-INFINITY, elem == std::string("f64") ? DType::kF64 : DType::kF32), elem);
    } else if (step.combine != Combine::kOverwrite) {
      fill =
          constant(floatLiteral(0.0, elem == std::string("f64") ? DType::kF64 : DType::kF32), elem);
    }
    std::string v = fresh();
    body_ << "  " << v << " = tensor.empty(" << sizes << ") : " << type << "\n";
    if (!fill.empty()) {
      const std::string filled = fresh();
      body_ << "  " << filled << " = linalg.fill ins(" << fill << " : " << elem << ") outs(" << v
            << " : " << type << ") -> " << type << "\n";
      v = filled;
    }
    setValue(step.target, v, type);
  }

  std::string elemOf(const std::string& name) const {
    auto it = k_.tensors.find(name);
    return it != k_.tensors.end() ? elemType(it->second.dtype) : compute_;
  }
  std::string targetElem(const std::string& target) const {
    auto it = targetElem_.find(target);
    return it != targetElem_.end() ? it->second : compute_;
  }

  std::string sparseConvert(const std::string& v, const std::string& from, const std::string& to) {
    const std::string r = fresh();
    body_ << "  " << r << " = sparse_tensor.convert " << v << " : " << from << " to " << to << "\n";
    return r;
  }

  /// The output-shaped dense tensor `v` converted element-wise between f32 and f64.
  std::string castGeneric(const std::string& v, const std::string& fromType,
                          const std::string& fromElem, const std::string& toType,
                          const std::string& toElem) {
    std::string sizes;
    for (const std::string& i : k_.statement.lhs.indices) {
      if (k_.indexExtents.at(i) < 0) sizes += (sizes.empty() ? "" : ", ") + extentValue(i);
    }
    const std::string empty = fresh();
    body_ << "  " << empty << " = tensor.empty(" << sizes << ") : " << toType << "\n";
    const std::vector<std::string>& dims = k_.statement.lhs.indices;
    const std::string map = affineMap(dims, dims);
    const std::string in = fresh(), acc = fresh();
    std::ostringstream ops;
    const std::string c = convert(in, fromElem, toElem, ops);
    const std::string r = fresh();
    body_ << "  " << r << " = linalg.generic {indexing_maps = [" << map << ", " << map
          << "], iterator_types = [";
    for (size_t d = 0; d < dims.size(); ++d) body_ << (d ? ", " : "") << "\"parallel\"";
    body_ << "]} ins(" << v << " : " << fromType << ") outs(" << empty << " : " << toType
          << ") {\n";
    body_ << "  ^bb0(" << in << ": " << fromElem << ", " << acc << ": " << toElem << "):\n"
          << ops.str();
    body_ << "    linalg.yield " << c << " : " << toElem << "\n  } -> " << toType << "\n";
    return r;
  }

  std::string affineMap(const std::vector<std::string>& dims,
                        const std::vector<std::string>& indices) const {
    std::ostringstream m;
    m << "affine_map<(";
    for (size_t d = 0; d < dims.size(); ++d) m << (d ? ", " : "") << "d" << d;
    m << ") -> (";
    for (size_t i = 0; i < indices.size(); ++i) {
      const auto pos = std::find(dims.begin(), dims.end(), indices[i]) - dims.begin();
      m << (i ? ", " : "") << "d" << pos;
    }
    m << ")>";
    return m.str();
  }

  void collectOperands(const expr::Expr& e, Region& region) {
    if (mlir::isInvariant(e)) return;
    if (const auto* a = std::get_if<expr::Access>(&e.node)) {
      const auto key = std::make_pair(a->tensor, a->indices);
      if (std::find(region.operands.begin(), region.operands.end(), key) == region.operands.end()) {
        region.operands.push_back(key);
      }
    } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
      collectOperands(*u->operand, region);
    } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      collectOperands(*b->lhs, region);
      collectOperands(*b->rhs, region);
    }
  }

  void emitStep(const Step& step) {
    if (!value_.count(step.target)) initTarget(step);
    Region region;
    collectOperands(*step.body, region);
    std::vector<std::string> dims = step.targetIndices;
    dims.insert(dims.end(), step.reductions.begin(), step.reductions.end());
    std::ostringstream maps, ins, insTypes, blockArgs;
    for (size_t n = 0; n < region.operands.size(); ++n) {
      const auto& [tensor, indices] = region.operands[n];
      maps << affineMap(dims, indices) << ", ";
      ins << (n ? ", " : "") << value_.at(tensor);
      insTypes << (n ? ", " : "") << valueType_.at(tensor);
      region.args.push_back(fresh());
      region.converted.push_back("");
      blockArgs << region.args.back() << ": " << elemOf(tensor) << ", ";
    }
    // A loop no operand indexes (layernorm's row count, `sum(j_2, 1)`) takes its range from an
    // operand of that extent whose values the region ignores: linalg infers loop ranges from
    // the operands' shapes.
    for (const std::string& dim : dims) {
      bool covered = std::find(step.targetIndices.begin(), step.targetIndices.end(), dim) !=
                     step.targetIndices.end();
      for (const auto& [tensor, indices] : region.operands) {
        covered = covered || std::find(indices.begin(), indices.end(), dim) != indices.end();
      }
      if (covered) continue;
      const int64_t extent = k_.indexExtents.at(dim);
      const std::string type = "tensor<" +
                               (extent < 0 ? std::string("?") : std::to_string(extent)) + "x" +
                               compute_ + ">";
      const std::string shape = fresh();
      body_ << "  " << shape << " = tensor.empty(" << (extent < 0 ? extentValue(dim) : "")
            << ") : " << type << "\n";
      maps << affineMap(dims, {dim}) << ", ";
      ins << (region.args.empty() ? "" : ", ") << shape;
      insTypes << (region.args.empty() ? "" : ", ") << type;
      region.args.push_back(fresh());
      region.converted.push_back("");
      blockArgs << region.args.back() << ": " << compute_ << ", ";
    }
    maps << affineMap(dims, step.targetIndices);
    const std::string outElem = targetElem(step.target);
    const std::string outArg = fresh();
    blockArgs << outArg << ": " << outElem;
    // The region.
    std::string v = emitExpr(*step.body, region.ops, &region);
    if (step.combine != Combine::kOverwrite) {
      const std::string acc = convert(outArg, outElem, compute_, region.ops);
      const char* op = step.combine == Combine::kAdd   ? "arith.addf"
                       : step.combine == Combine::kSub ? "arith.subf"
                                                       : "arith.maxf";
      v = op2(op, acc, v, region.ops);
    }
    v = convert(v, compute_, outElem, region.ops);
    const std::string& type = valueType_.at(step.target);
    const std::string result = fresh();
    body_ << "  " << result << " = linalg.generic {indexing_maps = [" << maps.str()
          << "], iterator_types = [";
    for (size_t d = 0; d < dims.size(); ++d) {
      body_ << (d ? ", " : "")
            << (d < step.targetIndices.size() ? "\"parallel\"" : "\"reduction\"");
    }
    body_ << "]}";
    if (!region.args.empty()) body_ << " ins(" << ins.str() << " : " << insTypes.str() << ")";
    body_ << " outs(" << value_.at(step.target) << " : " << type << ") {\n";
    body_ << "  ^bb0(" << blockArgs.str() << "):\n" << region.ops.str();
    body_ << "    linalg.yield " << v << " : " << outElem << "\n  } -> " << type << "\n";
    setValue(step.target, result, type);
  }

  /// `v` converted between f32 and f64 (arith.extf / arith.truncf) when the types differ.
  std::string convert(const std::string& v, const std::string& from, const std::string& to,
                      std::ostringstream& out) {
    if (from == to) return v;
    const std::string r = fresh();
    out << "    " << r << " = " << (to == "f64" ? "arith.extf " : "arith.truncf ") << v << " : "
        << from << " to " << to << "\n";
    return r;
  }

  std::string op1(const char* op, const std::string& x, std::ostringstream& out) {
    const std::string r = fresh();
    out << indent(out) << r << " = " << op << " " << x << " : " << compute_ << "\n";
    return r;
  }
  std::string op2(const char* op, const std::string& x, const std::string& y,
                  std::ostringstream& out) {
    const std::string r = fresh();
    out << indent(out) << r << " = " << op << " " << x << ", " << y << " : " << compute_ << "\n";
    return r;
  }
  const char* indent(const std::ostringstream& out) const { return &out == &body_ ? "  " : "    "; }

  /// Emits `e` into `out` (a region when `region` is set, else the function scope). Subtrees that
  /// read no tensor go to the function scope: MLIR's sparsifier treats values defined outside the
  /// region as invariants, but refuses constants defined inside it.
  std::string emitExpr(const expr::Expr& e, std::ostringstream& out, Region* region) {
    if (region != nullptr && mlir::isInvariant(e)) return emitExpr(e, body_, nullptr);
    if (const auto* a = std::get_if<expr::Access>(&e.node)) {
      const auto it = std::find(region->operands.begin(), region->operands.end(),
                                std::make_pair(a->tensor, a->indices));
      const size_t n = static_cast<size_t>(it - region->operands.begin());
      if (region->converted[n].empty()) {
        region->converted[n] = convert(region->args[n], elemOf(a->tensor), compute_, out);
      }
      return region->converted[n];
    }
    if (const auto* l = std::get_if<expr::Literal>(&e.node)) return floatConstant(l->value);
    if (const auto* p = std::get_if<expr::Param>(&e.node)) return "%" + p->name;
    if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
      const std::string x = emitExpr(*b->lhs, out, region);
      const std::string y = emitExpr(*b->rhs, out, region);
      switch (b->op) {
        case expr::BinaryOp::kAdd: return op2("arith.addf", x, y, out);
        case expr::BinaryOp::kSub: return op2("arith.subf", x, y, out);
        case expr::BinaryOp::kMul: return op2("arith.mulf", x, y, out);
        case expr::BinaryOp::kDiv: return op2("arith.divf", x, y, out);
        // NaN when either is NaN, as the kernel language's minimum and maximum.
        case expr::BinaryOp::kMin: return op2("arith.minf", x, y, out);
        case expr::BinaryOp::kMax: return op2("arith.maxf", x, y, out);
      }
    }
    if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
      SF_FAIL(kInternal) << "reduction over '" << r->index << "' left inside a linalg.generic body";
    }
    const auto& u = std::get<expr::Unary>(e.node);
    const std::string x = emitExpr(*u.operand, out, region);
    return emitUnary(u.fn, x, out);
  }

  std::string emitUnary(expr::UnaryFn fn, const std::string& x, std::ostringstream& out) {
    auto sigmoid = [&](const std::string& v) {
      const std::string e = op1("math.exp", op1("arith.negf", v, out), out);
      const std::string one = floatConstant(1.0);
      return op2("arith.divf", one, op2("arith.addf", one, e, out), out);
    };
    switch (fn) {
      case expr::UnaryFn::kNeg: return op1("arith.negf", x, out);
      case expr::UnaryFn::kAbs: return op1("math.absf", x, out);
      case expr::UnaryFn::kSqrt: return op1("math.sqrt", x, out);
      case expr::UnaryFn::kExp: return op1("math.exp", x, out);
      case expr::UnaryFn::kLog: return op1("math.log", x, out);
      case expr::UnaryFn::kTanh: return op1("math.tanh", x, out);
      case expr::UnaryFn::kRelu: return op2("arith.maxf", x, floatConstant(0.0), out);
      case expr::UnaryFn::kSigmoid: return sigmoid(x);
      case expr::UnaryFn::kSilu: return op2("arith.mulf", x, sigmoid(x), out);
      case expr::UnaryFn::kGelu: {  // 0.5 x (1 + erf(x / sqrt 2)), as the C++ prelude
        const std::string t =
            op1("math.erf", op2("arith.mulf", x, floatConstant(0.70710678118654752440), out), out);
        const std::string s = op2("arith.addf", floatConstant(1.0), t, out);
        return op2("arith.mulf", floatConstant(0.5), op2("arith.mulf", x, s, out), out);
      }
      case expr::UnaryFn::kGeluTanh: {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        const std::string x3 = op2("arith.mulf", op2("arith.mulf", x, x, out), x, out);
        const std::string inner =
            op2("arith.addf", x, op2("arith.mulf", floatConstant(0.044715), x3, out), out);
        const std::string t = op1(
            "math.tanh", op2("arith.mulf", floatConstant(0.79788456080286535588), inner, out), out);
        const std::string s = op2("arith.addf", floatConstant(1.0), t, out);
        return op2("arith.mulf", floatConstant(0.5), op2("arith.mulf", x, s, out), out);
      }
    }
    SF_FAIL(kInternal) << "unknown function " << static_cast<int>(fn);
  }

  const expr::CheckedKernel& k_;
  const std::string compute_;
  std::map<std::string, std::string> encoding_;  // tensor → alias
  std::map<std::string, bool> sparse_;
  std::vector<std::pair<std::string, std::string>> aliases_;  // (alias, attribute)
  std::map<std::string, std::string> value_, valueType_, targetType_, targetElem_, constants_,
      extents_;
  std::map<std::string, std::vector<std::string>> targetIndices_;
  bool outSparseDirect_ = false;
  std::ostringstream body_;
  int next_ = 0;
};

}  // namespace

std::string emitMlir(const expr::CheckedKernel& kernel,
                     const std::map<std::string, Format>& formats) {
  return Emitter(kernel, formats).emit();
}

}  // namespace sparseflow::codegen
