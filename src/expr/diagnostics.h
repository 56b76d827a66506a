// Error messages that point into the kernel text: "line L, column C: ..." plus the line and a
// caret.
#pragma once

#include <string>
#include <string_view>

#include "expr/expr.h"
#include "sparseflow/error.h"

namespace sparseflow::expr {

/// "line 2, column 5: ".
std::string locationPrefix(SourceLocation location);

/// Where `other` is, said from `from`: "column 9" on the same line, else "line 2, column 9".
std::string whereRelative(SourceLocation other, SourceLocation from);

/// "\n<the text line>\n<caret under the column>", or "" when the location is not in the text.
/// Long lines are cut to a window around the column; control and non-ASCII bytes print as '?'.
std::string excerpt(std::string_view text, SourceLocation location);

/// Throws Error(code, locationPrefix + message + excerpt).
[[noreturn]] void failAt(ErrorCode code, std::string_view text, SourceLocation location,
                         const std::string& message);

/// A token or character as a message shows it: 'abc', '\x01'; long text is shortened.
std::string quoted(std::string_view text);

}  // namespace sparseflow::expr
