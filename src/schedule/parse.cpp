// The schedule text: `name(arg, ...)` directives separated by `;`. Errors give the column.
#include <cctype>
#include <map>

#include "schedule/schedule.h"
#include "support/check.h"

namespace sparseflow::schedule {
namespace {

struct Arity {
  Primitive primitive;
  size_t minNames, maxNames;
  bool number;  ///< a trailing integer argument
};

const std::map<std::string, Arity>& grammar() {
  static const std::map<std::string, Arity> g = {
      {"reorder", {Primitive::kReorder, 2, 16, false}},
      {"split", {Primitive::kSplit, 3, 3, true}},
      {"fuse", {Primitive::kFuse, 3, 3, false}},
      {"parallel", {Primitive::kParallel, 1, 2, false}},
      {"vectorize", {Primitive::kVectorize, 1, 1, false}},
      {"unroll", {Primitive::kUnroll, 1, 1, true}},
      {"precompute", {Primitive::kPrecompute, 2, 2, false}},
      {"bind", {Primitive::kBind, 2, 2, false}},
      {"sparse_reorder", {Primitive::kSparseReorder, 3, 17, false}},
      {"sparse_fuse", {Primitive::kSparseFuse, 3, 17, false}},
      {"decompose", {Primitive::kDecompose, 1, 1, true}},
  };
  return g;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Schedule parse() {
    Schedule schedule;
    std::vector<Directive> list;
    skipSpace();
    while (pos_ < text_.size()) {
      list.push_back(directive());
      skipSpace();
      if (pos_ < text_.size()) {
        expect(';', "';' between directives");
        skipSpace();
      }
    }
    for (const Directive& d : list) {
      Schedule built;
      add(built, d);    // the builder's checks (a positive factor...)
      schedule.add(d);  // and the directive as parsed, with its column
    }
    return schedule;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    const std::string found =
        pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end";
    SF_FAIL(kParseError) << "schedule, column " << pos_ + 1 << ": expected " << what << ", found "
                         << found << "\n  " << text_ << "\n  " << std::string(pos_, ' ') << "^";
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c, const std::string& what) {
    skipSpace();
    if (pos_ >= text_.size() || text_[pos_] != c) fail(what);
    ++pos_;
  }
  bool isIdentStart(char c) const {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  }
  std::string identifier(const std::string& what) {
    skipSpace();
    if (pos_ >= text_.size() || !isIdentStart(text_[pos_])) fail(what);
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  int64_t number(const std::string& what) {
    skipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || pos_ - start > 12) {
      pos_ = start;
      fail(what);
    }
    const int64_t v = std::stoll(text_.substr(start, pos_ - start));
    if (v <= 0) {
      pos_ = start;
      fail(what + " (positive)");
    }
    return v;
  }

  Directive directive() {
    skipSpace();
    const size_t start = pos_;
    const std::string name =
        identifier("a primitive (reorder, split, fuse, parallel, vectorize, unroll)");
    auto it = grammar().find(name);
    if (it == grammar().end()) {
      pos_ = start;
      fail(
          "a primitive (reorder, split, fuse, parallel, vectorize, unroll, precompute, bind, "
          "sparse_reorder, sparse_fuse, decompose), not "
          "'" +
          name + "'");
    }
    const Arity& arity = it->second;
    Directive d{arity.primitive, {}};
    d.column = static_cast<int>(start) + 1;
    expect('(', "'(' after " + name);
    while (true) {
      skipSpace();
      const bool wantNumber = arity.number && d.loops.size() == arity.minNames;
      if (wantNumber) {
        d.factor = number("a factor for " + name);
      } else {
        const size_t at = pos_;
        d.loops.push_back(identifier("a loop name in " + name));
        // Only a GPU axis (bind's second argument: blockIdx.x) has a dot; loop names are C++
        // identifiers in the generated code.
        const bool gpuAxis = arity.primitive == Primitive::kBind && d.loops.size() == 2;
        if (!gpuAxis && d.loops.back().find('.') != std::string::npos) {
          pos_ = at + d.loops.back().find('.');
          fail("a loop name (letters, digits and _) in " + name);
        }
      }
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        const bool numberNext = arity.number && d.factor == 0 && d.loops.size() == arity.minNames;
        if (wantNumber || (d.loops.size() >= arity.maxNames && !numberNext))
          fail("')' to close " + name);
        continue;
      }
      expect(')', "',' or ')' in " + name);
      break;
    }
    if (d.loops.size() < arity.minNames || (arity.number && d.factor == 0)) {
      --pos_;
      fail("more arguments: " + name + " takes " + std::to_string(arity.minNames) +
           " loop name(s)" + (arity.number ? " and a factor" : ""));
    }
    if (d.primitive == Primitive::kParallel && d.loops.size() == 2) {
      if (d.loops[1] != "atomic") {
        pos_ = start;
        fail("parallel(loop) or parallel(loop, atomic)");
      }
      d.loops.pop_back();
      d.atomic = true;
    }
    return d;
  }

  static void add(Schedule& s, const Directive& d) {
    switch (d.primitive) {
      case Primitive::kReorder: s.reorder(d.loops); break;
      case Primitive::kSplit: s.split(d.loops[0], d.loops[1], d.loops[2], d.factor); break;
      case Primitive::kFuse: s.fuse(d.loops[0], d.loops[1], d.loops[2]); break;
      case Primitive::kParallel: s.parallel(d.loops[0], d.atomic); break;
      case Primitive::kVectorize: s.vectorize(d.loops[0]); break;
      case Primitive::kUnroll: s.unroll(d.loops[0], d.factor); break;
      case Primitive::kPrecompute: s.precompute(d.loops[0], d.loops[1]); break;
      case Primitive::kBind: s.bind(d.loops[0], d.loops[1]); break;
      case Primitive::kSparseReorder:
        s.sparseReorder(d.loops[0], std::vector<std::string>(d.loops.begin() + 1, d.loops.end()));
        break;
      case Primitive::kSparseFuse:
        s.sparseFuse(d.loops[0], std::vector<std::string>(d.loops.begin() + 1, d.loops.end()));
        break;
      case Primitive::kDecompose: s.decompose(d.loops[0], d.factor); break;
    }
  }
};

}  // namespace
}  // namespace sparseflow::schedule

namespace sparseflow {

Schedule Schedule::parse(const std::string& text) {
  return schedule::Parser(text).parse();
}

}  // namespace sparseflow
