// Tokens of the index notation, each with its line and column, read one at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "expr/expr.h"

namespace sparseflow::expr {

enum class TokenKind {
  kIdentifier,  ///< [A-Za-z_][A-Za-z0-9_]*
  kNumber,      ///< 2, 0.5, .5, 1., 1e-3
  kLParen,
  kRParen,
  kComma,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kAssign,      ///< =
  kPlusAssign,  ///< +=
  kEnd,         ///< after the last token
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  ///< a view into the kernel text ("" for kEnd)
  SourceLocation location;
  double number = 0;  ///< the value of a kNumber
};

/// How a message names a token: "'*'", "'A'", or "the end of the text".
std::string describe(const Token& token);

/// Reads tokens on demand, so that the first error in the text is the one reported. Spaces, tabs
/// and newlines may stand between any two tokens; columns count bytes.
class Lexer {
 public:
  /// Reads `text` from `offset`, which lies at `start`.
  explicit Lexer(std::string_view text, size_t offset = 0, SourceLocation start = {});

  /// The next token; kEnd (located just after the last token) once the text is used up. Throws
  /// Error(kParseError) at a character that starts no token and at a malformed number.
  Token next();

 private:
  void skipSpace();
  Token number(Token token);
  [[noreturn]] void fail(SourceLocation at, const std::string& message) const;

  std::string_view text_;
  size_t pos_;
  SourceLocation here_;
  SourceLocation lastEnd_;
};

/// Where index `position` of the access (or the index of the reduction) written at `at` is: scans
/// `name(i, j, ...)` again from `at`. Returns `at` when the text there does not match (e.g. a
/// statement built by hand), so that messages stay correct if less precise.
SourceLocation indexLocation(std::string_view text, SourceLocation at, size_t position,
                             std::string_view index);

}  // namespace sparseflow::expr
