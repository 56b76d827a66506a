// Printing the graph's text form: values, attributes, TeSA annotations, outputs.
#include "graph/printer.h"

#include <charconv>
#include <cstdio>

namespace sparseflow::graph {
namespace {

std::string joinInts(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

/// A source's name between double quotes; quote, backslash and bytes outside printable ASCII as
/// \xNN, which the parser reads back.
std::string quoteName(const std::string& name) {
  std::string s = "\"";
  for (unsigned char c : name) {
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      s += buf;
    } else {
      s += static_cast<char>(c);
    }
  }
  return s + "\"";
}

/// The shortest text that reads back to the same double.
std::string printDouble(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

void printSlices(std::string& out, bool& first, const SliceSets& sets, const char* kind) {
  for (const auto& [d, s] : sets) {
    out += first ? "" : ", ";
    first = false;
    out += std::string(kind) + "@" + std::to_string(d) + "=" + printIndexSet(s);
  }
}

}  // namespace

std::string printIndexSet(const IndexSet& set) {
  std::string s = "[";
  bool first = true;
  for (const auto& [b, e] : set.ranges()) {
    s += first ? "" : ", ";
    first = false;
    if (e - b >= 3) {
      s += std::to_string(b) + ".." + std::to_string(e - 1);
    } else {
      for (int64_t i = b; i < e; ++i) s += (i > b ? ", " : "") + std::to_string(i);
    }
  }
  return s + "]";
}

std::string printTesa(const Tesa& tesa) {
  if (tesa.empty()) return "";
  std::string out = "{";
  bool first = true;
  auto sep = [&]() {
    out += first ? "" : ", ";
    first = false;
  };
  printSlices(out, first, tesa.zero, "zero");
  printSlices(out, first, tesa.dead, "dead");
  if (tesa.nm) {
    sep();
    out += "nm=" + std::to_string(tesa.nm->n) + ":" + std::to_string(tesa.nm->m) + "@" +
           std::to_string(tesa.nm->axis);
  }
  if (tesa.block) {
    sep();
    out += "block=" + joinInts(tesa.block->shape) + ":[";
    for (size_t i = 0; i < tesa.block->zeroBlocks.size(); ++i) {
      out += (i > 0 ? ", " : "") + joinInts(tesa.block->zeroBlocks[i]);
    }
    out += "]";
  }
  if (tesa.lowerBound) {
    sep();
    out += "ge=" + printDouble(*tesa.lowerBound);
  }
  if (tesa.mask) {
    sep();
    out += "mask=\"";
    for (bool b : *tesa.mask) out += b ? '1' : '0';
    out += "\"";
  }
  return out + "}";
}

std::string printNode(const Graph& graph, ValueId value) {
  const Node& n = graph.node(value);
  std::string s = "%" + std::to_string(value) + " = " + opName(n.op);
  if (isSource(n.op)) {
    s += " " + quoteName(n.name);
  } else {
    s += "(";
    bool first = true;
    for (ValueId in : n.inputs) {
      s += (first ? "%" : ", %") + std::to_string(in);
      first = false;
    }
    for (const auto& [key, attr] : n.attrs) {
      s += (first ? "" : ", ") + key + "=";
      first = false;
      if (const auto* i = std::get_if<int64_t>(&attr)) {
        s += std::to_string(*i);
      } else if (const auto* d = std::get_if<double>(&attr)) {
        std::string text = printDouble(*d);
        if (text.find_first_of(".e") == std::string::npos) text += ".0";  // not an integer
        s += text;
      } else {
        s += joinInts(std::get<std::vector<int64_t>>(attr));
      }
    }
    s += ")";
  }
  s += " : " + toString(n.type);
  const std::string tesa = printTesa(n.tesa);
  if (!tesa.empty()) s += " " + tesa;
  return s;
}

std::string print(const Graph& graph) {
  std::string s;
  for (ValueId v = 0; v < graph.size(); ++v) s += printNode(graph, v) + "\n";
  if (!graph.outputs().empty()) {
    s += "output";
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
      s += (i > 0 ? ", %" : " %") + std::to_string(graph.outputs()[i]);
    }
    s += "\n";
  }
  return s;
}

}  // namespace sparseflow::graph
