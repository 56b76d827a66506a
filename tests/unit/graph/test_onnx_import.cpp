// The ONNX importer: models built here with ONNX's protobuf classes (random weights drawn fresh
// each run) are imported, run by the executor and compared with float64 computed in this file;
// the exporters' spellings (shape arithmetic on symbolic extents, decomposed layer norm, GELU and
// SiLU, constant-built masks) come out as the graph IR's operators; bad models get errors that
// name the file, the node and the input.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/random_coo.h"
#include "graph/exec/executor.h"
#include "graph/import/onnx_import.h"
#include "graph/model/evaluate.h"
#include "graph/printer.h"
#include "sparseflow/error.h"
#include "support/elementwise_functions.h"

namespace sparseflow::graph {
namespace {

using sparseflow::testing::freshSeed;
using Dims = std::vector<int64_t>;

/// Builds an ONNX model node by node.
class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g_ = model_.mutable_graph();
    g_->set_name("test");
  }
  /// A float (or int64) input; extents <= 0 are symbolic ("batch").
  void input(const std::string& name, const Dims& dims,
             int type = onnx::TensorProto_DataType_FLOAT) {
    auto* v = g_->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d > 0) {
        dim->set_dim_value(d);
      } else {
        dim->set_dim_param("batch");
      }
    }
  }
  void output(const std::string& name) { g_->add_output()->set_name(name); }
  void floats(const std::string& name, const Dims& dims, const std::vector<double>& values) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (double v : values) t->add_float_data(static_cast<float>(v));
  }
  void ints(const std::string& name, const Dims& dims, const std::vector<int64_t>& values) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  /// A Constant node holding one float.
  void scalar(const std::string& name, double v) {
    onnx::NodeProto* n = node("Constant", {}, name);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
    a->mutable_t()->add_float_data(static_cast<float>(v));
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& out, const std::string& name = "") {
    onnx::NodeProto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "/" + out + "/" + op : name);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(out);
    return n;
  }
  static void intAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void intsAttr(onnx::NodeProto* n, const std::string& name, const Dims& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  Model import(const OnnxImportOptions& options = {}) const {
    return importOnnxBytes(bytes(), "test.onnx", "", options);
  }
  onnx::ModelProto& proto() { return model_; }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* g_;
};

std::vector<double> randomValues(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<float>(u(rng));
  return v;
}

std::vector<float> run(const Model& model, const std::map<std::string, DenseValue<float>>& inputs,
                       size_t output = 0) {
  SpecializeOptions options;
  options.measure = false;
  return Executor::build(model, options).run(inputs).at(output).data;
}

/// Every element within f32 rounding of the float64 value (relative to the row's scale).
void expectNear(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 1;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * scale) << "element " << i;
  }
}

// MatMul by an initializer + Add of a bias + Relu, then Gemm (transB) with its bias: two linear
// layers named after their initializers, on a symbolic batch given at import.
TEST(OnnxImport, MlpWithSymbolicBatchMatchesFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t batch = 5, in = 16, hidden = 32, out = 8;
  const auto w1 = randomValues(in * hidden, rng), b1 = randomValues(hidden, rng);
  const auto w2 = randomValues(out * hidden, rng), b2 = randomValues(out, rng);
  const auto x = randomValues(batch * in, rng);
  OnnxBuilder b;
  b.input("x", {-1, in});
  b.floats("fc1.weight_t", {in, hidden}, w1);  // [in, out]: MatMul's layout
  b.floats("fc1.bias", {hidden}, b1);
  b.floats("fc2.weight", {out, hidden}, w2);  // [out, in]: Gemm with transB
  b.floats("fc2.bias", {out}, b2);
  b.node("MatMul", {"x", "fc1.weight_t"}, "h0");
  b.node("Add", {"fc1.bias", "h0"}, "h1");
  b.node("Relu", {"h1"}, "h2");
  OnnxBuilder::intAttr(b.node("Gemm", {"h2", "fc2.weight", "fc2.bias"}, "y"), "transB", 1);
  b.output("y");
  OnnxImportOptions options;
  options.inputShapes["x"] = {batch, in};
  const Model m = b.import(options);
  const std::string text = print(m.graph);
  EXPECT_NE(text.find("param \"fc1.weight_t\" : f32[32, 16]"), std::string::npos) << text;
  EXPECT_NE(text.find("bias_add"), std::string::npos) << text;
  EXPECT_NE(text.find("linear(%"), std::string::npos) << text;
  EXPECT_EQ(m.params.count("fc2.bias"), 1u);

  std::vector<double> want(static_cast<size_t>(batch * out));
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<double> h(static_cast<size_t>(hidden));
    for (int64_t j = 0; j < hidden; ++j) {
      double s = b1[static_cast<size_t>(j)];
      for (int64_t k = 0; k < in; ++k)
        s += x[static_cast<size_t>(r * in + k)] * w1[static_cast<size_t>(k * hidden + j)];
      h[static_cast<size_t>(j)] = std::max(s, 0.0);
    }
    for (int64_t o = 0; o < out; ++o) {
      double s = b2[static_cast<size_t>(o)];
      for (int64_t j = 0; j < hidden; ++j)
        s += h[static_cast<size_t>(j)] * w2[static_cast<size_t>(o * hidden + j)];
      want[static_cast<size_t>(r * out + o)] = s;
    }
  }
  expectNear(run(m, {{"x", {{batch, in}, std::vector<float>(x.begin(), x.end())}}}), want);
}

// The exporters' shape arithmetic: Shape -> Gather -> Unsqueeze -> Concat -> Reshape on a
// symbolic batch, then Transpose; the mask idiom (1 - Cast(Unsqueeze(mask))) * big added to
// scores, Softmax; all folded or translated, matching float64.
TEST(OnnxImport, ShapeArithmeticAndMaskIdiomMatchFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t batch = 3, heads = 2, seq = 4, dim = 3;
  OnnxBuilder b(14);
  b.input("x", {-1, seq, heads * dim});
  b.input("mask", {-1, seq}, onnx::TensorProto_DataType_INT64);
  b.node("Shape", {"x"}, "s");
  b.ints("zero", {}, {0});
  OnnxBuilder::intAttr(b.node("Gather", {"s", "zero"}, "n"), "axis", 0);
  b.ints("axes0", {1}, {0});
  b.node("Unsqueeze", {"n", "axes0"}, "n1");
  b.ints("rest", {3}, {seq, heads, dim});
  OnnxBuilder::intAttr(b.node("Concat", {"n1", "rest"}, "target"), "axis", 0);
  b.node("Reshape", {"x", "target"}, "r");
  OnnxBuilder::intsAttr(b.node("Transpose", {"r"}, "t"), "perm", {0, 2, 1, 3});
  // scores[b, h, i, j] = sum_d t[b,h,i,d] * t[b,h,j,d]
  OnnxBuilder::intsAttr(b.node("Transpose", {"t"}, "tt"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"t", "tt"}, "scores");
  b.ints("axes12", {2}, {1, 2});
  b.node("Unsqueeze", {"mask", "axes12"}, "m1");
  OnnxBuilder::intAttr(b.node("Cast", {"m1"}, "m2"), "to", onnx::TensorProto_DataType_FLOAT);
  b.scalar("one", 1.0);
  b.node("Sub", {"one", "m2"}, "m3");
  b.scalar("big", -10000.0);
  b.node("Mul", {"m3", "big"}, "m4");
  b.node("Add", {"scores", "m4"}, "masked");
  OnnxBuilder::intAttr(b.node("Softmax", {"masked"}, "p"), "axis", -1);
  b.output("p");
  OnnxImportOptions options;
  options.inputShapes = {{"x", {batch, seq, heads * dim}}, {"mask", {batch, seq}}};
  const Model m = b.import(options);
  const std::string text = print(m.graph);
  EXPECT_EQ(text.find("Shape"), std::string::npos);
  EXPECT_NE(text.find("input \"mask\" : f32[3, 4]"), std::string::npos) << text;  // read as numbers
  EXPECT_NE(text.find("batch_matmul"), std::string::npos) << text;

  const auto x = randomValues(batch * seq * heads * dim, rng);
  std::vector<float> mask(static_cast<size_t>(batch * seq));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 3 == 2) ? 0.0f : 1.0f;
  std::vector<double> want;
  for (int64_t bb = 0; bb < batch; ++bb) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < seq; ++i) {
        std::vector<double> row(static_cast<size_t>(seq));
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < seq; ++j) {
          double s = 0;
          for (int64_t d = 0; d < dim; ++d) {
            s += x[static_cast<size_t>((bb * seq + i) * heads * dim + h * dim + d)] *
                 x[static_cast<size_t>((bb * seq + j) * heads * dim + h * dim + d)];
          }
          s += (1.0 - mask[static_cast<size_t>(bb * seq + j)]) * -10000.0;
          row[static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        for (double& v : row) sum += (v = std::exp(v - mx));
        for (double v : row) want.push_back(v / sum);
      }
    }
  }
  expectNear(run(m, {{"x", {{batch, seq, heads * dim}, std::vector<float>(x.begin(), x.end())}},
                     {"mask", {{batch, seq}, mask}}}),
             want);
}

// Layer norm written out as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, GELU as
// Div/Erf/Add/Mul/Mul and SiLU as x * Sigmoid(x) come out as layer_norm, gelu and silu.
TEST(OnnxImport, DecomposedLayerNormGeluSiluAreFoundAgain) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t rows = 6, width = 10;
  const auto gamma = randomValues(width, rng), beta = randomValues(width, rng);
  OnnxBuilder b;
  b.input("x", {rows, width});
  b.floats("ln.weight", {width}, gamma);
  b.floats("ln.bias", {width}, beta);
  OnnxBuilder::intsAttr(b.node("ReduceMean", {"x"}, "mean"), "axes", {-1});
  b.node("Sub", {"x", "mean"}, "d");
  b.scalar("two", 2.0);
  b.node("Pow", {"d", "two"}, "sq");
  OnnxBuilder::intsAttr(b.node("ReduceMean", {"sq"}, "var"), "axes", {-1});
  b.scalar("eps", 1e-5);
  b.node("Add", {"var", "eps"}, "ve");
  b.node("Sqrt", {"ve"}, "sd");
  b.node("Div", {"d", "sd"}, "norm");
  b.node("Mul", {"norm", "ln.weight"}, "scaled");
  b.node("Add", {"scaled", "ln.bias"}, "ln");
  b.scalar("sqrt2", std::sqrt(2.0));
  b.node("Div", {"ln", "sqrt2"}, "g0");
  b.node("Erf", {"g0"}, "g1");
  b.scalar("one", 1.0);
  b.node("Add", {"g1", "one"}, "g2");
  b.node("Mul", {"ln", "g2"}, "g3");
  b.scalar("half", 0.5);
  b.node("Mul", {"g3", "half"}, "gelu");
  b.node("Sigmoid", {"gelu"}, "s0");
  b.node("Mul", {"gelu", "s0"}, "y");
  b.output("y");
  const Model m = b.import();
  const std::string text = print(m.graph);
  for (const char* op : {"layer_norm(", "gelu(", "silu("}) {
    EXPECT_NE(text.find(op), std::string::npos) << op << "\n" << text;
  }
  for (const char* op : {"reduce_sum", "mul("}) {
    EXPECT_EQ(text.find(op), std::string::npos) << op << "\n" << text;
  }
  EXPECT_NE(text.find("eps=9.99999"), std::string::npos) << text;  // 1e-5 as f32

  const auto x = randomValues(rows * width, rng);
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < width; ++c) mean += x[static_cast<size_t>(r * width + c)] / width;
    for (int64_t c = 0; c < width; ++c) {
      const double d = x[static_cast<size_t>(r * width + c)] - mean;
      var += d * d / width;
    }
    for (int64_t c = 0; c < width; ++c) {
      const double ln = (x[static_cast<size_t>(r * width + c)] - mean) /
                            std::sqrt(var + static_cast<float>(1e-5)) *
                            gamma[static_cast<size_t>(c)] +
                        beta[static_cast<size_t>(c)];
      const double g = 0.5 * ln * (1 + std::erf(ln / std::sqrt(2.0)));
      want.push_back(g / (1 + std::exp(-g)));
    }
  }
  expectNear(run(m, {{"x", {{rows, width}, std::vector<float>(x.begin(), x.end())}}}), want, 2e-5);
}

/// GELU's tanh form of `x` into `out` as torch exports gelu(approximate="tanh"): x * x * x,
/// kappa * cube, x + that, beta * sum, Tanh, 1 + t, x * (1 + t), 0.5 * that. The constants are
/// the scalars "kappa", "beta", "one" and "half"; `tag` names the inner values.
void torchTanhGelu(OnnxBuilder& b, const std::string& x, const std::string& out,
                   const std::string& tag) {
  const auto v = [&](int n) { return tag + std::to_string(n); };
  b.node("Mul", {x, x}, v(0));
  b.node("Mul", {x, v(0)}, v(1));
  b.node("Mul", {"kappa", v(1)}, v(2));
  b.node("Add", {x, v(2)}, v(3));
  b.node("Mul", {"beta", v(3)}, v(4));
  b.node("Tanh", {v(4)}, v(5));
  b.node("Add", {"one", v(5)}, v(6));
  b.node("Mul", {x, v(6)}, v(7));
  b.node("Mul", {"half", v(7)}, out);
}

// GELU's tanh form as torch exports gelu(approximate="tanh") (x * x * x, kappa * cube, beta * sum,
// then x * (1 + t) * 0.5) and as GPT-2's gelu_new writes it (Pow(x, 3), products with the
// constants on the right, (x * 0.5) * (1 + t)): both come out as gelu_tanh, the first fused into
// the linear layer before it, and match float64.
TEST(OnnxImport, TanhGeluInBothSpellingsIsFoundAgain) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t rows = 7, in = 12, width = 9;
  const auto w = randomValues(in * width, rng), bias = randomValues(width, rng);
  const double kBeta = std::sqrt(2.0 / M_PI), kKappa = 0.044715;
  OnnxBuilder b;
  b.input("x", {rows, in});
  b.floats("fc.weight_t", {in, width}, w);
  b.floats("fc.bias", {width}, bias);
  b.node("MatMul", {"x", "fc.weight_t"}, "h0");
  b.node("Add", {"h0", "fc.bias"}, "h");
  b.scalar("kappa", kKappa);
  b.scalar("beta", kBeta);
  b.scalar("one", 1.0);
  b.scalar("half", 0.5);
  b.scalar("three", 3.0);
  torchTanhGelu(b, "h", "g", "a");
  // GPT-2's gelu_new
  b.node("Pow", {"g", "three"}, "b0");
  b.node("Mul", {"b0", "kappa"}, "b1");
  b.node("Add", {"g", "b1"}, "b2");
  b.node("Mul", {"b2", "beta"}, "b3");
  b.node("Tanh", {"b3"}, "b4");
  b.node("Add", {"b4", "one"}, "b5");
  b.node("Mul", {"g", "half"}, "b6");
  b.node("Mul", {"b6", "b5"}, "y");
  b.output("y");
  const Model m = b.import();
  const std::string text = print(m.graph);
  size_t found = 0;
  for (size_t at = text.find("gelu_tanh("); at != std::string::npos;
       at = text.find("gelu_tanh(", at + 1)) {
    ++found;
  }
  EXPECT_EQ(found, 2u) << text;
  for (const char* op : {" tanh(", " mul(", " add("}) {
    EXPECT_EQ(text.find(op), std::string::npos) << op << "\n" << text;
  }
  const auto x = randomValues(rows * in, rng);
  const auto gelu = [](double v) { return support::elementwise::GeluTanh<double>(v); };
  std::vector<double> want;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < width; ++o) {
      double h = bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < in; ++k)
        h += x[static_cast<size_t>(r * in + k)] * w[static_cast<size_t>(k * width + o)];
      want.push_back(gelu(gelu(h)));
    }
  }
  expectNear(run(m, {{"x", {{rows, in}, std::vector<float>(x.begin(), x.end())}}}), want, 2e-5);
  // The same ops with a wrong constant are not GELU: translated one by one, Tanh included.
  OnnxBuilder off;
  off.input("x", {rows, width});
  off.scalar("kappa", 0.05);
  off.scalar("beta", kBeta);
  off.scalar("one", 1.0);
  off.scalar("half", 0.5);
  torchTanhGelu(off, "x", "y", "a");
  off.output("y");
  const std::string plain = print(off.import().graph);
  EXPECT_EQ(plain.find("gelu_tanh("), std::string::npos) << plain;
  EXPECT_NE(plain.find(" tanh("), std::string::npos) << plain;
}

// RMSNorm as exporters write it for T5/LLaMA-style models (Pow 2, ReduceMean, Add eps, Sqrt,
// Reciprocal, Mul, Mul by the weight) and a division by a computed value (x / Sqrt(1 + x^2)):
// sqrt and div on run-time values, against float64.
TEST(OnnxImport, RmsNormSqrtReciprocalAndDivisionByAComputedValueMatchFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t rows = 5, width = 12;
  const auto weight = randomValues(width, rng);
  OnnxBuilder b;
  b.input("x", {rows, width});
  b.floats("norm.weight", {width}, weight);
  b.scalar("two", 2.0);
  b.node("Pow", {"x", "two"}, "sq");
  OnnxBuilder::intsAttr(b.node("ReduceMean", {"sq"}, "ms"), "axes", {-1});
  b.scalar("eps", 1e-6);
  b.node("Add", {"ms", "eps"}, "mse");
  b.node("Sqrt", {"mse"}, "rms");
  b.node("Reciprocal", {"rms"}, "inv");
  b.node("Mul", {"x", "inv"}, "n0");
  b.node("Mul", {"n0", "norm.weight"}, "n");
  b.node("Pow", {"n", "two"}, "n2");
  b.scalar("one", 1.0);
  b.node("Add", {"n2", "one"}, "n3");
  b.node("Sqrt", {"n3"}, "n4");
  b.node("Div", {"n", "n4"}, "y");
  b.output("y");
  const Model m = b.import();
  const std::string text = print(m.graph);
  for (const char* op : {"sqrt(", "div("}) {
    EXPECT_NE(text.find(op), std::string::npos) << op << "\n" << text;
  }
  const auto x = randomValues(rows * width, rng);
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ms = 0;
    for (int64_t j = 0; j < width; ++j)
      ms += x[static_cast<size_t>(r * width + j)] * x[static_cast<size_t>(r * width + j)];
    const double inv = 1.0 / std::sqrt(static_cast<double>(static_cast<float>(ms / width)) +
                                       static_cast<double>(static_cast<float>(1e-6)));
    for (int64_t j = 0; j < width; ++j) {
      const double n = x[static_cast<size_t>(r * width + j)] * inv * weight[static_cast<size_t>(j)];
      want[static_cast<size_t>(r * width + j)] = n / std::sqrt(n * n + 1.0);
    }
  }
  expectNear(run(m, {{"x", {{rows, width}, std::vector<float>(x.begin(), x.end())}}}), want);
}

// Conv with asymmetric pads (as exporters write "same" padding for even kernels) and MaxPool with
// asymmetric pads and ceil_mode, against float64 loops over the padded input.
TEST(OnnxImport, AsymmetricPadsInConvAndMaxPoolMatchFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t c = 2, h = 5, w = 6, o = 3, kh = 2, kw = 3;
  const Dims convPads = {0, 1, 1, 0};  // top, left, bottom, right
  const Dims poolPads = {1, 0, 0, 0};  // W: 5 wide unpadded, ceil_mode's third window
  const auto weight = randomValues(o * c * kh * kw, rng);
  OnnxBuilder b;
  b.input("x", {1, c, h, w});
  b.floats("conv.weight", {o, c, kh, kw}, weight);
  OnnxBuilder::intsAttr(b.node("Conv", {"x", "conv.weight"}, "y"), "pads", convPads);
  onnx::NodeProto* pool = b.node("MaxPool", {"y"}, "z");
  OnnxBuilder::intsAttr(pool, "kernel_shape", {2, 2});
  OnnxBuilder::intsAttr(pool, "strides", {2, 2});
  OnnxBuilder::intsAttr(pool, "pads", poolPads);
  OnnxBuilder::intAttr(pool, "ceil_mode", 1);
  b.output("z");
  const Model m = b.import();
  const std::string text = print(m.graph);
  EXPECT_NE(text.find("padding=[0, 1, 1, 0]"), std::string::npos) << text;
  EXPECT_NE(text.find("max_pool2d("), std::string::npos) << text;

  const auto x = randomValues(c * h * w, rng);
  // Conv: output (h + 0 + 1 - 2 + 1) x (w + 1 + 0 - 3 + 1) = 5 x 5.
  const int64_t ho = h + convPads[0] + convPads[2] - kh + 1,
                wo = w + convPads[1] + convPads[3] - kw + 1;
  std::vector<double> y(static_cast<size_t>(o * ho * wo), 0.0);
  for (int64_t oc = 0; oc < o; ++oc) {
    for (int64_t i = 0; i < ho; ++i) {
      for (int64_t j = 0; j < wo; ++j) {
        double sum = 0;
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t r = 0; r < kh; ++r) {
            for (int64_t s = 0; s < kw; ++s) {
              const int64_t xi = i + r - convPads[0], xj = j + s - convPads[1];
              if (xi < 0 || xi >= h || xj < 0 || xj >= w) continue;
              sum += weight[static_cast<size_t>(((oc * c + ci) * kh + r) * kw + s)] *
                     x[static_cast<size_t>((ci * h + xi) * w + xj)];
            }
          }
        }
        y[static_cast<size_t>((oc * ho + i) * wo + j)] = sum;
      }
    }
  }
  // MaxPool 2x2 stride 2 on 5x5 with pad top 1 and ceil_mode: 3 x 3 (2 windows along W
  // without ceil_mode; its third starts at column 4, inside the input).
  const int64_t po = 3;
  std::vector<double> want;
  for (int64_t oc = 0; oc < o; ++oc) {
    for (int64_t i = 0; i < po; ++i) {
      for (int64_t j = 0; j < po; ++j) {
        double best = -HUGE_VAL;
        for (int64_t r = 0; r < 2; ++r) {
          for (int64_t s = 0; s < 2; ++s) {
            const int64_t yi = 2 * i + r - poolPads[0], yj = 2 * j + s - poolPads[1];
            if (yi < 0 || yi >= ho || yj < 0 || yj >= wo) continue;
            best = std::max(best, y[static_cast<size_t>((oc * ho + yi) * wo + yj)]);
          }
        }
        want.push_back(best);
      }
    }
  }
  expectNear(run(m, {{"x", {{1, c, h, w}, std::vector<float>(x.begin(), x.end())}}}), want);
}

// GPT-2's causal mask as torch exports it: Where(a constant lower-triangular mask, the run-time
// scores, a large negative constant), then Softmax; against float64.
TEST(OnnxImport, CausalMaskWhereOverRunTimeScoresMatchesFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t heads = 2, t = 5;
  std::vector<int64_t> mask;
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < t; ++j) mask.push_back(j <= i ? 1 : 0);
  }
  OnnxBuilder b;
  b.input("scores", {1, heads, t, t});
  b.ints("mask", {1, 1, t, t}, mask);
  OnnxBuilder::intAttr(b.node("Cast", {"mask"}, "cond"), "to", onnx::TensorProto_DataType_BOOL);
  b.scalar("fill", -3.4028234663852886e38);
  b.node("Where", {"cond", "scores", "fill"}, "masked");
  OnnxBuilder::intAttr(b.node("Softmax", {"masked"}, "y"), "axis", -1);
  b.output("y");
  const Model m = b.import();
  const std::string text = print(m.graph);
  EXPECT_NE(text.find("where("), std::string::npos) << text;
  const auto x = randomValues(heads * t * t, rng);
  std::vector<double> want(x.size());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < t; ++i) {
      const double* row = x.data() + (h * t + i) * t;
      double top = -HUGE_VAL, sum = 0;
      for (int64_t j = 0; j <= i; ++j) top = std::max(top, row[j]);
      for (int64_t j = 0; j <= i; ++j) sum += std::exp(row[j] - top);
      for (int64_t j = 0; j < t; ++j) {
        want[static_cast<size_t>((h * t + i) * t + j)] = j <= i ? std::exp(row[j] - top) / sum : 0;
      }
    }
  }
  expectNear(run(m, {{"scores", {{1, heads, t, t}, std::vector<float>(x.begin(), x.end())}}}),
             want);
}

// Sigmoid, Exp, Sin and Cos of run-time values (a squeeze-and-excitation gate, a written-out
// softmax, rotary angles computed from positions), each an operator of its own.
TEST(OnnxImport, SigmoidExpSinAndCosOfRunTimeValuesMatchFloat64) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  OnnxBuilder b;
  b.input("x", {3, 4});
  b.node("Sigmoid", {"x"}, "s");
  b.node("Exp", {"x"}, "e");
  b.node("Sin", {"x"}, "sn");
  b.node("Cos", {"x"}, "cs");
  b.node("Mul", {"x", "s"}, "gated");  // stays a product: the gate is an output too (not silu)
  b.node("Add", {"gated", "e"}, "t1");
  b.node("Mul", {"sn", "cs"}, "t2");
  b.node("Add", {"t1", "t2"}, "y");
  b.output("y");
  b.output("s");
  const Model m = b.import();
  const std::string text = print(m.graph);
  for (const char* op : {"exp(", "sin(", "cos(", "sigmoid("}) {
    EXPECT_NE(text.find(op), std::string::npos) << op << " in\n" << text;
  }
  std::vector<double> x = randomValues(12, rng);
  for (double& v : x) v = static_cast<float>(v * 6);  // beyond +-pi, where sin and cos turn
  std::vector<double> want, gate;
  for (double v : x) {
    const double sig = 1 / (1 + std::exp(-v));
    gate.push_back(sig);
    want.push_back(v * sig + std::exp(v) + std::sin(v) * std::cos(v));
  }
  const std::map<std::string, DenseValue<float>> in{
      {"x", {{3, 4}, std::vector<float>(x.begin(), x.end())}}};
  expectNear(run(m, in, 0), want);
  expectNear(run(m, in, 1), gate);
}

// Comparisons and logic of run-time values (an attention mask built from the ids at run time):
// booleans are 1 or 0; NaN compares false (so LessOrEqual is not Not(Greater)); Cast to bool makes
// nonzero and NaN true; Where takes the computed condition.
TEST(OnnxImport, ComparisonsAndLogicOfRunTimeValuesMatchTorchsBooleans) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t n = 24;
  OnnxBuilder b;
  b.input("a", {2, n / 2});
  b.input("c", {2, n / 2});
  b.scalar("zero", 0.0);
  b.node("Greater", {"a", "c"}, "gt");
  b.node("LessOrEqual", {"a", "c"}, "le");
  b.node("GreaterOrEqual", {"a", "c"}, "ge");
  b.node("Equal", {"a", "zero"}, "isZero");
  b.node("Not", {"isZero"}, "nonZero");
  b.node("Less", {"a", "c"}, "lt");
  b.node("And", {"lt", "nonZero"}, "both");
  b.node("Or", {"gt", "isZero"}, "either");
  b.node("Xor", {"le", "ge"}, "notEqual");
  OnnxBuilder::intAttr(b.node("Cast", {"a"}, "truthy"), "to", onnx::TensorProto_DataType_BOOL);
  b.node("Where", {"both", "a", "c"}, "picked");
  int k = 0;
  for (const char* out : {"gt", "le", "ge", "both", "either", "notEqual", "truthy", "picked"}) {
    std::string f = "f" + std::to_string(k++);
    OnnxBuilder::intAttr(b.node("Cast", {out}, f), "to", onnx::TensorProto_DataType_FLOAT);
    b.output(f);
  }
  const Model m = b.import();
  std::vector<double> a = randomValues(n, rng), c = randomValues(n, rng);
  // Ties, zeros and NaN in places: a == c at 0..3, a == 0 at 4..6, a NaN at 7, c NaN at 8.
  for (size_t i = 0; i < 4; ++i) c[i] = a[i];
  for (size_t i = 4; i < 7; ++i) a[i] = 0;
  a[7] = std::nan("");
  c[8] = std::nan("");
  std::vector<std::vector<double>> want(8);
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    const double x = a[i], y = c[i];
    const bool lt = x < y, both = lt && x != 0;
    const std::vector<double> row = {double(x > y),           double(x <= y),
                                     double(x >= y),          double(both),
                                     double(x > y || x == 0), double((x <= y) != (x >= y)),
                                     double(x != 0),          both ? x : y};
    for (size_t o = 0; o < row.size(); ++o) want[o].push_back(row[o]);
  }
  const std::map<std::string, DenseValue<float>> in{
      {"a", {{2, n / 2}, std::vector<float>(a.begin(), a.end())}},
      {"c", {{2, n / 2}, std::vector<float>(c.begin(), c.end())}}};
  for (size_t o = 0; o < want.size(); ++o) {
    SCOPED_TRACE("output " + std::to_string(o));
    const std::vector<float> got = run(m, in, o);
    ASSERT_EQ(got.size(), want[o].size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[o][i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
      } else {
        EXPECT_EQ(got[i], static_cast<float>(want[o][i])) << "element " << i;
      }
    }
  }
}

// AveragePool with asymmetric pads and ceil_mode, counting the padding or not, against float64
// loops written as torch defines the window's count (positions inside the padded input; a
// ceil_mode window's part past the end padding never counts).
TEST(OnnxImport, AveragePoolWithPadsAndCeilModeCountsAsTorchDoes) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int64_t c = 2, h = 5, w = 6, k = 3, stride = 2;
  const Dims pads = {1, 0, 0, 0};  // top, left, bottom, right: the last windows pass both ends
  OnnxBuilder b;
  b.input("x", {1, c, h, w});
  for (int include = 0; include < 2; ++include) {
    const std::string out = include ? "with_pad" : "without_pad";
    onnx::NodeProto* pool = b.node("AveragePool", {"x"}, out);
    OnnxBuilder::intsAttr(pool, "kernel_shape", {k, k});
    OnnxBuilder::intsAttr(pool, "strides", {stride, stride});
    OnnxBuilder::intsAttr(pool, "pads", pads);
    OnnxBuilder::intAttr(pool, "ceil_mode", 1);
    if (include) OnnxBuilder::intAttr(pool, "count_include_pad", 1);
    b.output(out);
  }
  const Model m = b.import();
  const std::string text = print(m.graph);
  EXPECT_NE(text.find("avg_pool2d("), std::string::npos) << text;
  const auto x = randomValues(c * h * w, rng);
  auto extent = [&](int64_t size, int64_t lo, int64_t hi) {
    int64_t n = (size + lo + hi - k + stride - 1) / stride + 1;
    if ((n - 1) * stride >= size + lo) --n;
    return n;
  };
  const int64_t ho = extent(h, pads[0], pads[2]), wo = extent(w, pads[1], pads[3]);
  EXPECT_EQ(ho, 3);
  EXPECT_EQ(wo, 3);  // ceil_mode: 3 windows (2 without), the last one column past the edge
  for (int include = 0; include < 2; ++include) {
    std::vector<double> want;
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < ho; ++i) {
        for (int64_t j = 0; j < wo; ++j) {
          double sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t r = 0; r < k; ++r) {
            for (int64_t s2 = 0; s2 < k; ++s2) {
              const int64_t xi = i * stride - pads[0] + r, xj = j * stride - pads[1] + s2;
              if (xi < h + pads[2] && xj < w + pads[3]) ++padded;  // within the padded input
              if (xi < 0 || xi >= h || xj < 0 || xj >= w) continue;
              sum += x[static_cast<size_t>((ch * h + xi) * w + xj)];
              ++inside;
            }
          }
          want.push_back(sum / static_cast<double>(include ? padded : inside));
        }
      }
    }
    expectNear(run(m, {{"x", {{1, c, h, w}, std::vector<float>(x.begin(), x.end())}}},
                   static_cast<size_t>(include)),
               want);
  }
}

// A model is translated operator by operator and stops at the first one the graph IR cannot run
// (Atan), naming the node.
TEST(OnnxImport, UnsupportedOperatorNamesTheNode) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.node("Atan", {"x"}, "y", "/block/Atan");
  b.output("y");
  try {
    b.import();
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    EXPECT_NE(std::string(e.what()).find("test.onnx: node 0 \"/block/Atan\" (Atan)"),
              std::string::npos)
        << e.what();
  }
}

TEST(OnnxImport, BadModelsGetErrorsNamingTheCulprit) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  // Not a protobuf message.
  EXPECT_NE(message([] {
              importOnnxBytes("\x0a\xff\xff\xff", "junk.onnx", "");
            }).find("junk.onnx: not an ONNX model"),
            std::string::npos);
  // A symbolic extent without a shape.
  OnnxBuilder sym;
  sym.input("x", {-1, 4});
  sym.node("Relu", {"x"}, "y");
  sym.output("y");
  EXPECT_NE(message([&] { sym.import(); }).find("input \"x\": extent 0 is symbolic (\"batch\")"),
            std::string::npos);
  // A shape for an input the model does not have; a shape that contradicts a fixed extent.
  OnnxImportOptions wrong;
  wrong.inputShapes = {{"x", {2, 4}}, {"z", {1}}};
  EXPECT_NE(message([&] { sym.import(wrong); }).find("no input \"z\""), std::string::npos);
  wrong.inputShapes = {{"x", {2, 5}}};
  EXPECT_NE(message([&] { sym.import(wrong); }).find("extent 1 is 4 in the model, 5 as given"),
            std::string::npos);
  // A power by a run-time exponent.
  OnnxBuilder pow;
  pow.input("x", {2, 2});
  pow.node("Pow", {"x", "x"}, "y", "/Pow");
  pow.output("y");
  EXPECT_NE(message([&] { pow.import(); }).find("(Pow): Pow by a tensor exponent"),
            std::string::npos);
  // Pooling attributes: AveragePool with dilations, a 3-entry pads, auto_pad SAME, a 3-D input.
  auto poolError = [&](const std::string& op, const Dims& in,
                       const std::function<void(onnx::NodeProto*)>& attrs) {
    OnnxBuilder b;
    b.input("x", in);
    onnx::NodeProto* n = b.node(op, {"x"}, "y", "/" + op);
    OnnxBuilder::intsAttr(n, "kernel_shape", {2, 2});
    attrs(n);
    b.output("y");
    return message([&] { b.import(); });
  };
  EXPECT_NE(poolError("AveragePool", {1, 2, 6, 6},
                      [](onnx::NodeProto* n) {
                        OnnxBuilder::intsAttr(n, "dilations", {2, 2});
                      })
                .find("(AveragePool): average pooling with dilations"),
            std::string::npos);
  EXPECT_NE(poolError("AveragePool", {1, 2, 6, 6},
                      [](onnx::NodeProto* n) {
                        OnnxBuilder::intsAttr(n, "pads", {1, 1, 1});
                      })
                .find("pads must have 4 entries for 2-D pooling"),
            std::string::npos);
  EXPECT_NE(poolError("MaxPool", {1, 2, 6, 6},
                      [](onnx::NodeProto* n) {
                        auto* a = n->add_attribute();
                        a->set_name("auto_pad");
                        a->set_type(onnx::AttributeProto_AttributeType_STRING);
                        a->set_s("SAME_UPPER");
                      })
                .find("auto_pad SAME_UPPER (give explicit pads)"),
            std::string::npos);
  EXPECT_NE(poolError("AveragePool", {2, 6, 6}, [](onnx::NodeProto*) {})
                .find("only 2-D average pooling (a 4-D input) runs"),
            std::string::npos);
  // An operator of another domain.
  OnnxBuilder custom;
  custom.input("x", {2, 2});
  custom.node("FusedThing", {"x"}, "y", "/F")->set_domain("com.microsoft");
  custom.output("y");
  EXPECT_NE(message([&] { custom.import(); }).find("domain \"com.microsoft\""), std::string::npos);
  // Initializer data that does not match its dims.
  OnnxBuilder data;
  data.input("x", {2, 2});
  data.floats("w", {2, 3}, {1, 2, 3});
  data.node("MatMul", {"x", "w"}, "y");
  data.output("y");
  EXPECT_NE(message([&] { data.import(); }).find("initializer \"w\": 3 values in float_data for 6"),
            std::string::npos);
  // External data outside the model's folder.
  OnnxBuilder ext;
  ext.input("x", {2, 2});
  ext.floats("w", {2, 2}, {});
  auto* t = ext.proto().mutable_graph()->mutable_initializer(0);
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("../../etc/passwd");
  ext.node("MatMul", {"x", "w"}, "y");
  ext.output("y");
  EXPECT_NE(
      message([&] { ext.import(); }).find("must be a relative path inside the model's folder"),
      std::string::npos);
  // An output computed from constants only.
  OnnxBuilder constant;
  constant.input("x", {2});
  constant.scalar("c", 1.0);
  constant.output("c");
  EXPECT_NE(message([&] { constant.import(); }).find("output \"c\" does not depend on the inputs"),
            std::string::npos);
}

// Initializers stored beside the model (external data, as exporters write models over 2 GB) are
// read from the model's folder; from a file, errors name the path.
TEST(OnnxImport, ExternalDataIsReadBesideTheModel) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sf_onnx_" + std::to_string(freshSeed()));
  std::filesystem::create_directories(dir);
  const std::vector<float> w = {1.5f, -2.0f, 0.25f, 4.0f, 3.0f, -1.0f};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    const std::string pad(16, '\0');
    f.write(pad.data(), 16);
    f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * 4));
  }
  OnnxBuilder b;
  b.input("x", {1, 2});
  b.floats("w", {2, 3}, {});
  auto* t = b.proto().mutable_graph()->mutable_initializer(0);
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                             {"offset", "16"},
                             {"length", "24"}}) {
    auto* kv = t->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  }
  b.node("MatMul", {"x", "w"}, "y");
  b.output("y");
  const std::string path = (dir / "model.onnx").string();
  {
    std::ofstream f(path, std::ios::binary);
    f << b.bytes();
  }
  const Model m = importOnnx(path);
  expectNear(run(m, {{"x", {{1, 2}, {2.0f, 1.0f}}}}),
             {2 * 1.5 + 4.0, 2 * -2.0 + 3.0, 2 * 0.25 - 1.0});
  std::filesystem::remove(dir / "weights.bin");
  try {
    importOnnx(path);
    FAIL() << "imported without its data";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights.bin"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
  try {
    importOnnx(path);
    FAIL() << "imported a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": cannot open"), std::string::npos) << e.what();
  }
}

// Folding on constants: Range, Slice with negative steps and INT64 bounds, Where/Equal/Expand
// (the exporters' token-type idiom), ConstantOfShape; the folded values reach the graph as one
// parameter, checked through a run.
TEST(OnnxImport, ConstantFoldingOfExporterIdioms) {
  OnnxBuilder b;
  b.input("x", {2, 4});
  b.ints("start", {}, {0});
  b.ints("limit", {}, {8});
  b.ints("delta", {}, {1});
  b.node("Range", {"start", "limit", "delta"}, "r");  // 0..7
  b.ints("s_start", {1}, {-1});
  b.ints("s_end", {1}, {std::numeric_limits<int64_t>::min()});
  b.ints("s_axes", {1}, {0});
  b.ints("s_steps", {1}, {-2});
  b.node("Slice", {"r", "s_start", "s_end", "s_axes", "s_steps"}, "odd");  // 7 5 3 1
  b.ints("shape24", {2}, {2, 4});
  b.ints("one4", {2}, {1, 4});
  b.node("Reshape", {"odd", "one4"}, "odd2");
  b.node("Expand", {"odd2", "shape24"}, "grid");  // rows 7 5 3 1, twice
  b.ints("three", {}, {3});
  b.node("Equal", {"grid", "three"}, "is3");
  b.node("ConstantOfShape", {"shape24"}, "zeros");
  OnnxBuilder::intAttr(b.node("Cast",
                              {
                                  "grid",
                              },
                              "gridf"),
                       "to", onnx::TensorProto_DataType_FLOAT);
  b.node("Where", {"is3", "zeros", "gridf"}, "masked");  // 7 5 0 1
  b.node("Add", {"x", "masked"}, "y");
  b.output("y");
  const Model m = b.import();
  EXPECT_EQ(m.params.size(), 1u) << print(m.graph);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  expectNear(run(m, {{"x", {{2, 4}, x}}}), {8, 7, 3, 5, 12, 11, 7, 9});
}

// An embedding table written as a Constant node (not an initializer): the ids input stays an
// integer input and the Gather becomes an embedding.
TEST(OnnxImport, EmbeddingTableAsAConstantNode) {
  OnnxBuilder b;
  b.input("ids", {2, 3}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto* table = b.node("Constant", {}, "table");
  auto* a = table->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_dims(5);
  a->mutable_t()->add_dims(4);
  for (int v = 0; v < 20; ++v) a->mutable_t()->add_float_data(static_cast<float>(v) * 0.5f);
  b.node("Gather", {"table", "ids"}, "y");
  b.output("y");
  const Model m = b.import();
  const std::string text = print(m.graph);
  EXPECT_NE(text.find("input \"ids\" : i64[2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("embedding("), std::string::npos) << text;
  const std::vector<float> ids = {4, 0, 2, 2, 1, 3};
  std::vector<double> want;
  for (float id : ids) {
    for (int c = 0; c < 4; ++c) want.push_back((static_cast<int>(id) * 4 + c) * 0.5);
  }
  expectNear(run(m, {{"ids", {{2, 3}, ids}}}), want);
}

// The bundled torch exports (data/onnx: a tiny BertModel at opsets 13 and 17, an MLP with GELU, a
// CNN with batch norm, a CNN with max pooling, an RMSNorm block, a CNN with average pooling, a
// sigmoid gate and a mask computed at run time; the same kinds of models against
// torch itself are in tests/python/test_onnx.py)
// import with the exporter's idioms resolved, and the executor agrees with the float64 evaluator
// of the imported graph on random inputs.
TEST(OnnxImport, BundledTorchExportsRunLikeTheFloat64Reference) {
  const uint64_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string dir = std::string(SPARSEFLOW_DATA_DIR) + "/onnx/";
  for (const char* file :
       {"bert_tiny_opset13.onnx", "bert_tiny_opset17.onnx", "mlp_gelu.onnx", "cnn_bn.onnx",
        "cnn_maxpool.onnx", "rms_norm.onnx", "cnn_gated_mask.onnx"}) {
    SCOPED_TRACE(file);
    const Model m = importOnnx(dir + file);
    const std::string text = print(m.graph);
    if (std::string(file).rfind("bert", 0) == 0) {
      size_t norms = 0;
      for (size_t at = text.find("layer_norm("); at != std::string::npos;
           at = text.find("layer_norm(", at + 1)) {
        ++norms;
      }
      EXPECT_EQ(norms, 3u) << text;  // embeddings, attention output, output
      EXPECT_NE(text.find("gelu("), std::string::npos) << text;
      EXPECT_NE(text.find("embedding("), std::string::npos) << text;
      EXPECT_NE(text.find("batch_matmul("), std::string::npos) << text;
    }
    if (std::string(file) == "cnn_maxpool.onnx") {
      EXPECT_NE(text.find("max_pool2d("), std::string::npos) << text;
    }
    if (std::string(file) == "cnn_gated_mask.onnx") {
      for (const char* op : {"avg_pool2d(", "sigmoid(", "exp(", "sin(", "cos(", "equal(", "not(",
                             "greater(", "less(", "where("}) {
        EXPECT_NE(text.find(op), std::string::npos) << op << " in\n" << text;
      }
    }
    if (std::string(file) == "rms_norm.onnx") {
      EXPECT_NE(text.find("sqrt("), std::string::npos) << text;
      EXPECT_NE(text.find("div("), std::string::npos) << text;
    }
    std::map<std::string, DenseValue<float>> in32;
    std::map<std::string, DenseValue<double>> in64;
    for (const Node& n : m.graph.nodes()) {
      if (n.op != OpKind::kInput) continue;
      DenseValue<double> v{n.type.shape, {}};
      int64_t count = 1;
      for (int64_t d : n.type.shape) count *= d;
      if (n.type.dtype == DType::kI64) {  // token ids below the tiny vocabulary's 40
        for (int64_t i = 0; i < count; ++i) v.data.push_back(static_cast<double>(rng() % 40));
      } else if (n.name == "attention_mask") {
        for (int64_t i = 0; i < count; ++i) v.data.push_back(i % 5 == 4 ? 0.0 : 1.0);
      } else {
        v.data = randomValues(count, rng);
      }
      in32[n.name] = {v.shape, std::vector<float>(v.data.begin(), v.data.end())};
      in64[n.name] = std::move(v);
    }
    const auto want = evaluateModel<double>(m, in64);
    SpecializeOptions options;
    options.measure = false;
    const auto got = Executor::build(m, options).run(in32);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) expectNear(got[o].data, want[o].data, 1e-4);
  }
}

}  // namespace
}  // namespace sparseflow::graph
