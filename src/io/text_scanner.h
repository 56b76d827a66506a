// TextScanner: a fast, line-aware tokenizer over in-memory text for the text tensor formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "support/check.h"

namespace sparseflow::io {

/// Result of trying to read a number; on failure the scanner has not moved past the token.
enum class NumberStatus {
  kOk,
  kNotANumber,  ///< the next token is not a number (or the line has no more tokens)
  kOverflow,    ///< an integer whose value does not fit in int64
};

/// Reads numbers and tokens from text one line at a time without allocating, counting lines so
/// errors can say "NAME:LINE: ...". Tokens are separated by blanks (space, tab, CR, VT, FF); reads
/// never cross a newline, only nextLine() and skipBlankAndCommentLines() do. A number must end at a
/// blank, a newline, a comma or the end of the text ("12abc" and "1e" are not numbers).
/// The text must outlive the scanner.
class TextScanner {
 public:
  /// `name` is what errors call the text (usually the file path).
  TextScanner(std::string_view text, std::string name)
      : begin_(text.data()),
        cur_(text.data()),
        end_(text.data() + text.size()),
        name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  /// 1-based line number of the current position.
  int64_t line() const { return line_; }
  /// "NAME:LINE", the prefix of every error about the current position.
  std::string location() const;
  /// Bytes not yet consumed; bounds how many entries the rest of the text can hold.
  size_t remainingBytes() const { return static_cast<size_t>(end_ - cur_); }
  size_t offset() const { return static_cast<size_t>(cur_ - begin_); }
  bool atEnd() const { return cur_ == end_; }

  /// Skips blanks within the current line.
  void skipBlanks() {
    while (cur_ != end_ && isBlank(*cur_)) ++cur_;
  }
  /// True when the current line has no more tokens (blanks are skipped).
  bool atEndOfLine() {
    skipBlanks();
    return cur_ == end_ || *cur_ == '\n';
  }
  /// The next character after blanks, or '\n' at the end of a line or of the text.
  char peekChar() {
    skipBlanks();
    return cur_ == end_ ? '\n' : *cur_;
  }
  /// Consumes `c` if it is the next character after blanks.
  bool consume(char c) {
    if (peekChar() != c || cur_ == end_) return false;
    ++cur_;
    return true;
  }
  /// Moves to the start of the next line (or to the end of the text).
  void nextLine();
  /// From the start of a line: skips lines that are empty, blank, or whose first non-blank
  /// character is `comment`, stopping at the start of the first other line. Returns !atEnd().
  bool skipBlankAndCommentLines(char comment);
  /// As skipBlankAndCommentLines, for formats without comments.
  bool skipBlankLines() { return skipLines(-1); }
  /// The rest of the current line (without the newline and trailing CR), not consumed.
  std::string_view restOfLine() const;
  /// Number of tokens from the current position to the end of the line; nothing is consumed.
  int64_t countTokensInLine() const;

  /// The next token (maximal run of non-blank characters) or "" at the end of the line.
  std::string_view readToken();
  /// Reads a decimal integer with an optional sign.
  NumberStatus tryReadInt64(int64_t* out);
  /// Reads a floating-point number (decimal or exponent form, nan, inf, infinity; optional sign).
  /// Values beyond the double range become +-inf or +-0, as strtod gives.
  NumberStatus tryReadDouble(double* out);
  /// As tryReadInt64, but throws kParseError "NAME:LINE: expected WHAT ..." on failure.
  int64_t readInt64(std::string_view what);
  /// As tryReadDouble, but throws kParseError "NAME:LINE: expected WHAT ..." on failure.
  double readDouble(std::string_view what);
  /// Throws kParseError unless the rest of the text can hold `count` items of `tokens` numbers
  /// each (a number and its separator take at least two bytes). Call it before sizing anything by
  /// a count that a header declares, so a lying header cannot cause a huge allocation.
  void checkRoomFor(int64_t count, int64_t tokens, std::string_view what) const;
  /// Throws kParseError "NAME:LINE: unexpected 'TOKEN' after CONTEXT" unless the line has no more
  /// tokens. Does not move to the next line.
  void expectEndOfLine(std::string_view context);
  /// Throws kParseError "NAME:LINE: unexpected 'TOKEN' after CONTEXT" for the next token.
  [[noreturn]] void failUnexpected(std::string_view context);

  /// Throws a kParseError "NAME:LINE: expected WHAT, found 'TOKEN'" for the next token.
  [[noreturn]] void failExpected(std::string_view what);

  /// `token` quoted for an error message: at most 40 characters, unprintable bytes escaped.
  static std::string quote(std::string_view token);

 private:
  static bool isBlank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  }
  bool atTokenEnd(const char* p) const {
    return p == end_ || isBlank(*p) || *p == '\n' || *p == ',';
  }
  const char* tokenEnd(const char* p) const;
  bool skipLines(int comment);
  /// The value of the digits [begin, end) if it fits in uint64.
  static bool exactValue(const char* begin, const char* end, uint64_t* value);

  const char* begin_;
  const char* cur_;
  const char* end_;
  int64_t line_ = 1;
  std::string name_;
};

inline NumberStatus TextScanner::tryReadInt64(int64_t* out) {
  // Works on a local pointer: stores to cur_ in the loops would be reloaded (char may alias).
  const char* p = cur_;
  const char* const end = end_;
  while (p != end && isBlank(*p)) ++p;
  cur_ = p;
  bool negative = false;
  if (p != end && (*p == '-' || *p == '+')) {
    negative = *p == '-';
    ++p;
  }
  const char* digits = p;
  uint64_t value = 0;
  while (p != end && static_cast<unsigned char>(*p - '0') < 10) {
    value = value * 10 + static_cast<uint64_t>(*p - '0');
    ++p;
  }
  if (p == digits || !atTokenEnd(p)) return NumberStatus::kNotANumber;
  // Up to 19 digits always fit in uint64; longer (rare) runs are redone with overflow checks.
  if (p - digits > 19 && !exactValue(digits, p, &value)) return NumberStatus::kOverflow;
  if (value > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return NumberStatus::kOverflow;
  // Negating in unsigned arithmetic keeps INT64_MIN exact.
  *out = static_cast<int64_t>(negative ? 0 - value : value);
  cur_ = p;
  return NumberStatus::kOk;
}

inline void TextScanner::nextLine() {
  if (cur_ == end_) return;
  if (*cur_ != '\n') {
    const void* newline = std::memchr(cur_, '\n', static_cast<size_t>(end_ - cur_));
    if (newline == nullptr) {
      cur_ = end_;
      return;
    }
    cur_ = static_cast<const char*>(newline);
  }
  ++cur_;
  ++line_;
}

inline void TextScanner::expectEndOfLine(std::string_view context) {
  skipBlanks();
  if (cur_ != end_ && *cur_ != '\n') failUnexpected(context);
}

inline bool TextScanner::skipBlankAndCommentLines(char comment) {
  // Most lines hold data and start with a digit.
  if (cur_ != end_ && static_cast<unsigned char>(*cur_ - '0') < 10) return true;
  return skipLines(comment);
}

/// Throws kCODE "NAME:LINE: <streamed message>" at the scanner's current line:
/// `SF_SCAN_FAIL(scanner, kParseError) << "bad size line";`
#define SF_SCAN_FAIL(scanner, code_name) SF_FAIL(code_name) << (scanner).location() << ": "

}  // namespace sparseflow::io
