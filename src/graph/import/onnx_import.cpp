// The ONNX importer's driver: reads the model, makes graph inputs (integer inputs read only as
// embedding indices stay integers; other inputs are f32), keeps the nodes that reach an output,
// folds what constants determine, translates the rest (onnx_translate.cpp) and marks the outputs.
#include "graph/import/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "graph/import/onnx_context.h"
#include "graph/import/onnx_fold.h"
#include "graph/import/onnx_node.h"
#include "graph/import/onnx_patterns.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

using onnx_import::Constant;
using onnx_import::FusedKind;
using onnx_import::Fusion;
using onnx_import::ImportContext;

bool defaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

int64_t defaultOpset(const onnx::ModelProto& m, const std::string& source) {
  for (const auto& o : m.opset_import()) {
    if (defaultDomain(o.domain())) return o.version();
  }
  SF_FAIL(kInvalidArgument) << source << ": no opset of the default ONNX domain is imported";
}

/// Names of the values some output depends on (nodes are in topological order in ONNX).
std::set<std::string> liveValues(const onnx::GraphProto& g) {
  std::set<std::string> live;
  for (const auto& o : g.output()) live.insert(o.name());
  for (int i = g.node_size(); i-- > 0;) {
    const onnx::NodeProto& n = g.node(i);
    bool used = false;
    for (const std::string& o : n.output()) used = used || live.count(o);
    if (!used) continue;
    for (const std::string& in : n.input()) {
      if (!in.empty()) live.insert(in);
    }
  }
  return live;
}

bool nodeIsLive(const onnx::NodeProto& n, const std::set<std::string>& live) {
  for (const std::string& o : n.output()) {
    if (live.count(o)) return true;
  }
  return false;
}

DType inputDType(int elemType, const std::string& where) {
  switch (elemType) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_DOUBLE:
    case onnx::TensorProto_DataType_FLOAT16: return DType::kF32;
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT16:
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL: return DType::kI64;
    default:
      SF_FAIL(kNotSupported) << where << ": element type " << elemType
                             << " (numbers and booleans are taken)";
  }
}

/// The input's shape: its fixed extents, the symbolic ones from `options` (checked).
std::vector<int64_t> inputShape(const onnx::ValueInfoProto& input, const std::string& where,
                                const OnnxImportOptions& options) {
  const auto& t = input.type().tensor_type();
  auto given = options.inputShapes.find(input.name());
  if (!t.has_shape()) {
    SF_USER_CHECK(given != options.inputShapes.end())
        << where << ": the model gives no shape; pass one (--shape " << input.name() << "=...)";
    return given->second;
  }
  std::vector<int64_t> shape;
  for (int d = 0; d < t.shape().dim_size(); ++d) {
    const auto& dim = t.shape().dim(d);
    if (given != options.inputShapes.end()) {
      SF_USER_CHECK(static_cast<int>(given->second.size()) == t.shape().dim_size())
          << where << ": the shape given has " << given->second.size()
          << " extents, the model's input " << t.shape().dim_size();
      const int64_t g = given->second[static_cast<size_t>(d)];
      SF_USER_CHECK(!dim.has_dim_value() || dim.dim_value() == g)
          << where << ": extent " << d << " is " << dim.dim_value() << " in the model, " << g
          << " as given";
      shape.push_back(g);
    } else {
      SF_USER_CHECK(dim.has_dim_value())
          << where << ": extent " << d << " is symbolic (\"" << dim.dim_param()
          << "\"); pass the input's shape (--shape " << input.name() << "=...)";
      shape.push_back(dim.dim_value());
    }
  }
  for (int64_t e : shape) SF_USER_CHECK(e >= 1) << where << ": extents must be positive";
  return shape;
}

/// True when every live reader of `name` takes it as Gather's indices into a constant table (or
/// reads only its shape).
bool onlyEmbeddingIndices(const onnx::GraphProto& g, const std::string& name,
                          const std::set<std::string>& live, const std::set<std::string>& tables) {
  bool read = false;
  for (const onnx::NodeProto& n : g.node()) {
    if (!nodeIsLive(n, live) || n.op_type() == "Shape" || n.op_type() == "Size") continue;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i) != name) continue;
      if (n.op_type() != "Gather" || i != 1 || !tables.count(n.input(0))) return false;
      read = true;
    }
  }
  return read;
}

ValueId emitFusion(ImportContext& ctx, const Fusion& f, const std::string& where) {
  const ValueId x = ctx.value(f.x, where);
  switch (f.kind) {
    case FusedKind::kGelu: return ctx.op(OpKind::kGelu, {x}, where);
    case FusedKind::kGeluTanh: return ctx.op(OpKind::kGeluTanh, {x}, where);
    case FusedKind::kSilu: return ctx.op(OpKind::kSilu, {x}, where);
    case FusedKind::kLayerNorm: {
      const int64_t rank = ctx.type(x).rank();
      const int64_t axis = f.axis < 0 ? f.axis + rank : f.axis;
      std::vector<ValueId> ops = {x};
      if (!f.scale.empty()) {
        ops.push_back(ctx.value(f.scale, where));
        ops.push_back(ctx.value(f.shift, where));
      }
      return ctx.op(OpKind::kLayerNorm, ops, where, {{"axis", axis}, {"eps", f.eps}});
    }
  }
  SF_FAIL(kInternal) << where << ": unknown fusion";
}

}  // namespace

Model importOnnxBytes(const std::string& bytes, const std::string& source,
                      const std::string& baseDir, const OnnxImportOptions& options) {
  onnx::ModelProto m;
  SF_CHECK_CODE(m.ParseFromString(bytes), ErrorCode::kParseError)
      << source << ": not an ONNX model (the protobuf message does not parse)";
  SF_USER_CHECK(m.has_graph()) << source << ": the model has no graph";
  const onnx::GraphProto& g = m.graph();
  ImportContext ctx(source, defaultOpset(m, source));

  std::set<std::string> inits;
  for (const onnx::TensorProto& t : g.initializer()) {
    const std::string where = source + ": initializer \"" + t.name() + "\"";
    ctx.setConstant(t.name(), onnx_import::readTensorProto(t, where, baseDir));
    ctx.setInitializerName(t.name());
    inits.insert(t.name());
  }
  const std::set<std::string> live = liveValues(g);
  // Constant nodes are known before the walk: the patterns' scalars (eps, sqrt 2, 0.5) and
  // embedding tables written as Constant nodes.
  std::map<std::string, Constant> early;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (n.op_type() != "Constant" || n.output_size() != 1 || !defaultDomain(n.domain())) continue;
    try {
      auto c = onnx_import::foldNode(n, {}, ctx.opset(), "");
      if (c) early.emplace(n.output(0), std::move(*c));
    } catch (const Error&) {  // reported where the walk meets the node
    }
  }
  std::set<std::string> tables = inits;  // constants a Gather of ids may read
  for (const auto& [name, c] : early) tables.insert(name);
  for (const onnx::ValueInfoProto& input : g.input()) {
    if (inits.count(input.name())) continue;  // older exporters list initializers as inputs
    const std::string where = source + ": input \"" + input.name() + "\"";
    SF_CHECK_CODE(input.type().has_tensor_type(), ErrorCode::kNotSupported)
        << where << ": not a tensor";
    DType dtype = inputDType(input.type().tensor_type().elem_type(), where);
    if (dtype == DType::kI64 && !onlyEmbeddingIndices(g, input.name(), live, tables)) {
      dtype = DType::kF32;  // integers read as numbers (an attention mask): f32 holds them exactly
      ctx.integerValued().insert(input.name());
    }
    ctx.input(input.name(), TensorType{dtype, inputShape(input, where, options)});
  }
  for (const auto& [name, shape] : options.inputShapes) {
    SF_USER_CHECK(ctx.isValue(name)) << source << ": the model has no input \"" << name << "\"";
  }

  const auto constantOf = [&](const std::string& name) -> const Constant* {
    if (const Constant* c = ctx.constantOrNull(name)) return c;
    auto it = early.find(name);
    return it == early.end() ? nullptr : &it->second;
  };
  const onnx_import::Fusions fusions = onnx_import::findFusions(g, constantOf, ctx.opset());

  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (!nodeIsLive(n, live) || fusions.absorbed.count(i)) continue;
    const std::string where = onnx_import::describeNode(source, i, n);
    SF_CHECK_CODE(defaultDomain(n.domain()), ErrorCode::kNotSupported)
        << where << ": operators of domain \"" << n.domain() << "\" are not taken";
    SF_USER_CHECK(n.output_size() >= 1) << where << ": no outputs";
    for (int o = 1; o < n.output_size(); ++o) {
      SF_CHECK_CODE(n.output(o).empty() || !live.count(n.output(o)), ErrorCode::kNotSupported)
          << where << ": its output " << o << " (\"" << n.output(o) << "\") is read; only the "
          << "first output of an operator is taken";
    }
    if (auto f = fusions.at.find(i); f != fusions.at.end()) {
      ctx.setValue(n.output(0), emitFusion(ctx, f->second, where));
      continue;
    }
    bool allConstant = true;
    std::vector<const Constant*> operands;
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        operands.push_back(nullptr);
        continue;
      }
      const Constant* c = ctx.constantOrNull(in);
      SF_USER_CHECK(c || ctx.isValue(in))
          << where << ": operand \"" << in << "\" is not defined before this node";
      allConstant = allConstant && c;
      operands.push_back(c);
    }
    if ((n.op_type() == "Shape" || n.op_type() == "Size") && n.input_size() == 1 &&
        ctx.isValue(n.input(0))) {  // a run-time value's shape is known at import
      Constant probe;               // Shape and Size read only the shape
      probe.shape = ctx.type(ctx.value(n.input(0), where)).shape;
      probe.integral = true;
      operands = {&probe};
      auto c = onnx_import::foldNode(n, operands, ctx.opset(), where);
      ctx.setConstant(n.output(0), std::move(*c));
      continue;
    }
    if (allConstant) {
      auto c = onnx_import::foldNode(n, operands, ctx.opset(), where);
      SF_CHECK_CODE(c.has_value(), ErrorCode::kNotSupported)
          << where << ": not an operator the importer computes on constants";
      ctx.setConstant(n.output(0), std::move(*c));
      continue;
    }
    onnx_import::translateNode(ctx, n, where);
  }

  for (const onnx::ValueInfoProto& out : g.output()) {
    SF_CHECK_CODE(ctx.isValue(out.name()), ErrorCode::kNotSupported)
        << source << ": output \"" << out.name()
        << "\" does not depend on the inputs (a constant); outputs must be computed";
    ctx.graph().addOutput(ctx.value(out.name(), source));
  }
  Model model;
  model.graph = std::move(ctx.graph());
  model.params = std::move(ctx.params());
  checkModel(model);
  return model;
}

Model importOnnx(const std::string& path, const OnnxImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  SF_USER_CHECK(in) << path << ": cannot open";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return importOnnxBytes(bytes.str(), path, dir.empty() ? "." : dir, options);
}

}  // namespace sparseflow::graph
