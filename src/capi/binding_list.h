// The C ABI's "NAME=VALUE, NAME=VALUE" argument lists (kernel formats and dtypes), split only at
// top-level commas so that values such as "levels[d0:dense, d1:compressed]" or "nm(2,4)" pass.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sparseflow::capi {

/// The items of `text` between commas outside () and [] (each trimmed, blank ones dropped).
/// Throws kInvalidArgument naming `argument` and the item for an unmatched or unclosed bracket.
std::vector<std::string> splitTopLevel(std::string_view text, const char* argument);

/// "A=csr, B=levels[d0:dense, d1:compressed]" → {A: csr, B: levels[...]}; "" → {}. Names and
/// values are trimmed; an item without a name or value, or a name bound twice, is
/// kInvalidArgument naming `argument` and the item.
std::map<std::string, std::string> parseBindings(std::string_view text, const char* argument);

}  // namespace sparseflow::capi
