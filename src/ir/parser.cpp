// The loop IR's text form read back (parser.h): statements by indentation (two spaces a level, as
// printer.cpp writes them), expressions by recursive descent over one line's tokens. Binary
// operators are always parenthesized in the text, so there is no precedence to resolve. Names
// get their types from the declarations in scope (let, for, allocate) or the environment.
#include "ir/parser.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "support/check.h"

namespace sparseflow::ir {

bool scalarTypeNamed(const std::string& name, ScalarType* type) {
  for (ScalarType t : {ScalarType::kBool, ScalarType::kI32, ScalarType::kI64, ScalarType::kF32,
                       ScalarType::kF64, ScalarType::kU8}) {
    if (name == cppTypeName(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

namespace {

/// Throws kInvalidArgument for `line` at `column`: `SF_IR_PARSE_FAIL(line, 3) << "expected...";`.
#define SF_IR_PARSE_FAIL(line, column) \
  SF_FAIL(kInvalidArgument) << source_ << ":" << (line).number << ":" << (column) << ": "

struct Token {
  enum Kind { kName, kNumber, kPunct, kEnd } kind = kEnd;
  std::string text;
  size_t column = 0;
};

/// One line split into names, numbers and punctuation (the longest operator first).
std::vector<Token> tokenize(const std::string& line, size_t offset) {
  static const char* const kOperators[] = {"max=", "+=", "<=", "==", "!=", "&&", "||", ">>",
                                           "+",    "-",  "*",  "/",  "%",  "<",  "&",  "=",
                                           "(",    ")",  "[",  "]",  ",",  ":"};
  std::vector<Token> out;
  size_t p = 0;
  while (p < line.size()) {
    const char c = line[p];
    if (c == ' ') {
      ++p;
      continue;
    }
    Token t;
    t.column = offset + p + 1;
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      size_t e = p;
      while (e < line.size() &&
             (std::isalnum(static_cast<unsigned char>(line[e])) != 0 || line[e] == '.' ||
              ((line[e] == '-' || line[e] == '+') && (line[e - 1] == 'e' || line[e - 1] == 'E')))) {
        ++e;
      }
      t.kind = Token::kNumber;
      t.text = line.substr(p, e - p);
      p = e;
    } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      size_t e = p;
      while (e < line.size() &&
             (std::isalnum(static_cast<unsigned char>(line[e])) != 0 || line[e] == '_')) {
        ++e;
      }
      t.kind = Token::kName;
      t.text = line.substr(p, e - p);
      // `max=` is the max update, not the name max.
      if (t.text == "max" && e < line.size() && line[e] == '=' &&
          (e + 1 >= line.size() || line[e + 1] != '=')) {
        t.kind = Token::kPunct;
        t.text = "max=";
        ++e;
      }
      p = e;
    } else {
      t.kind = Token::kPunct;
      for (const char* op : kOperators) {
        if (line.compare(p, std::strlen(op), op) == 0) {
          t.text = op;
          break;
        }
      }
      if (t.text.empty()) t.text = std::string(1, c);  // reported where it is not expected
      p += t.text.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.column = offset + line.size() + 1;
  out.push_back(end);
  return out;
}

struct Line {
  int number = 0;
  int indent = 0;       ///< levels (two spaces each)
  std::string content;  ///< without the indentation
};

/// The names visible at a point: a stack of scopes over the environment.
class Scopes {
 public:
  explicit Scopes(const ParseEnvironment& env) : env_(env) {}
  void push() { frames_.emplace_back(); }
  void pop() { frames_.pop_back(); }
  void declareScalar(const std::string& name, ScalarType t) { frames_.back().scalars[name] = t; }
  void declareArray(const std::string& name, ScalarType t) { frames_.back().arrays[name] = t; }
  const ScalarType* scalar(const std::string& name) const { return find(name, false); }
  const ScalarType* array(const std::string& name) const { return find(name, true); }

 private:
  struct Frame {
    std::map<std::string, ScalarType> scalars, arrays;
  };
  const ScalarType* find(const std::string& name, bool array) const {
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
      const auto& names = array ? f->arrays : f->scalars;
      if (auto it = names.find(name); it != names.end()) return &it->second;
    }
    const auto& names = array ? env_.arrays : env_.scalars;
    auto it = names.find(name);
    return it == names.end() ? nullptr : &it->second;
  }
  const ParseEnvironment& env_;
  std::vector<Frame> frames_;
};

class Parser {
 public:
  Parser(std::vector<Line> lines, const ParseEnvironment& env, std::string source)
      : lines_(std::move(lines)), scopes_(env), source_(std::move(source)) {}

  Stmt parseAll() {
    scopes_.push();
    std::vector<Stmt> body = parseBlock(0);
    if (next_ < lines_.size()) {
      SF_IR_PARSE_FAIL(lines_[next_], 1) << "indented by " << 2 * lines_[next_].indent
                                         << " spaces where a statement at 0 was expected";
    }
    return block(std::move(body));
  }

 private:
  // ---- statements ----

  /// The statements at indentation `indent` from the current line on, in a scope the caller
  /// opened.
  std::vector<Stmt> parseBlock(int indent) {
    std::vector<Stmt> out;
    while (next_ < lines_.size() && lines_[next_].indent == indent) {
      out.push_back(parseStatement(indent));
    }
    return out;
  }

  /// The block indented one level below `indent`, in a scope of its own (empty when the next line
  /// is not deeper).
  Stmt nestedBlock(int indent, const std::function<void()>& declare = {}) {
    if (indent + 1 > kMaxDepth) {
      SF_IR_PARSE_FAIL(*line_, 1) << "statements nested deeper than " << kMaxDepth << " levels";
    }
    scopes_.push();
    if (declare) declare();
    std::vector<Stmt> body;
    if (next_ < lines_.size() && lines_[next_].indent > indent) {
      if (lines_[next_].indent != indent + 1) {
        SF_IR_PARSE_FAIL(lines_[next_], 1) << "indented by " << 2 * lines_[next_].indent
                                           << " spaces, expected " << 2 * (indent + 1);
      }
      body = parseBlock(indent + 1);
    }
    scopes_.pop();
    // One statement is the body itself (as transforms build loop and allocation bodies, and as
    // code generation looks at them); several, or a declaration, are a block.
    if (body.size() == 1 && body[0]->kind != StmtKind::kLet) return body[0];
    return block(std::move(body));
  }

  Stmt parseStatement(int indent) {
    const Line& line = lines_[next_++];
    line_ = &line;
    if (line.content.rfind("#", 0) == 0) {
      return comment(line.content.size() > 1 && line.content[1] == ' ' ? line.content.substr(2)
                                                                       : line.content.substr(1));
    }
    // A loop's label comes after its annotations, before the colon: `for ...  # label:`.
    std::string code = line.content;
    label_.reset();
    if (code.rfind("for ", 0) == 0) {
      if (const size_t hash = code.find("  # "); hash != std::string::npos) {
        std::string label = code.substr(hash + 4);
        if (label.empty() || label.back() != ':') {
          SF_IR_PARSE_FAIL(line, 2 * static_cast<size_t>(indent) + code.size())
              << "expected ':' at the end of the loop";
        }
        label.pop_back();
        label_ = label == "(no label)" ? "" : label;
        code = code.substr(0, hash) + ":";
      }
    }
    tokens_ = tokenize(code, static_cast<size_t>(2 * indent));
    pos_ = 0;
    const Token& first = peek();
    if (first.kind == Token::kName) {
      const std::string& word = first.text;
      const bool keyword =
          peek(1).kind == Token::kName || peek(1).kind == Token::kNumber ||
          (peek(1).kind == Token::kPunct && (peek(1).text == "(" || peek(1).text == "-"));
      if (word == "for" && peek(1).kind == Token::kName) return parseFor(indent);
      if (word == "while" && keyword) return parseWhile(indent);
      if (word == "if" && keyword) return parseIf(indent);
      if (word == "let" && peek(1).kind == Token::kName) return parseLet();
      if (word == "allocate" && peek(1).kind == Token::kName) return parseAllocate(indent);
      if (word == "sort" && peek(1).kind == Token::kName) return parseSort();
      if (word == "scope" && peek(1).text == ":" && peek(2).kind == Token::kEnd) {
        return nestedBlock(indent);
      }
      if (word == "else")
        SF_IR_PARSE_FAIL(*line_, first.column) << "'else' without an 'if' before it";
      return parseUpdate();
    }
    SF_IR_PARSE_FAIL(*line_, first.column) << "expected a statement, found '" << first.text << "'";
  }

  Stmt parseFor(int indent) {
    expectName("for");
    const std::string var = takeName("a loop variable");
    ScalarType varType = ScalarType::kI64;
    if (accept(":")) varType = takeType();
    expectName("in");
    expect("[");
    Expr begin = parseExpr();
    expect(",");
    Expr end = parseExpr();
    expect(")");
    LoopKind kind = LoopKind::kSerial;
    LoopAnnotations notes;
    notes.label = defaultLoopLabel(var);
    for (LoopKind k : {LoopKind::kParallel, LoopKind::kVectorized, LoopKind::kUnrolled}) {
      if (peek().kind == Token::kName && peek().text == loopKindName(k)) {
        ++pos_;
        kind = k;
      }
    }
    if (accept("(")) {
      notes.unroll = takeInteger();
      expect(")");
    }
    while (peek().kind == Token::kName) {
      const std::string word = take().text;
      if (word == "reduce") {
        notes.reduction = parenthesizedName();
      } else if (word == "atomic") {
        notes.atomicStores = true;
      } else if (word == "into") {
        notes.workspace = parenthesizedName();
      } else if (word == "critical") {
        notes.critical = true;
      } else if (word == "bind") {
        expect("(");
        notes.gpuAxis = takeName("a GPU axis");
        while (accept(".")) notes.gpuAxis += "." + takeName("a GPU axis");
        expect(")");
      } else if (word == "disjoint") {
        notes.disjointWrites = true;
      } else {
        SF_IR_PARSE_FAIL(*line_, tokens_[pos_ - 1].column)
            << "unknown loop annotation '" << word << "'";
      }
    }
    if (label_) notes.label = *label_;
    expect(":");
    expectEnd();
    Stmt body = nestedBlock(indent, [&] { scopes_.declareScalar(var, varType); });
    return forLoop(var, varType, std::move(begin), std::move(end), std::move(body), kind, notes);
  }

  Stmt parseWhile(int indent) {
    expectName("while");
    Expr cond = parseExpr();
    expect(":");
    expectEnd();
    return whileLoop(std::move(cond), nestedBlock(indent));
  }

  Stmt parseIf(int indent) {
    expectName("if");
    Expr cond = parseExpr();
    expect(":");
    expectEnd();
    Stmt then = nestedBlock(indent);
    Stmt otherwise;
    if (next_ < lines_.size() && lines_[next_].indent == indent &&
        lines_[next_].content == "else:") {
      ++next_;
      otherwise = nestedBlock(indent);
    }
    return ifThen(std::move(cond), std::move(then), std::move(otherwise));
  }

  Stmt parseLet() {
    expectName("let");
    const std::string var = takeName("a variable");
    expect(":");
    const ScalarType type = takeType();
    expect("=");
    Expr value = parseExpr();
    expectEnd();
    if (value->type != type) {
      SF_IR_PARSE_FAIL(*line_, 1) << "'" << var << "' is declared " << cppTypeName(type)
                                  << " but its value is " << cppTypeName(value->type);
    }
    scopes_.declareScalar(var, type);
    return let(var, std::move(value));
  }

  Stmt parseAllocate(int indent) {
    expectName("allocate");
    const std::string name = takeName("an array");
    expect(":");
    const ScalarType element = takeType();
    expect("[");
    Expr size = parseExpr();
    expect("]");
    expectName("zeroed");
    bool perThread = false;
    if (peek().kind == Token::kName && peek().text == "per") {
      ++pos_;
      expectName("thread");
      perThread = true;
    }
    expect(":");
    expectEnd();
    Stmt body = nestedBlock(indent, [&] { scopes_.declareArray(name, element); });
    return allocate(Array{name, element}, std::move(size), std::move(body), perThread);
  }

  Stmt parseSort() {
    expectName("sort");
    const Array array = takeArray();
    expect("[");
    Expr begin = parseExpr();
    expect(",");
    Expr end = parseExpr();
    expect(")");
    expectEnd();
    return sortRange(array, std::move(begin), std::move(end));
  }

  /// `name op= value` or `array[index] op= value`.
  Stmt parseUpdate() {
    const Token& name = peek();
    if (peek(1).text == "[") {
      const Array array = takeArray();
      expect("[");
      Expr index = parseExpr();
      expect("]");
      const UpdateOp op = takeUpdate();
      Expr value = parseExpr();
      expectEnd();
      return store(array, std::move(index), op, std::move(value));
    }
    ++pos_;
    if (scopes_.scalar(name.text) == nullptr) {
      SF_IR_PARSE_FAIL(*line_, name.column) << "'" << name.text << "' is assigned but not declared";
    }
    const UpdateOp op = takeUpdate();
    Expr value = parseExpr();
    expectEnd();
    return assign(name.text, op, std::move(value));
  }

  UpdateOp takeUpdate() {
    const Token& t = take();
    if (t.text == "=") return UpdateOp::kSet;
    if (t.text == "+=") return UpdateOp::kAdd;
    if (t.text == "max=") return UpdateOp::kMax;
    SF_IR_PARSE_FAIL(*line_, t.column) << "expected '=', '+=' or 'max=', found '" << t.text << "'";
  }

  // ---- expressions ----

  /// Nesting limits: deeper text is refused before the recursion could exhaust the stack.
  static constexpr int kMaxDepth = 500;

  Expr parseExpr() {
    const Token& t = take();
    struct DepthGuard {
      int& depth;
      ~DepthGuard() { --depth; }
    } guard{++exprDepth_};
    if (exprDepth_ > kMaxDepth) {
      SF_IR_PARSE_FAIL(*line_, t.column) << "expressions nested deeper than " << kMaxDepth;
    }
    if (t.kind == Token::kPunct && t.text == "(") {
      Expr a = parseExpr();
      const Token& op = take();
      BinaryOp binaryOp;
      if (!binaryOpNamed(op.text, &binaryOp)) {
        SF_IR_PARSE_FAIL(*line_, op.column)
            << "expected a binary operator, found '" << op.text << "'";
      }
      Expr b = parseExpr();
      expect(")");
      return makeBinary(binaryOp, std::move(a), std::move(b));
    }
    if (t.kind == Token::kPunct && t.text == "-") {
      const Token& n = take();
      if (n.kind == Token::kNumber) return number(n, true);
      if (n.kind == Token::kName && isSpecialNumber(n.text)) return number(n, true);
      SF_IR_PARSE_FAIL(*line_, t.column) << "'-' is written inside parentheses: (a - b)";
    }
    if (t.kind == Token::kNumber) return number(t, false);
    if (t.kind != Token::kName) {
      SF_IR_PARSE_FAIL(*line_, t.column) << "expected an expression, found '" << t.text << "'";
    }
    if (isSpecialNumber(t.text)) return number(t, false);
    if (t.text == "true" || t.text == "false") return intImm(t.text == "true", ScalarType::kBool);
    if (peek().text == "(") return call(t);
    if (peek().text == "[") {
      --pos_;
      const Array array = takeArray();
      expect("[");
      Expr index = parseExpr();
      expect("]");
      return load(array, std::move(index));
    }
    const ScalarType* type = scopes_.scalar(t.text);
    if (type == nullptr) SF_IR_PARSE_FAIL(*line_, t.column) << "'" << t.text << "' is not declared";
    return var(t.text, *type);
  }

  /// `name(args)`: min / max, select, a cast to a type, or a unary function.
  Expr call(const Token& name) {
    expect("(");
    std::vector<Expr> args{parseExpr()};
    while (accept(",")) args.push_back(parseExpr());
    expect(")");
    auto arity = [&](size_t n) {
      if (args.size() != n) {
        SF_IR_PARSE_FAIL(*line_, name.column)
            << name.text << " takes " << n << " argument(s), not " << args.size();
      }
    };
    if (name.text == "min" || name.text == "max") {
      arity(2);
      return makeBinary(name.text == "min" ? BinaryOp::kMin : BinaryOp::kMax, args[0], args[1]);
    }
    if (name.text == "select") {
      arity(3);
      const ScalarType type = binaryResultType(BinaryOp::kAdd, args[1]->type, args[2]->type);
      return std::make_shared<Select>(args[0], args[1], args[2], type);
    }
    arity(1);
    ScalarType type;
    if (scalarTypeNamed(name.text, &type)) return cast(args[0], type);
    for (int op = 0; op <= static_cast<int>(UnaryOp::kNot); ++op) {
      if (name.text == unaryOpName(static_cast<UnaryOp>(op)))
        return unary(static_cast<UnaryOp>(op), args[0]);
    }
    SF_IR_PARSE_FAIL(*line_, name.column) << "unknown function '" << name.text << "'";
  }

  static bool isSpecialNumber(const std::string& name) {
    return name == "inf" || name == "nan" || name == "inff" || name == "nanf";
  }

  /// The node exactly as written (no folding: the text is what a transform made).
  static Expr makeBinary(BinaryOp op, Expr a, Expr b) {
    const ScalarType type = binaryResultType(op, a->type, b->type);
    return std::make_shared<Binary>(op, std::move(a), std::move(b), type);
  }

  static bool binaryOpNamed(const std::string& text, BinaryOp* op) {
    for (int k = 0; k <= static_cast<int>(BinaryOp::kBitAnd); ++k) {
      if (text == binaryOpName(static_cast<BinaryOp>(k))) {
        *op = static_cast<BinaryOp>(k);
        return *op != BinaryOp::kMin && *op != BinaryOp::kMax;
      }
    }
    return false;
  }

  /// An integer (int64_t) or a floating-point literal (a point, exponent, inf or nan; f32 with f).
  Expr number(const Token& t, bool negative) {
    std::string text = t.text;
    const bool f32 = text.size() > 1 && text.back() == 'f' && text != "inf";
    if (f32) text.pop_back();
    const bool isFloatText = text.find_first_of(".eEni") != std::string::npos;
    const std::string signedText = (negative ? "-" : "") + text;
    if (!isFloatText) {
      if (f32) SF_IR_PARSE_FAIL(*line_, t.column) << "'" << t.text << "f' has no point: write 1.0f";
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(signedText.c_str(), &end, 10);
      if (errno != 0 || *end != '\0') {
        SF_IR_PARSE_FAIL(*line_, t.column) << "'" << signedText << "' is not an int64_t";
      }
      return intImm(v, ScalarType::kI64);
    }
    double v;
    if (text == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (text == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      char* end = nullptr;
      v = std::strtod(text.c_str(), &end);
      if (*end != '\0') SF_IR_PARSE_FAIL(*line_, t.column) << "'" << t.text << "' is not a number";
    }
    return floatImm(negative ? -v : v, f32 ? ScalarType::kF32 : ScalarType::kF64);
  }

  // ---- tokens ----

  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& take() {
    const Token& t = peek();
    if (t.kind != Token::kEnd) ++pos_;
    return t;
  }
  bool accept(const char* punct) {
    if (peek().kind == Token::kPunct && peek().text == punct) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(const char* punct) {
    if (!accept(punct)) {
      SF_IR_PARSE_FAIL(*line_, peek().column)
          << "expected '" << punct << "', found "
          << (peek().kind == Token::kEnd ? "the end of the line" : "'" + peek().text + "'");
    }
  }
  void expectName(const char* word) {
    if (peek().kind != Token::kName || peek().text != word) {
      SF_IR_PARSE_FAIL(*line_, peek().column)
          << "expected '" << word << "', found '" << peek().text << "'";
    }
    ++pos_;
  }
  void expectEnd() {
    if (peek().kind != Token::kEnd) {
      SF_IR_PARSE_FAIL(*line_, peek().column)
          << "unexpected '" << peek().text << "' at the end of the line";
    }
  }
  std::string takeName(const char* what) {
    if (peek().kind != Token::kName) {
      SF_IR_PARSE_FAIL(*line_, peek().column)
          << "expected " << what << ", found '" << peek().text << "'";
    }
    return take().text;
  }
  std::string parenthesizedName() {
    expect("(");
    std::string name = takeName("a name");
    expect(")");
    return name;
  }
  int64_t takeInteger() {
    const Token& t = take();
    if (t.kind != Token::kNumber || t.text.find_first_not_of("0123456789") != std::string::npos) {
      SF_IR_PARSE_FAIL(*line_, t.column) << "expected an integer, found '" << t.text << "'";
    }
    return std::strtoll(t.text.c_str(), nullptr, 10);
  }
  ScalarType takeType() {
    const Token& t = take();
    ScalarType type;
    if (t.kind != Token::kName || !scalarTypeNamed(t.text, &type)) {
      SF_IR_PARSE_FAIL(*line_, t.column)
          << "expected a type (bool, int32_t, int64_t, float, double, "
             "uint8_t), found '"
          << t.text << "'";
    }
    return type;
  }
  Array takeArray() {
    const Token& t = take();
    const ScalarType* element = t.kind == Token::kName ? scopes_.array(t.text) : nullptr;
    if (element == nullptr)
      SF_IR_PARSE_FAIL(*line_, t.column) << "'" << t.text << "' is not a declared array";
    return Array{t.text, *element};
  }

  std::vector<Line> lines_;
  size_t next_ = 0;
  const Line* line_ = nullptr;
  std::optional<std::string> label_;  ///< the current loop line's `# label`
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int exprDepth_ = 0;
  Scopes scopes_;
  std::string source_;
};

}  // namespace

Stmt parseStmt(const std::string& text, const ParseEnvironment& env, const std::string& source,
               int firstLine) {
  std::vector<Line> lines;
  size_t start = 0;
  int number = firstLine;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string content = text.substr(start, end - start);
    if (!content.empty() && content.back() == '\r') content.pop_back();
    const size_t spaces = content.find_first_not_of(' ');
    if (spaces != std::string::npos) {
      SF_USER_CHECK(spaces % 2 == 0) << source << ":" << number << ":1: indented by " << spaces
                                     << " spaces (the IR indents by two a level)";
      SF_USER_CHECK(content.find('\t') == std::string::npos)
          << source << ":" << number << ": a tab (the IR indents with spaces)";
      lines.push_back({number, static_cast<int>(spaces / 2), content.substr(spaces)});
    }
    ++number;
    start = end + 1;
  }
  return Parser(std::move(lines), env, source).parseAll();
}

}  // namespace sparseflow::ir
