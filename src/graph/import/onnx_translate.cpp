// ONNX operators over run-time values, as graph IR operators (the table in docs/graph.md, "ONNX").
// Constants that such an operator reads become parameters; a MatMul or Gemm by a constant matrix
// becomes a linear layer whose weight is [out, in].
#include <onnx/onnx_pb.h>

#include <cmath>

#include "graph/import/onnx_context.h"
#include "graph/import/onnx_node.h"
#include "graph/import/onnx_shapes.h"
#include "support/check.h"

namespace sparseflow::graph::onnx_import {
namespace {

using Ids = std::vector<ValueId>;

[[noreturn]] void unsupported(const std::string& where, const std::string& why) {
  SF_FAIL(kNotSupported) << where << ": " << why;
}

/// A linear layer's weight name: the initializer's, unless the exporter named it "onnx::..."; then
/// the node's path ("/encoder/layer.0/query/MatMul" -> "encoder.layer.0.query.weight").
std::string weightName(const onnx::NodeProto& node, const std::string& initializer) {
  if (initializer.rfind("onnx::", 0) != 0 || node.name().empty()) return initializer;
  std::string path = node.name();
  if (!path.empty() && path[0] == '/') path.erase(0, 1);
  const size_t last = path.rfind('/');
  if (last == std::string::npos) return initializer;
  path.resize(last);
  for (char& ch : path) {
    if (ch == '/') ch = '.';
  }
  return path + ".weight";
}

Constant transpose2d(const Constant& w) {
  Constant t = w.asReal();
  const int64_t rows = w.shape[0], cols = w.shape[1];
  t.shape = {cols, rows};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      t.reals[static_cast<size_t>(c * rows + r)] = w.real(r * cols + c);
  }
  return t;
}

Constant scaled(const Constant& c, double factor) {
  Constant s = c.asReal();
  for (double& v : s.reals) v *= factor;
  return s;
}

Constant negated(const Constant& c) {
  return scaled(c, -1.0);
}

Constant reciprocal(const Constant& c) {
  Constant s = c.asReal();
  for (double& v : s.reals) v = 1.0 / v;
  return s;
}

class Translator {
 public:
  Translator(ImportContext& ctx, const onnx::NodeProto& node, const std::string& where)
      : ctx_(ctx), node_(node), where_(where), op_(node.op_type()) {}

  ValueId run();

 private:
  const std::string& in(int i) const {
    SF_USER_CHECK(i < node_.input_size() && !node_.input(i).empty())
        << where_ << ": operand " << i << " is missing";
    return node_.input(i);
  }
  bool has(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  bool dynamic(int i) const { return has(i) && ctx_.isValue(node_.input(i)); }
  ValueId value(int i) { return ctx_.value(in(i), where_); }
  const Constant& constant(int i) const { return ctx_.constant(in(i), where_); }
  const Dims& shape(ValueId v) const { return ctx_.type(v).shape; }
  ValueId add(OpKind kind, const Ids& ops, const OpAttrs& attrs = {}) {
    return ctx_.op(kind, ops, where_, attrs);
  }
  ValueId reshape(ValueId v, const Dims& to) {
    return shape(v) == to ? v : add(OpKind::kReshape, {v}, {{"shape", to}});
  }
  ValueId scale(ValueId v, double factor) { return add(OpKind::kMul, {v, ctx_.scalar(factor)}); }
  /// Axes of an operator that takes them as an attribute before `inputOpset`, as input 1 after.
  std::optional<Dims> axes(int64_t inputOpset) const {
    if (ctx_.opset() < inputOpset) return intsAttr(node_, "axes");
    if (has(1)) return constant(1).integers(where_);
    return std::nullopt;
  }

  ValueId matmul();
  ValueId gemm();
  ValueId binary();
  ValueId gather();
  ValueId slice();
  ValueId reduce();
  ValueId conv();
  ValueId maxPool();
  ValueId averagePool();
  ValueId logic();
  ValueId batchNorm();
  ValueId clip();

  ImportContext& ctx_;
  const onnx::NodeProto& node_;
  const std::string& where_;
  const std::string& op_;
};

ValueId Translator::matmul() {
  if (dynamic(0) && !dynamic(1) && constant(1).rank() == 2) {
    const ValueId x = value(0);
    const Constant w = transpose2d(constant(1));
    return add(OpKind::kLinear, {x, ctx_.param(w, weightName(node_, in(1)))});
  }
  const ValueId a = value(0), b = value(1);
  const int64_t ra = ctx_.type(a).rank(), rb = ctx_.type(b).rank();
  if (ra == 2 && rb == 2) return add(OpKind::kMatmul, {a, b});
  if (ra >= 3 && ra == rb) return add(OpKind::kBatchMatmul, {a, b});
  unsupported(where_, "a product of a rank-" + std::to_string(ra) + " and a rank-" +
                          std::to_string(rb) + " value (matmul takes 2-D pairs, batch_matmul " +
                          "equal ranks of at least 3)");
}

ValueId Translator::gemm() {
  if (!dynamic(0) || dynamic(1)) {
    unsupported(where_, "Gemm runs with a constant B (a linear layer's weight) only");
  }
  ValueId a = value(0);
  SF_USER_CHECK(ctx_.type(a).rank() == 2) << where_ << ": A must be 2-D";
  if (intAttr(node_, "transA", 0)) a = add(OpKind::kTranspose, {a}, {{"perm", Dims{1, 0}}});
  const Constant& b = constant(1);
  SF_USER_CHECK(b.rank() == 2) << where_ << ": B must be 2-D";
  const double alpha = floatAttr(node_, "alpha", 1.0), beta = floatAttr(node_, "beta", 1.0);
  Constant w = intAttr(node_, "transB", 0) ? b.asReal() : transpose2d(b);
  if (alpha != 1.0) w = scaled(w, alpha);
  const ValueId weight = ctx_.param(w, alpha == 1.0 && intAttr(node_, "transB", 0)
                                           ? weightName(node_, in(1))
                                           : weightName(node_, in(1)) + ".gemm");
  if (!has(2)) return add(OpKind::kLinear, {a, weight});
  if (!dynamic(2)) {
    Constant c = constant(2).asReal();
    if (beta != 1.0) c = scaled(c, beta);
    if (c.numel() == w.shape[0] && (c.rank() == 1 || (c.rank() == 2 && c.shape[0] == 1))) {
      c.shape = {w.shape[0]};
      const std::string name = beta == 1.0 && c.rank() == 1 && constant(2).rank() == 1 ? in(2) : "";
      return add(OpKind::kLinear, {a, weight, ctx_.param(c, name)});
    }
    return add(OpKind::kAdd, {add(OpKind::kLinear, {a, weight}), ctx_.param(c, "")});
  }
  ValueId c = value(2);
  if (beta != 1.0) c = scale(c, beta);
  return add(OpKind::kAdd, {add(OpKind::kLinear, {a, weight}), c});
}

ValueId Translator::binary() {
  const bool d0 = dynamic(0), d1 = dynamic(1);
  if (op_ == "Add") {
    if (d0 != d1) {  // a bias along the last axis, or a broadcast constant
      const int x = d0 ? 0 : 1;
      const ValueId v = value(x);
      const Constant& c = constant(1 - x);
      if (c.rank() == 1 && ctx_.type(v).rank() >= 1 && c.shape[0] == shape(v).back() &&
          c.shape[0] > 1) {
        return add(OpKind::kBiasAdd, {v, value(1 - x)});
      }
    }
    return add(OpKind::kAdd, {value(0), value(1)});
  }
  if (op_ == "Sub") {
    if (d0 && !d1) return add(OpKind::kAdd, {value(0), ctx_.param(negated(constant(1)), "")});
    return add(OpKind::kAdd, {value(0), scale(value(1), -1.0)});
  }
  if (op_ == "Mul") return add(OpKind::kMul, {value(0), value(1)});
  if (op_ == "Div") {  // by a constant: a product with its reciprocal (fuses like any Mul)
    if (d1) return add(OpKind::kDiv, {value(0), value(1)});
    return add(OpKind::kMul, {value(0), ctx_.param(reciprocal(constant(1)), "")});
  }
  if (op_ == "Max") return add(OpKind::kMaximum, {value(0), value(1)});
  if (op_ == "Min") return add(OpKind::kMinimum, {value(0), value(1)});
  if (op_ == "Pow") {
    if (d1 || constant(1).numel() != 1) unsupported(where_, "Pow by a tensor exponent");
    const double k = constant(1).real(0);
    const ValueId x = value(0);
    if (k == 1.0) return x;
    if (k == 2.0) return add(OpKind::kMul, {x, x});
    if (k == 3.0) return add(OpKind::kMul, {add(OpKind::kMul, {x, x}), x});
    unsupported(where_, "Pow with exponent " + std::to_string(k) + " (1, 2 and 3 run)");
  }
  unsupported(where_, "not an operator the graph IR runs");
}

ValueId Translator::gather() {
  const int64_t axisAttr = intAttr(node_, "axis", 0);
  if (!dynamic(0) && dynamic(1)) {
    const ValueId ids = value(1);
    SF_CHECK_CODE(constant(0).rank() == 2 && axisAttr == 0, ErrorCode::kNotSupported)
        << where_ << ": a Gather of run-time indices must read rows of a 2-D table (an embedding)";
    const DType t = ctx_.type(ids).dtype;
    SF_CHECK_CODE(t == DType::kI64 || t == DType::kI32, ErrorCode::kNotSupported)
        << where_ << ": the indices must come straight from an integer graph input";
    return add(OpKind::kEmbedding, {value(0), ids});
  }
  const ValueId x = value(0);
  const Constant& idx = constant(1);
  const int64_t axis = normalizeAxis(axisAttr, ctx_.type(x).rank(), where_);
  const int64_t extent = shape(x)[static_cast<size_t>(axis)];
  SF_CHECK_CODE(idx.rank() <= 1, ErrorCode::kNotSupported)
      << where_ << ": a Gather of a run-time value by a " << idx.rank() << "-D index";
  Ids parts;
  for (int64_t k = 0; k < idx.numel(); ++k) {
    int64_t i = idx.integer(k, where_);
    SF_USER_CHECK(i >= -extent && i < extent)
        << where_ << ": index " << i << " is outside an axis of extent " << extent;
    if (i < 0) i += extent;
    parts.push_back(add(OpKind::kSlice, {x}, {{"axis", axis}, {"start", i}, {"end", i + 1}}));
  }
  SF_CHECK_CODE(!parts.empty(), ErrorCode::kNotSupported) << where_ << ": an empty Gather";
  ValueId out = parts.size() == 1 ? parts[0] : add(OpKind::kConcat, parts, {{"axis", axis}});
  if (idx.rank() == 0) {
    Dims s = shape(out);
    s.erase(s.begin() + axis);
    out = reshape(out, s);
  }
  return out;
}

ValueId Translator::slice() {
  ValueId x = value(0);
  Dims starts, ends, axesList, steps;
  if (ctx_.opset() < 10) {
    starts = intsAttr(node_, "starts").value_or(Dims{});
    ends = intsAttr(node_, "ends").value_or(Dims{});
    axesList = intsAttr(node_, "axes").value_or(Dims{});
  } else {
    starts = constant(1).integers(where_);
    ends = constant(2).integers(where_);
    if (has(3)) axesList = constant(3).integers(where_);
    if (has(4)) steps = constant(4).integers(where_);
  }
  if (axesList.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axesList.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  SF_USER_CHECK(ends.size() == starts.size() && axesList.size() == starts.size() &&
                steps.size() == starts.size())
      << where_ << ": starts, ends, axes and steps differ in length";
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = normalizeAxis(axesList[i], ctx_.type(x).rank(), where_);
    const int64_t extent = shape(x)[static_cast<size_t>(axis)];
    const SliceRange r = sliceRange(extent, starts[i], ends[i], steps[i], where_);
    if (r.count == extent && r.step == 1) continue;
    SF_CHECK_CODE(r.step == 1 || r.count <= 1, ErrorCode::kNotSupported)
        << where_ << ": a slice with step " << r.step << " of a run-time value";
    SF_CHECK_CODE(r.count > 0, ErrorCode::kNotSupported) << where_ << ": an empty slice";
    x = add(OpKind::kSlice, {x}, {{"axis", axis}, {"start", r.start}, {"end", r.start + r.count}});
  }
  return x;
}

ValueId Translator::reduce() {
  const bool mean = op_ == "ReduceMean", max = op_ == "ReduceMax";
  if (!(mean || max || op_ == "ReduceSum"))
    unsupported(where_, "not a reduction the graph IR runs");
  ValueId x = value(0);
  const Dims in = shape(x);
  const int64_t rank = static_cast<int64_t>(in.size());
  std::optional<Dims> list = axes(op_ == "ReduceSum" ? 13 : 18);
  if (!list || list->empty()) {
    if (intAttr(node_, "noop_with_empty_axes", 0)) return x;
    list = Dims{};
    for (int64_t d = 0; d < rank; ++d) list->push_back(d);
  }
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : *list) reduced[static_cast<size_t>(normalizeAxis(a, rank, where_))] = true;
  int64_t count = 1;
  Dims kept;
  for (int64_t d = rank; d-- > 0;) {
    if (!reduced[static_cast<size_t>(d)]) continue;
    count *= in[static_cast<size_t>(d)];
    SF_CHECK_CODE(ctx_.type(x).rank() > 1, ErrorCode::kNotSupported)
        << where_ << ": a reduction to a scalar";
    x = add(max ? OpKind::kReduceMax : OpKind::kReduceSum, {x}, {{"axis", d}});
  }
  if (mean) x = scale(x, 1.0 / static_cast<double>(count));
  if (intAttr(node_, "keepdims", 1)) {
    for (int64_t d = 0; d < rank; ++d) {
      kept.push_back(reduced[static_cast<size_t>(d)] ? 1 : in[static_cast<size_t>(d)]);
    }
    x = reshape(x, kept);
  }
  return x;
}

ValueId Translator::conv() {
  const ValueId x = value(0);
  SF_CHECK_CODE(!dynamic(1) && constant(1).rank() == 4, ErrorCode::kNotSupported)
      << where_ << ": only 2-D convolutions by a constant weight run";
  const onnx::AttributeProto* autoPad = findAttr(node_, "auto_pad");
  const std::string padMode = autoPad ? autoPad->s() : "NOTSET";
  Dims pads = intsAttr(node_, "pads").value_or(Dims{0, 0, 0, 0});
  if (padMode == "VALID") pads = {0, 0, 0, 0};
  SF_CHECK_CODE(padMode == "NOTSET" || padMode == "VALID", ErrorCode::kNotSupported)
      << where_ << ": auto_pad " << padMode << " (give explicit pads)";
  SF_USER_CHECK(pads.size() == 4) << where_ << ": pads must have 4 entries for a 2-D convolution";
  const bool symmetric = pads[0] == pads[2] && pads[1] == pads[3];
  Ids ops = {x, value(1)};
  if (has(2)) ops.push_back(value(2));
  return add(OpKind::kConv2d, ops,
             {{"stride", intsAttr(node_, "strides").value_or(Dims{1, 1})},
              {"padding", symmetric ? Dims{pads[0], pads[1]} : pads},
              {"dilation", intsAttr(node_, "dilations").value_or(Dims{1, 1})},
              {"groups", intAttr(node_, "group", 1)}});
}

/// The attributes of a 2-D pooling node (MaxPool, AveragePool) over a 4-D value: kernel_shape,
/// strides, pads (asymmetric too; auto_pad NOTSET or VALID), dilations.
struct PoolAttrs {
  Dims kernel, strides, pads, dilations;
};

PoolAttrs poolAttrs(const onnx::NodeProto& node, const Dims& input, const std::string& where,
                    const char* what) {
  SF_CHECK_CODE(input.size() == 4, ErrorCode::kNotSupported)
      << where << ": only 2-D " << what << " (a 4-D input) runs";
  const std::optional<Dims> kernel = intsAttr(node, "kernel_shape");
  SF_USER_CHECK(kernel && kernel->size() == 2) << where << ": kernel_shape must have 2 entries";
  const onnx::AttributeProto* autoPad = findAttr(node, "auto_pad");
  const std::string padMode = autoPad ? autoPad->s() : "NOTSET";
  SF_CHECK_CODE(padMode == "NOTSET" || padMode == "VALID", ErrorCode::kNotSupported)
      << where << ": auto_pad " << padMode << " (give explicit pads)";
  PoolAttrs a{*kernel, intsAttr(node, "strides").value_or(Dims{1, 1}),
              intsAttr(node, "pads").value_or(Dims{0, 0, 0, 0}),
              intsAttr(node, "dilations").value_or(Dims{1, 1})};
  if (padMode == "VALID") a.pads = {0, 0, 0, 0};
  SF_USER_CHECK(a.pads.size() == 4) << where << ": pads must have 4 entries for 2-D pooling";
  SF_USER_CHECK(a.strides.size() == 2 && a.dilations.size() == 2 && a.strides[0] > 0 &&
                a.strides[1] > 0)
      << where << ": strides and dilations must have 2 entries";
  return a;
}

/// MaxPool over the last two axes of a 4-D value; ceil_mode as extra end padding (padding never
/// wins), dropping a last window that would start in the end padding (ONNX's and torch's rule).
ValueId Translator::maxPool() {
  const ValueId x = value(0);
  const Dims s = shape(x);
  PoolAttrs a = poolAttrs(node_, s, where_, "max pooling");
  if (intAttr(node_, "ceil_mode", 0) != 0) {
    for (size_t d = 0; d < 2; ++d) {
      const int64_t span = a.dilations[d] * (a.kernel[d] - 1) + 1;
      const int64_t padded = s[2 + d] + a.pads[d] + a.pads[2 + d];
      if (padded < span) continue;  // the shape check reports it
      int64_t out = (padded - span + a.strides[d] - 1) / a.strides[d] + 1;
      if ((out - 1) * a.strides[d] >= s[2 + d] + a.pads[d]) --out;
      a.pads[2 + d] += std::max<int64_t>(0, (out - 1) * a.strides[d] + span - padded);
    }
  }
  return add(OpKind::kMaxPool2d, {x},
             {{"kernel", a.kernel},
              {"stride", a.strides},
              {"padding", a.pads},
              {"dilation", a.dilations}});
}

/// AveragePool (ceil_mode and count_include_pad passed on, the latter's default 0 as ONNX
/// defines it; dilations refused) -> avg_pool2d, which counts a window's positions as torch does
/// (docs/graph.md).
ValueId Translator::averagePool() {
  const ValueId x = value(0);
  const PoolAttrs a = poolAttrs(node_, shape(x), where_, "average pooling");
  SF_CHECK_CODE(a.dilations == (Dims{1, 1}), ErrorCode::kNotSupported)
      << where_ << ": average pooling with dilations";
  return add(OpKind::kAvgPool2d, {x},
             {{"kernel", a.kernel},
              {"stride", a.strides},
              {"padding", a.pads},
              {"ceil_mode", intAttr(node_, "ceil_mode", 0) != 0 ? int64_t{1} : int64_t{0}},
              {"count_include_pad",
               intAttr(node_, "count_include_pad", 0) != 0 ? int64_t{1} : int64_t{0}}});
}

/// Comparisons and logic on run-time values: booleans are 1 or 0 in the value type. NaN compares
/// false, so a <= b is (a < b) or (a == b), not the negation of a > b; And and Or of booleans are
/// their product and maximum; a Cast to bool is not(not(x)) (nonzero and NaN are true).
ValueId Translator::logic() {
  ctx_.integerValued().insert(node_.output(0));
  if (op_ == "Not") return add(OpKind::kNot, {value(0)});
  if (op_ == "Cast") return add(OpKind::kNot, {add(OpKind::kNot, {value(0)})});
  const ValueId a = value(0), b = value(1);
  if (op_ == "Equal") return add(OpKind::kEqual, {a, b});
  if (op_ == "Greater") return add(OpKind::kGreater, {a, b});
  if (op_ == "Less") return add(OpKind::kLess, {a, b});
  if (op_ == "GreaterOrEqual" || op_ == "LessOrEqual") {
    const OpKind strict = op_ == "GreaterOrEqual" ? OpKind::kGreater : OpKind::kLess;
    return add(OpKind::kMaximum, {add(strict, {a, b}), add(OpKind::kEqual, {a, b})});
  }
  if (op_ == "And") return add(OpKind::kMul, {a, b});
  if (op_ == "Or") return add(OpKind::kMaximum, {a, b});
  if (op_ == "Xor") return add(OpKind::kNot, {add(OpKind::kEqual, {a, b})});
  unsupported(where_, "not a comparison the graph IR runs");
}

ValueId Translator::batchNorm() {
  const ValueId x = value(0);
  const Constant &gamma = constant(1), &beta = constant(2), &mean = constant(3), &var = constant(4);
  const double eps = floatAttr(node_, "epsilon", 1e-5);
  const int64_t channels = gamma.numel(), rank = ctx_.type(x).rank();
  SF_USER_CHECK(rank >= 2 && shape(x)[1] == channels && beta.numel() == channels &&
                mean.numel() == channels && var.numel() == channels)
      << where_ << ": scale, bias, mean and var must have one entry per channel";
  Constant a, b;
  a.shape = b.shape = Dims(static_cast<size_t>(rank - 1), 1);
  a.shape[0] = b.shape[0] = channels;
  for (int64_t c = 0; c < channels; ++c) {
    const double s = gamma.real(c) / std::sqrt(var.real(c) + eps);
    a.reals.push_back(s);
    b.reals.push_back(beta.real(c) - mean.real(c) * s);
  }
  return add(OpKind::kAdd, {add(OpKind::kMul, {x, ctx_.param(a, "")}), ctx_.param(b, "")});
}

ValueId Translator::clip() {
  ValueId x = value(0);
  std::optional<double> lo, hi;
  if (ctx_.opset() < 11) {
    if (findAttr(node_, "min")) lo = floatAttr(node_, "min", 0);
    if (findAttr(node_, "max")) hi = floatAttr(node_, "max", 0);
  } else {
    if (has(1)) lo = constant(1).real(0);
    if (has(2)) hi = constant(2).real(0);
  }
  if (lo) x = add(OpKind::kMaximum, {x, ctx_.scalar(*lo)});
  if (hi) x = add(OpKind::kMinimum, {x, ctx_.scalar(*hi)});
  return x;
}

ValueId Translator::run() {
  if (op_ == "MatMul") return matmul();
  if (op_ == "Gemm") return gemm();
  if (op_ == "Add" || op_ == "Sub" || op_ == "Mul" || op_ == "Div" || op_ == "Pow" ||
      ((op_ == "Max" || op_ == "Min") && node_.input_size() == 2)) {
    return binary();
  }
  if (op_ == "Relu") return add(OpKind::kRelu, {value(0)});
  if (op_ == "Tanh") return add(OpKind::kTanh, {value(0)});
  if (op_ == "Sqrt") return add(OpKind::kSqrt, {value(0)});
  if (op_ == "Sigmoid") return add(OpKind::kSigmoid, {value(0)});
  if (op_ == "Exp") return add(OpKind::kExp, {value(0)});
  if (op_ == "Sin") return add(OpKind::kSin, {value(0)});
  if (op_ == "Cos") return add(OpKind::kCos, {value(0)});
  if (op_ == "Equal" || op_ == "Greater" || op_ == "Less" || op_ == "GreaterOrEqual" ||
      op_ == "LessOrEqual" || op_ == "Not" || op_ == "And" || op_ == "Or" || op_ == "Xor") {
    return logic();
  }
  if (op_ == "Reciprocal") return add(OpKind::kDiv, {ctx_.scalar(1.0), value(0)});
  if (op_ == "Neg") return scale(value(0), -1.0);
  if (op_ == "Identity" || op_ == "Dropout") return value(0);
  if (op_ == "Cast") {
    const int64_t to = intAttr(node_, "to", 1);
    if (to == onnx::TensorProto_DataType_BOOL) return logic();
    const bool toFloat = to == onnx::TensorProto_DataType_FLOAT ||
                         to == onnx::TensorProto_DataType_DOUBLE ||
                         to == onnx::TensorProto_DataType_FLOAT16;
    SF_CHECK_CODE(toFloat || ctx_.integerValued().count(in(0)), ErrorCode::kNotSupported)
        << where_ << ": a cast of floating values to element type " << to;
    if (!toFloat) ctx_.integerValued().insert(node_.output(0));
    return value(0);
  }
  if (op_ == "Softmax") {
    const ValueId x = value(0);
    const int64_t rank = ctx_.type(x).rank();
    const int64_t axis =
        normalizeAxis(intAttr(node_, "axis", ctx_.opset() >= 13 ? -1 : 1), rank, where_);
    SF_CHECK_CODE(ctx_.opset() >= 13 || axis == rank - 1, ErrorCode::kNotSupported)
        << where_ << ": a Softmax before opset 13 over axes " << axis << ".. (the last only)";
    return add(OpKind::kSoftmax, {x}, {{"axis", axis}});
  }
  if (op_ == "LayerNormalization") {
    const ValueId x = value(0);
    const int64_t rank = ctx_.type(x).rank();
    const int64_t axis = normalizeAxis(intAttr(node_, "axis", -1), rank, where_);
    SF_CHECK_CODE(axis == rank - 1, ErrorCode::kNotSupported)
        << where_ << ": a layer norm over more than the last axis";
    const ValueId scaleV = value(1);
    ValueId shift;
    if (has(2)) {
      shift = value(2);
    } else {
      Constant zeros;
      zeros.shape = {shape(x).back()};
      zeros.reals.assign(static_cast<size_t>(zeros.shape[0]), 0.0);
      shift = ctx_.param(zeros, "");
    }
    return add(OpKind::kLayerNorm, {x, scaleV, shift},
               {{"axis", axis}, {"eps", floatAttr(node_, "epsilon", 1e-5)}});
  }
  const bool shapeOnly = op_ == "Reshape" || op_ == "Unsqueeze" || op_ == "Squeeze" ||
                         op_ == "Flatten" || op_ == "Transpose" || op_ == "Expand";
  if (shapeOnly && ctx_.integerValued().count(in(0))) {
    ctx_.integerValued().insert(node_.output(0));
  }
  if (op_ == "Reshape") {
    const ValueId x = value(0);
    return reshape(x, reshapeTarget(shape(x), constant(1).integers(where_),
                                    intAttr(node_, "allowzero", 0) != 0, where_));
  }
  if (op_ == "Unsqueeze") {
    const ValueId x = value(0);
    const auto list = axes(13);
    SF_USER_CHECK(list.has_value()) << where_ << ": no axes";
    return reshape(x, unsqueezeShape(shape(x), *list, where_));
  }
  if (op_ == "Squeeze") {
    const ValueId x = value(0);
    return reshape(x, squeezeShape(shape(x), axes(13), where_));
  }
  if (op_ == "Flatten") {
    const ValueId x = value(0);
    return reshape(x, flattenShape(shape(x), intAttr(node_, "axis", 1), where_));
  }
  if (op_ == "Transpose") {
    const ValueId x = value(0);
    Dims perm = intsAttr(node_, "perm").value_or(Dims{});
    if (perm.empty()) {
      for (int64_t d = ctx_.type(x).rank(); d-- > 0;) perm.push_back(d);
    }
    bool identity = true;
    for (size_t d = 0; d < perm.size(); ++d)
      identity = identity && perm[d] == static_cast<int64_t>(d);
    return identity ? x : add(OpKind::kTranspose, {x}, {{"perm", perm}});
  }
  if (op_ == "Expand") {  // x + zeros of the target shape: numpy broadcasting, values unchanged
    const ValueId x = value(0);
    const Dims to = broadcastShapes(shape(x), constant(1).integers(where_), where_);
    if (to == shape(x)) return x;
    Constant zeros;
    zeros.shape = to;
    zeros.reals.assign(static_cast<size_t>(zeros.numel()), 0.0);
    return add(OpKind::kAdd, {x, ctx_.param(zeros, "")});
  }
  if (op_ == "Gather") return gather();
  if (op_ == "Slice") return slice();
  if (op_ == "Concat") {
    Ids parts;
    for (int i = 0; i < node_.input_size(); ++i) parts.push_back(value(i));
    const int64_t rank = ctx_.type(parts[0]).rank();
    return add(OpKind::kConcat, parts,
               {{"axis", normalizeAxis(intAttr(node_, "axis", 0), rank, where_)}});
  }
  if (op_.rfind("Reduce", 0) == 0) return reduce();
  if (op_ == "Conv") return conv();
  if (op_ == "MaxPool") return maxPool();
  if (op_ == "AveragePool") return averagePool();
  if (op_ == "Where") return add(OpKind::kWhere, {value(0), value(1), value(2)});
  if (op_ == "BatchNormalization") return batchNorm();
  if (op_ == "Clip") return clip();
  if (op_ == "GlobalAveragePool") {
    const ValueId x = value(0);
    const Dims s = shape(x);
    SF_CHECK_CODE(s.size() == 4, ErrorCode::kNotSupported) << where_ << ": input must be 4-D";
    const ValueId sum =
        add(OpKind::kReduceSum, {add(OpKind::kReduceSum, {x}, {{"axis", 3}})}, {{"axis", 2}});
    return reshape(scale(sum, 1.0 / static_cast<double>(s[2] * s[3])), {s[0], s[1], 1, 1});
  }
  unsupported(where_,
              "not an operator sparseflow's graph IR runs on values computed at run "
              "time (docs/graph.md lists the ONNX operators it takes)");
}

}  // namespace

void translateNode(ImportContext& ctx, const onnx::NodeProto& node, const std::string& where) {
  const ValueId v = Translator(ctx, node, where).run();
  ctx.setValue(node.output(0), v);
}

}  // namespace sparseflow::graph::onnx_import
