// Reader of headerless 0-based coordinate text: triplets and edge lists.
#include "io/triplet.h"

#include <algorithm>

#include "io/file_magic.h"
#include "io/text_scanner.h"

namespace sparseflow::io {

RawTensor parseTriplets(std::string_view text, const std::string& name) {
  TextScanner in(text, name);
  RawTensor out;
  int64_t tokens = -1;
  std::vector<int64_t> maxCoord;
  while (in.skipBlankAndCommentLines('#')) {
    if (in.peekChar() == '%') {
      in.nextLine();
      continue;
    }
    const int64_t count = in.countTokensInLine();
    if (tokens < 0) {
      SF_CHECK_CODE(count != 4, ErrorCode::kNotSupported)
          << in.location() << ": four columns look like complex \"i j re im\" triplets; complex "
          << "values are not supported";
      SF_CHECK_CODE(count == 2 || count == 3, ErrorCode::kParseError)
          << in.location() << ": expected \"i j value\" or \"i j\", found " << count << " tokens";
      tokens = count;
      out.pattern = count == 2;
      out.shape.assign(2, 0);
      maxCoord.assign(2, -1);
    }
    SF_CHECK_CODE(count == tokens, ErrorCode::kParseError)
        << in.location() << ": " << count << " tokens, but earlier lines have " << tokens;
    for (int d = 0; d < 2; ++d) {
      int64_t c = in.readInt64(d == 0 ? "a row index" : "a column index");
      SF_CHECK_CODE(c >= 0, ErrorCode::kOutOfRange)
          << in.location() << ": negative index " << c << " (this format is 0-based)";
      SF_CHECK_CODE(c < INT64_MAX, ErrorCode::kOutOfRange) << in.location() << ": index too large";
      maxCoord[static_cast<size_t>(d)] = std::max(maxCoord[static_cast<size_t>(d)], c);
      out.coords.push_back(c);
    }
    if (tokens == 3) out.values.push_back(in.readDouble("a value"));
    in.expectEndOfLine("the entry");
    in.nextLine();
  }
  SF_CHECK_CODE(tokens > 0, ErrorCode::kParseError) << name << ": no entries";
  for (int d = 0; d < 2; ++d)
    out.shape[static_cast<size_t>(d)] = maxCoord[static_cast<size_t>(d)] + 1;
  return out;
}

RawTensor readTriplets(const std::string& path) {
  support::MappedFile file = mapInput(path);
  return parseTriplets(file.data(), path);
}

}  // namespace sparseflow::io
