// A cursor over one line of graph text: the tokens the parser reads, each error naming
// source:line:column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sparseflow::graph {

/// Reads names, integers, numbers, quoted strings and punctuation from one line, skipping spaces
/// between them. Every failure throws kParseError "source:line:column: message".
class LineCursor {
 public:
  LineCursor(std::string_view line, int lineNumber, const std::string& source)
      : line_(line), lineNumber_(lineNumber), source_(source) {}

  /// True when only spaces are left.
  bool atEnd();
  /// The next character after spaces (0 at the end), not consumed.
  char peek();
  /// Consumes `c` when it comes next.
  bool consume(char c);
  /// Consumes `text` when it comes next.
  bool consume(std::string_view text);
  /// Consumes `c` or fails saying what was expected.
  void expect(char c, const char* context);
  /// [A-Za-z_][A-Za-z0-9_]*.
  std::string name(const char* what);
  /// An optional minus and decimal digits, within int64.
  int64_t integer(const char* what);
  /// A finite decimal floating-point number.
  double number(const char* what);
  /// True when the number that comes next is written as a real (it holds ".", "e" or "E").
  bool nextNumberIsReal();
  /// "text" with \xNN escapes.
  std::string quoted(const char* what);

  /// 1-based column of the next token (after spaces).
  size_t column();
  /// "source:line:column: " at `column`.
  std::string where(size_t column) const;
  /// Throws kParseError at the current column.
  [[noreturn]] void fail(const std::string& message);

 private:
  void skipSpaces();
  /// An integer or floating-point number read with std::from_chars.
  template <typename T>
  T scalar(const char* what, const char* expected);
  std::string found();

  std::string_view line_;
  int lineNumber_;
  const std::string& source_;
  size_t pos_ = 0;
};

}  // namespace sparseflow::graph
