// quoted() and printable(): one UTF-8 walk that escapes what a terminal or a decoder would choke
// on.
#include "support/quote.h"

#include <cstdint>

namespace sparseflow::support {
namespace {

/// Length of the valid UTF-8 sequence at the start of `text` (1..4), or 0 if it is not one.
size_t utf8Length(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xbf;  // the allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 == 0xe0) low = 0xa0;   // overlong
    if (b0 == 0xed) high = 0x9f;  // surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 == 0xf0) low = 0x90;   // overlong
    if (b0 == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

/// Whether the valid sequence `seq` is a character a terminal acts on: C1 controls and the
/// bidirectional embedding, override and isolate controls.
bool isHazardousCharacter(std::string_view seq) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(seq[i]); };
  if (seq.size() == 2) return b(0) == 0xc2 && b(1) <= 0x9f;  // U+0080..U+009F
  if (seq.size() == 3 && b(0) == 0xe2) {
    if (b(1) == 0x80) return b(2) >= 0xaa && b(2) <= 0xae;  // U+202A..U+202E
    if (b(1) == 0x81) return b(2) >= 0xa6 && b(2) <= 0xa9;  // U+2066..U+2069
  }
  return false;
}

void appendEscaped(std::string& out, uint8_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

/// Appends `text` with the escapes; `keepLayout` keeps '\n', '\t', '\\' and '\''. Stops before
/// `maxBytes` bytes of input; returns how many bytes were consumed.
size_t appendSafe(std::string& out, std::string_view text, bool keepLayout, size_t maxBytes) {
  size_t i = 0;
  while (i < text.size() && i < maxBytes) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c < 0x80) {
      const bool layout = c == '\n' || c == '\t' || c == '\\' || c == '\'';
      if ((c >= 0x20 && c < 0x7f && !layout) || (layout && keepLayout)) {
        out += static_cast<char>(c);
      } else {
        appendEscaped(out, c);
      }
      ++i;
      continue;
    }
    const size_t length = utf8Length(text.substr(i));
    if (length == 0 || i + length > maxBytes) {
      if (length != 0) break;  // a character cut at the limit: leave it out whole
      appendEscaped(out, c);
      ++i;
      continue;
    }
    const std::string_view seq = text.substr(i, length);
    if (isHazardousCharacter(seq)) {
      for (char b : seq) appendEscaped(out, static_cast<uint8_t>(b));
    } else {
      out += seq;
    }
    i += length;
  }
  return i;
}

}  // namespace

std::string quoted(std::string_view text, size_t maxBytes) {
  std::string out = "'";
  const size_t used = appendSafe(out, text, false, maxBytes);
  if (used < text.size()) out += "...";
  out += "'";
  return out;
}

std::string printable(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  appendSafe(out, message, true, message.size());
  return out;
}

bool isValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8Length(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace sparseflow::support
