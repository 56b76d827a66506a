// Finding the decomposed layer norm, GELU (erf and tanh forms) and SiLU of exported models (see
// onnx_patterns.h).
#include "graph/import/onnx_patterns.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "graph/import/onnx_node.h"

namespace sparseflow::graph::onnx_import {
namespace {

class PatternFinder {
 public:
  PatternFinder(const onnx::GraphProto& g,
                const std::function<const Constant*(const std::string&)>& constantOf, int64_t opset)
      : g_(g), constantOf_(constantOf), opset_(opset) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& in : g.node(i).input()) readers_[in].push_back(i);
      for (const std::string& o : g.node(i).output()) producers_.emplace(o, i);
    }
    for (const auto& out : g.output()) readers_[out.name()].push_back(-1);
  }

  Fusions find() {
    for (int i = 0; i < g_.node_size(); ++i) {
      const std::string& op = g_.node(i).op_type();
      if (op == "ReduceMean") layerNorm(i);
      if (op == "Erf") gelu(i);
      if (op == "Tanh") geluTanh(i);
      if (op == "Sigmoid") silu(i);
    }
    return std::move(found_);
  }

 private:
  const onnx::NodeProto& node(int i) const { return g_.node(i); }
  const std::string& out(int i) const { return node(i).output(0); }
  bool is(int i, const char* op, int inputs) const {
    return i >= 0 && node(i).op_type() == op && node(i).input_size() == inputs &&
           node(i).output_size() >= 1 &&
           (node(i).domain().empty() || node(i).domain() == "ai.onnx");
  }
  /// The only node reading `value` (-1 when none, several, or the value is a graph output).
  int soleReader(const std::string& value) const {
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second.size() != 1) return -1;
    return it->second[0];
  }
  std::optional<double> scalar(const std::string& value) const {
    const Constant* c = constantOf_(value);
    if (!c || c->numel() != 1) return std::nullopt;
    return c->real(0);
  }
  bool near(const std::string& value, double target) const {
    const auto v = scalar(value);
    return v && std::fabs(*v - target) <= 1e-4 * std::fabs(target);
  }
  /// The operand of binary node i other than `value` ("" when `value` is not one of them).
  std::string other(int i, const std::string& value) const {
    if (node(i).input(0) == value) return node(i).input(1);
    if (node(i).input(1) == value) return node(i).input(0);
    return "";
  }
  bool vector1d(const std::string& value) const {
    const Constant* c = constantOf_(value);
    return c && c->rank() == 1;
  }
  /// ReduceMean's single axis (keepdims), from the attribute or (opset 18) the input.
  std::optional<int64_t> meanAxis(int i) const {
    const onnx::NodeProto& n = node(i);
    if (intAttr(n, "keepdims", 1) != 1) return std::nullopt;
    std::optional<std::vector<int64_t>> axes = intsAttr(n, "axes");
    if (opset_ >= 18 && n.input_size() > 1) {
      const Constant* c = constantOf_(n.input(1));
      if (!c || c->numel() != 1 || !c->integral) return std::nullopt;
      axes = std::vector<int64_t>{c->ints[0]};
    }
    if (!axes || axes->size() != 1) return std::nullopt;
    return (*axes)[0];
  }
  bool meanNode(int i) const {
    return i >= 0 && node(i).op_type() == "ReduceMean" && node(i).output_size() >= 1 &&
           (node(i).input_size() == 1 || node(i).input_size() == 2);
  }

  void layerNorm(int m1) {
    const auto axis = meanAxis(m1);
    if (!axis || !meanNode(m1)) return;
    const std::string& x = node(m1).input(0);
    const int sub = soleReader(out(m1));
    if (!is(sub, "Sub", 2) || node(sub).input(0) != x || node(sub).input(1) != out(m1)) return;
    const std::string& d = out(sub);
    auto it = readers_.find(d);
    if (it == readers_.end() || it->second.size() != 2) return;
    int pow = -1, div = -1;
    for (int r : it->second) {
      if (is(r, "Pow", 2) && node(r).input(0) == d && near(node(r).input(1), 2.0)) pow = r;
      if (is(r, "Mul", 2) && node(r).input(0) == d && node(r).input(1) == d) pow = r;
      if (is(r, "Div", 2) && node(r).input(0) == d) div = r;
    }
    if (pow < 0 || div < 0) return;
    const int m2 = soleReader(out(pow));
    if (!meanNode(m2) || node(m2).input(0) != out(pow) || meanAxis(m2) != axis) return;
    const int add = soleReader(out(m2));
    if (!is(add, "Add", 2)) return;
    const auto eps = scalar(other(add, out(m2)));
    if (!eps) return;
    const int sqrt = soleReader(out(add));
    if (!is(sqrt, "Sqrt", 1) || soleReader(out(sqrt)) != div || node(div).input(1) != out(sqrt)) {
      return;
    }
    Fusion f;
    f.kind = FusedKind::kLayerNorm;
    f.x = x;
    f.axis = *axis;
    f.eps = *eps;
    std::vector<int> nodes = {m1, sub, pow, m2, add, sqrt};
    int last = div;
    const int mul = soleReader(out(div));
    if (is(mul, "Mul", 2) && vector1d(other(mul, out(div)))) {
      const int shift = soleReader(out(mul));
      if (is(shift, "Add", 2) && vector1d(other(shift, out(mul)))) {
        f.scale = other(mul, out(div));
        f.shift = other(shift, out(mul));
        nodes.push_back(div);
        nodes.push_back(mul);
        last = shift;
      }
    }
    take(last, f, nodes);
  }

  void gelu(int erf) {
    if (!is(erf, "Erf", 1)) return;
    const std::string& t = node(erf).input(0);
    const int scale = producer(t);
    if (scale < 0 || soleReader(t) != erf) return;
    std::string x;
    if (is(scale, "Div", 2) && near(node(scale).input(1), std::sqrt(2.0))) {
      x = node(scale).input(0);
    } else if (is(scale, "Mul", 2) && near(node(scale).input(1), std::sqrt(0.5))) {
      x = node(scale).input(0);
    } else if (is(scale, "Mul", 2) && near(node(scale).input(0), std::sqrt(0.5))) {
      x = node(scale).input(1);
    } else {
      return;
    }
    takeGelu(FusedKind::kGelu, erf, x, {scale, erf});
  }

  /// GELU's last steps after its erf or tanh node `term`: Add 1, then the product with x and 0.5
  /// (halfTimesX); takes `nodes` with them as one `kind` of x when they hold.
  void takeGelu(FusedKind kind, int term, const std::string& x, std::vector<int> nodes) {
    const int plus = soleReader(out(term));
    if (!is(plus, "Add", 2) || !near(other(plus, out(term)), 1.0)) return;
    nodes.push_back(plus);
    const int last = halfTimesX(plus, x, nodes);
    if (last < 0) return;
    Fusion f;
    f.kind = kind;
    f.x = x;
    take(last, f, nodes);
  }

  /// After the Add of 1 (node `plus`) to GELU's erf or tanh term of x: the product with x and 0.5,
  /// as x * (1 + t) * 0.5, 0.5 * (x * (1 + t)) or (x * 0.5) * (1 + t). Appends the nodes it takes
  /// and returns the last one (-1 when the pattern does not hold).
  int halfTimesX(int plus, const std::string& x, std::vector<int>& nodes) const {
    const int mul = soleReader(out(plus));
    if (!is(mul, "Mul", 2)) return -1;
    const std::string partner = other(mul, out(plus));
    if (partner == x) {  // x * (1 + t), then * 0.5
      const int half = soleReader(out(mul));
      if (!is(half, "Mul", 2) || !near(other(half, out(mul)), 0.5)) return -1;
      nodes.push_back(mul);
      return half;
    }
    const int half = producer(partner);  // (x * 0.5) * (1 + t)
    if (!is(half, "Mul", 2) || soleReader(partner) != mul || !near(other(half, x), 0.5)) return -1;
    nodes.push_back(half);
    return mul;
  }

  /// x * x * x as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x), read only by `reader`;
  /// appends its nodes. "" when `value` is not such a cube, else the x.
  std::string cubeOf(const std::string& value, int reader, std::vector<int>& nodes) const {
    const int c = producer(value);
    if (c < 0 || soleReader(value) != reader) return "";
    if (is(c, "Pow", 2) && near(node(c).input(1), 3.0)) {
      nodes.push_back(c);
      return node(c).input(0);
    }
    if (!is(c, "Mul", 2)) return "";
    for (int side = 0; side < 2; ++side) {
      const std::string& square = node(c).input(side);
      const std::string& x = node(c).input(1 - side);
      const int s = producer(square);
      if (is(s, "Mul", 2) && soleReader(square) == c && node(s).input(0) == x &&
          node(s).input(1) == x) {
        nodes.push_back(s);
        nodes.push_back(c);
        return x;
      }
    }
    return "";
  }

  /// GELU's tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), the constants'
  /// products in either operand order.
  void geluTanh(int tanh) {
    if (!is(tanh, "Tanh", 1)) return;
    std::vector<int> nodes;
    const std::string& inner = node(tanh).input(0);
    const int beta = producer(inner);
    if (!is(beta, "Mul", 2) || soleReader(inner) != tanh) return;
    constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi)
    std::string sum;
    if (near(node(beta).input(0), kBeta)) sum = node(beta).input(1);
    if (near(node(beta).input(1), kBeta)) sum = node(beta).input(0);
    const int add = producer(sum);
    if (sum.empty() || !is(add, "Add", 2) || soleReader(sum) != beta) return;
    std::string x;
    for (int side = 0; side < 2 && x.empty(); ++side) {
      const std::string& scaled = node(add).input(side);
      const int kappa = producer(scaled);
      if (!is(kappa, "Mul", 2) || soleReader(scaled) != add) continue;
      for (int k = 0; k < 2 && x.empty(); ++k) {
        if (!near(node(kappa).input(k), 0.044715)) continue;
        std::vector<int> cube;
        const std::string base = cubeOf(node(kappa).input(1 - k), kappa, cube);
        if (base.empty() || base != node(add).input(1 - side)) continue;
        x = base;
        nodes = cube;
        nodes.push_back(kappa);
      }
    }
    if (x.empty()) return;
    nodes.insert(nodes.end(), {add, beta, tanh});
    takeGelu(FusedKind::kGeluTanh, tanh, x, std::move(nodes));
  }

  void silu(int sigmoid) {
    if (!is(sigmoid, "Sigmoid", 1)) return;
    const std::string& x = node(sigmoid).input(0);
    const int mul = soleReader(out(sigmoid));
    if (!is(mul, "Mul", 2) || other(mul, out(sigmoid)) != x) return;
    Fusion f;
    f.kind = FusedKind::kSilu;
    f.x = x;
    take(mul, f, {sigmoid});
  }

  int producer(const std::string& value) const {
    auto it = producers_.find(value);
    return it == producers_.end() ? -1 : it->second;
  }

  void take(int last, const Fusion& f, const std::vector<int>& nodes) {
    if (found_.at.count(last) || found_.absorbed.count(last)) return;
    for (int n : nodes) {
      if (found_.absorbed.count(n) || found_.at.count(n)) return;
    }
    found_.at[last] = f;
    found_.absorbed.insert(nodes.begin(), nodes.end());
  }

  const onnx::GraphProto& g_;
  const std::function<const Constant*(const std::string&)>& constantOf_;
  int64_t opset_;
  std::map<std::string, std::vector<int>> readers_;
  std::map<std::string, int> producers_;
  Fusions found_;
};

}  // namespace

Fusions findFusions(const onnx::GraphProto& graph,
                    const std::function<const Constant*(const std::string&)>& constantOf,
                    int64_t opset) {
  return PatternFinder(graph, constantOf, opset).find();
}

}  // namespace sparseflow::graph::onnx_import
