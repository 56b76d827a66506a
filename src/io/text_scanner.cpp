// TextScanner: the out-of-line parts (floating point, line skipping, error messages).
#include "io/text_scanner.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>

namespace sparseflow::io {
namespace {

bool isDigit(char c) {
  return static_cast<unsigned char>(c - '0') < 10;
}

/// The value of a decimal token [p, end) that std::from_chars found outside the range of double:
/// +-inf when its magnitude is huge, +-0 when tiny, as strtod rounds.
double outOfRangeValue(const char* p, const char* end) {
  bool negative = p != end && *p == '-';
  if (p != end && (*p == '-' || *p == '+')) ++p;
  while (p != end && *p == '0') ++p;
  int64_t integerDigits = 0;
  for (; p != end && isDigit(*p); ++p) ++integerDigits;
  int64_t leadingFractionZeros = 0;
  if (p != end && *p == '.') {
    ++p;
    if (integerDigits == 0) {
      for (; p != end && *p == '0'; ++p) ++leadingFractionZeros;
    }
    while (p != end && isDigit(*p)) ++p;
  }
  int64_t exponent = 0;
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool negativeExponent = p != end && *p == '-';
    if (p != end && (*p == '-' || *p == '+')) ++p;
    for (; p != end && isDigit(*p); ++p) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (*p - '0');
    }
    if (negativeExponent) exponent = -exponent;
  }
  // Decimal exponent of the leading significant digit.
  int64_t magnitude =
      integerDigits > 0 ? integerDigits - 1 + exponent : exponent - leadingFractionZeros - 1;
  double value = magnitude > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return negative ? -value : value;
}

}  // namespace

std::string TextScanner::location() const {
  return name_ + ":" + std::to_string(line_);
}

bool TextScanner::skipLines(int comment) {
  while (cur_ != end_) {
    const char* p = cur_;
    while (p != end_ && isBlank(*p)) ++p;
    if (p == end_) {
      cur_ = end_;
      return false;
    }
    if (*p == '\n') {
      cur_ = p + 1;
      ++line_;
    } else if (*p == comment && comment >= 0) {
      cur_ = p;
      nextLine();
    } else {
      return true;
    }
  }
  return false;
}

std::string_view TextScanner::restOfLine() const {
  const char* p = cur_;
  while (p != end_ && *p != '\n') ++p;
  const char* q = p;
  while (q != cur_ && q[-1] == '\r') --q;
  return {cur_, static_cast<size_t>(q - cur_)};
}

int64_t TextScanner::countTokensInLine() const {
  int64_t count = 0;
  const char* p = cur_;
  while (p != end_ && *p != '\n') {
    while (p != end_ && isBlank(*p)) ++p;
    if (p == end_ || *p == '\n') break;
    ++count;
    while (p != end_ && *p != '\n' && !isBlank(*p)) ++p;
  }
  return count;
}

const char* TextScanner::tokenEnd(const char* p) const {
  while (p != end_ && *p != '\n' && !isBlank(*p)) ++p;
  return p;
}

std::string_view TextScanner::readToken() {
  skipBlanks();
  const char* start = cur_;
  cur_ = tokenEnd(cur_);
  return {start, static_cast<size_t>(cur_ - start)};
}

NumberStatus TextScanner::tryReadDouble(double* out) {
  skipBlanks();
  const char* p = cur_;
  // std::from_chars refuses a leading '+' (strtod accepts it); allow exactly one sign.
  if (p != end_ && *p == '+') {
    ++p;
    if (p == end_ || *p == '-' || *p == '+') return NumberStatus::kNotANumber;
  }
  double value = 0;
  auto [stop, ec] = std::from_chars(p, end_, value);
  if (ec == std::errc::invalid_argument || !atTokenEnd(stop)) return NumberStatus::kNotANumber;
  if (ec == std::errc::result_out_of_range) value = outOfRangeValue(p, stop);
  *out = value;
  cur_ = stop;
  return NumberStatus::kOk;
}

int64_t TextScanner::readInt64(std::string_view what) {
  int64_t value = 0;
  switch (tryReadInt64(&value)) {
    case NumberStatus::kOk: return value;
    case NumberStatus::kNotANumber: failExpected(what);
    case NumberStatus::kOverflow: break;
  }
  std::string_view token = readToken();
  SF_SCAN_FAIL(*this, kParseError)
      << what << " " << quote(token) << " does not fit in a 64-bit integer";
  return 0;
}

double TextScanner::readDouble(std::string_view what) {
  double value = 0;
  if (tryReadDouble(&value) != NumberStatus::kOk) failExpected(what);
  return value;
}

void TextScanner::checkRoomFor(int64_t count, int64_t tokens, std::string_view what) const {
  int64_t capacity =
      (static_cast<int64_t>(remainingBytes()) + 1) / (2 * std::max<int64_t>(tokens, 1));
  if (count > capacity) {
    SF_SCAN_FAIL(*this, kParseError)
        << "the header declares " << count << " " << what << " but the rest of the file ("
        << remainingBytes() << " bytes) can hold at most " << capacity;
  }
}

void TextScanner::failUnexpected(std::string_view context) {
  skipBlanks();
  std::string_view token{cur_, static_cast<size_t>(tokenEnd(cur_) - cur_)};
  SF_SCAN_FAIL(*this, kParseError) << "unexpected " << quote(token) << " after " << context;
  __builtin_unreachable();
}

bool TextScanner::exactValue(const char* begin, const char* end, uint64_t* value) {
  uint64_t v = 0;
  for (const char* p = begin; p != end; ++p) {
    if (__builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, static_cast<uint64_t>(*p - '0'), &v)) {
      return false;
    }
  }
  *value = v;
  return true;
}

void TextScanner::failExpected(std::string_view what) {
  skipBlanks();
  std::string_view token{cur_, static_cast<size_t>(tokenEnd(cur_) - cur_)};
  if (token.empty()) {
    SF_SCAN_FAIL(*this, kParseError)
        << "expected " << what << ", found end of " << (cur_ == end_ ? "file" : "line");
  } else {
    SF_SCAN_FAIL(*this, kParseError) << "expected " << what << ", found " << quote(token);
  }
  __builtin_unreachable();
}

std::string TextScanner::quote(std::string_view token) {
  constexpr size_t kMaxShown = 40;
  std::string out = "'";
  for (size_t i = 0; i < token.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (token.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

}  // namespace sparseflow::io
