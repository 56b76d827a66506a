// Error messages that point into the kernel text: "line L, column C: ..." plus the line and a
// caret.
#include "expr/diagnostics.h"

#include <algorithm>
#include <cstdio>

namespace sparseflow::expr {
namespace {

// Half the width of the window shown around the column of a long line.
constexpr size_t kHalfWindow = 60;
// Longest token text quoted in full.
constexpr size_t kMaxQuoted = 40;

char printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u == '\t' || (u >= 0x20 && u < 0x7f)) ? c : '?';
}

}  // namespace

std::string locationPrefix(SourceLocation location) {
  return "line " + std::to_string(location.line) + ", column " + std::to_string(location.column) +
         ": ";
}

std::string whereRelative(SourceLocation other, SourceLocation from) {
  if (other.line == from.line) return "column " + std::to_string(other.column);
  return "line " + std::to_string(other.line) + ", column " + std::to_string(other.column);
}

std::string excerpt(std::string_view text, SourceLocation location) {
  if (text.empty() || location.line < 1 || location.column < 1) return "";
  size_t begin = 0;
  for (int line = 1; line < location.line; ++line) {
    const size_t newline = text.find('\n', begin);
    if (newline == std::string_view::npos) return "";
    begin = newline + 1;
  }
  size_t end = text.find('\n', begin);
  if (end == std::string_view::npos) end = text.size();
  if (end > begin && text[end - 1] == '\r') --end;
  std::string_view line = text.substr(begin, end - begin);
  const auto column = static_cast<size_t>(location.column - 1);
  if (column > line.size()) return "";
  // Cut a long line to a window around the column so that the message stays readable.
  size_t from = column > kHalfWindow ? column - kHalfWindow : 0;
  size_t to = std::min(line.size(), column + kHalfWindow);
  std::string shown = from > 0 ? "..." : "";
  std::string caret(shown.size(), ' ');
  for (size_t i = from; i < to; ++i) {
    shown += printable(line[i]);
    if (i < column) caret += line[i] == '\t' ? '\t' : ' ';
  }
  if (to < line.size()) shown += "...";
  return "\n" + shown + "\n" + caret + "^";
}

void failAt(ErrorCode code, std::string_view text, SourceLocation location,
            const std::string& message) {
  throw Error(code, locationPrefix(location) + message + excerpt(text, location));
}

std::string quoted(std::string_view text) {
  std::string out = "'";
  const size_t n = std::min(text.size(), kMaxQuoted);
  for (size_t i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x20 && u < 0x7f) {
      out += text[i];
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  if (n < text.size()) out += "...";
  return out + "'";
}

}  // namespace sparseflow::expr
