// Shape inference per operator: arity, attributes, dtypes and extents checked, the result built.
#include "graph/shape_infer.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <tuple>

#include "support/check.h"

namespace sparseflow::graph {
namespace {

using Shape = std::vector<int64_t>;

/// Reads and checks one operator's operands and attributes; every message starts with `where`.
class OpChecker {
 public:
  OpChecker(OpKind op, const std::vector<InferOperand>& operands, OpAttrs& attrs,
            const std::string& where)
      : op_(op), operands_(operands), attrs_(attrs), where_(where) {}

  void arity(size_t lo, size_t hi) const {
    SF_USER_CHECK(operands_.size() >= lo && operands_.size() <= hi)
        << where_ << ": takes " << lo
        << (hi == lo  ? ""
            : hi > 64 ? " or more"
                      : " to " + std::to_string(hi))
        << " operands, got " << operands_.size();
  }
  void allowedAttrs(std::initializer_list<const char*> names) const {
    for (const auto& entry : attrs_) {
      const std::string& key = entry.first;  // a named variable: clang 14 cannot capture bindings
      SF_USER_CHECK(
          std::any_of(names.begin(), names.end(), [&](const char* n) { return key == n; }))
          << where_ << ": unknown attribute '" << key << "'";
    }
  }
  const TensorType& type(size_t i) const { return *operands_[i].type; }
  const Shape& shape(size_t i) const { return operands_[i].type->shape; }
  const std::string& label(size_t i) const { return operands_[i].label; }
  int64_t rank(size_t i) const { return type(i).rank(); }

  void rankAtLeast(size_t i, int64_t r) const {
    SF_USER_CHECK(rank(i) >= r) << where_ << ": operand " << label(i) << " has rank " << rank(i)
                                << ", needs at least " << r;
  }
  void rankIs(size_t i, int64_t r) const {
    SF_USER_CHECK(rank(i) == r) << where_ << ": operand " << label(i) << " has rank " << rank(i)
                                << ", needs " << r;
  }
  void sameDType(size_t i, size_t j) const {
    SF_USER_CHECK(type(i).dtype == type(j).dtype)
        << where_ << ": operand " << label(j) << " is " << dtypeName(type(j).dtype) << " but "
        << label(i) << " is " << dtypeName(type(i).dtype);
  }
  void extentsMatch(size_t i, int64_t di, size_t j, int64_t dj) const {
    const int64_t a = shape(i)[static_cast<size_t>(di)];
    const int64_t b = shape(j)[static_cast<size_t>(dj)];
    SF_USER_CHECK(a == b) << where_ << ": dim " << di << " of " << label(i) << " is " << a
                          << " but dim " << dj << " of " << label(j) << " is " << b;
  }

  int64_t intAttr(const char* key) const { return attr<int64_t>(key, "an integer"); }
  bool hasAttr(const char* key) const { return attrs_.count(key) != 0; }
  Shape listAttr(const char* key) const { return attr<Shape>(key, "a list"); }
  /// The attribute `key`, which must be present and a T.
  template <typename T>
  T attr(const char* key, const char* kind) const {
    auto it = attrs_.find(key);
    SF_USER_CHECK(it != attrs_.end()) << where_ << ": needs the attribute '" << key << "'";
    SF_USER_CHECK(std::holds_alternative<T>(it->second))
        << where_ << ": attribute '" << key << "' must be " << kind;
    return std::get<T>(it->second);
  }
  /// The attribute `axis` of operand 0 normalized to [0, rank) and written back.
  int64_t axis(int64_t rank) const {
    if (attrs_.count("axis") == 0 && op_ == OpKind::kLayerNorm) attrs_["axis"] = rank - 1;
    int64_t a = intAttr("axis");
    SF_USER_CHECK(a >= -rank && a < rank)
        << where_ << ": axis " << a << " is outside a rank-" << rank << " tensor";
    if (a < 0) a += rank;
    attrs_["axis"] = a;
    return a;
  }
  const std::string& where() const { return where_; }
  OpAttrs& attrs() const { return attrs_; }

 private:
  OpKind op_;
  const std::vector<InferOperand>& operands_;
  OpAttrs& attrs_;
  const std::string& where_;
};

size_t operandCount(const std::vector<InferOperand>& operands) {
  return operands.size();
}

TensorType linearType(const OpChecker& c, size_t n) {
  c.arity(2, 3);
  c.allowedAttrs({});
  c.rankAtLeast(0, 1);
  c.rankIs(1, 2);
  c.sameDType(0, 1);
  c.extentsMatch(0, c.rank(0) - 1, 1, 1);
  if (n == 3) {
    c.rankIs(2, 1);
    c.sameDType(0, 2);
    c.extentsMatch(2, 0, 1, 0);
  }
  TensorType out = c.type(0);
  out.shape.back() = c.shape(1)[0];
  return out;
}

/// matmul (rank 2) and batch_matmul (rank >= 3, equal batch dims).
TensorType matmulType(const OpChecker& c, bool batched) {
  c.arity(2, 2);
  c.allowedAttrs({});
  c.sameDType(0, 1);
  if (batched) {
    c.rankAtLeast(0, 3);
    c.rankIs(1, c.rank(0));
  } else {
    c.rankIs(0, 2);
    c.rankIs(1, 2);
  }
  const int64_t r = c.rank(0);
  for (int64_t d = 0; d < r - 2; ++d) c.extentsMatch(0, d, 1, d);
  c.extentsMatch(0, r - 1, 1, r - 2);
  TensorType out = c.type(0);
  out.shape.back() = c.shape(1).back();
  return out;
}

/// The lists of a 2-D pooling window (kernel, stride, padding [top, left, bottom, right],
/// dilation), written back resolved with their defaults (stride the kernel, no padding, dilation
/// 1) and checked.
struct PoolWindow {
  Shape kernel, stride, padding, dilation;
};

PoolWindow poolWindow(const OpChecker& c, const char* op) {
  OpAttrs& attrs = c.attrs();
  SF_USER_CHECK(attrs.count("kernel")) << c.where() << ": " << op << " needs kernel=[kh, kw]";
  const Shape kernel = c.listAttr("kernel");
  if (!attrs.count("stride")) attrs["stride"] = kernel;
  if (!attrs.count("padding")) attrs["padding"] = Shape{0, 0, 0, 0};
  if (!attrs.count("dilation")) attrs["dilation"] = Shape{1, 1};
  PoolWindow w{kernel, c.listAttr("stride"), c.listAttr("padding"), c.listAttr("dilation")};
  for (const auto& [name, v, count, lo] :
       {std::tuple<const char*, const Shape&, size_t, int64_t>{"kernel", w.kernel, 2, 1},
        {"stride", w.stride, 2, 1},
        {"padding", w.padding, 4, 0},
        {"dilation", w.dilation, 2, 1}}) {
    SF_USER_CHECK(v.size() == count &&
                  std::all_of(v.begin(), v.end(),
                              [low = lo](int64_t e) { return e >= low && e <= (1 << 20); }))
        << c.where() << ": " << name << " must be " << count << " integers of at least " << lo;
  }
  return w;
}

/// The output extents [N, C, Ho, Wo] of pooling x [N, C, H, W] with window `w`: windows start
/// every stride from the top/left padding; with `ceil`, a last partial window is kept unless it
/// would start in the bottom/right padding (torch's and ONNX's ceil_mode). Every window must hold
/// an input element.
Shape poolExtents(const OpChecker& c, const PoolWindow& w, bool ceil) {
  c.rankIs(0, 4);
  const Shape& x = c.shape(0);
  Shape out = {x[0], x[1], 0, 0};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t span = w.dilation[d] * (w.kernel[d] - 1) + 1;
    const int64_t padded = x[2 + d] + w.padding[d] + w.padding[2 + d];
    const int64_t room = padded - span;
    SF_USER_CHECK(room >= 0) << c.where() << ": the window (" << span
                             << " with dilation) is larger than the padded input (" << padded
                             << ") along dim " << 2 + d;
    SF_USER_CHECK(w.padding[d] < span && w.padding[2 + d] < span)
        << c.where() << ": padding " << w.padding[d] << "/" << w.padding[2 + d]
        << " would make windows of padding only along dim " << 2 + d;
    int64_t n = (ceil ? (room + w.stride[d] - 1) / w.stride[d] : room / w.stride[d]) + 1;
    if (ceil && (n - 1) * w.stride[d] >= x[2 + d] + w.padding[d]) --n;
    out[2 + d] = n;
  }
  return out;
}

/// max_pool2d(x [N, C, H, W], kernel=[kh, kw]): stride (default the kernel), padding ([top, left,
/// bottom, right], default 0; never wins: padded positions are -inf) and dilation (default 1)
/// are written back resolved; each window must start inside the input or its top/left padding
/// and hold an input element (ceil_mode is extra bottom/right padding here).
TensorType maxPool2dType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"kernel", "stride", "padding", "dilation"});
  const PoolWindow w = poolWindow(c, "max_pool2d");
  TensorType t = c.type(0);
  t.shape = poolExtents(c, w, false);
  return t;
}

/// avg_pool2d(x [N, C, H, W], kernel=[kh, kw]): stride, padding as max_pool2d's (no dilation);
/// ceil_mode (0 or 1, default 0) keeps a last partial window; count_include_pad (0 or 1, default
/// 1 as torch's) divides by the window's positions inside the padded input (the part past the
/// bottom/right padding a ceil_mode window reaches never counts) or by its input elements only.
TensorType avgPool2dType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"kernel", "stride", "padding", "ceil_mode", "count_include_pad"});
  OpAttrs& attrs = c.attrs();
  const PoolWindow w = poolWindow(c, "avg_pool2d");
  attrs.erase("dilation");  // resolved to 1 by poolWindow; avg_pool2d has none
  for (const char* flag : {"ceil_mode", "count_include_pad"}) {
    if (!attrs.count(flag)) attrs[flag] = int64_t{std::string_view(flag) == "count_include_pad"};
    const int64_t v = c.intAttr(flag);
    SF_USER_CHECK(v == 0 || v == 1) << c.where() << ": " << flag << " must be 0 or 1, not " << v;
  }
  TensorType t = c.type(0);
  t.shape = poolExtents(c, w, c.intAttr("ceil_mode") == 1);
  return t;
}

/// conv2d(x [N, C, H, W], w [O, C / groups, kh, kw], b [O]?): stride, padding and dilation
/// ([2] each; defaults 1, 0, 1) and groups (default 1) are written back resolved; padding may
/// also be [top, left, bottom, right] (asymmetric, as ONNX's pads).
TensorType conv2dType(const OpChecker& c, size_t n) {
  c.arity(2, 3);
  c.allowedAttrs({"stride", "padding", "dilation", "groups"});
  OpAttrs& attrs = c.attrs();
  if (!attrs.count("stride")) attrs["stride"] = Shape{1, 1};
  if (!attrs.count("padding")) attrs["padding"] = Shape{0, 0};
  if (!attrs.count("dilation")) attrs["dilation"] = Shape{1, 1};
  if (!attrs.count("groups")) attrs["groups"] = int64_t{1};
  const Shape stride = c.listAttr("stride"), padding = c.listAttr("padding");
  const Shape dilation = c.listAttr("dilation");
  const int64_t groups = c.intAttr("groups");
  for (const auto& [name, v, lo] :
       {std::tuple<const char*, const Shape&, int64_t>{"stride", stride, 1},
        {"padding", padding, 0},
        {"dilation", dilation, 1}}) {
    const bool fourPads = v.size() == 4 && &v == &padding;
    SF_USER_CHECK((v.size() == 2 || fourPads) &&
                  std::all_of(v.begin(), v.end(),
                              [low = lo](int64_t e) { return e >= low && e <= (1 << 20); }))
        << c.where() << ": " << name << " must be two integers of at least " << lo
        << (&v == &padding ? " (or four: top, left, bottom, right)" : "");
  }
  // The padding after the input along H and W: the same as before it unless given apart.
  const Shape padEnd = padding.size() == 4 ? Shape{padding[2], padding[3]} : padding;
  c.rankIs(0, 4);
  c.rankIs(1, 4);
  c.sameDType(0, 1);
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  SF_USER_CHECK(groups >= 1 && x[1] % groups == 0 && w[0] % groups == 0)
      << c.where() << ": groups " << groups << " must divide the " << x[1]
      << " input channels and the " << w[0] << " output channels";
  SF_USER_CHECK(w[1] * groups == x[1])
      << c.where() << ": the weight takes " << w[1] << " channels per group, the input has " << x[1]
      << " in " << groups << " groups";
  if (n == 3) {
    c.rankIs(2, 1);
    c.sameDType(0, 2);
    c.extentsMatch(2, 0, 1, 0);
  }
  Shape out = {x[0], w[0], 0, 0};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t span = dilation[d] * (w[2 + d] - 1) + 1;
    const int64_t room = x[2 + d] + padding[d] + padEnd[d] - span;
    SF_USER_CHECK(room >= 0) << c.where() << ": the kernel (" << span
                             << " with dilation) is larger than the padded input ("
                             << x[2 + d] + padding[d] + padEnd[d] << ") along dim " << 2 + d;
    out[2 + d] = room / stride[d] + 1;
  }
  return TensorType{c.type(0).dtype, out};
}

/// numpy broadcasting of two operands (add, mul).
TensorType broadcastType(const OpChecker& c) {
  c.arity(2, 2);
  c.allowedAttrs({});
  c.sameDType(0, 1);
  const Shape& a = c.shape(0);
  const Shape& b = c.shape(1);
  Shape out(std::max(a.size(), b.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    SF_USER_CHECK(x == y || x == 1 || y == 1)
        << c.where() << ": " << c.label(0) << " and " << c.label(1) << " do not broadcast: extents "
        << x << " and " << y << " at dim " << out.size() - 1 - k << " of the result";
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return {c.type(0).dtype, out};
}

/// where(cond, a, b): the three broadcast together (numpy rules); cond is read as true where
/// nonzero.
TensorType whereType(const OpChecker& c) {
  c.arity(3, 3);
  c.allowedAttrs({});
  c.sameDType(1, 2);
  size_t rank = 0;
  for (size_t i = 0; i < 3; ++i) rank = std::max(rank, c.shape(i).size());
  Shape out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    for (size_t i = 0; i < 3; ++i) {
      const Shape& s = c.shape(i);
      const int64_t x = k < s.size() ? s[s.size() - 1 - k] : 1;
      int64_t& o = out[rank - 1 - k];
      SF_USER_CHECK(x == o || x == 1 || o == 1)
          << c.where() << ": " << c.label(i)
          << " does not broadcast with the other operands: extent " << x << " against " << o
          << " at dim " << rank - 1 - k << " of the result";
      if (o == 1) o = x;
    }
  }
  return {c.type(1).dtype, out};
}

TensorType biasAddType(const OpChecker& c) {
  c.arity(2, 2);
  c.allowedAttrs({});
  c.rankAtLeast(0, 1);
  c.rankIs(1, 1);
  c.sameDType(0, 1);
  c.extentsMatch(1, 0, 0, c.rank(0) - 1);
  return c.type(0);
}

TensorType layerNormType(const OpChecker& c, size_t n) {
  c.arity(1, 3);
  SF_USER_CHECK(n != 2) << c.where() << ": takes x, or x with gamma and beta";
  c.allowedAttrs({"axis", "eps"});
  const int64_t axis = c.axis(c.rank(0));
  if (c.hasAttr("eps")) {
    const double eps = c.attr<double>("eps", "a real number (1e-5, 1.0)");
    SF_USER_CHECK(std::isfinite(eps) && eps > 0)
        << c.where() << ": eps must be positive and finite, got " << eps;
  }
  for (size_t i = 1; i < n; ++i) {
    SF_USER_CHECK(axis == c.rank(0) - 1)
        << c.where() << ": gamma and beta need the last axis, got axis " << axis;
    c.rankIs(i, 1);
    c.sameDType(0, i);
    c.extentsMatch(i, 0, 0, axis);
  }
  return c.type(0);
}

TensorType reshapeType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"shape"});
  Shape shape = c.listAttr("shape");
  const int64_t numel = checkedNumel(c.type(0), c.where());
  int64_t known = 1;
  int64_t inferred = -1;
  SF_USER_CHECK(shape.size() <= 16) << c.where() << ": rank " << shape.size() << " is above 16";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      SF_USER_CHECK(inferred < 0) << c.where() << ": more than one -1 in shape";
      inferred = static_cast<int64_t>(d);
      continue;
    }
    SF_USER_CHECK(shape[d] >= 0 && shape[d] <= kMaxElements)
        << c.where() << ": bad extent " << shape[d] << " in shape";
    SF_USER_CHECK(shape[d] == 0 || known <= kMaxElements / shape[d])
        << c.where() << ": shape has more than 2^50 elements";
    known *= shape[d];
  }
  if (inferred >= 0) {
    SF_USER_CHECK(known > 0 && numel % known == 0)
        << c.where() << ": cannot infer the -1 of the shape from " << numel << " elements";
    shape[static_cast<size_t>(inferred)] = numel / known;
    known = numel;
  }
  SF_USER_CHECK(known == numel) << c.where() << ": reshape of " << c.label(0) << " with " << numel
                                << " elements to " << known << " elements";
  c.attrs()["shape"] = shape;
  return {c.type(0).dtype, shape};
}

TensorType transposeType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"perm"});
  const Shape perm = c.listAttr("perm");
  const int64_t r = c.rank(0);
  SF_USER_CHECK(static_cast<int64_t>(perm.size()) == r)
      << c.where() << ": perm has " << perm.size() << " entries for a rank-" << r << " operand";
  std::set<int64_t> seen(perm.begin(), perm.end());
  SF_USER_CHECK(static_cast<int64_t>(seen.size()) == r &&
                (r == 0 || (*seen.begin() == 0 && *seen.rbegin() == r - 1)))
      << c.where() << ": perm is not a permutation of 0.." << r - 1;
  TensorType out = c.type(0);
  for (int64_t d = 0; d < r; ++d) {
    out.shape[static_cast<size_t>(d)] =
        c.shape(0)[static_cast<size_t>(perm[static_cast<size_t>(d)])];
  }
  return out;
}

TensorType sliceType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"axis", "start", "end"});
  const int64_t axis = c.axis(c.rank(0));
  const int64_t start = c.intAttr("start");
  const int64_t end = c.intAttr("end");
  const int64_t extent = c.shape(0)[static_cast<size_t>(axis)];
  SF_USER_CHECK(start >= 0 && start <= end && end <= extent)
      << c.where() << ": slice [" << start << ", " << end << ") of an extent " << extent;
  TensorType out = c.type(0);
  out.shape[static_cast<size_t>(axis)] = end - start;
  return out;
}

TensorType concatType(const OpChecker& c, size_t n) {
  c.arity(1, 1 << 20);
  c.allowedAttrs({"axis"});
  const int64_t axis = c.axis(c.rank(0));
  TensorType out = c.type(0);
  for (size_t i = 1; i < n; ++i) {
    c.rankIs(i, c.rank(0));
    c.sameDType(0, i);
    for (int64_t d = 0; d < c.rank(0); ++d) {
      if (d != axis) c.extentsMatch(0, d, i, d);
    }
    int64_t& e = out.shape[static_cast<size_t>(axis)];
    e += c.shape(i)[static_cast<size_t>(axis)];
    SF_USER_CHECK(e <= kMaxElements) << c.where() << ": concatenated extent above 2^50";
  }
  return out;
}

TensorType embeddingType(const OpChecker& c) {
  c.arity(2, 2);
  c.allowedAttrs({});
  c.rankIs(0, 2);
  const DType ids = c.type(1).dtype;
  SF_USER_CHECK(ids == DType::kI32 || ids == DType::kI64)
      << c.where() << ": the indices " << c.label(1) << " must be i32 or i64, not "
      << dtypeName(ids);
  TensorType out = c.type(1);
  out.dtype = c.type(0).dtype;
  out.shape.push_back(c.shape(0)[1]);
  return out;
}

TensorType reduceType(const OpChecker& c) {
  c.arity(1, 1);
  c.allowedAttrs({"axis"});
  const int64_t axis = c.axis(c.rank(0));
  TensorType out = c.type(0);
  out.shape.erase(out.shape.begin() + axis);
  return out;
}

TensorType unaryType(const OpChecker& c, std::initializer_list<const char*> attrs) {
  c.arity(1, 1);
  c.allowedAttrs(attrs);
  return c.type(0);
}

}  // namespace

TensorType inferType(OpKind op, const std::vector<InferOperand>& operands, OpAttrs& attrs,
                     const std::string& where) {
  const OpChecker c(op, operands, attrs, where);
  const size_t n = operandCount(operands);
  TensorType out;
  switch (op) {
    case OpKind::kInput:
    case OpKind::kParam: SF_FAIL(kInvalidArgument) << where << ": a source has no operands";
    case OpKind::kLinear: out = linearType(c, n); break;
    case OpKind::kMatmul: out = matmulType(c, false); break;
    case OpKind::kBatchMatmul: out = matmulType(c, true); break;
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMinimum:
    case OpKind::kMaximum:
    case OpKind::kEqual:
    case OpKind::kGreater:
    case OpKind::kLess: out = broadcastType(c); break;
    case OpKind::kBiasAdd: out = biasAddType(c); break;
    case OpKind::kConv2d: out = conv2dType(c, n); break;
    case OpKind::kMaxPool2d: out = maxPool2dType(c); break;
    case OpKind::kAvgPool2d: out = avgPool2dType(c); break;
    case OpKind::kWhere: out = whereType(c); break;
    case OpKind::kRelu:
    case OpKind::kGelu:
    case OpKind::kGeluTanh:
    case OpKind::kSilu:
    case OpKind::kTanh:
    case OpKind::kSqrt:
    case OpKind::kSigmoid:
    case OpKind::kExp:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kNot: out = unaryType(c, {}); break;
    case OpKind::kSoftmax:
      out = unaryType(c, {"axis"});
      c.axis(c.rank(0));
      break;
    case OpKind::kLayerNorm: out = layerNormType(c, n); break;
    case OpKind::kReshape: out = reshapeType(c); break;
    case OpKind::kTranspose: out = transposeType(c); break;
    case OpKind::kSlice: out = sliceType(c); break;
    case OpKind::kConcat: out = concatType(c, n); break;
    case OpKind::kEmbedding: out = embeddingType(c); break;
    case OpKind::kReduceSum:
    case OpKind::kReduceMax: out = reduceType(c); break;
  }
  checkedNumel(out, where);
  return out;
}

}  // namespace sparseflow::graph
