// Tokens of the index notation, each with its line and column, read one at a time.
#include "expr/lexer.h"

#include <charconv>
#include <system_error>

#include "expr/diagnostics.h"

namespace sparseflow::expr {
namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c);
}

}  // namespace

std::string describe(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "the end of the text";
  return quoted(token.text);
}

Lexer::Lexer(std::string_view text, size_t offset, SourceLocation start)
    : text_(text), pos_(offset), here_(start), lastEnd_(start) {}

void Lexer::fail(SourceLocation at, const std::string& message) const {
  failAt(ErrorCode::kParseError, text_, at, message);
}

void Lexer::skipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      ++here_.line;
      here_.column = 1;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++here_.column;
    } else {
      return;
    }
    ++pos_;
  }
}

Token Lexer::next() {
  skipSpace();
  Token token;
  token.location = here_;
  if (pos_ >= text_.size()) {
    token.location = lastEnd_;
    return token;
  }
  const size_t start = pos_;
  const char c = text_[pos_];
  size_t length = 1;
  if (isIdentStart(c)) {
    token.kind = TokenKind::kIdentifier;
    while (start + length < text_.size() && isIdentChar(text_[start + length])) ++length;
  } else if (isDigit(c) || (c == '.' && start + 1 < text_.size() && isDigit(text_[start + 1]))) {
    token = number(token);
    length = token.text.size();
  } else {
    switch (c) {
      case '(': token.kind = TokenKind::kLParen; break;
      case ')': token.kind = TokenKind::kRParen; break;
      case ',': token.kind = TokenKind::kComma; break;
      case '-': token.kind = TokenKind::kMinus; break;
      case '*': token.kind = TokenKind::kStar; break;
      case '/': token.kind = TokenKind::kSlash; break;
      case '=': token.kind = TokenKind::kAssign; break;
      case '+':
        if (start + 1 < text_.size() && text_[start + 1] == '=') {
          token.kind = TokenKind::kPlusAssign;
          length = 2;
        } else {
          token.kind = TokenKind::kPlus;
        }
        break;
      default:
        fail(here_, "unexpected character " + quoted(text_.substr(start, 1)) +
                        " (expected a name, a number, an operator or a parenthesis)");
    }
  }
  token.text = text_.substr(start, length);
  pos_ = start + length;
  here_.column += static_cast<int>(length);
  lastEnd_ = here_;
  return token;
}

Token Lexer::number(Token token) {
  // digits [. digits] [e [+-] digits], or . digits [e ...]; the exponent needs a digit.
  size_t end = pos_;
  while (end < text_.size() && isDigit(text_[end])) ++end;
  if (end < text_.size() && text_[end] == '.') {
    ++end;
    while (end < text_.size() && isDigit(text_[end])) ++end;
  }
  if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
    size_t digits = end + 1;
    if (digits < text_.size() && (text_[digits] == '+' || text_[digits] == '-')) ++digits;
    if (digits >= text_.size() || !isDigit(text_[digits])) {
      SourceLocation at = here_;
      at.column += static_cast<int>(digits - pos_);
      Token found;
      found.text = digits < text_.size() ? text_.substr(digits, 1) : std::string_view();
      fail(at, "expected a digit in the exponent of the number " +
                   quoted(text_.substr(pos_, digits - pos_)) + ", found " +
                   (found.text.empty() ? std::string("the end of the text") : quoted(found.text)));
    }
    end = digits;
    while (end < text_.size() && isDigit(text_[end])) ++end;
  }
  token.kind = TokenKind::kNumber;
  token.text = text_.substr(pos_, end - pos_);
  const auto result =
      std::from_chars(token.text.data(), token.text.data() + token.text.size(), token.number);
  if (result.ec != std::errc() || result.ptr != token.text.data() + token.text.size()) {
    fail(here_, "the number " + quoted(token.text) +
                    " is out of the range of a double (about 2.2e-308 to 1.8e308 in magnitude)");
  }
  return token;
}

SourceLocation indexLocation(std::string_view text, SourceLocation at, size_t position,
                             std::string_view index) {
  // Find the byte offset of `at`.
  size_t offset = 0;
  for (int line = 1; line < at.line; ++line) {
    offset = text.find('\n', offset);
    if (offset == std::string_view::npos) return at;
    ++offset;
  }
  if (at.column < 1 || offset + static_cast<size_t>(at.column - 1) > text.size()) return at;
  offset += static_cast<size_t>(at.column - 1);
  try {
    Lexer lexer(text, offset, at);
    if (lexer.next().kind != TokenKind::kIdentifier) return at;
    if (lexer.next().kind != TokenKind::kLParen) return at;
    for (size_t i = 0;; ++i) {
      const Token name = lexer.next();
      if (name.kind != TokenKind::kIdentifier) return at;
      if (i == position) return name.text == index ? name.location : at;
      if (lexer.next().kind != TokenKind::kComma) return at;
    }
  } catch (const Error&) {
    return at;
  }
}

}  // namespace sparseflow::expr
