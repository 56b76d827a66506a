// Parsing Fortran formats into field layouts, and reading fixed-width numeric fields by them.
#include "io/fortran_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include "support/check.h"

namespace sparseflow::io {
namespace {

/// Largest number a format may spell (repeat counts, widths, positions, scale factors).
constexpr int64_t kMaxFormatNumber = 1'000'000'000;
/// Deepest nesting of parenthesized groups.
constexpr int kMaxGroupDepth = 32;

/// One item of a format as written, before repeat counts are expanded.
struct Item {
  enum class Kind : uint8_t {
    kField,      // Iw Fw.d Ew.d Dw.d Gw.d
    kGroup,      // r(...)
    kSlash,      // /
    kColon,      // :
    kSkip,       // nX, TRn
    kTab,        // Tc
    kTabLeft,    // TLn
    kScale,      // kP
    kBlankNull,  // BN
    kBlankZero,  // BZ
    kNoop,       // S SP SS
  };
  Kind kind = Kind::kNoop;
  int64_t repeat = 1;
  char letter = 'I';
  int32_t width = 0;
  int32_t digits = 0;
  int64_t amount = 0;  // kSkip, kTab, kTabLeft, kScale
  std::vector<Item> children;
};

/// `text` quoted for an error message, at most 40 characters, unprintable bytes escaped.
std::string quoteText(std::string_view text) {
  constexpr size_t kMaxShown = 40;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "'";
}

char upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
bool isDecimalDigit(char c) {
  return c >= '0' && c <= '9';
}

/// Recursive-descent parser over the format with blanks removed and letters upper-cased.
class FormatParser {
 public:
  FormatParser(std::string_view text, std::string_view where) : text_(text), where_(where) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == ' ' || text[i] == '\t') continue;
      chars_ += upper(text[i]);
      origin_.push_back(i);
    }
  }

  /// The top-level item list of "(...)".
  std::vector<Item> parseFormat() {
    if (peek() != '(') fail("it must start with '('");
    ++pos_;
    std::vector<Item> items = parseItems(1);
    ++pos_;  // ')'
    if (pos_ != chars_.size()) fail("unexpected text after the closing ')'");
    return items;
  }

  [[noreturn]] void fail(const std::string& why) const { failWith(ErrorCode::kParseError, why); }

  [[noreturn]] void failWith(ErrorCode code, const std::string& why) const {
    size_t at = pos_ < origin_.size() ? origin_[pos_] + 1 : text_.size() + 1;
    std::ostringstream message;
    message << where_ << ": bad Fortran format " << quoteText(text_) << ": " << why;
    if (code == ErrorCode::kParseError) message << " (at character " << at << ")";
    throw Error(code, message.str());
  }

 private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < chars_.size() ? chars_[pos_ + ahead] : '\0';
  }

  int64_t parseNumber(const char* what) {
    if (!isDecimalDigit(peek())) fail(std::string("expected ") + what);
    int64_t value = 0;
    while (isDecimalDigit(peek())) {
      value = value * 10 + (chars_[pos_++] - '0');
      if (value > kMaxFormatNumber) fail(std::string(what) + " is too large");
    }
    return value;
  }

  /// Items up to (not including) the ')' that closes the current group.
  std::vector<Item> parseItems(int depth) {
    if (depth > kMaxGroupDepth) fail("groups nested too deeply");
    std::vector<Item> items;
    while (true) {
      while (peek() == ',') ++pos_;  // commas are optional between items, as many compilers allow
      char c = peek();
      if (c == '\0') fail("missing ')'");
      if (c == ')') return items;
      items.push_back(parseItem(depth));
    }
  }

  Item parseItem(int depth) {
    Item item;
    char c = peek();
    if (c == '+' || c == '-') {
      bool negative = c == '-';
      ++pos_;
      int64_t k = parseNumber("scale factor");
      if (peek() != 'P') fail("a signed number must be a scale factor (kP)");
      ++pos_;
      item.kind = Item::Kind::kScale;
      item.amount = negative ? -k : k;
      return item;
    }
    bool counted = isDecimalDigit(c);
    if (counted) {
      item.repeat = parseNumber("repeat count");
      c = peek();
      if (c == 'P') {
        ++pos_;
        item.kind = Item::Kind::kScale;
        item.amount = item.repeat;
        item.repeat = 1;
        return item;
      }
      if (c == 'X') {
        ++pos_;
        if (item.repeat == 0) fail("0X is not a valid skip");
        item.kind = Item::Kind::kSkip;
        item.amount = item.repeat;
        item.repeat = 1;
        return item;
      }
      if (c == 'H') failWith(ErrorCode::kNotSupported, "Hollerith (nH) strings are not supported");
      if (item.repeat == 0) fail("a repeat count must be at least 1");
    }
    switch (c) {
      case '(': {
        ++pos_;
        item.kind = Item::Kind::kGroup;
        item.children = parseItems(depth + 1);
        ++pos_;  // ')'
        return item;
      }
      case '/':
        ++pos_;
        item.kind = Item::Kind::kSlash;
        return item;
      case ':':
        ++pos_;
        item.kind = Item::Kind::kColon;
        break;
      case 'X':
        ++pos_;
        item.kind = Item::Kind::kSkip;
        item.amount = 1;
        break;
      case 'T': {
        ++pos_;
        item.kind = Item::Kind::kTab;
        if (peek() == 'L' || peek() == 'R') {
          item.kind = peek() == 'L' ? Item::Kind::kTabLeft : Item::Kind::kSkip;
          ++pos_;
        }
        item.amount = parseNumber("tab position");
        if (item.kind == Item::Kind::kTab && item.amount == 0) fail("T0 is not a valid position");
        break;
      }
      case 'B':
        if (peek(1) == 'N' || peek(1) == 'Z') {
          item.kind = peek(1) == 'N' ? Item::Kind::kBlankNull : Item::Kind::kBlankZero;
          pos_ += 2;
          break;
        }
        failWith(ErrorCode::kNotSupported, "binary (B) fields are not supported");
      case 'S':
        ++pos_;
        if (peek() == 'P' || peek() == 'S') ++pos_;
        item.kind = Item::Kind::kNoop;  // sign control only affects output
        break;
      case 'P': fail("P needs a scale factor before it (kP)");
      case '\'':
      case '"': failWith(ErrorCode::kNotSupported, "quoted strings are not supported");
      case 'A':
      case 'L':
      case 'O':
      case 'Z':
        failWith(ErrorCode::kNotSupported,
                 std::string("'") + c + "' fields are not supported: only numeric fields are");
      default: return parseField(item);
    }
    if (counted) fail("this edit descriptor cannot take a repeat count");
    return item;
  }

  /// Iw[.m], Fw.d, Dw.d, Ew.d[Ee], ESw.d[Ee], ENw.d[Ee], Gw[.d[Ee]] after an optional repeat count.
  Item parseField(Item item) {
    char letter = peek();
    if (letter != 'I' && letter != 'F' && letter != 'E' && letter != 'D' && letter != 'G') {
      fail(std::string("unknown edit descriptor ") + quoteText(std::string(1, letter)));
    }
    ++pos_;
    if (letter == 'E' && (peek() == 'S' || peek() == 'N')) ++pos_;  // ES and EN read like E
    item.kind = Item::Kind::kField;
    item.letter = letter;
    int64_t width = parseNumber("field width");
    if (width == 0) fail("field width must be at least 1");
    if (width > FortranFormat::kMaxRecordWidth) fail("field is wider than a record may be");
    item.width = static_cast<int32_t>(width);
    if (peek() == '.') {
      ++pos_;
      int64_t digits = parseNumber(letter == 'I' ? "minimum digits" : "decimal digits");
      if (digits > FortranFormat::kMaxRecordWidth) fail("too many decimal digits");
      if (letter != 'I') item.digits = static_cast<int32_t>(digits);  // Iw.m: m is output only
    } else if (letter == 'F' || letter == 'E' || letter == 'D') {
      fail("a real field needs its decimal digits (w.d)");
    }
    if ((letter == 'E' || letter == 'G') && peek() == 'E' && isDecimalDigit(peek(1))) {
      ++pos_;
      parseNumber("exponent digits");  // Ee sets the printed exponent width: output only
    }
    return item;
  }

  std::string_view text_;
  std::string_view where_;
  std::string chars_;
  std::vector<size_t> origin_;  // index in text_ of each character of chars_
  size_t pos_ = 0;
};

/// Steps `items` expand to, counting every item at least once (so the work of expanding them is
/// bounded too); saturates just above FortranFormat::kMaxSteps.
int64_t expandedSize(const std::vector<Item>& items) {
  constexpr int64_t kLimit = FortranFormat::kMaxSteps + 1;
  int64_t total = 0;
  for (const Item& item : items) {
    int64_t one = item.kind == Item::Kind::kGroup ? 1 + expandedSize(item.children) : 1;
    total += std::min(kLimit, item.repeat * std::min(kLimit, one));  // both factors <= 1e9
    if (total >= kLimit) return kLimit;
  }
  return total;
}

/// Column, scale factor and blank mode while expanding a format.
struct ExpandState {
  int64_t column = 0;
  int32_t scale = 0;
  FortranBlanks blanks = FortranBlanks::kStrict;
};

void expand(const std::vector<Item>& items, ExpandState& state, std::vector<FortranStep>& out,
            const FormatParser& parser) {
  auto checkColumn = [&](int64_t end) {
    if (end > FortranFormat::kMaxRecordWidth) {
      parser.failWith(ErrorCode::kNotSupported, "a record wider than " +
                                                    std::to_string(FortranFormat::kMaxRecordWidth) +
                                                    " columns is not supported");
    }
  };
  for (const Item& item : items) {
    for (int64_t r = 0; r < item.repeat; ++r) {
      switch (item.kind) {
        case Item::Kind::kField: {
          checkColumn(state.column + item.width);
          FortranStep step;
          step.kind = FortranStep::Kind::kField;
          step.field = FortranField{item.letter, static_cast<int32_t>(state.column),
                                    item.width,  item.digits,
                                    state.scale, state.blanks};
          out.push_back(step);
          state.column += item.width;
          break;
        }
        case Item::Kind::kGroup: expand(item.children, state, out, parser); break;
        case Item::Kind::kSlash:
          out.push_back(FortranStep{FortranStep::Kind::kNewRecord, {}});
          state.column = 0;
          break;
        case Item::Kind::kColon: out.push_back(FortranStep{FortranStep::Kind::kColon, {}}); break;
        case Item::Kind::kSkip:
          state.column += item.amount;
          checkColumn(state.column);
          break;
        case Item::Kind::kTab:
          state.column = item.amount - 1;
          checkColumn(state.column);
          break;
        case Item::Kind::kTabLeft:
          state.column = std::max<int64_t>(0, state.column - item.amount);
          break;
        case Item::Kind::kScale: state.scale = static_cast<int32_t>(item.amount); break;
        case Item::Kind::kBlankNull: state.blanks = FortranBlanks::kNull; break;
        case Item::Kind::kBlankZero: state.blanks = FortranBlanks::kZero; break;
        case Item::Kind::kNoop: break;
      }
    }
  }
}

/// Record offset and column of each field of `steps`, the number of records they span, and the
/// most fields in one record.
void indexSteps(const std::vector<FortranStep>& steps, std::vector<int64_t>& records,
                int64_t& recordCount, int32_t& maxFields, bool& integerOnly) {
  int64_t record = 0;
  int32_t fields = 0;
  for (const FortranStep& step : steps) {
    if (step.kind == FortranStep::Kind::kNewRecord) {
      ++record;
      fields = 0;
    } else if (step.kind == FortranStep::Kind::kField) {
      records.push_back(record);
      maxFields = std::max(maxFields, ++fields);
      integerOnly = integerOnly && step.field.letter == 'I';
    }
  }
  recordCount = record + 1;
}

}  // namespace

FortranFormat FortranFormat::parse(std::string_view text, std::string_view where) {
  FormatParser parser(text, where);
  std::vector<Item> items = parser.parseFormat();
  if (expandedSize(items) > kMaxSteps) {
    parser.failWith(ErrorCode::kNotSupported, "repeat counts expand to more than " +
                                                  std::to_string(kMaxSteps) + " edit descriptors");
  }
  // Reversion restarts at the last top-level group (with its repeat count), else at the start.
  size_t restart = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == Item::Kind::kGroup) restart = i;
  }
  FortranFormat format;
  format.text_ = std::string(text);
  ExpandState state;
  expand(items, state, format.firstPass_, parser);
  ExpandState again{0, state.scale, state.blanks};  // reversion keeps the scale and blank modes
  std::vector<Item> tail(items.begin() + static_cast<std::ptrdiff_t>(restart), items.end());
  expand(tail, again, format.reversion_, parser);

  indexSteps(format.firstPass_, format.firstRecords_, format.firstPassRecordCount_,
             format.maxFieldsPerRecord_, format.integerOnly_);
  indexSteps(format.reversion_, format.reversionRecords_, format.reversionRecordCount_,
             format.maxFieldsPerRecord_, format.integerOnly_);
  if (format.firstRecords_.empty()) parser.fail("it has no numeric field");
  if (format.reversionRecords_.empty()) {
    parser.fail("the part repeated on reversion (from the last top-level group) has no field");
  }
  return format;
}

FortranPosition FortranFormat::locate(int64_t index) const {
  auto columnOf = [](const std::vector<FortranStep>& steps, int64_t fieldIndex) {
    for (const FortranStep& step : steps) {
      if (step.kind == FortranStep::Kind::kField && fieldIndex-- == 0) return step.field.column;
    }
    return 0;
  };
  int64_t first = static_cast<int64_t>(firstRecords_.size());
  if (index < first)
    return {firstRecords_[static_cast<size_t>(index)], columnOf(firstPass_, index)};
  int64_t rest = index - first;
  int64_t perCycle = static_cast<int64_t>(reversionRecords_.size());
  int64_t cycle = rest / perCycle;
  int64_t within = rest % perCycle;
  return {firstPassRecordCount_ + cycle * reversionRecordCount_ +
              reversionRecords_[static_cast<size_t>(within)],
          columnOf(reversion_, within)};
}

namespace {

/// A field's characters with blanks handled by its mode; fails on a blank inside a number when
/// the mode is strict. Columns missing at the end of a short line are blanks.
FieldStatus cleanField(std::string_view field, const FortranField& edit, std::string& out) {
  out.clear();
  size_t begin = 0;
  size_t end = field.size();
  while (begin < end && field[begin] == ' ') ++begin;
  switch (edit.blanks) {
    case FortranBlanks::kStrict:
      while (end > begin && field[end - 1] == ' ') --end;
      for (size_t i = begin; i < end; ++i) {
        if (field[i] == ' ') {
          return {ErrorCode::kParseError,
                  "blank inside a number (do the columns line up with the format?)"};
        }
        out += field[i];
      }
      break;
    case FortranBlanks::kNull:
      for (size_t i = begin; i < end; ++i) {
        if (field[i] != ' ') out += field[i];
      }
      break;
    case FortranBlanks::kZero:
      if (begin == end) break;  // all blank
      for (size_t i = begin; i < end; ++i) out += field[i] == ' ' ? '0' : field[i];
      if (static_cast<int32_t>(field.size()) < edit.width) {
        out.append(static_cast<size_t>(edit.width) - field.size(), '0');
      }
      break;
  }
  return {};
}

bool equalsUpper(std::string_view text, std::string_view upperWord) {
  if (text.size() != upperWord.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (upper(text[i]) != upperWord[i]) return false;
  }
  return true;
}

}  // namespace

FieldStatus parseFortranInteger(std::string_view field, const FortranField& edit, int64_t& value) {
  thread_local std::string text;
  FieldStatus status = cleanField(field, edit, text);
  if (!status.ok()) return status;
  value = 0;
  if (text.empty()) return {};  // a blank field is zero
  size_t i = 0;
  bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') ++i;
  if (i == text.size()) return {ErrorCode::kParseError, "a sign without digits"};
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    if (!isDecimalDigit(text[i])) return {ErrorCode::kParseError, "not an integer"};
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (static_cast<uint64_t>(INT64_MAX) + 1 - digit) / 10) {
      return {ErrorCode::kOutOfRange, "integer does not fit in 64 bits"};
    }
    magnitude = magnitude * 10 + digit;
  }
  if (!negative && magnitude > static_cast<uint64_t>(INT64_MAX)) {
    return {ErrorCode::kOutOfRange, "integer does not fit in 64 bits"};
  }
  value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
  return {};
}

FieldStatus parseFortranReal(std::string_view field, const FortranField& edit, double& value) {
  if (edit.letter == 'I') {
    int64_t integer = 0;
    FieldStatus status = parseFortranInteger(field, edit, integer);
    value = static_cast<double>(integer);
    return status;
  }
  thread_local std::string text;
  FieldStatus status = cleanField(field, edit, text);
  if (!status.ok()) return status;
  value = 0.0;
  if (text.empty()) return {};  // a blank field is zero
  size_t i = 0;
  bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') ++i;

  std::string_view word = std::string_view(text).substr(i);
  if (equalsUpper(word, "INF") || equalsUpper(word, "INFINITY")) {
    value = negative ? -std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::infinity();
    return {};
  }
  if (word.size() >= 3 && equalsUpper(word.substr(0, 3), "NAN") &&
      (word.size() == 3 || (word[3] == '(' && word.back() == ')'))) {
    value = std::numeric_limits<double>::quiet_NaN();
    return {};
  }

  // Significant digits (leading zeros dropped) and where the decimal point was.
  thread_local std::string digits;
  digits.clear();
  bool sawDigit = false;
  bool sawPoint = false;
  int64_t fractionDigits = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (isDecimalDigit(c)) {
      sawDigit = true;
      if (!(digits.empty() && c == '0')) digits += c;
      if (sawPoint) ++fractionDigits;
    } else if (c == '.' && !sawPoint) {
      sawPoint = true;
    } else {
      break;
    }
  }
  if (!sawDigit) return {ErrorCode::kParseError, "not a number"};

  bool hasExponent = false;
  int64_t exponent = 0;
  if (i < text.size()) {
    char c = upper(text[i]);
    if (c == 'E' || c == 'D' || c == 'Q') {
      ++i;
    } else if (c != '+' && c != '-') {
      return {ErrorCode::kParseError, "unexpected character in a number"};
    }
    hasExponent = true;
    bool negativeExponent = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negativeExponent = text[i++] == '-';
    if (i == text.size()) return {ErrorCode::kParseError, "exponent without digits"};
    for (; i < text.size(); ++i) {
      if (!isDecimalDigit(text[i]))
        return {ErrorCode::kParseError, "unexpected character in exponent"};
      exponent = std::min<int64_t>(exponent * 10 + (text[i] - '0'), 1'000'000);
    }
    if (negativeExponent) exponent = -exponent;
  }
  if (digits.empty()) {
    value = negative ? -0.0 : 0.0;
    return {};
  }
  // value = digits * 10^power
  int64_t power = exponent - (sawPoint ? fractionDigits : edit.digits) -
                  (hasExponent ? 0 : static_cast<int64_t>(edit.scale));
  digits += 'e';
  digits += std::to_string(power);
  double magnitude = 0.0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (error == std::errc::result_out_of_range) {
    // Which way it fell out of range: the decimal exponent of the leading digit.
    int64_t leading = static_cast<int64_t>(digits.find('e')) + power;
    if (leading > 0) return {ErrorCode::kOutOfRange, "value too large for a double"};
    magnitude = 0.0;
  } else if (error != std::errc() || end != digits.data() + digits.size()) {
    return {ErrorCode::kParseError, "not a number"};
  }
  value = negative ? -magnitude : magnitude;
  return {};
}

LineCursor::LineCursor(std::string_view text, std::string name)
    : text_(text), name_(std::move(name)) {
  totalLines_ = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++totalLines_;
}

std::string_view LineCursor::next() {
  SF_ICHECK(!atEnd()) << "LineCursor::next past the end of " << name_;
  size_t newline = text_.find('\n', offset_);
  size_t end = newline == std::string_view::npos ? text_.size() : newline;
  std::string_view line = text_.substr(offset_, end - offset_);
  offset_ = newline == std::string_view::npos ? text_.size() : newline + 1;
  ++line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

namespace {

/// One Fortran READ of `count` values: walks the format's steps over the lines, calling
/// `parse(fieldText, field, out)` for each value.
template <typename T, typename Parse>
std::vector<T> readValues(LineCursor& lines, const FortranFormat& format, int64_t count,
                          std::string_view what, Parse parse) {
  SF_ICHECK(count >= 0) << "negative count " << count;
  // Bound the allocation by what the rest of the text can hold (a header may claim anything): at
  // most maxFieldsPerRecord() values a line, and one per character, except that a line may end in
  // columns left blank (Fortran reads them as zeros), counted as one more value per line.
  const int64_t lineCount = lines.remainingLines();
  const int64_t byteCount = static_cast<int64_t>(lines.remainingBytes());
  const int64_t capacity =
      std::min(lineCount * format.maxFieldsPerRecord(), byteCount + lineCount);  // no overflow
  SF_CHECK_CODE(count <= capacity, ErrorCode::kParseError)
      << lines.name() << ":" << lines.lineNumber() + 1 << ": " << what << ": " << count
      << " values cannot fit in the " << lineCount << " lines (" << byteCount
      << " bytes) left with format " << format.text() << " (at most " << format.maxFieldsPerRecord()
      << " per line, one per character)";
  std::vector<T> out;
  if (count == 0) return out;
  out.reserve(static_cast<size_t>(count));

  std::string_view line;
  auto startRecord = [&] {
    SF_CHECK_CODE(!lines.atEnd(), ErrorCode::kParseError)
        << lines.name() << ":" << lines.lineNumber() + 1 << ": " << what << ": the file ends after "
        << out.size() << " of " << count << " values";
    line = lines.next();
  };
  const std::vector<FortranStep>* steps = &format.firstPass();
  size_t next = 0;
  startRecord();
  while (true) {
    if (next == steps->size()) {  // format reversion: a new record, from the restart point
      steps = &format.reversion();
      next = 0;
      startRecord();
      continue;
    }
    const FortranStep& step = (*steps)[next++];
    if (step.kind == FortranStep::Kind::kNewRecord) {
      startRecord();
      continue;
    }
    if (step.kind == FortranStep::Kind::kColon) continue;
    const FortranField& field = step.field;
    std::string_view text;
    if (static_cast<size_t>(field.column) < line.size()) {
      text = line.substr(static_cast<size_t>(field.column), static_cast<size_t>(field.width));
    }
    T value{};
    FieldStatus status = parse(text, field, value);
    if (!status.ok()) {
      throw Error(status.code, lines.name() + ":" + std::to_string(lines.lineNumber()) + ":" +
                                   std::to_string(field.column + 1) + ": " + std::string(what) +
                                   ": value " + std::to_string(out.size() + 1) + " of " +
                                   std::to_string(count) + ": " + status.reason + ": " +
                                   quoteText(text) + " (format " + format.text() + ")");
    }
    out.push_back(value);
    if (static_cast<int64_t>(out.size()) == count) break;
  }
  // The READ goes on through '/' (each starts a record) up to a field, a ':' or the format's end.
  for (; next < steps->size(); ++next) {
    if ((*steps)[next].kind != FortranStep::Kind::kNewRecord) break;
    if (!lines.atEnd()) lines.next();
  }
  return out;
}

}  // namespace

std::vector<int64_t> readFortranIntegers(LineCursor& lines, const FortranFormat& format,
                                         int64_t count, std::string_view what) {
  SF_CHECK_CODE(format.integerOnly(), ErrorCode::kParseError)
      << lines.name() << ":" << lines.lineNumber() + 1 << ": " << what << ": format "
      << format.text() << " has a real field where integers are expected";
  return readValues<int64_t>(lines, format, count, what, parseFortranInteger);
}

std::vector<double> readFortranReals(LineCursor& lines, const FortranFormat& format, int64_t count,
                                     std::string_view what) {
  return readValues<double>(lines, format, count, what, parseFortranReal);
}

}  // namespace sparseflow::io
