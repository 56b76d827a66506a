// The graph parser: one definition or output list per line, read with LineCursor; the graph is
// built through its checked factories, so every graph it returns is well-typed. The grammar has
// no recursion (lists nest at most two deep), so no input can exhaust the stack.
#include "graph/parser.h"

#include <map>

#include "graph/parser_cursor.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

/// Longest line and most values the parser accepts (far above real models).
constexpr size_t kMaxLineBytes = 1 << 20;
constexpr size_t kMaxListEntries = 1 << 16;

std::vector<int64_t> intList(LineCursor& c, const char* what) {
  std::vector<int64_t> out;
  c.expect('[', (std::string("to open ") + what).c_str());
  if (c.consume(']')) return out;
  do {
    if (out.size() >= kMaxListEntries) c.fail(std::string(what) + " is too long");
    out.push_back(c.integer(what));
  } while (c.consume(','));
  c.expect(']', (std::string("to close ") + what).c_str());
  return out;
}

IndexSet indexSet(LineCursor& c) {
  IndexSet s;
  c.expect('[', "to open an index set");
  if (c.consume(']')) return s;
  size_t entries = 0;
  do {
    if (++entries > kMaxListEntries) c.fail("index set is too long");
    const size_t col = c.column();
    const int64_t a = c.integer("an index");
    int64_t b = a;
    if (c.consume("..")) b = c.integer("the last index of a range");
    if (a < 0 || b < a || b >= kMaxElements) {
      SF_FAIL(kParseError) << c.where(col) << "bad index or range " << a << ".." << b;
    }
    s.addRange(a, b + 1);
  } while (c.consume(','));
  c.expect(']', "to close an index set");
  return s;
}

BlockStructure blockStructure(LineCursor& c) {
  BlockStructure b;
  b.shape = intList(c, "a block shape");
  c.expect(':', "between the block shape and the zero blocks");
  c.expect('[', "to open the zero blocks");
  if (!c.consume(']')) {
    do {
      if (b.zeroBlocks.size() >= kMaxListEntries) c.fail("too many zero blocks");
      b.zeroBlocks.push_back(intList(c, "a block coordinate"));
    } while (c.consume(','));
    c.expect(']', "to close the zero blocks");
  }
  return b;
}

void tesaEntry(LineCursor& c, Tesa& t) {
  const size_t col = c.column();
  const std::string key = c.name("an attribute (zero, dead, nm, block, ge, mask)");
  auto duplicate = [&](bool present) {
    if (present) SF_FAIL(kParseError) << c.where(col) << "attribute '" << key << "' given twice";
  };
  if (key == "zero" || key == "dead") {
    SliceSets& sets = key == "zero" ? t.zero : t.dead;
    c.expect('@', "before the dimension");
    const int64_t d = c.integer("a dimension");
    duplicate(sets.count(d) != 0);
    c.expect('=', "after the dimension");
    IndexSet s = indexSet(c);
    if (s.empty()) SF_FAIL(kParseError) << c.where(col) << "empty " << key << " set";
    sets[d] = std::move(s);
    return;
  }
  c.expect('=', ("after '" + key + "'").c_str());
  if (key == "nm") {
    duplicate(t.nm.has_value());
    NmStructure nm;
    nm.n = c.integer("n of n:m");
    c.expect(':', "between n and m");
    nm.m = c.integer("m of n:m");
    c.expect('@', "before the n:m axis");
    nm.axis = c.integer("the n:m axis");
    t.nm = nm;
  } else if (key == "block") {
    duplicate(t.block.has_value());
    t.block = blockStructure(c);
  } else if (key == "ge") {
    duplicate(t.lowerBound.has_value());
    t.lowerBound = c.number("a lower bound");
  } else if (key == "mask") {
    duplicate(t.mask.has_value());
    const std::string bits = c.quoted("a mask");
    std::vector<bool> mask;
    for (char b : bits) {
      if ((b != '0' && b != '1') || mask.size() >= static_cast<size_t>(kMaxMaskElements)) {
        SF_FAIL(kParseError) << c.where(col) << "a mask is at most " << kMaxMaskElements
                             << " digits 0 or 1";
      }
      mask.push_back(b == '1');
    }
    t.mask = std::move(mask);
  } else {
    SF_FAIL(kParseError) << c.where(col) << "unknown attribute '" << key << "'";
  }
}

Tesa tesaBraces(LineCursor& c) {
  Tesa t;
  if (!c.consume('{')) return t;
  if (c.consume('}')) return t;
  do {
    tesaEntry(c, t);
  } while (c.consume(','));
  c.expect('}', "to close the attributes");
  return t;
}

TensorType tensorType(LineCursor& c) {
  TensorType t;
  const size_t col = c.column();
  const std::string dtype = c.name("a dtype");
  try {
    t.dtype = parseDType(dtype);
  } catch (const Error& e) {
    SF_FAIL(kParseError) << c.where(col) << e.what();
  }
  t.shape = intList(c, "a shape");
  return t;
}

class GraphReader {
 public:
  explicit GraphReader(const std::string& source) : source_(source) {}

  void line(std::string_view text, int number) {
    LineCursor c(text, number, source_);
    if (c.atEnd() || c.peek() == '#') return;
    if (c.consume('%')) {
      definition(c);
    } else {
      const std::string word = c.name("'%N = ...' or 'output'");
      if (word != "output") {
        SF_FAIL(kParseError) << c.where(1) << "expected '%N = ...' or 'output', found '" << word
                             << "'";
      }
      do {
        graph_.addOutput(operand(c));
      } while (c.consume(','));
    }
    if (!c.atEnd()) c.fail("unexpected text after the end of the statement");
  }

  Graph take() { return std::move(graph_); }

 private:
  ValueId operand(LineCursor& c) {
    const size_t col = c.column();
    c.expect('%', "before a value id");
    const int64_t id = c.integer("a value id");
    auto it = ids_.find(id);
    if (it == ids_.end()) SF_FAIL(kParseError) << c.where(col) << "%" << id << " is not defined";
    return it->second;
  }

  void definition(LineCursor& c) {
    const size_t idCol = c.column();
    const int64_t id = c.integer("a value id");
    if (ids_.count(id) != 0)
      SF_FAIL(kParseError) << c.where(idCol) << "%" << id << " is defined twice";
    c.expect('=', "after the value id");
    const size_t opCol = c.column();
    const std::string word = c.name("an operator");
    const std::optional<OpKind> op = opNamed(word);
    if (!op) SF_FAIL(kParseError) << c.where(opCol) << "unknown operator '" << word << "'";
    ValueId v = -1;
    if (isSource(*op)) {
      const std::string name = c.quoted("a name");
      c.expect(':', "before the type");
      const size_t typeCol = c.column();
      const TensorType type = tensorType(c);
      v = build(c, typeCol, [&] {
        return *op == OpKind::kInput ? graph_.addInput(name, type) : graph_.addParam(name, type);
      });
    } else {
      std::vector<ValueId> inputs;
      OpAttrs attrs;
      c.expect('(', "after the operator");
      if (!c.consume(')')) {
        do {
          if (c.peek() == '%') {
            if (inputs.size() >= kMaxListEntries) c.fail("too many operands");
            inputs.push_back(operand(c));
            continue;
          }
          const size_t attrCol = c.column();
          const std::string key = c.name("an operand or an attribute");
          c.expect('=', "after the attribute name");
          if (attrs.count(key) != 0)
            SF_FAIL(kParseError) << c.where(attrCol) << "attribute '" << key << "' given twice";
          if (c.peek() == '[') {
            attrs[key] = intList(c, "an attribute list");
          } else if (c.nextNumberIsReal()) {
            attrs[key] = c.number("an attribute value");
          } else {
            attrs[key] = c.integer("an attribute value");
          }
        } while (c.consume(','));
        c.expect(')', "to close the operands");
      }
      v = build(c, opCol, [&] { return graph_.addOp(*op, inputs, attrs); });
      if (c.consume(':')) {
        const size_t typeCol = c.column();
        const TensorType written = tensorType(c);
        if (!(written == graph_.node(v).type)) {
          SF_FAIL(kInvalidArgument) << c.where(typeCol) << "written type " << toString(written)
                                    << " is not the inferred " << toString(graph_.node(v).type);
        }
      }
    }
    const size_t tesaCol = c.column();
    const Tesa tesa = tesaBraces(c);
    if (!tesa.empty())
      build(c, tesaCol, [&] {
        graph_.setTesa(v, tesa);
        return v;
      });
    ids_[id] = v;
  }

  /// Runs a builder call; its errors get the position `col`.
  template <typename F>
  ValueId build(LineCursor& c, size_t col, F&& f) {
    try {
      return f();
    } catch (const Error& e) {
      throw Error(e.code(), c.where(col) + e.what());
    }
  }

  const std::string& source_;
  Graph graph_;
  std::map<int64_t, ValueId> ids_;
};

}  // namespace

Graph parseGraph(std::string_view text, const std::string& source) {
  GraphReader reader(source);
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    SF_ICHECK(number < (1 << 30)) << "too many lines";
    ++number;
    if (line.size() > kMaxLineBytes) {
      SF_FAIL(kParseError) << source << ":" << number << ":1: line longer than " << kMaxLineBytes
                           << " bytes";
    }
    reader.line(line, number);
    start = end + 1;
  }
  return reader.take();
}

}  // namespace sparseflow::graph
