// The line cursor of the graph parser: tokens with checked integers and positioned errors.
#include "graph/parser_cursor.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "support/check.h"
#include "support/quote.h"

namespace sparseflow::graph {

void LineCursor::skipSpaces() {
  while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
}

bool LineCursor::atEnd() {
  skipSpaces();
  return pos_ >= line_.size();
}

char LineCursor::peek() {
  skipSpaces();
  return pos_ < line_.size() ? line_[pos_] : '\0';
}

bool LineCursor::consume(char c) {
  if (peek() != c || c == '\0') return false;
  ++pos_;
  return true;
}

bool LineCursor::consume(std::string_view text) {
  skipSpaces();
  if (line_.substr(pos_, text.size()) != text) return false;
  pos_ += text.size();
  return true;
}

std::string LineCursor::found() {
  if (atEnd()) return "the end of the line";
  return support::quoted(line_.substr(pos_, 12), 12);
}

void LineCursor::expect(char c, const char* context) {
  if (!consume(c)) fail(std::string("expected '") + c + "' " + context + ", found " + found());
}

std::string LineCursor::name(const char* what) {
  skipSpaces();
  size_t e = pos_;
  auto isStart = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  if (e >= line_.size() || !isStart(line_[e]))
    fail(std::string("expected ") + what + ", found " + found());
  while (e < line_.size() &&
         (isStart(line_[e]) || std::isdigit(static_cast<unsigned char>(line_[e])) != 0)) {
    ++e;
  }
  std::string s(line_.substr(pos_, e - pos_));
  pos_ = e;
  return s;
}

template <typename T>
T LineCursor::scalar(const char* what, const char* expected) {
  skipSpaces();
  const char* begin = line_.data() + pos_;
  T v{};
  auto [ptr, ec] = std::from_chars(begin, line_.data() + line_.size(), v);
  if (ec == std::errc::result_out_of_range) fail(std::string(what) + " is out of range");
  if (ec != std::errc() || ptr == begin) {
    fail(std::string("expected ") + what + expected + ", found " + found());
  }
  pos_ += static_cast<size_t>(ptr - begin);
  return v;
}

int64_t LineCursor::integer(const char* what) {
  return scalar<int64_t>(what, "");
}

bool LineCursor::nextNumberIsReal() {
  skipSpaces();
  for (size_t p = pos_; p < line_.size(); ++p) {
    const char ch = line_[p];
    if (ch == '.' || ch == 'e' || ch == 'E') return true;
    if (!(ch == '-' || ch == '+' || (ch >= '0' && ch <= '9'))) return false;
  }
  return false;
}

double LineCursor::number(const char* what) {
  const size_t col = column();
  const double v = scalar<double>(what, " (a finite number)");
  if (!std::isfinite(v)) {
    pos_ = col - 1;
    fail(std::string(what) + " is not finite");
  }
  return v;
}

std::string LineCursor::quoted(const char* what) {
  skipSpaces();
  if (pos_ >= line_.size() || line_[pos_] != '"')
    fail(std::string("expected ") + what + " in double quotes, found " + found());
  std::string s;
  size_t p = pos_ + 1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  while (p < line_.size() && line_[p] != '"') {
    if (line_[p] == '\\') {
      if (p + 3 >= line_.size() || line_[p + 1] != 'x' || hex(line_[p + 2]) < 0 ||
          hex(line_[p + 3]) < 0) {
        pos_ = p;
        fail("bad escape in a quoted string (only \\xNN)");
      }
      s += static_cast<char>(hex(line_[p + 2]) * 16 + hex(line_[p + 3]));
      p += 4;
    } else {
      s += line_[p++];
    }
  }
  if (p >= line_.size()) fail(std::string(what) + ": missing closing quote");
  pos_ = p + 1;
  return s;
}

size_t LineCursor::column() {
  skipSpaces();
  return pos_ + 1;
}

std::string LineCursor::where(size_t column) const {
  return source_ + ":" + std::to_string(lineNumber_) + ":" + std::to_string(column) + ": ";
}

void LineCursor::fail(const std::string& message) {
  const std::string at = where(column());
  SF_FAIL(kParseError) << at << message;
}

}  // namespace sparseflow::graph
