// Every graph operator on dense row-major values (the reference evaluator runs them in double,
// the executor in float for the operators no kernel takes).
#include "graph/model/dense_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/check.h"
#include "support/elementwise_functions.h"

namespace sparseflow::graph {
namespace {

using Shape = std::vector<int64_t>;

int64_t product(const Shape& shape, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t d = from; d < std::min(to, shape.size()); ++d) p *= shape[d];
  return p;
}

int64_t intAttr(const Node& node, const char* key) {
  return std::get<int64_t>(node.attrs.at(key));
}
Shape listAttr(const Node& node, const char* key) {
  return std::get<Shape>(node.attrs.at(key));
}

template <typename T>
DenseValue<T> zeros(const Shape& shape) {
  return DenseValue<T>{shape, std::vector<T>(static_cast<size_t>(product(shape)), T(0))};
}

/// Row-major strides of `shape` aligned to the right of a rank-`rank` result; 0 where the value
/// is broadcast (missing or extent 1).
Shape broadcastStrides(const Shape& shape, const Shape& result) {
  Shape strides(result.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t d = shape.size() - 1 - k;
    const size_t rd = result.size() - 1 - k;
    strides[rd] = shape[d] == 1 && result[rd] != 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

/// out = f(a, b) element-wise under numpy broadcasting: rows of the last dimension in parallel,
/// each row's operand offsets computed once.
template <typename T, typename F>
DenseValue<T> broadcastBinary(const Shape& shape, const DenseValue<T>& a, const DenseValue<T>& b,
                              F f) {
  DenseValue<T> out = zeros<T>(shape);
  const Shape sa = broadcastStrides(a.shape, shape);
  const Shape sb = broadcastStrides(b.shape, shape);
  const size_t r = shape.size();
  const int64_t n = r == 0 ? 1 : shape[r - 1];
  const int64_t rows = r == 0 ? 1 : product(shape, 0, r - 1);
  const int64_t la = r == 0 ? 0 : sa[r - 1], lb = r == 0 ? 0 : sb[r - 1];
#pragma omp parallel for schedule(static) if (rows * n > 32768)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t ia = 0, ib = 0, rest = row;
    for (size_t d = r - 1; d-- > 0;) {  // the row's index, last leading dimension first
      const int64_t i = rest % shape[d];
      rest /= shape[d];
      ia += i * sa[d];
      ib += i * sb[d];
    }
    T* o = out.data.data() + row * n;
    const T* pa = a.data.data() + ia;
    const T* pb = b.data.data() + ib;
    for (int64_t j = 0; j < n; ++j) o[j] = f(pa[j * la], pb[j * lb]);
  }
  return out;
}

/// where(cond, a, b) under numpy broadcasting: a where cond is nonzero (NaN counts as true, as
/// torch's bool of NaN), else b.
template <typename T>
DenseValue<T> where(const Shape& shape, const DenseValue<T>& cond, const DenseValue<T>& a,
                    const DenseValue<T>& b) {
  DenseValue<T> out = zeros<T>(shape);
  const Shape sc = broadcastStrides(cond.shape, shape), sa = broadcastStrides(a.shape, shape);
  const Shape sb = broadcastStrides(b.shape, shape);
  const size_t r = shape.size();
  const int64_t total = out.size();
  for (int64_t e = 0; e < total; ++e) {
    int64_t ic = 0, ia = 0, ib = 0, rest = e;
    for (size_t d = r; d-- > 0;) {
      const int64_t i = rest % shape[d];
      rest /= shape[d];
      ic += i * sc[d];
      ia += i * sa[d];
      ib += i * sb[d];
    }
    out.data[static_cast<size_t>(e)] = cond.data[static_cast<size_t>(ic)] != T(0)
                                           ? a.data[static_cast<size_t>(ia)]
                                           : b.data[static_cast<size_t>(ib)];
  }
  return out;
}

template <typename T, typename F>
DenseValue<T> unary(const DenseValue<T>& x, F f) {
  DenseValue<T> out{x.shape, std::vector<T>(x.data.size())};
  const int64_t n = x.size();
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t i = 0; i < n; ++i)
    out.data[static_cast<size_t>(i)] = f(x.data[static_cast<size_t>(i)]);
  return out;
}

/// y[..., o] = sum_i x[..., i] W[o, i] (+ b[o]).
template <typename T>
DenseValue<T> linear(const Shape& shape, const DenseValue<T>& x, const DenseValue<T>& w,
                     const DenseValue<T>* b) {
  DenseValue<T> out = zeros<T>(shape);
  const int64_t in = w.shape[1], outF = w.shape[0];
  const int64_t rows = product(x.shape, 0, x.shape.size() - 1);
#pragma omp parallel for schedule(static) if (rows * outF * in > 1000000)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x.data.data() + r * in;
    for (int64_t o = 0; o < outF; ++o) {
      const T* wr = w.data.data() + o * in;
      T acc = b ? b->data[static_cast<size_t>(o)] : T(0);
      for (int64_t i = 0; i < in; ++i) acc += xr[i] * wr[i];
      out.data[static_cast<size_t>(r * outF + o)] = acc;
    }
  }
  return out;
}

/// Batched [.., m, k] x [.., k, n] (one batch for rank 2): rows of all batches in parallel, each
/// row accumulated over k with the contiguous rows of b (vectorizable).
template <typename T>
DenseValue<T> matmul(const Shape& shape, const DenseValue<T>& a, const DenseValue<T>& b) {
  DenseValue<T> out = zeros<T>(shape);
  const size_t r = a.shape.size();
  const int64_t m = a.shape[r - 2], k = a.shape[r - 1], n = b.shape[r - 1];
  const int64_t batches = product(a.shape, 0, r - 2);
#pragma omp parallel for schedule(static) if (batches * m * n * k > 1000000)
  for (int64_t qi = 0; qi < batches * m; ++qi) {
    const int64_t q = qi / m, i = qi % m;
    const T* ap = a.data.data() + q * m * k + i * k;
    const T* bp = b.data.data() + q * k * n;
    T* cp = out.data.data() + q * m * n + i * n;
    for (int64_t l = 0; l < k; ++l) {
      const T av = ap[l];
      const T* br = bp + l * n;
      for (int64_t j = 0; j < n; ++j) cp[j] += av * br[j];
    }
  }
  return out;
}

/// Calls f(base, stride, count) for every line of x along `axis`.
/// Lines are independent: f runs on several threads at once for large tensors.
template <typename F>
void forEachLine(const Shape& shape, int64_t axis, F f) {
  const int64_t inner = product(shape, static_cast<size_t>(axis) + 1);
  const int64_t extent = shape[static_cast<size_t>(axis)];
  const int64_t outer = product(shape, 0, static_cast<size_t>(axis));
#pragma omp parallel for schedule(static) if (outer * inner * extent > 32768)
  for (int64_t line = 0; line < outer * inner; ++line) {
    const int64_t o = line / inner, i = line % inner;
    f(o * extent * inner + i, inner, extent);
  }
}

template <typename T>
DenseValue<T> softmax(const DenseValue<T>& x, int64_t axis) {
  DenseValue<T> out{x.shape, x.data};
  forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    T max = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < n; ++j)
      max = std::max(max, out.data[static_cast<size_t>(base + j * stride)]);
    T sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      T& v = out.data[static_cast<size_t>(base + j * stride)];
      v = std::exp(v - max);
      sum += v;
    }
    for (int64_t j = 0; j < n; ++j) out.data[static_cast<size_t>(base + j * stride)] /= sum;
  });
  return out;
}

template <typename T>
DenseValue<T> layerNorm(const DenseValue<T>& x, const DenseValue<T>* gamma,
                        const DenseValue<T>* beta, int64_t axis, double eps) {
  DenseValue<T> out{x.shape, x.data};
  forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    T mean = 0;
    for (int64_t j = 0; j < n; ++j) mean += out.data[static_cast<size_t>(base + j * stride)];
    mean /= static_cast<T>(n);
    T var = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T d = out.data[static_cast<size_t>(base + j * stride)] - mean;
      var += d * d;
    }
    var /= static_cast<T>(n);
    const T scale = T(1) / std::sqrt(var + static_cast<T>(eps));
    for (int64_t j = 0; j < n; ++j) {
      T& v = out.data[static_cast<size_t>(base + j * stride)];
      v = (v - mean) * scale;
      if (gamma) v *= gamma->data[static_cast<size_t>(j)];
      if (beta) v += beta->data[static_cast<size_t>(j)];
    }
  });
  return out;
}

template <typename T>
DenseValue<T> transpose(const Shape& shape, const DenseValue<T>& x, const Shape& perm) {
  DenseValue<T> out = zeros<T>(shape);
  const size_t r = shape.size();
  if (r == 0) return DenseValue<T>{shape, x.data};
  Shape inStrides(x.shape.size(), 1);
  for (size_t d = x.shape.size(); d-- > 1;) inStrides[d - 1] = inStrides[d] * x.shape[d];
  Shape src(r);  // the source stride of each output dimension
  for (size_t d = 0; d < r; ++d) src[d] = inStrides[static_cast<size_t>(perm[d])];
  const int64_t n = shape[r - 1], step = src[r - 1];
  const int64_t rows = product(shape, 0, r - 1);
#pragma omp parallel for schedule(static) if (rows * n > 32768)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0, rest = row;
    for (size_t d = r - 1; d-- > 0;) {
      base += (rest % shape[d]) * src[d];
      rest /= shape[d];
    }
    T* o = out.data.data() + row * n;
    const T* in = x.data.data() + base;
    for (int64_t j = 0; j < n; ++j) o[j] = in[j * step];
  }
  return out;
}

/// Copies, along `axis`, `count` slices of x starting at `from` to out starting at `to`.
template <typename T>
void copySlices(const DenseValue<T>& x, int64_t from, DenseValue<T>& out, int64_t to, int64_t count,
                int64_t axis) {
  const int64_t inner = product(x.shape, static_cast<size_t>(axis) + 1);
  const int64_t outer = product(x.shape, 0, static_cast<size_t>(axis));
  const int64_t xe = x.shape[static_cast<size_t>(axis)], oe = out.shape[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < outer; ++o) {
    std::copy_n(x.data.begin() + (o * xe + from) * inner, count * inner,
                out.data.begin() + (o * oe + to) * inner);
  }
}

template <typename T>
DenseValue<T> reduce(const Shape& shape, const DenseValue<T>& x, int64_t axis, bool max) {
  DenseValue<T> out = zeros<T>(shape);
  const int64_t inner = product(x.shape, static_cast<size_t>(axis) + 1);
  const int64_t extent = x.shape[static_cast<size_t>(axis)];
  forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    T acc = max ? -std::numeric_limits<T>::infinity() : T(0);
    for (int64_t j = 0; j < n; ++j) {
      const T v = x.data[static_cast<size_t>(base + j * stride)];
      acc = max ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
    }
    // The line (o, i) starts at o * extent * inner + i; its result is element o * inner + i.
    out.data[static_cast<size_t>((base / (extent * inner)) * inner + base % inner)] = acc;
  });
  return out;
}

/// Direct convolution: every (image, output channel) plane in parallel.
template <typename T>
DenseValue<T> conv2d(const Node& node, const Shape& shape, const DenseValue<T>& x,
                     const DenseValue<T>& w, const DenseValue<T>* b) {
  DenseValue<T> out = zeros<T>(shape);
  const Shape stride = listAttr(node, "stride"), pad = listAttr(node, "padding");
  const Shape dil = listAttr(node, "dilation");
  const int64_t groups = intAttr(node, "groups");
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t ho = shape[2], wo = shape[3], og = o / groups;
#pragma omp parallel for schedule(static) if (n * o * ho * wo * cg * kh * kw > 1000000)
  for (int64_t plane = 0; plane < n * o; ++plane) {
    const int64_t img = plane / o, oc = plane % o, g = oc / og;
    T* y = out.data.data() + plane * ho * wo;
    const T bias = b ? b->data[static_cast<size_t>(oc)] : T(0);
    for (int64_t i = 0; i < ho * wo; ++i) y[i] = bias;
    for (int64_t ci = 0; ci < cg; ++ci) {
      const T* xin = x.data.data() + (img * c + g * cg + ci) * h * wd;
      for (int64_t r = 0; r < kh; ++r) {
        for (int64_t s = 0; s < kw; ++s) {
          const T wv = w.data[static_cast<size_t>(((oc * cg + ci) * kh + r) * kw + s)];
          if (wv == T(0)) continue;  // a pruned tap: structural, as the sparse kernels
          for (int64_t yi = 0; yi < ho; ++yi) {
            const int64_t xi = yi * stride[0] - pad[0] + r * dil[0];
            if (xi < 0 || xi >= h) continue;
            for (int64_t yj = 0; yj < wo; ++yj) {
              const int64_t xj = yj * stride[1] - pad[1] + s * dil[1];
              if (xj >= 0 && xj < wd) y[yi * wo + yj] += wv * xin[xi * wd + xj];
            }
          }
        }
      }
    }
  }
  return out;
}

/// Max pooling: every (image, channel) plane in parallel; padded positions never win (-inf).
template <typename T>
DenseValue<T> maxPool2d(const Node& node, const Shape& shape, const DenseValue<T>& x) {
  DenseValue<T> out = zeros<T>(shape);
  const Shape kernel = listAttr(node, "kernel"), stride = listAttr(node, "stride");
  const Shape pad = listAttr(node, "padding"), dil = listAttr(node, "dilation");
  const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t ho = shape[2], wo = shape[3];
#pragma omp parallel for schedule(static) if (planes * ho * wo * kernel[0] * kernel[1] > 1000000)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xin = x.data.data() + plane * h * w;
    T* y = out.data.data() + plane * ho * wo;
    for (int64_t yi = 0; yi < ho; ++yi) {
      for (int64_t yj = 0; yj < wo; ++yj) {
        T best = -std::numeric_limits<T>::infinity();
        bool nan = false;
        for (int64_t r = 0; r < kernel[0]; ++r) {
          const int64_t xi = yi * stride[0] - pad[0] + r * dil[0];
          if (xi < 0 || xi >= h) continue;
          for (int64_t s = 0; s < kernel[1]; ++s) {
            const int64_t xj = yj * stride[1] - pad[1] + s * dil[1];
            if (xj < 0 || xj >= w) continue;
            const T v = xin[xi * w + xj];
            nan = nan || std::isnan(v);  // NaN propagates, as torch's max_pool2d
            best = std::max(best, v);
          }
        }
        y[yi * wo + yj] = nan ? std::numeric_limits<T>::quiet_NaN() : best;
      }
    }
  }
  return out;
}

/// Average pooling as torch's avg_pool2d: a window's positions inside the padded input (clipped
/// at its bottom/right padding, which a ceil_mode window may pass) divide its sum when
/// count_include_pad is 1, its input elements when 0.
template <typename T>
DenseValue<T> avgPool2d(const Node& node, const Shape& shape, const DenseValue<T>& x) {
  DenseValue<T> out = zeros<T>(shape);
  const Shape kernel = listAttr(node, "kernel"), stride = listAttr(node, "stride");
  const Shape pad = listAttr(node, "padding");
  const bool countPad = intAttr(node, "count_include_pad") == 1;
  const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t ho = shape[2], wo = shape[3];
#pragma omp parallel for schedule(static) if (planes * ho * wo * kernel[0] * kernel[1] > 1000000)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xin = x.data.data() + plane * h * w;
    T* y = out.data.data() + plane * ho * wo;
    for (int64_t yi = 0; yi < ho; ++yi) {
      const int64_t top = yi * stride[0] - pad[0];
      const int64_t bottom = std::min(top + kernel[0], h + pad[2]);
      const int64_t r0 = std::max<int64_t>(top, 0), r1 = std::min(bottom, h);
      for (int64_t yj = 0; yj < wo; ++yj) {
        const int64_t left = yj * stride[1] - pad[1];
        const int64_t right = std::min(left + kernel[1], w + pad[3]);
        const int64_t c0 = std::max<int64_t>(left, 0), c1 = std::min(right, w);
        T sum = 0;
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) sum += xin[r * w + c];
        }
        const int64_t count = countPad ? (bottom - top) * (right - left) : (r1 - r0) * (c1 - c0);
        y[yi * wo + yj] = sum / static_cast<T>(count);
      }
    }
  }
  return out;
}

/// 1 or 0 in the value type, for a comparison and for `not` (NaN compares false; not NaN is 0,
/// NaN being true as torch's bool of it).
template <typename T>
T truth(bool b) {
  return b ? T(1) : T(0);
}

template <typename T>
DenseValue<T> embedding(const Graph& graph, const Node& node, const Shape& shape,
                        const DenseValue<T>& table, const DenseValue<T>& ids) {
  DenseValue<T> out = zeros<T>(shape);
  const int64_t v = table.shape[0], d = table.shape[1];
  for (int64_t e = 0; e < ids.size(); ++e) {
    const T id = ids.data[static_cast<size_t>(e)];
    SF_USER_CHECK(id >= 0 && id < static_cast<T>(v) && id == std::floor(id))
        << graph.describe(node.inputs[1]) << ": id " << static_cast<double>(id) << " at element "
        << e << " is outside the table's " << v << " rows";
    std::copy_n(table.data.begin() + static_cast<int64_t>(id) * d, d, out.data.begin() + e * d);
  }
  return out;
}

}  // namespace

template <typename T>
DenseValue<T> evaluateOp(const Graph& graph, const Node& node,
                         const std::vector<const DenseValue<T>*>& operands) {
  namespace ew = support::elementwise;
  const Shape& shape = node.type.shape;
  const DenseValue<T>& x = *operands.at(0);
  switch (node.op) {
    case OpKind::kInput:
    case OpKind::kParam: SF_FAIL(kInternal) << "evaluateOp on a source";
    case OpKind::kLinear:
      return linear(shape, x, *operands.at(1), operands.size() > 2 ? operands[2] : nullptr);
    case OpKind::kMatmul:
    case OpKind::kBatchMatmul: return matmul(shape, x, *operands.at(1));
    case OpKind::kAdd:
    case OpKind::kBiasAdd:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return a + b; });
    case OpKind::kMul:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return a * b; });
    case OpKind::kDiv:  // IEEE: x / 0 is ±inf, 0 / 0 NaN, as torch.div
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return a / b; });
    case OpKind::kMinimum:  // NaN-propagating, like torch.minimum
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) {
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN()
                                              : std::min(a, b);
      });
    case OpKind::kMaximum:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) {
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN()
                                              : std::max(a, b);
      });
    case OpKind::kRelu: return unary(x, [](T v) { return ew::Relu<T>(v); });
    case OpKind::kGelu: return unary(x, [](T v) { return ew::Gelu<T>(v); });
    case OpKind::kGeluTanh: return unary(x, [](T v) { return ew::GeluTanh<T>(v); });
    case OpKind::kSilu: return unary(x, [](T v) { return ew::Silu<T>(v); });
    case OpKind::kTanh: return unary(x, [](T v) { return std::tanh(v); });
    case OpKind::kSqrt: return unary(x, [](T v) { return std::sqrt(v); });  // NaN below 0
    case OpKind::kSigmoid: return unary(x, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
    case OpKind::kExp: return unary(x, [](T v) { return std::exp(v); });
    case OpKind::kSin: return unary(x, [](T v) { return std::sin(v); });
    case OpKind::kCos: return unary(x, [](T v) { return std::cos(v); });
    case OpKind::kNot: return unary(x, [](T v) { return truth<T>(v == T(0)); });
    case OpKind::kEqual:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return truth<T>(a == b); });
    case OpKind::kGreater:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return truth<T>(a > b); });
    case OpKind::kLess:
      return broadcastBinary(shape, x, *operands.at(1), [](T a, T b) { return truth<T>(a < b); });
    case OpKind::kSoftmax: return softmax(x, intAttr(node, "axis"));
    case OpKind::kLayerNorm:
      return layerNorm(x, operands.size() > 1 ? operands[1] : nullptr,
                       operands.size() > 2 ? operands[2] : nullptr, intAttr(node, "axis"),
                       node.attrs.count("eps") ? std::get<double>(node.attrs.at("eps")) : 1e-5);
    case OpKind::kReshape: return DenseValue<T>{shape, x.data};
    case OpKind::kTranspose: return transpose(shape, x, listAttr(node, "perm"));
    case OpKind::kSlice: {
      DenseValue<T> out = zeros<T>(shape);
      const int64_t axis = intAttr(node, "axis"), start = intAttr(node, "start");
      copySlices(x, start, out, 0, shape[static_cast<size_t>(axis)], axis);
      return out;
    }
    case OpKind::kConcat: {
      DenseValue<T> out = zeros<T>(shape);
      const int64_t axis = intAttr(node, "axis");
      int64_t at = 0;
      for (const DenseValue<T>* part : operands) {
        const int64_t n = part->shape[static_cast<size_t>(axis)];
        copySlices(*part, 0, out, at, n, axis);
        at += n;
      }
      return out;
    }
    case OpKind::kEmbedding: return embedding(graph, node, shape, x, *operands.at(1));
    case OpKind::kConv2d:
      return conv2d(node, shape, x, *operands.at(1), operands.size() > 2 ? operands[2] : nullptr);
    case OpKind::kMaxPool2d: return maxPool2d(node, shape, x);
    case OpKind::kAvgPool2d: return avgPool2d(node, shape, x);
    case OpKind::kWhere: return where(shape, x, *operands.at(1), *operands.at(2));
    case OpKind::kReduceSum: return reduce(shape, x, intAttr(node, "axis"), false);
    case OpKind::kReduceMax: return reduce(shape, x, intAttr(node, "axis"), true);
  }
  SF_FAIL(kInternal) << "unknown operator " << static_cast<int>(node.op);
}

template <typename T>
bool evaluateInPlace(const Node& node, DenseValue<T>& target,
                     const std::vector<const DenseValue<T>*>& operands) {
  namespace ew = support::elementwise;
  if (target.shape != node.type.shape) return false;
  T* y = target.data.data();
  const int64_t n = target.size();
  auto unaryInPlace = [&](auto f) {
#pragma omp parallel for schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; ++i) y[i] = f(y[i]);
    return true;
  };
  auto binaryInPlace = [&](auto f) {
    const DenseValue<T>& b = *operands.at(1);
    SF_ICHECK(&b != &target) << "evaluateInPlace with both operands the target";
    const Shape& shape = target.shape;
    const Shape sb = broadcastStrides(b.shape, shape);
    const size_t r = shape.size();
    const int64_t cols = r == 0 ? 1 : shape[r - 1];
    const int64_t rows = r == 0 ? 1 : product(shape, 0, r - 1);
    const int64_t lb = r == 0 ? 0 : sb[r - 1];
#pragma omp parallel for schedule(static) if (rows * cols > 32768)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t ib = 0, rest = row;
      for (size_t d = r - 1; d-- > 0;) {
        ib += (rest % shape[d]) * sb[d];
        rest /= shape[d];
      }
      T* o = y + row * cols;
      const T* pb = b.data.data() + ib;
      for (int64_t j = 0; j < cols; ++j) o[j] = f(o[j], pb[j * lb]);
    }
    return true;
  };
  const auto nanMin = [](T a, T b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::min(a, b);
  };
  const auto nanMax = [](T a, T b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::max(a, b);
  };
  switch (node.op) {
    case OpKind::kAdd:
    case OpKind::kBiasAdd: return binaryInPlace([](T a, T b) { return a + b; });
    case OpKind::kMul: return binaryInPlace([](T a, T b) { return a * b; });
    case OpKind::kDiv: return binaryInPlace([](T a, T b) { return a / b; });
    case OpKind::kMinimum: return binaryInPlace(nanMin);
    case OpKind::kMaximum: return binaryInPlace(nanMax);
    case OpKind::kRelu: return unaryInPlace([](T v) { return ew::Relu<T>(v); });
    case OpKind::kGelu: return unaryInPlace([](T v) { return ew::Gelu<T>(v); });
    case OpKind::kGeluTanh: return unaryInPlace([](T v) { return ew::GeluTanh<T>(v); });
    case OpKind::kSilu: return unaryInPlace([](T v) { return ew::Silu<T>(v); });
    case OpKind::kTanh: return unaryInPlace([](T v) { return std::tanh(v); });
    case OpKind::kSqrt: return unaryInPlace([](T v) { return std::sqrt(v); });
    case OpKind::kSigmoid: return unaryInPlace([](T v) { return T(1) / (T(1) + std::exp(-v)); });
    case OpKind::kExp: return unaryInPlace([](T v) { return std::exp(v); });
    case OpKind::kSin: return unaryInPlace([](T v) { return std::sin(v); });
    case OpKind::kCos: return unaryInPlace([](T v) { return std::cos(v); });
    case OpKind::kNot: return unaryInPlace([](T v) { return truth<T>(v == T(0)); });
    case OpKind::kEqual: return binaryInPlace([](T a, T b) { return truth<T>(a == b); });
    case OpKind::kGreater: return binaryInPlace([](T a, T b) { return truth<T>(a > b); });
    case OpKind::kLess: return binaryInPlace([](T a, T b) { return truth<T>(a < b); });
    default: return false;
  }
}

template bool evaluateInPlace(const Node&, DenseValue<float>&,
                              const std::vector<const DenseValue<float>*>&);
template bool evaluateInPlace(const Node&, DenseValue<double>&,
                              const std::vector<const DenseValue<double>*>&);

template DenseValue<float> evaluateOp(const Graph&, const Node&,
                                      const std::vector<const DenseValue<float>*>&);
template DenseValue<double> evaluateOp(const Graph&, const Node&,
                                       const std::vector<const DenseValue<double>*>&);

}  // namespace sparseflow::graph
