// Text from files and users made safe to print in messages: control bytes, terminal escapes and
// bytes that are not UTF-8 become visible `\xNN` escapes, and long text is cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sparseflow::support {

/// `text` between single quotes for an error message: at most `maxBytes` bytes of it (then
/// "..."), with every byte that could act on a terminal or break a UTF-8 decoder written as
/// `\xNN`: C0 controls (newline and tab too), DEL, C1 controls (U+0080..U+009F), the bidirectional
/// overrides (U+202A..U+202E, U+2066..U+2069), bytes that are not valid UTF-8, and the quote and
/// backslash themselves. Valid UTF-8 text (names in any script) is kept as it is.
std::string quoted(std::string_view text, size_t maxBytes = 40);

/// A whole message made safe to print: the same escapes as quoted() except that newlines, tabs,
/// backslashes and quotes stay (messages span lines and contain escapes made by quoted()), and
/// nothing is cut. Applied once where messages leave sparseflow (the CLI, Python).
std::string printable(std::string_view message);

/// True when `text` is valid UTF-8 (no overlong forms, surrogates or values above U+10FFFF).
bool isValidUtf8(std::string_view text);

}  // namespace sparseflow::support
