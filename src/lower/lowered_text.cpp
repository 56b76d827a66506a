// A lowered kernel as text and back (lowered_text.h): header lines of `keyword value`, then the
// phases' loop IR (ir/printer.cpp, ir/parser.cpp).
#include "lower/lowered_text.h"

#include <sstream>
#include <vector>

#include "ir/equal.h"
#include "ir/parser.h"
#include "lower/assembly.h"
#include "support/check.h"

namespace sparseflow::lower {
namespace {

const char* kindName(ArrayBinding::Kind kind) {
  switch (kind) {
    case ArrayBinding::Kind::kValues: return "values";
    case ArrayBinding::Kind::kPos: return "pos";
    case ArrayBinding::Kind::kCrd: return "crd";
    case ArrayBinding::Kind::kMeta: return "meta";
    case ArrayBinding::Kind::kSlots: return "slots";
  }
  return "?";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out = "(";
  for (size_t k = 0; k < names.size(); ++k) out += (k ? ", " : "") + names[k];
  return out + ")";
}

/// Notes are free text on one line: newlines and backslashes escaped.
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescaped(const std::string& text) {
  std::string out;
  for (size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\\' && k + 1 < text.size()) {
      out += text[k + 1] == 'n' ? '\n' : text[k + 1];
      ++k;
    } else {
      out += text[k];
    }
  }
  return out;
}

/// Reads one header line's words, reporting errors at `source:line`.
class HeaderLine {
 public:
  HeaderLine(std::string text, std::string where)
      : text_(std::move(text)), where_(std::move(where)) {}

  bool startsWith(const std::string& keyword) {
    if (text_.compare(pos_, keyword.size(), keyword) != 0) return false;
    const size_t end = pos_ + keyword.size();
    if (end < text_.size() && text_[end] != ' ') return false;
    pos_ = std::min(text_.size(), end + 1);
    return true;
  }
  std::string word() {
    const size_t end = std::min(text_.find_first_of(" :=(),", pos_), text_.size());
    SF_USER_CHECK(end > pos_) << where_ << ": expected a name at column " << pos_ + 1 << " of '"
                              << text_ << "'";
    std::string w = text_.substr(pos_, end - pos_);
    pos_ = end;
    skipSpaces();
    return w;
  }
  void expect(const std::string& text) {
    SF_USER_CHECK(text_.compare(pos_, text.size(), text) == 0)
        << where_ << ": expected '" << text << "' at column " << pos_ + 1 << " of '" << text_
        << "'";
    pos_ += text.size();
    skipSpaces();
  }
  bool accept(const std::string& text) {
    if (text_.compare(pos_, text.size(), text) != 0) return false;
    pos_ += text.size();
    skipSpaces();
    return true;
  }
  int64_t integer() {
    const std::string w = word();
    const size_t digits = w.rfind('-', 0) == 0 ? 1 : 0;
    SF_USER_CHECK(w.size() > digits && w.size() <= digits + 9 &&
                  w.find_first_not_of("0123456789", digits) == std::string::npos)
        << where_ << ": expected an integer, found '" << w << "'";
    return std::stoll(w);
  }
  ir::ScalarType type() {
    const std::string w = word();
    ir::ScalarType t;
    SF_USER_CHECK(ir::scalarTypeNamed(w, &t)) << where_ << ": '" << w << "' is not a type";
    return t;
  }
  /// `(a, b, c)`.
  std::vector<std::string> names() {
    expect("(");
    std::vector<std::string> out;
    while (!accept(")")) {
      if (!out.empty()) expect(",");
      out.push_back(word());
    }
    return out;
  }
  std::string rest() {
    std::string r = text_.substr(pos_);
    pos_ = text_.size();
    return r;
  }
  void end() {
    SF_USER_CHECK(pos_ >= text_.size())
        << where_ << ": unexpected '" << text_.substr(pos_) << "' at the end of the line";
  }
  const std::string& where() const { return where_; }

 private:
  void skipSpaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  std::string text_;
  std::string where_;
  size_t pos_ = 0;
};

}  // namespace

std::string printKernel(const LoweredKernel& kernel) {
  std::ostringstream out;
  for (const TensorArg& t : kernel.tensors) {
    out << "tensor " << t.name << ": " << ir::cppTypeName(t.valueType) << " rank " << t.rank
        << (t.densify ? " densify" : "") << " format " << t.format.toString() << "\n";
  }
  for (const ArrayBinding& a : kernel.arrays) {
    out << "array " << a.array.name << ": " << ir::cppTypeName(a.array.element) << " = "
        << kernel.tensors.at(static_cast<size_t>(a.tensor)).name << " " << kindName(a.kind);
    if (a.kind != ArrayBinding::Kind::kValues) out << " " << a.level;
    out << "\n";
  }
  out << "index " << joined(kernel.indexVars) << "\n";
  if (!kernel.params.empty()) out << "param " << joined(kernel.params) << "\n";
  out << "compute " << ir::cppTypeName(kernel.computeType) << "\n";
  if (!kernel.outputPatternFrom.empty()) out << "pattern from " << kernel.outputPatternFrom << "\n";
  if (kernel.accumulate) out << "accumulate\n";
  if (kernel.assembledLevel >= 0) out << "assembled level " << kernel.assembledLevel << "\n";
  if (kernel.listOutput) out << "list output\n";
  if (kernel.hashCapacity) out << "hash capacity\n";
  for (const std::string& order : kernel.loopOrders) out << "loop order " << order << "\n";
  for (const LoweredKernel::TemporaryArray& t : kernel.temporaries) {
    out << "temporary " << t.values.name << ": " << ir::cppTypeName(t.values.element) << " over "
        << joined(t.indices) << "\n";
  }
  out << "output indices " << joined(kernel.outputIndices) << "\n";
  if (kernel.convertOutputTo)
    out << "convert output to " << kernel.convertOutputTo->toString() << "\n";
  for (const std::string& note : kernel.notes) out << "note " << escaped(note) << "\n";
  if (kernel.symbolic) out << "symbolic:\n" << ir::toString(kernel.symbolic);
  out << "body:\n" << ir::toString(kernel.body);
  return out.str();
}

LoweredKernel parseKernel(const std::string& text, const std::string& source) {
  LoweredKernel k;
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  // The phases: from "symbolic:" / "body:" to the next marker or the end.
  size_t symbolicAt = lines.size(), bodyAt = lines.size();
  for (size_t n = 0; n < lines.size(); ++n) {
    if (lines[n] == "symbolic:" && symbolicAt == lines.size()) symbolicAt = n;
    if (lines[n] == "body:") {
      bodyAt = n;
      break;
    }
  }
  SF_USER_CHECK(bodyAt < lines.size())
      << source << ": no 'body:' line (a lowered kernel is its header, then 'body:' and its loops)";
  const size_t headerEnd = std::min(symbolicAt, bodyAt);
  std::map<std::string, int32_t> tensorIndex;
  for (size_t n = 0; n < headerEnd; ++n) {
    if (lines[n].empty() || lines[n][0] == '#') continue;
    HeaderLine h(lines[n], source + ":" + std::to_string(n + 1));
    if (h.startsWith("tensor")) {
      TensorArg t;
      t.name = h.word();
      h.expect(":");
      t.valueType = h.type();
      h.expect("rank");
      t.rank = static_cast<int32_t>(h.integer());
      t.densify = h.accept("densify");
      h.expect("format");
      SF_USER_CHECK(tensorIndex.count(t.name) == 0)
          << h.where() << ": a second tensor line for '" << t.name << "'";
      t.format = Format::parse(h.rest(), t.rank);
      tensorIndex[t.name] = static_cast<int32_t>(k.tensors.size());
      k.tensors.push_back(std::move(t));
    } else if (h.startsWith("array")) {
      ArrayBinding a;
      a.array.name = h.word();
      for (const ArrayBinding& earlier : k.arrays) {
        SF_USER_CHECK(earlier.array.name != a.array.name)
            << h.where() << ": a second array line for '" << a.array.name << "'";
      }
      h.expect(":");
      a.array.element = h.type();
      h.expect("=");
      const std::string tensor = h.word();
      SF_USER_CHECK(tensorIndex.count(tensor) != 0)
          << h.where() << ": array " << a.array.name << " of '" << tensor
          << "', which no tensor line before it names";
      a.tensor = tensorIndex[tensor];
      const std::string kind = h.word();
      bool known = false;
      for (ArrayBinding::Kind c :
           {ArrayBinding::Kind::kValues, ArrayBinding::Kind::kPos, ArrayBinding::Kind::kCrd,
            ArrayBinding::Kind::kMeta, ArrayBinding::Kind::kSlots}) {
        if (kind == kindName(c)) a.kind = c, known = true;
      }
      SF_USER_CHECK(known) << h.where() << ": '" << kind
                           << "' is not an array kind (values, pos, crd, meta, slots)";
      if (a.kind != ArrayBinding::Kind::kValues) a.level = static_cast<int32_t>(h.integer());
      h.end();
      k.arrays.push_back(std::move(a));
    } else if (h.startsWith("index")) {
      k.indexVars = h.names();
      h.end();
    } else if (h.startsWith("param")) {
      k.params = h.names();
      h.end();
    } else if (h.startsWith("compute")) {
      k.computeType = h.type();
      h.end();
    } else if (h.startsWith("pattern")) {
      h.expect("from");
      k.outputPatternFrom = h.word();
      h.end();
    } else if (h.startsWith("accumulate")) {
      k.accumulate = true;
      h.end();
    } else if (h.startsWith("assembled")) {
      h.expect("level");
      k.assembledLevel = static_cast<int32_t>(h.integer());
      h.end();
    } else if (h.startsWith("list")) {
      h.expect("output");
      k.listOutput = true;
      h.end();
    } else if (h.startsWith("hash")) {
      h.expect("capacity");
      k.hashCapacity = true;
      h.end();
    } else if (h.startsWith("loop")) {
      h.expect("order");
      k.loopOrders.push_back(h.rest());
    } else if (h.startsWith("temporary")) {
      LoweredKernel::TemporaryArray t;
      t.values.name = h.word();
      h.expect(":");
      t.values.element = h.type();
      h.expect("over");
      t.indices = h.names();
      h.end();
      k.temporaries.push_back(std::move(t));
    } else if (h.startsWith("output")) {
      h.expect("indices");
      k.outputIndices = h.names();
      h.end();
    } else if (h.startsWith("convert")) {
      h.expect("output");
      h.expect("to");
      SF_USER_CHECK(!k.tensors.empty()) << h.where() << ": 'convert output to' before the tensors";
      k.convertOutputTo = Format::parse(h.rest(), k.tensors.front().rank);
    } else if (h.startsWith("note")) {
      k.notes.push_back(unescaped(h.rest()));
    } else {
      SF_FAIL(kInvalidArgument) << h.where() << ": unknown header line '" << lines[n]
                                << "' (tensor, array, index, param, compute, pattern from, "
                                   "accumulate, assembled level, list output, hash capacity, "
                                   "loop order, "
                                   "temporary, output indices, convert output to, note)";
    }
  }
  SF_USER_CHECK(!k.tensors.empty()) << source << ": no tensor lines (the output comes first)";

  // What the entry point declares (codegen/c/emit_cpp.cpp): extents, the hash capacity, the
  // tensors' arrays (fixed(k)'s slot counts are scalars) and the parameters.
  ir::ParseEnvironment env;
  env.arrays["sf_params"] = ir::ScalarType::kF64;
  for (const std::string& index : k.indexVars)
    env.scalars[extentName(index)] = ir::ScalarType::kI64;
  if (k.hashCapacity) env.scalars[kHashCapacity] = ir::ScalarType::kI64;
  for (const ArrayBinding& a : k.arrays) {
    if (a.kind == ArrayBinding::Kind::kSlots) {
      env.scalars[a.array.name] = ir::ScalarType::kI64;
    } else {
      env.arrays[a.array.name] = a.array.element;
    }
  }
  auto phase = [&](size_t from, size_t to) {
    std::string text;
    for (size_t n = from; n < to; ++n) text += lines[n] + "\n";
    return ir::parseStmt(text, env, source, static_cast<int>(from) + 1);
  };
  if (symbolicAt < bodyAt) k.symbolic = phase(symbolicAt + 1, bodyAt);
  k.body = phase(bodyAt + 1, lines.size());
  return k;
}

bool sameKernel(const LoweredKernel& a, const LoweredKernel& b) {
  auto sameTensors = [](const std::vector<TensorArg>& x, const std::vector<TensorArg>& y) {
    if (x.size() != y.size()) return false;
    for (size_t n = 0; n < x.size(); ++n) {
      if (x[n].name != y[n].name || x[n].format != y[n].format || x[n].rank != y[n].rank ||
          x[n].valueType != y[n].valueType || x[n].densify != y[n].densify)
        return false;
    }
    return true;
  };
  auto sameArrays = [](const std::vector<ArrayBinding>& x, const std::vector<ArrayBinding>& y) {
    if (x.size() != y.size()) return false;
    for (size_t n = 0; n < x.size(); ++n) {
      if (x[n].array != y[n].array || x[n].tensor != y[n].tensor || x[n].kind != y[n].kind ||
          (x[n].kind != ArrayBinding::Kind::kValues && x[n].level != y[n].level))
        return false;
    }
    return true;
  };
  auto sameTemporaries = [](const std::vector<LoweredKernel::TemporaryArray>& x,
                            const std::vector<LoweredKernel::TemporaryArray>& y) {
    if (x.size() != y.size()) return false;
    for (size_t n = 0; n < x.size(); ++n) {
      if (x[n].values != y[n].values || x[n].indices != y[n].indices) return false;
    }
    return true;
  };
  return sameTensors(a.tensors, b.tensors) && sameArrays(a.arrays, b.arrays) &&
         a.indexVars == b.indexVars && a.params == b.params && a.computeType == b.computeType &&
         a.outputPatternFrom == b.outputPatternFrom && a.accumulate == b.accumulate &&
         a.assembledLevel == b.assembledLevel && a.listOutput == b.listOutput &&
         a.hashCapacity == b.hashCapacity && a.loopOrders == b.loopOrders &&
         sameTemporaries(a.temporaries, b.temporaries) && a.outputIndices == b.outputIndices &&
         a.notes == b.notes && a.convertOutputTo == b.convertOutputTo &&
         (a.symbolic == nullptr) == (b.symbolic == nullptr) &&
         (a.symbolic == nullptr || ir::equal(a.symbolic, b.symbolic)) && ir::equal(a.body, b.body);
}

}  // namespace sparseflow::lower
