// Fortran edit descriptors as Harwell-Boeing headers use them, and fixed-width reading by them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sparseflow/error.h"

namespace sparseflow::io {

/// How blanks inside a numeric field are read.
enum class FortranBlanks : uint8_t {
  /// No BN/BZ in the format: leading and trailing blanks are ignored and a blank between two
  /// characters of a number is an error. Fortran would drop it (BN), but in a fixed-width file it
  /// nearly always means the columns do not line up with the format, so we say so.
  kStrict,
  kNull,  ///< BN: every blank is ignored.
  kZero,  ///< BZ: blanks after the first non-blank, and missing columns at the end, are zeros.
};

/// One data edit descriptor (Iw, Fw.d, Ew.d, Dw.d, Gw.d, ESw.d, ENw.d) placed in its record.
struct FortranField {
  char letter = 'I';   ///< 'I', 'F', 'E', 'D' or 'G' (ES and EN read as 'E')
  int32_t column = 0;  ///< 0-based first column in the line
  int32_t width = 0;   ///< w
  int32_t digits = 0;  ///< d: the implied decimal places when a field has no '.'; 0 for Iw
  int32_t scale = 0;   ///< the kP scale factor in effect
  FortranBlanks blanks = FortranBlanks::kStrict;
};

/// What a format does, in order: read a field, start a new record (line), or stop if no items
/// remain (':').
struct FortranStep {
  enum class Kind : uint8_t { kField, kNewRecord, kColon };
  Kind kind = Kind::kField;
  FortranField field;
};

/// Where value `index` of a read lies: record (line) offset from the first line read, and field.
struct FortranPosition {
  int64_t record = 0;
  int32_t column = 0;
};

/// A parsed format such as "(16I5)", "(1P,4D20.12)" or "(3(1X,E23.15))": the steps of its first
/// pass and those repeated on format reversion (from the last top-level group, or the whole
/// format), each already expanded by its repeat counts.
class FortranFormat {
 public:
  /// Widest record accepted; Harwell-Boeing cards are 80 columns. Bounds how many values one line
  /// can hold, and so how much a header can make a reader allocate per line of file.
  static constexpr int32_t kMaxRecordWidth = 1024;
  /// Most steps a format may expand to (repeat counts multiplied out).
  static constexpr int64_t kMaxSteps = 8192;

  /// Parses `text` (case and blanks ignored). Throws Error(kParseError) "WHERE: bad Fortran format
  /// 'TEXT': REASON", or kNotSupported for valid descriptors that carry no numbers (A, L, H,
  /// quoted strings, B, O, Z).
  static FortranFormat parse(std::string_view text, std::string_view where);

  const std::string& text() const { return text_; }
  const std::vector<FortranStep>& firstPass() const { return firstPass_; }
  const std::vector<FortranStep>& reversion() const { return reversion_; }
  /// Most fields any one record holds.
  int32_t maxFieldsPerRecord() const { return maxFieldsPerRecord_; }
  /// True when every field is an Iw field.
  bool integerOnly() const { return integerOnly_; }
  /// Record and column of value `index` (0-based) of a read that starts on a new record.
  FortranPosition locate(int64_t index) const;

 private:
  std::string text_;
  std::vector<FortranStep> firstPass_;
  std::vector<FortranStep> reversion_;
  int32_t maxFieldsPerRecord_ = 0;
  bool integerOnly_ = true;
  // For locate(): record offset of each field of the first pass and of the reversion part.
  std::vector<int64_t> firstRecords_;
  std::vector<int64_t> reversionRecords_;
  int64_t firstPassRecordCount_ = 0;
  int64_t reversionRecordCount_ = 0;
};

/// Outcome of reading one field: kOk, or an error code and why.
struct FieldStatus {
  ErrorCode code = ErrorCode::kOk;
  const char* reason = "";
  bool ok() const { return code == ErrorCode::kOk; }
};

/// Reads an integer field (text cut from a line; columns past the line's end are blanks, read as
/// zeros under BZ). An all-blank field is 0, as in Fortran.
FieldStatus parseFortranInteger(std::string_view field, const FortranField& edit, int64_t& value);

/// Reads a real field by Fortran input rules: an exponent may be written with E, D or Q, or with
/// its sign alone ("1.234-05"); without a '.', the last `digits` digits are decimals; without an
/// exponent, the scale factor divides by 10^scale; all blank is 0; INF and NAN are accepted.
/// An Iw field reads an integer. Values too small for a double become 0.
FieldStatus parseFortranReal(std::string_view field, const FortranField& edit, double& value);

/// The lines of a text, one at a time, with 1-based numbers for error messages. A CR before a
/// newline is dropped.
class LineCursor {
 public:
  /// `name` is what errors call the text (usually the file path); the text must outlive this.
  LineCursor(std::string_view text, std::string name);

  bool atEnd() const { return offset_ >= text_.size(); }
  /// The next line (without its newline); the cursor must not be at the end.
  std::string_view next();
  /// Number of the line next() returned last (0 before the first call).
  int64_t lineNumber() const { return line_; }
  /// Lines not read yet (a last line without a newline counts).
  int64_t remainingLines() const { return totalLines_ - line_; }
  /// Bytes not read yet.
  size_t remainingBytes() const { return text_.size() - offset_; }
  const std::string& name() const { return name_; }

 private:
  std::string_view text_;
  std::string name_;
  size_t offset_ = 0;
  int64_t line_ = 0;
  int64_t totalLines_ = 0;
};

/// Reads `count` integers laid out by `format`, starting on the cursor's next line, as one
/// Fortran READ does; leaves the cursor after the last record used. Fails with kParseError
/// "NAME:LINE:COL: WHAT: ..." on a bad field or early end of text, kOutOfRange on an integer
/// beyond int64; fails before allocating when the rest of the text cannot hold `count` values
/// (more than maxFieldsPerRecord() a line, or more than one a character plus one a line).
/// `format` must be integerOnly().
std::vector<int64_t> readFortranIntegers(LineCursor& lines, const FortranFormat& format,
                                         int64_t count, std::string_view what);

/// As readFortranIntegers, for real values (any data edit descriptor).
std::vector<double> readFortranReals(LineCursor& lines, const FortranFormat& format, int64_t count,
                                     std::string_view what);

}  // namespace sparseflow::io
