// Splitting of the C ABI's NAME=VALUE lists at top-level commas (see binding_list.h).
#include "capi/binding_list.h"

#include "support/check.h"

namespace sparseflow::capi {
namespace {

std::string_view trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

/// The item of `text` around byte `at` (between the neighbouring top-level commas, or the whole
/// rest when brackets are open), trimmed: what an error message quotes.
std::string itemAround(std::string_view text, size_t itemBegin, size_t at) {
  const size_t comma = text.find(',', at);
  const size_t end = comma == std::string_view::npos ? text.size() : comma;
  return std::string(trim(text.substr(itemBegin, end - itemBegin)));
}

constexpr std::string_view kExample = " (e.g. \"A=csr, B=levels[d0:dense, d1:compressed]\")";

}  // namespace

std::vector<std::string> splitTopLevel(std::string_view text, const char* argument) {
  std::vector<std::string> items;
  std::string open;  // the brackets open at this point, innermost last
  size_t itemBegin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(' || c == '[') {
      open.push_back(c);
    } else if (c == ')' || c == ']') {
      const char opener = c == ')' ? '(' : '[';
      SF_USER_CHECK(!open.empty() && open.back() == opener)
          << "argument '" << argument << "': item '" << itemAround(text, itemBegin, i)
          << "' has an unmatched '" << c << "' at offset " << i << " of the list";
      open.pop_back();
    } else if (c == ',' && (open.empty() || i == text.size())) {
      SF_USER_CHECK(open.empty()) << "argument '" << argument << "': item '"
                                  << trim(text.substr(itemBegin)) << "' leaves '" << open.back()
                                  << "' unclosed";
      const std::string_view item = trim(text.substr(itemBegin, i - itemBegin));
      if (!item.empty()) items.emplace_back(item);
      itemBegin = i + 1;
    }
  }
  return items;
}

std::map<std::string, std::string> parseBindings(std::string_view text, const char* argument) {
  std::map<std::string, std::string> bindings;
  for (const std::string& item : splitTopLevel(text, argument)) {
    const size_t eq = item.find('=');
    const std::string_view name =
        trim(std::string_view(item).substr(0, eq == std::string::npos ? 0 : eq));
    const std::string_view value =
        eq == std::string::npos ? std::string_view() : trim(std::string_view(item).substr(eq + 1));
    SF_USER_CHECK(!name.empty() && !value.empty())
        << "argument '" << argument << "': item '" << item << "' is not NAME=VALUE" << kExample;
    SF_USER_CHECK(bindings.emplace(name, value).second)
        << "argument '" << argument << "' binds '" << name << "' twice (item '" << item << "')";
  }
  return bindings;
}

}  // namespace sparseflow::capi
