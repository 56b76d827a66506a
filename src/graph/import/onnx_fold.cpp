// Import-time evaluation of ONNX operators on constants (element-wise with broadcasting, shape
// operators, Gather, Slice, Range, reductions, Cast), in int64 or double.
#include "graph/import/onnx_fold.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>

#include "graph/import/onnx_node.h"
#include "graph/import/onnx_shapes.h"
#include "support/check.h"

namespace sparseflow::graph::onnx_import {
namespace {

constexpr int64_t kMaxFolded = int64_t{1} << 28;  // elements of one folded result

Constant emptyLike(const Dims& shape, bool integral, const std::string& where) {
  int64_t n = 1;
  for (int64_t d : shape) {
    SF_USER_CHECK(d >= 0 && (d == 0 || n <= kMaxFolded / d))
        << where << ": a folded constant of more than 2^28 elements";
    n *= d;
  }
  Constant c;
  c.shape = shape;
  c.integral = integral;
  (integral ? c.ints.assign(static_cast<size_t>(n), 0)
            : c.reals.assign(static_cast<size_t>(n), 0.0));
  return c;
}

void setValue(Constant& c, int64_t i, double v) {
  if (c.integral) {
    c.ints[static_cast<size_t>(i)] = static_cast<int64_t>(v);
  } else {
    c.reals[static_cast<size_t>(i)] = v;
  }
}

void copyElement(Constant& out, int64_t o, const Constant& in, int64_t i) {
  if (out.integral) {
    out.ints[static_cast<size_t>(o)] = in.ints[static_cast<size_t>(i)];
  } else {
    out.reals[static_cast<size_t>(o)] = in.real(i);
  }
}

/// Offsets into each operand of every element of the broadcast result (row-major).
template <typename F>
void forEachBroadcast(const Dims& out, const std::vector<const Constant*>& ops, F&& f) {
  const size_t rank = out.size();
  std::vector<std::vector<int64_t>> strides;
  for (const Constant* c : ops) {
    std::vector<int64_t> s(rank, 0);
    const std::vector<int64_t> own = stridesOf(c->shape);
    const size_t lead = rank - c->shape.size();
    for (size_t d = 0; d < c->shape.size(); ++d) s[lead + d] = c->shape[d] == 1 ? 0 : own[d];
    strides.push_back(std::move(s));
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> coord(rank, 0), offset(ops.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    f(e, offset);
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < out[d]) {
        for (size_t k = 0; k < ops.size(); ++k) offset[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < ops.size(); ++k) offset[k] -= strides[k][d] * (out[d] - 1);
      coord[d] = 0;
    }
  }
}

int64_t intDiv(int64_t a, int64_t b, const std::string& where) {
  SF_USER_CHECK(b != 0) << where << ": integer division by zero";
  return a / b;
}

std::optional<Constant> binary(const std::string& op, const Constant& a, const Constant& b,
                               const std::string& where) {
  const bool ints = a.integral && b.integral;
  const bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
                       op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor";
  std::function<double(double, double)> real;
  std::function<int64_t(int64_t, int64_t)> integer;
  if (op == "Add") {
    real = std::plus<double>();
    integer = std::plus<int64_t>();
  } else if (op == "Sub") {
    real = std::minus<double>();
    integer = std::minus<int64_t>();
  } else if (op == "Mul") {
    real = std::multiplies<double>();
    integer = std::multiplies<int64_t>();
  } else if (op == "Div") {
    real = std::divides<double>();
    integer = [&where](int64_t x, int64_t y) { return intDiv(x, y, where); };
  } else if (op == "Pow") {
    real = [](double x, double y) { return std::pow(x, y); };
    integer = [](int64_t x, int64_t y) {
      return static_cast<int64_t>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    };
  } else if (op == "Max" || op == "Min") {
    const bool max = op == "Max";
    real = [max](double x, double y) { return max ? std::fmax(x, y) : std::fmin(x, y); };
    integer = [max](int64_t x, int64_t y) { return max ? std::max(x, y) : std::min(x, y); };
  } else if (op == "Mod") {
    real = [](double x, double y) { return std::fmod(x, y); };
    integer = [&where](int64_t x, int64_t y) {
      SF_USER_CHECK(y != 0) << where << ": modulo by zero";
      const int64_t r = x % y;
      return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;  // ONNX Mod: the divisor's sign
    };
  } else if (compare) {
    real = [op](double x, double y) -> double {
      if (op == "Equal") return x == y;
      if (op == "Less") return x < y;
      if (op == "Greater") return x > y;
      if (op == "LessOrEqual") return x <= y;
      if (op == "GreaterOrEqual") return x >= y;
      if (op == "And") return x != 0 && y != 0;
      if (op == "Or") return x != 0 || y != 0;
      return (x != 0) != (y != 0);
    };
  } else {
    return std::nullopt;
  }
  Constant out = emptyLike(broadcastShapes(a.shape, b.shape, where), ints || compare, where);
  forEachBroadcast(out.shape, {&a, &b}, [&](int64_t e, const std::vector<int64_t>& off) {
    if (compare) {
      out.ints[static_cast<size_t>(e)] = real(a.real(off[0]), b.real(off[1])) != 0;
    } else if (ints) {
      out.ints[static_cast<size_t>(e)] =
          integer(a.ints[static_cast<size_t>(off[0])], b.ints[static_cast<size_t>(off[1])]);
    } else {
      out.reals[static_cast<size_t>(e)] = real(a.real(off[0]), b.real(off[1]));
    }
  });
  return out;
}

std::optional<Constant> unary(const std::string& op, const Constant& x) {
  std::function<double(double)> f;
  bool keepsInts = false;
  if (op == "Neg") {
    f = [](double v) { return -v; };
    keepsInts = true;
  } else if (op == "Abs") {
    f = [](double v) { return std::fabs(v); };
    keepsInts = true;
  } else if (op == "Not") {
    f = [](double v) { return v == 0 ? 1.0 : 0.0; };
    keepsInts = true;
  } else if (op == "Relu") {
    f = [](double v) { return v > 0 ? v : 0.0; };
    keepsInts = true;
  } else if (op == "Sqrt") {
    f = [](double v) { return std::sqrt(v); };
  } else if (op == "Exp") {
    f = [](double v) { return std::exp(v); };
  } else if (op == "Log") {
    f = [](double v) { return std::log(v); };
  } else if (op == "Erf") {
    f = [](double v) { return std::erf(v); };
  } else if (op == "Tanh") {
    f = [](double v) { return std::tanh(v); };
  } else if (op == "Sigmoid") {
    f = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  } else if (op == "Reciprocal") {
    f = [](double v) { return 1.0 / v; };
  } else if (op == "Floor" || op == "Ceil") {
    const bool floor = op == "Floor";
    f = [floor](double v) { return floor ? std::floor(v) : std::ceil(v); };
    keepsInts = true;
  } else {
    return std::nullopt;
  }
  Constant out = keepsInts ? x : x.asReal();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (out.integral) {
      out.ints[static_cast<size_t>(i)] =
          static_cast<int64_t>(f(static_cast<double>(out.ints[static_cast<size_t>(i)])));
    } else {
      out.reals[static_cast<size_t>(i)] = f(out.reals[static_cast<size_t>(i)]);
    }
  }
  return out;
}

Constant withShape(Constant c, Dims shape) {
  c.shape = std::move(shape);
  return c;
}

Constant castTo(const Constant& x, int64_t to, const std::string& where) {
  switch (to) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_FLOAT16:
    case onnx::TensorProto_DataType_BFLOAT16: {
      Constant c = x.asReal();
      for (double& v : c.reals) v = static_cast<float>(v);  // rounded as the exporter computes
      return c;
    }
    case onnx::TensorProto_DataType_DOUBLE: return x.asReal();
    case onnx::TensorProto_DataType_BOOL: {
      Constant c = emptyLike(x.shape, true, where);
      for (int64_t i = 0; i < x.numel(); ++i) c.ints[static_cast<size_t>(i)] = x.real(i) != 0;
      return c;
    }
    case onnx::TensorProto_DataType_STRING:
    case onnx::TensorProto_DataType_COMPLEX64:
    case onnx::TensorProto_DataType_COMPLEX128:
    case onnx::TensorProto_DataType_UNDEFINED:
      SF_FAIL(kNotSupported) << where << ": a cast to element type " << to;
    default: {
      if (x.integral) return x;
      Constant c = emptyLike(x.shape, true, where);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const double v = x.reals[static_cast<size_t>(i)];
        SF_USER_CHECK(std::isfinite(v) && std::fabs(v) < 9.0e18)
            << where << ": " << v << " does not fit an integer";
        c.ints[static_cast<size_t>(i)] = static_cast<int64_t>(v);  // toward zero
      }
      return c;
    }
  }
}

Constant transposeConstant(const Constant& x, Dims perm, const std::string& where) {
  const int64_t rank = x.rank();
  if (perm.empty()) {
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
  }
  SF_USER_CHECK(static_cast<int64_t>(perm.size()) == rank)
      << where << ": perm has " << perm.size() << " entries for rank " << rank;
  Dims out(static_cast<size_t>(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t p = normalizeAxis(perm[static_cast<size_t>(d)], rank, where);
    SF_USER_CHECK(!seen[static_cast<size_t>(p)]) << where << ": perm repeats " << p;
    seen[static_cast<size_t>(p)] = true;
    perm[static_cast<size_t>(d)] = p;
    out[static_cast<size_t>(d)] = x.shape[static_cast<size_t>(p)];
  }
  Constant c = emptyLike(out, x.integral, where);
  const std::vector<int64_t> in = stridesOf(x.shape);
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  for (int64_t e = 0; e < c.numel(); ++e) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      src += coord[static_cast<size_t>(d)] * in[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    }
    copyElement(c, e, x, src);
    for (int64_t d = rank; d-- > 0;) {
      if (++coord[static_cast<size_t>(d)] < out[static_cast<size_t>(d)]) break;
      coord[static_cast<size_t>(d)] = 0;
    }
  }
  return c;
}

Constant gather(const Constant& data, const Constant& indices, int64_t axis,
                const std::string& where) {
  axis = normalizeAxis(axis, data.rank(), where);
  const int64_t extent = data.shape[static_cast<size_t>(axis)];
  Dims out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  Constant c = emptyLike(out, data.integral, where);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.shape[static_cast<size_t>(d)];
  const int64_t count = indices.numel();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < count; ++k) {
      int64_t idx = indices.integer(k, where);
      SF_USER_CHECK(idx >= -extent && idx < extent)
          << where << ": index " << idx << " is outside an axis of extent " << extent;
      if (idx < 0) idx += extent;
      for (int64_t i = 0; i < inner; ++i) {
        copyElement(c, (o * count + k) * inner + i, data, (o * extent + idx) * inner + i);
      }
    }
  }
  return c;
}

Constant concat(const std::vector<const Constant*>& parts, int64_t axis, const std::string& where) {
  SF_USER_CHECK(!parts.empty()) << where << ": no operands";
  const Constant& first = *parts[0];
  axis = normalizeAxis(axis, first.rank(), where);
  Dims out = first.shape;
  bool integral = true;
  out[static_cast<size_t>(axis)] = 0;
  for (const Constant* p : parts) {
    SF_USER_CHECK(p->rank() == first.rank()) << where << ": operands of different ranks";
    for (int64_t d = 0; d < first.rank(); ++d) {
      SF_USER_CHECK(d == axis ||
                    p->shape[static_cast<size_t>(d)] == first.shape[static_cast<size_t>(d)])
          << where << ": operands differ in dimension " << d;
    }
    out[static_cast<size_t>(axis)] += p->shape[static_cast<size_t>(axis)];
    integral = integral && p->integral;
  }
  Constant c = emptyLike(out, integral, where);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[static_cast<size_t>(d)];
  int64_t e = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Constant* p : parts) {
      const int64_t block = outer ? p->numel() / outer : 0;
      for (int64_t i = 0; i < block; ++i) {
        const int64_t src = o * block + i;
        if (integral) {
          c.ints[static_cast<size_t>(e++)] = p->ints[static_cast<size_t>(src)];
        } else {
          c.reals[static_cast<size_t>(e++)] = p->real(src);
        }
      }
    }
  }
  return c;
}

Constant sliceConstant(const Constant& x, const Dims& starts, const Dims& ends, const Dims& axesIn,
                       const Dims& stepsIn, const std::string& where) {
  SF_USER_CHECK(starts.size() == ends.size()) << where << ": starts and ends differ in length";
  Dims axes = axesIn, steps = stepsIn;
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  SF_USER_CHECK(axes.size() == starts.size() && steps.size() == starts.size())
      << where << ": starts, ends, axes and steps differ in length";
  std::vector<SliceRange> ranges;
  for (int64_t d : x.shape) ranges.push_back({0, 1, d});
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalizeAxis(axes[i], x.rank(), where);
    ranges[static_cast<size_t>(a)] =
        sliceRange(x.shape[static_cast<size_t>(a)], starts[i], ends[i], steps[i], where);
  }
  Dims out;
  for (const SliceRange& r : ranges) out.push_back(r.count);
  Constant c = emptyLike(out, x.integral, where);
  const std::vector<int64_t> in = stridesOf(x.shape);
  std::vector<int64_t> coord(out.size(), 0);
  for (int64_t e = 0; e < c.numel(); ++e) {
    int64_t src = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      src += (ranges[d].start + coord[d] * ranges[d].step) * in[d];
    }
    copyElement(c, e, x, src);
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return c;
}

std::optional<Constant> reduce(const std::string& op, const Constant& x, Dims axes, bool keepdims,
                               bool noopWithEmpty, const std::string& where) {
  const bool sum = op == "ReduceSum", mean = op == "ReduceMean", prod = op == "ReduceProd",
             max = op == "ReduceMax", min = op == "ReduceMin";
  if (!(sum || mean || prod || max || min)) return std::nullopt;
  if (axes.empty() && noopWithEmpty) return x;
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(normalizeAxis(a, x.rank(), where))] = true;
  Dims out, kept;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) out.push_back(x.shape[static_cast<size_t>(d)]);
    kept.push_back(reduced[static_cast<size_t>(d)] ? 1 : x.shape[static_cast<size_t>(d)]);
  }
  Constant acc = emptyLike(kept, false, where);
  const double init = prod ? 1.0 : max ? -INFINITY : min ? INFINITY : 0.0;
  for (double& v : acc.reals) v = init;
  const std::vector<int64_t> in = stridesOf(x.shape), to = stridesOf(kept);
  std::vector<int64_t> coord(static_cast<size_t>(x.rank()), 0);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t dst = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (!reduced[static_cast<size_t>(d)]) {
        dst += coord[static_cast<size_t>(d)] * to[static_cast<size_t>(d)];
      }
    }
    double& a = acc.reals[static_cast<size_t>(dst)];
    const double v = x.real(e);
    a = prod ? a * v : max ? std::fmax(a, v) : min ? std::fmin(a, v) : a + v;
    for (int64_t d = x.rank(); d-- > 0;) {
      if (++coord[static_cast<size_t>(d)] < x.shape[static_cast<size_t>(d)]) break;
      coord[static_cast<size_t>(d)] = 0;
    }
  }
  if (mean && x.numel() > 0) {
    for (double& v : acc.reals)
      v /= static_cast<double>(x.numel() / std::max<int64_t>(acc.numel(), 1));
  }
  if (x.integral && !mean) acc = castTo(acc, onnx::TensorProto_DataType_INT64, where);
  return withShape(std::move(acc), keepdims ? kept : out);
}

/// An optional input given as an attribute before `inputOpset` and as an input from it on.
std::optional<Dims> attrOrInput(const onnx::NodeProto& node, const std::vector<const Constant*>& in,
                                size_t index, const char* name, int64_t opset, int64_t inputOpset,
                                const std::string& where) {
  if (opset < inputOpset) return intsAttr(node, name);
  if (index < in.size() && in[index]) return in[index]->integers(where);
  return std::nullopt;
}

Constant tensorAttr(const onnx::NodeProto& node, const std::string& where) {
  if (const onnx::AttributeProto* a = findAttr(node, "value")) {
    return readTensorProto(a->t(), where, "");
  }
  if (const onnx::AttributeProto* a = findAttr(node, "value_float")) {
    return Constant::realScalar(a->f());
  }
  if (const onnx::AttributeProto* a = findAttr(node, "value_floats")) {
    Constant c;
    c.reals.assign(a->floats().begin(), a->floats().end());
    c.shape = {static_cast<int64_t>(c.reals.size())};
    return c;
  }
  if (const onnx::AttributeProto* a = findAttr(node, "value_int")) {
    Constant c = Constant::intVector({a->i()});
    c.shape.clear();
    return c;
  }
  if (const onnx::AttributeProto* a = findAttr(node, "value_ints")) {
    return Constant::intVector(Dims(a->ints().begin(), a->ints().end()));
  }
  SF_FAIL(kNotSupported) << where << ": a Constant without a numeric value";
}

}  // namespace

std::optional<Constant> foldNode(const onnx::NodeProto& node,
                                 const std::vector<const Constant*>& in, int64_t opset,
                                 const std::string& where) {
  const std::string& op = node.op_type();
  auto arg = [&](size_t i) -> const Constant& {
    SF_USER_CHECK(i < in.size() && in[i]) << where << ": operand " << i << " is missing";
    return *in[i];
  };
  auto optionalArg = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
  if (op == "Constant") return tensorAttr(node, where);
  if (op == "Identity" || op == "Dropout") return arg(0);
  if (op == "Cast") return castTo(arg(0), intAttr(node, "to", 1), where);
  if (op == "Shape") {
    const int64_t rank = arg(0).rank();
    int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
    start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
    end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
    return Constant::intVector(
        Dims(arg(0).shape.begin() + start, arg(0).shape.begin() + std::max(start, end)));
  }
  if (op == "Size") {
    Constant c = Constant::intVector({arg(0).numel()});
    c.shape.clear();
    return c;
  }
  if (op == "Reshape") {
    return withShape(arg(0), reshapeTarget(arg(0).shape, arg(1).integers(where),
                                           intAttr(node, "allowzero", 0) != 0, where));
  }
  if (op == "Unsqueeze") {
    const auto axes = attrOrInput(node, in, 1, "axes", opset, 13, where);
    SF_USER_CHECK(axes.has_value()) << where << ": no axes";
    return withShape(arg(0), unsqueezeShape(arg(0).shape, *axes, where));
  }
  if (op == "Squeeze") {
    return withShape(
        arg(0),
        squeezeShape(arg(0).shape, attrOrInput(node, in, 1, "axes", opset, 13, where), where));
  }
  if (op == "Flatten") {
    return withShape(arg(0), flattenShape(arg(0).shape, intAttr(node, "axis", 1), where));
  }
  if (op == "Transpose") {
    return transposeConstant(arg(0), intsAttr(node, "perm").value_or(Dims{}), where);
  }
  if (op == "Gather") return gather(arg(0), arg(1), intAttr(node, "axis", 0), where);
  if (op == "Concat") {
    std::vector<const Constant*> parts;
    for (size_t i = 0; i < in.size(); ++i) parts.push_back(&arg(i));
    return concat(parts, intAttr(node, "axis", 0), where);
  }
  if (op == "Slice") {
    if (opset < 10) {
      return sliceConstant(arg(0), intsAttr(node, "starts").value_or(Dims{}),
                           intsAttr(node, "ends").value_or(Dims{}),
                           intsAttr(node, "axes").value_or(Dims{}), {}, where);
    }
    const Constant* axes = optionalArg(3);
    const Constant* steps = optionalArg(4);
    return sliceConstant(arg(0), arg(1).integers(where), arg(2).integers(where),
                         axes ? axes->integers(where) : Dims{},
                         steps ? steps->integers(where) : Dims{}, where);
  }
  if (op == "ConstantOfShape") {
    const Dims shape = arg(0).integers(where);
    Constant fill = Constant::realScalar(0);
    if (findAttr(node, "value")) fill = readTensorProto(findAttr(node, "value")->t(), where, "");
    SF_USER_CHECK(fill.numel() == 1) << where << ": value must hold one element";
    Constant c = emptyLike(shape, fill.integral, where);
    for (int64_t i = 0; i < c.numel(); ++i) setValue(c, i, fill.real(0));
    if (fill.integral) {
      for (int64_t& v : c.ints) v = fill.ints[0];
    }
    return c;
  }
  if (op == "Expand") {
    const Constant& x = arg(0);
    Constant c =
        emptyLike(broadcastShapes(x.shape, arg(1).integers(where), where), x.integral, where);
    forEachBroadcast(c.shape, {&x}, [&](int64_t e, const std::vector<int64_t>& off) {
      copyElement(c, e, x, off[0]);
    });
    return c;
  }
  if (op == "Where") {
    const Constant &cond = arg(0), &a = arg(1), &b = arg(2);
    const Dims shape = broadcastShapes(cond.shape, broadcastShapes(a.shape, b.shape, where), where);
    Constant c = emptyLike(shape, a.integral && b.integral, where);
    forEachBroadcast(shape, {&cond, &a, &b}, [&](int64_t e, const std::vector<int64_t>& off) {
      const Constant& pick = cond.real(off[0]) != 0 ? a : b;
      const int64_t at = cond.real(off[0]) != 0 ? off[1] : off[2];
      copyElement(c, e, pick, at);
    });
    return c;
  }
  if (op == "Range") {
    const Constant &start = arg(0), &limit = arg(1), &delta = arg(2);
    const bool ints = start.integral && limit.integral && delta.integral;
    const double s = start.real(0), l = limit.real(0), d = delta.real(0);
    SF_USER_CHECK(d != 0) << where << ": a delta of 0";
    const double count = std::max(0.0, std::ceil((l - s) / d));
    SF_USER_CHECK(count <= static_cast<double>(kMaxFolded)) << where << ": " << count << " values";
    Constant c = emptyLike({static_cast<int64_t>(count)}, ints, where);
    for (int64_t i = 0; i < c.numel(); ++i) setValue(c, i, s + static_cast<double>(i) * d);
    return c;
  }
  if (op == "Sum" || ((op == "Max" || op == "Min") && in.size() != 2)) {
    std::optional<Constant> acc = arg(0);
    for (size_t i = 1; i < in.size(); ++i) {
      acc = binary(op == "Sum" ? "Add" : op, *acc, arg(i), where);
    }
    return acc;
  }
  if (in.size() == 2 && in[0] && in[1]) {
    if (auto r = binary(op, *in[0], *in[1], where)) return r;
  }
  if (in.size() == 1 && in[0]) {
    if (auto r = unary(op, *in[0])) return r;
  }
  if (op.rfind("Reduce", 0) == 0) {
    const auto axes = attrOrInput(node, in, 1, "axes", opset, op == "ReduceSum" ? 13 : 18, where);
    return reduce(op, arg(0), axes.value_or(Dims{}), intAttr(node, "keepdims", 1) != 0,
                  intAttr(node, "noop_with_empty_axes", 0) != 0, where);
  }
  return std::nullopt;
}

}  // namespace sparseflow::graph::onnx_import
