// Reads the checked and canonical stages' text back (see stage_text.h).
#include "pipeline/stage_text.h"

#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "expr/tree_walk.h"
#include "sparseflow/error.h"
#include "support/check.h"

namespace sparseflow::pipeline {
namespace {

struct Line {
  int number = 0;
  std::string text;  ///< without leading and trailing blanks
};

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// The lines that are not blank or `#` comments.
std::vector<Line> contentLines(const std::string& text) {
  std::vector<Line> out;
  size_t start = 0;
  for (int number = 1; start <= text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = trimmed(text.substr(start, end - start));
    if (!line.empty() && line[0] != '#') out.push_back({number, line});
    start = end + 1;
  }
  return out;
}

bool startsWithWord(const std::string& line, const std::string& word) {
  return line.compare(0, word.size(), word) == 0 && line.size() > word.size() &&
         (line[word.size()] == ' ' || line[word.size()] == ':');
}

bool isDeclaration(const std::string& line) {
  return startsWithWord(line, "tensor") || startsWithWord(line, "output") ||
         startsWithWord(line, "index") || startsWithWord(line, "schedule");
}

bool isName(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (const char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

/// Parses a statement that sits on line `line` of `source`, naming both in errors.
expr::Statement parseStatementAt(const std::string& text, const std::string& where) {
  try {
    return expr::parse(text);
  } catch (const Error& e) {
    throw Error(e.code(), where + ": " + e.what());
  }
}

/// The number of indices each tensor of the statement is used with, and (when asked) every index
/// it names.
std::map<std::string, int32_t> tensorRanks(const expr::Statement& statement,
                                           std::set<std::string>* indices = nullptr) {
  std::map<std::string, int32_t> ranks;
  ranks[statement.lhs.tensor] = static_cast<int32_t>(statement.lhs.indices.size());
  for (const expr::FlatNode& node : expr::flatten(statement.rhs, statement.text, 1 << 20)) {
    if (const auto* a = std::get_if<expr::Access>(&node.expr->node)) {
      ranks.emplace(a->tensor, static_cast<int32_t>(a->indices.size()));
      if (indices) indices->insert(a->indices.begin(), a->indices.end());
    } else if (const auto* r = std::get_if<expr::Reduce>(&node.expr->node)) {
      if (indices) indices->insert(r->index);
    }
  }
  return ranks;
}

/// One tensor's `FORMAT DTYPE` as the checked and canonical forms write it, added to `options`
/// (a default dense format is left out, as check leaves it).
void declareTensor(const std::string& name, const std::string& formatAndType,
                   const std::map<std::string, int32_t>& ranks, const std::string& where,
                   KernelOptions& options) {
  const auto rank = ranks.find(name);
  SF_USER_CHECK(rank != ranks.end())
      << where << ": '" << name << "' is not a tensor of the kernel's statement";
  SF_USER_CHECK(!options.dtypes.count(name)) << where << ": '" << name << "' is declared twice";
  const size_t space = formatAndType.rfind(' ');
  SF_USER_CHECK(space != std::string::npos && space > 0)
      << where << ": expected 'FORMAT DTYPE' after '" << name << ":', found '" << formatAndType
      << "'";
  const std::string format = trimmed(formatAndType.substr(0, space));
  const std::string dtype = formatAndType.substr(space + 1);
  try {
    options.dtypes[name] = parseDType(dtype);
    if (!(Format::parse(format, rank->second) == Format::parse("dense", rank->second)))
      options.formats[name] = format;
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidArgument, where + ": " + e.what());
  }
}

/// `NAME: REST` after a keyword: the name and the rest.
std::pair<std::string, std::string> nameAndRest(const std::string& afterKeyword,
                                                const std::string& where) {
  const size_t colon = afterKeyword.find(':');
  const std::string name = trimmed(afterKeyword.substr(0, colon));
  SF_USER_CHECK(colon != std::string::npos && isName(name))
      << where << ": expected 'NAME: ...', found '" << afterKeyword << "'";
  return {name, trimmed(afterKeyword.substr(colon + 1))};
}

}  // namespace

bool isCheckedText(const std::string& text) {
  for (const Line& line : contentLines(text)) {
    if (isDeclaration(line.text)) return true;
  }
  return false;
}

CheckedStage parseChecked(const std::string& text, const std::string& source,
                          const KernelOptions& base) {
  const std::vector<Line> lines = contentLines(text);
  auto where = [&](const Line& line) { return source + ":" + std::to_string(line.number); };
  SF_USER_CHECK(!lines.empty() && !isDeclaration(lines[0].text))
      << source << ": expected the kernel's statement first (the checked stage's text)";
  const expr::Statement statement = parseStatementAt(lines[0].text, where(lines[0]));
  std::set<std::string> indices;
  const std::map<std::string, int32_t> ranks = tensorRanks(statement, &indices);
  KernelOptions options = base;
  options.formats.clear();
  options.dtypes.clear();
  options.schedule = Schedule();
  std::map<std::string, std::string> copies;
  bool scheduled = false, outputDeclared = false;
  for (size_t n = 1; n < lines.size(); ++n) {
    const std::string& line = lines[n].text;
    const std::string at = where(lines[n]);
    if (startsWithWord(line, "tensor") || startsWithWord(line, "output")) {
      const bool output = startsWithWord(line, "output");
      const auto [name, rest] = nameAndRest(line.substr(6), at);
      SF_USER_CHECK(output == (name == statement.lhs.tensor))
          << at << ": '" << name << "' is " << (output ? "not " : "")
          << "the kernel's output; declare it as '" << (output ? "tensor " : "output ") << name
          << ": ...'";
      outputDeclared = outputDeclared || output;
      declareTensor(name, rest, ranks, at, options);
    } else if (startsWithWord(line, "index")) {
      const auto [copy, rest] = nameAndRest(line.substr(5), at);
      const std::string prefix = "copy of ";
      const std::string index = rest.compare(0, prefix.size(), prefix) == 0
                                    ? trimmed(rest.substr(prefix.size()))
                                    : std::string();
      SF_USER_CHECK(isName(index))
          << at << ": expected 'index NAME: copy of INDEX', found '" << line << "'";
      SF_USER_CHECK(indices.count(copy) && indices.count(index))
          << at << ": '" << (indices.count(copy) ? index : copy)
          << "' is not an index of the kernel's statement";
      SF_USER_CHECK(copies.emplace(copy, index).second)
          << at << ": index '" << copy << "' is declared twice";
    } else if (startsWithWord(line, "schedule")) {
      SF_USER_CHECK(!scheduled) << at << ": a second schedule line";
      scheduled = true;
      const size_t colon = line.find(':');
      SF_USER_CHECK(colon == 8) << at << ": expected 'schedule: ...'";
      try {
        options.schedule = Schedule::parse(trimmed(line.substr(colon + 1)));
      } catch (const Error& e) {
        throw Error(e.code(), at + ": " + e.what());
      }
    } else {
      SF_FAIL(kInvalidArgument) << at << ": expected a 'tensor', 'output', 'index' or 'schedule' "
                                << "line (the checked text holds one statement), found '" << line
                                << "'";
    }
  }
  SF_USER_CHECK(outputDeclared) << source << ": no 'output " << statement.lhs.tensor
                                << ": FORMAT DTYPE' line";
  for (const auto& [name, rank] : ranks) {
    SF_USER_CHECK(options.dtypes.count(name))
        << source << ": no 'tensor " << name << ": FORMAT DTYPE' line";
  }
  try {
    return checkStage(statement, options, copies);
  } catch (const Error& e) {
    throw Error(e.code(), source + ": " + e.what());
  }
}

CheckedStage checkedFromCanonical(const std::string& text, const std::string& source,
                                  const KernelOptions& base) {
  const std::vector<Line> lines = contentLines(text);
  const std::string prefix = "contraction:";
  SF_USER_CHECK(lines.size() == 1 && lines[0].text.compare(0, prefix.size(), prefix) == 0)
      << source << ": expected one line 'contraction: STATEMENT  [NAME FORMAT DTYPE, ...]' (the "
      << "canonical stage's text of a contraction)";
  const Line& line = lines[0];
  const std::string at = source + ":" + std::to_string(line.number);
  const size_t open = line.text.rfind("  [");
  SF_USER_CHECK(open != std::string::npos && line.text.back() == ']')
      << at << ": expected the operands as '  [NAME FORMAT DTYPE, ...]' after the statement";
  const expr::Statement statement =
      parseStatementAt(trimmed(line.text.substr(prefix.size(), open - prefix.size())), at);
  const std::map<std::string, int32_t> ranks = tensorRanks(statement);
  KernelOptions options = base;
  options.formats.clear();
  options.dtypes.clear();
  options.schedule = Schedule();
  // `NAME FORMAT DTYPE` items split at the commas outside a format's brackets and parentheses.
  const std::string list = line.text.substr(open + 3, line.text.size() - open - 4);
  int depth = 0;
  size_t start = 0;
  for (size_t k = 0; k <= list.size(); ++k) {
    if (k < list.size()) {
      if (list[k] == '[' || list[k] == '(') ++depth;
      if (list[k] == ']' || list[k] == ')') --depth;
      if (list[k] != ',' || depth != 0) continue;
    }
    const std::string item = trimmed(list.substr(start, k - start));
    const size_t space = item.find(' ');
    SF_USER_CHECK(space != std::string::npos)
        << at << ": expected 'NAME FORMAT DTYPE', found '" << item << "'";
    declareTensor(item.substr(0, space), trimmed(item.substr(space + 1)), ranks, at, options);
    start = k + 1;
  }
  for (const auto& [name, rank] : ranks) {
    SF_USER_CHECK(options.dtypes.count(name))
        << at << ": the operand list does not give '" << name << "'";
  }
  try {
    return checkStage(statement, options);
  } catch (const Error& e) {
    throw Error(e.code(), at + ": " + e.what());
  }
}

CanonicalStage parseCanonical(const std::string& text, const std::string& source,
                              const KernelOptions& options) {
  CanonicalStage canonical = canonicalizeStage(checkedFromCanonical(text, source, options));
  SF_USER_CHECK(canonical.contraction.has_value())
      << source << ": the statement is not a contraction: " << canonical.notContraction;
  return canonical;
}

}  // namespace sparseflow::pipeline
