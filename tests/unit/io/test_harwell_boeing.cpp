// Tests for Fortran formats and the Harwell-Boeing / Rutherford-Boeing reader, on real and broken
// files.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "io/fortran_format.h"
#include "io/harwell_boeing.h"
#include "io/matrix_market.h"
#include "support/mapped_file.h"
#include "unit/io/io_test_helpers.h"

namespace sparseflow::io {
namespace {

using testing::dataPath;
using testing::expectError;

// ---------------------------------------------------------------------------------------------
// Fortran formats

FortranFormat parseFormat(std::string_view text) {
  return FortranFormat::parse(text, "test");
}

/// Fields of the first pass as (letter, column, width, digits, scale).
std::vector<std::tuple<char, int, int, int, int>> fieldsOf(const std::vector<FortranStep>& steps) {
  std::vector<std::tuple<char, int, int, int, int>> out;
  for (const FortranStep& step : steps) {
    if (step.kind != FortranStep::Kind::kField) continue;
    const FortranField& f = step.field;
    out.emplace_back(f.letter, f.column, f.width, f.digits, f.scale);
  }
  return out;
}

TEST(FortranFormat, ParsesHarwellBoeingFormats) {
  FortranFormat f = parseFormat("(16I5)");
  EXPECT_EQ(f.maxFieldsPerRecord(), 16);
  EXPECT_TRUE(f.integerOnly());
  auto fields = fieldsOf(f.firstPass());
  ASSERT_EQ(fields.size(), 16u);
  EXPECT_EQ(fields[0], std::make_tuple('I', 0, 5, 0, 0));
  EXPECT_EQ(fields[15], std::make_tuple('I', 75, 5, 0, 0));

  EXPECT_EQ(parseFormat("(10I8)").maxFieldsPerRecord(), 10);
  EXPECT_EQ(parseFormat("(20i4)").maxFieldsPerRecord(), 20);  // lower case, as in lp_afiro.rra
  EXPECT_EQ(parseFormat("(26I3)").maxFieldsPerRecord(), 26);

  f = parseFormat("(4E20.12)");
  EXPECT_FALSE(f.integerOnly());
  fields = fieldsOf(f.firstPass());
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[3], std::make_tuple('E', 60, 20, 12, 0));

  for (std::string_view text : {"(1P,4D20.12)", "(1P4D20.12)", "( 1P, 4D20.12 )", "(1p,4d20.12)"}) {
    fields = fieldsOf(parseFormat(text).firstPass());
    ASSERT_EQ(fields.size(), 4u) << text;
    EXPECT_EQ(fields[1], std::make_tuple('D', 20, 20, 12, 1)) << text;
  }
  fields = fieldsOf(parseFormat("(1P3D24.15)").firstPass());  // arc130.rua
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[2], std::make_tuple('D', 48, 24, 15, 1));

  fields = fieldsOf(parseFormat("(3(1X,E23.15))").firstPass());
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0], std::make_tuple('E', 1, 23, 15, 0));
  EXPECT_EQ(fields[2], std::make_tuple('E', 49, 23, 15, 0));

  fields = fieldsOf(parseFormat("(10F7.1)").firstPass());
  EXPECT_EQ(fields[9], std::make_tuple('F', 63, 7, 1, 0));
  fields = fieldsOf(parseFormat("(5G16.8)").firstPass());
  EXPECT_EQ(fields[4], std::make_tuple('G', 64, 16, 8, 0));
  fields = fieldsOf(parseFormat("(2ES12.4E3, EN10.2, I6.3)").firstPass());
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[1], std::make_tuple('E', 12, 12, 4, 0));
  EXPECT_EQ(fields[3], std::make_tuple('I', 34, 6, 0, 0));
}

TEST(FortranFormat, PositionsScaleFactorsAndRecords) {
  auto fields = fieldsOf(parseFormat("(2X,I3,T20,I2,TL5,I1,TR2,I1)").firstPass());
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(std::get<1>(fields[0]), 2);
  EXPECT_EQ(std::get<1>(fields[1]), 19);
  EXPECT_EQ(std::get<1>(fields[2]), 16);
  EXPECT_EQ(std::get<1>(fields[3]), 19);

  fields = fieldsOf(parseFormat("(F5.1,-2P,F5.1,0P,F5.1)").firstPass());
  EXPECT_EQ(std::get<4>(fields[0]), 0);
  EXPECT_EQ(std::get<4>(fields[1]), -2);
  EXPECT_EQ(std::get<4>(fields[2]), 0);

  // '/' starts a record; reversion restarts at the last top-level group with its repeat count.
  FortranFormat f = parseFormat("(I5/2I3)");
  EXPECT_EQ(f.maxFieldsPerRecord(), 2);
  EXPECT_EQ(f.locate(0).record, 0);
  EXPECT_EQ(f.locate(1).record, 1);
  EXPECT_EQ(f.locate(2).column, 3);
  EXPECT_EQ(f.locate(3).record, 2);  // reversion: whole format again
  EXPECT_EQ(f.locate(5).record, 3);

  f = parseFormat("(I5, 2(I3))");
  EXPECT_EQ(f.locate(2).column, 8);
  EXPECT_EQ(f.locate(3).record, 1);  // reversion to 2(I3): I3 I3 per record
  EXPECT_EQ(f.locate(3).column, 0);
  EXPECT_EQ(f.locate(4).column, 3);
  EXPECT_EQ(f.locate(5).record, 2);
  EXPECT_EQ(f.maxFieldsPerRecord(), 3);
}

void expectFormatError(std::string_view text, ErrorCode code, const std::string& fragment) {
  try {
    FortranFormat::parse(text, "m.rua:4: VALFMT");
    ADD_FAILURE() << "no error for format " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << text << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("m.rua:4: VALFMT: bad Fortran format"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(FortranFormat, RejectsBadFormats) {
  expectFormatError("", ErrorCode::kParseError, "must start with '('");
  expectFormatError("16I5", ErrorCode::kParseError, "must start with '('");
  expectFormatError("(16I5", ErrorCode::kParseError, "missing ')'");
  expectFormatError("(16I5))", ErrorCode::kParseError, "after the closing ')'");
  expectFormatError("(16Q5)", ErrorCode::kParseError, "unknown edit descriptor 'Q'");
  expectFormatError("(16I0)", ErrorCode::kParseError, "width must be at least 1");
  expectFormatError("(0I5)", ErrorCode::kParseError, "repeat count must be at least 1");
  expectFormatError("(4E20)", ErrorCode::kParseError, "decimal digits");
  expectFormatError("(4E20.)", ErrorCode::kParseError, "expected decimal digits");
  expectFormatError("(I99999999999)", ErrorCode::kParseError, "too large");
  expectFormatError("(1X)", ErrorCode::kParseError, "no numeric field");
  expectFormatError("()", ErrorCode::kParseError, "no numeric field");
  expectFormatError("(I5,(1X))", ErrorCode::kParseError, "reversion");
  expectFormatError("(P,I5)", ErrorCode::kParseError, "scale factor");
  expectFormatError("(-2I5)", ErrorCode::kParseError, "scale factor");
  expectFormatError("(2T5,I5)", ErrorCode::kParseError, "repeat count");
  expectFormatError("(((((((((((((((((((((((((((((((((I5)))))))))))))))))))))))))))))))))",
                    ErrorCode::kParseError, "nested too deeply");
  expectFormatError("(300I5)", ErrorCode::kNotSupported, "wider than 1024");
  expectFormatError("(T2000,I5)", ErrorCode::kNotSupported, "wider than 1024");
  expectFormatError("(1000000000(1000000000(/)),I1)", ErrorCode::kNotSupported, "expand to more");
  expectFormatError("(10A8)", ErrorCode::kNotSupported, "'A' fields are not supported");
  expectFormatError("(5HHELLO,I5)", ErrorCode::kNotSupported, "Hollerith");
  expectFormatError("('x',I5)", ErrorCode::kNotSupported, "quoted strings");
  expectFormatError("(B8)", ErrorCode::kNotSupported, "binary");
}

double readReal(std::string_view text, std::string_view format = "(E20.12)") {
  FortranFormat f = parseFormat(format);
  double value = -1;
  FieldStatus status = parseFortranReal(text, f.firstPass()[0].field, value);
  EXPECT_TRUE(status.ok()) << "'" << text << "': " << status.reason;
  return value;
}

FieldStatus realStatus(std::string_view text, std::string_view format = "(E20.12)") {
  FortranFormat f = parseFormat(format);
  double value = 0;
  return parseFortranReal(text, f.firstPass()[0].field, value);
}

TEST(FortranFields, ReadsRealsByFortranRules) {
  EXPECT_EQ(readReal("  -.156903353468787E-14"), -.156903353468787E-14);
  EXPECT_EQ(readReal("1.5D+03"), 1500.0);
  EXPECT_EQ(readReal("1.5d-03"), 1.5e-3);
  EXPECT_EQ(readReal("1.5Q2"), 150.0);
  EXPECT_EQ(readReal("1.234-05"), 1.234e-05);  // exponent without its letter
  EXPECT_EQ(readReal("0.1234+105"), 0.1234e105);
  EXPECT_EQ(readReal("0.1234-105"), 0.1234e-105);
  EXPECT_EQ(readReal("+7."), 7.0);
  EXPECT_EQ(readReal(".5"), 0.5);
  EXPECT_EQ(readReal("                    "), 0.0);  // blank field is zero
  EXPECT_EQ(readReal(""), 0.0);                      // past the end of a short line
  EXPECT_EQ(readReal("-0.0"), 0.0);
  EXPECT_TRUE(std::signbit(readReal("-0.0")));
  EXPECT_EQ(readReal("1.0E-400"), 0.0);  // underflow reads as zero
  EXPECT_EQ(readReal("0.123456789012345678901234567890E+01"), 1.2345678901234568);
  EXPECT_EQ(readReal("INF"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(readReal("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(readReal("NaN")));
  // Without a '.', the last d digits are decimals; without an exponent, kP divides by 10^k.
  EXPECT_EQ(readReal("12345", "(E10.3)"), 12.345);
  EXPECT_EQ(readReal("12345E2", "(E10.3)"), 1234.5);
  EXPECT_EQ(readReal("1010", "(F7.1)"), 101.0);
  EXPECT_EQ(readReal("12.5", "(1P,F10.3)"), 1.25);
  EXPECT_EQ(readReal("12.5E0", "(1P,F10.3)"), 12.5);  // an exponent overrides the scale factor
  EXPECT_EQ(readReal("12.5", "(-2P,F10.3)"), 1250.0);
  EXPECT_EQ(readReal("   42", "(I5)"), 42.0);  // an I field in a value format
  // Blank modes: BN drops blanks, BZ makes them zeros (and missing columns too).
  EXPECT_EQ(readReal(" 1 . 5 E 1", "(BN,E10.3)"), 15.0);
  EXPECT_EQ(readReal("  1.5E1 ", "(BZ,E8.3)"), 1.5e10);
  EXPECT_EQ(readReal("  1.5E1", "(BZ,E8.3)"), 1.5e10);

  EXPECT_EQ(realStatus("1.0E+999").code, ErrorCode::kOutOfRange);
  EXPECT_EQ(realStatus("1.0 E+01").code, ErrorCode::kParseError);
  EXPECT_NE(std::string(realStatus("1.0 E+01").reason).find("blank inside"), std::string::npos);
  EXPECT_EQ(realStatus("1.0X+01").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("1.0E").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("1.0E+").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("1.0E+1.").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus(".").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("-").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("1..2").code, ErrorCode::kParseError);
  EXPECT_EQ(realStatus("\t1.0").code, ErrorCode::kParseError);
}

TEST(FortranFields, ReadsIntegers) {
  FortranField edit = parseFormat("(I22)").firstPass()[0].field;
  int64_t value = 0;
  EXPECT_TRUE(parseFortranInteger("   -42", edit, value).ok());
  EXPECT_EQ(value, -42);
  EXPECT_TRUE(parseFortranInteger("     ", edit, value).ok());
  EXPECT_EQ(value, 0);
  EXPECT_TRUE(parseFortranInteger(" 9223372036854775807", edit, value).ok());
  EXPECT_EQ(value, std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(parseFortranInteger("-9223372036854775808", edit, value).ok());
  EXPECT_EQ(value, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parseFortranInteger(" 9223372036854775808", edit, value).code, ErrorCode::kOutOfRange);
  EXPECT_EQ(parseFortranInteger("99999999999999999999", edit, value).code, ErrorCode::kOutOfRange);
  EXPECT_EQ(parseFortranInteger("  1 2", edit, value).code, ErrorCode::kParseError);
  EXPECT_EQ(parseFortranInteger("  1.0", edit, value).code, ErrorCode::kParseError);
  EXPECT_EQ(parseFortranInteger("   +", edit, value).code, ErrorCode::kParseError);
  FortranField zero = parseFormat("(BZ,I5)").firstPass()[0].field;
  EXPECT_TRUE(parseFortranInteger("  12", zero, value).ok());  // short line: column 5 is a zero
  EXPECT_EQ(value, 120);
  FortranField null = parseFormat("(BN,I5)").firstPass()[0].field;
  EXPECT_TRUE(parseFortranInteger(" 1 2 ", null, value).ok());
  EXPECT_EQ(value, 12);
}

TEST(FortranRead, FieldsRunTogetherAndShortLines) {
  std::string text =
      "-1.234E+00-5.678E-01 1.000D+02\n"
      "   1.0-005\n";  // short line: one value
  LineCursor lines(text, "t.txt");
  std::vector<double> values = readFortranReals(lines, parseFormat("(3E10.3)"), 4, "values");
  EXPECT_EQ(values, (std::vector<double>{-1.234, -0.5678, 100.0, 1.0e-5}));
  EXPECT_TRUE(lines.atEnd());

  std::string ints = "    1    2    3\r\n    4\r\n    9\n";
  LineCursor intLines(ints, "t.txt");
  EXPECT_EQ(readFortranIntegers(intLines, parseFormat("(3I5)"), 4, "pointers"),
            (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(intLines.lineNumber(), 2);  // the read ends with its last record
  EXPECT_EQ(readFortranIntegers(intLines, parseFormat("(3I5)"), 1, "more"),
            (std::vector<int64_t>{9}));

  // A trailing '/' is still processed when the items run out: "(I5/)" with 1 item uses 2 lines.
  std::string slash = "    1\n    x\n    3\n";
  LineCursor slashLines(slash, "t.txt");
  EXPECT_EQ(readFortranIntegers(slashLines, parseFormat("(I5/)"), 1, "a"),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(slashLines.lineNumber(), 2);
  EXPECT_EQ(readFortranIntegers(slashLines, parseFormat("(I5:/)"), 1, "b"),
            (std::vector<int64_t>{3}));
  EXPECT_TRUE(slashLines.atEnd());

  // Reversion to the last top-level group.
  std::string reversion = "  1 2 3\n 4 5\n 6 7\n";
  LineCursor revLines(reversion, "t.txt");
  EXPECT_EQ(readFortranIntegers(revLines, parseFormat("(I3, 2(I2))"), 7, "r"),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(FortranRead, ErrorsNameFileLineAndColumn) {
  std::string text = "    1    2\n    3   x4\n";
  LineCursor lines(text, "t.rua");
  expectError([&] { readFortranIntegers(lines, parseFormat("(2I5)"), 4, "row indices"); },
              ErrorCode::kParseError,
              {"t.rua:2:6: row indices: value 4 of 4: not an integer: '   x4' (format (2I5))"});

  // Records of uneven length: 2 lines hold 4 values, not 2 * maxFieldsPerRecord() = 6.
  std::string uneven = "    1    2    3\n    4\n";
  LineCursor shortText(uneven, "t.rua");
  expectError([&] { readFortranIntegers(shortText, parseFormat("(3I5/I5)"), 5, "row indices"); },
              ErrorCode::kParseError, {"t.rua:3: row indices: the file ends after 4 of 5 values"});

  LineCursor huge(text, "t.rua");
  expectError(
      [&] { readFortranIntegers(huge, parseFormat("(2I5)"), 1'000'000'000'000LL, "row indices"); },
      ErrorCode::kParseError, {"t.rua:1: row indices: 1000000000000 values cannot fit"});

  // Blank padding cannot make a short text yield a huge read: at most one value a character,
  // plus one a line.
  std::string blankLines = "\n\n\n";
  LineCursor padded(blankLines, "t.rua");
  expectError([&] { readFortranIntegers(padded, parseFormat("(80I1)"), 7, "row indices"); },
              ErrorCode::kParseError,
              {"t.rua:1: row indices: 7 values cannot fit in the 3 lines (3 bytes) left with "
               "format (80I1) (at most 80 per line, one per character)"});
  EXPECT_EQ(readFortranIntegers(padded, parseFormat("(80I1)"), 6, "zeros"),
            std::vector<int64_t>(6, 0));

  LineCursor realFormat(text, "t.rua");
  expectError([&] { readFortranIntegers(realFormat, parseFormat("(2E5.1)"), 1, "pointers"); },
              ErrorCode::kParseError, {"t.rua:1: pointers: format (2E5.1) has a real field"});
}

// ---------------------------------------------------------------------------------------------
// Harwell-Boeing files

struct Entry {
  int64_t row, col;
  double value;
  bool operator<(const Entry& o) const { return std::tie(row, col) < std::tie(o.row, o.col); }
};

std::vector<Entry> sortedEntries(const RawTensor& t) {
  std::vector<Entry> entries;
  for (int64_t e = 0; e < t.numEntries(); ++e) {
    entries.push_back({t.coords[2 * e], t.coords[2 * e + 1], t.pattern ? 1.0 : t.values[e]});
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

/// Both files hold the same matrix: equal coordinates, values within `relTol` (the HB file may
/// print fewer digits than the Matrix Market one).
void expectSameMatrix(const std::string& hbPath, const std::string& mtxPath, double relTol) {
  RawTensor hb = readHarwellBoeing(dataPath(hbPath));
  RawTensor mm = readMatrixMarket(dataPath(mtxPath));
  ASSERT_EQ(hb.shape, mm.shape);
  ASSERT_EQ(hb.pattern, mm.pattern);
  std::vector<Entry> a = sortedEntries(hb);
  std::vector<Entry> b = sortedEntries(mm);
  ASSERT_EQ(a.size(), b.size());
  int mismatches = 0;
  for (size_t i = 0; i < a.size() && mismatches < 5; ++i) {
    bool same = a[i].row == b[i].row && a[i].col == b[i].col &&
                std::abs(a[i].value - b[i].value) <= relTol * std::abs(b[i].value);
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << hbPath << " entry " << i << ": (" << a[i].row << ", " << a[i].col << ") "
                    << a[i].value << " vs " << mtxPath << " (" << b[i].row << ", " << b[i].col
                    << ") " << b[i].value;
    }
  }
}

struct RealFile {
  const char* path;
  int64_t rows, cols, stored, expanded;
  bool pattern;
};

class RealHarwellBoeingFiles : public ::testing::TestWithParam<RealFile> {};

TEST_P(RealHarwellBoeingFiles, ShapeAndEntries) {
  const RealFile& file = GetParam();
  RawTensor t = readHarwellBoeing(dataPath(file.path));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{file.rows, file.cols}));
  EXPECT_FALSE(t.dense);
  EXPECT_EQ(t.pattern, file.pattern);
  EXPECT_EQ(t.numEntries(), file.expanded);
  EXPECT_EQ(t.values.size(), file.pattern ? 0u : static_cast<size_t>(file.expanded));
  support::MappedFile mapped(dataPath(file.path));
  HarwellBoeingHeader header = parseHarwellBoeingHeader(mapped.data(), file.path);
  EXPECT_EQ(header.entries, file.stored);
  for (int64_t e = 0; e < t.numEntries(); ++e) {
    ASSERT_GE(t.coords[2 * e], 0);
    ASSERT_LT(t.coords[2 * e], file.rows);
    ASSERT_GE(t.coords[2 * e + 1], 0);
    ASSERT_LT(t.coords[2 * e + 1], file.cols);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Data, RealHarwellBoeingFiles,
    ::testing::Values(
        RealFile{"debian-r-cran-matrix/external/utm300.rua", 300, 300, 3155, 3155, false},
        RealFile{"debian-r-cran-matrix/external/lund_a.rsa", 147, 147, 1298, 2449, false},
        RealFile{"suitesparse/CHOLMOD/Demo/Matrix/bcsstk01.rsa", 48, 48, 224, 400, false},
        RealFile{"suitesparse/CHOLMOD/Demo/Matrix/bcsstk02.rsa", 66, 66, 2211, 4356, false},
        RealFile{"suitesparse/CHOLMOD/Demo/Matrix/lp_afiro.rra", 27, 51, 102, 102, false},
        RealFile{"suitesparse/RBio/RBio/private/lap_25.rb", 25, 25, 97, 169, true},
        RealFile{"suitesparse/RBio/RBio/private/west0479.rb", 479, 479, 1910, 1910, false},
        RealFile{"suitesparse/UMFPACK/Demo/HB/arc130.rua", 130, 130, 1282, 1282, false},
        RealFile{"suitesparse/UMFPACK/Demo/HB/can_24.psa", 24, 24, 92, 160, true},
        RealFile{"suitesparse/UMFPACK/Demo/HB/fs_183_6.rua", 183, 183, 1069, 1069, false},
        RealFile{"suitesparse/UMFPACK/Demo/HB/west0067.rua", 67, 67, 294, 294, false},
        RealFile{"taco/test/data/rua_32.rb", 32, 32, 126, 126, false}));

TEST(HarwellBoeing, SameMatricesAsMatrixMarketFiles) {
  // Tolerances follow the digits each HB file prints.
  expectSameMatrix("suitesparse/UMFPACK/Demo/HB/west0067.rua",
                   "suitesparse/LAGraph/data/west0067.mtx", 1e-12);  // E20.12
  expectSameMatrix("suitesparse/RBio/RBio/private/west0479.rb",
                   "suitesparse/ParU/Matrix/west0479.mtx", 1e-7);  // E15.7
  expectSameMatrix("debian-r-cran-matrix/external/lund_a.rsa",
                   "debian-r-cran-matrix/external/lund_a.mtx", 1e-8);              // E16.8
  expectSameMatrix("taco/test/data/rua_32.rb", "taco/test/data/rua_32.mtx", 0.0);  // F7.1
  expectSameMatrix("suitesparse/UMFPACK/Demo/HB/can_24.psa",
                   "suitesparse/CHOLMOD/Demo/Matrix/can___24.mtx", 0.0);  // pattern
  expectSameMatrix("suitesparse/CHOLMOD/Demo/Matrix/lp_afiro.rra",
                   "suitesparse/LAGraph/data/lp_afiro.mtx", 1e-15);  // E26.18
}

TEST(HarwellBoeing, Utm300RunTogetherFieldsAndRightHandSide) {
  std::string path = dataPath("debian-r-cran-matrix/external/utm300.rua");
  support::MappedFile mapped(path);
  HarwellBoeingHeader header = parseHarwellBoeingHeader(mapped.data(), path);
  EXPECT_EQ(header.type, "RUA");
  EXPECT_EQ(header.rhsCards, 100);
  EXPECT_EQ(header.headerLines, 5);
  EXPECT_EQ(header.pointerFormat, "(20I4)");
  EXPECT_EQ(header.indexFormat, "(26I3)");
  EXPECT_EQ(header.valueFormat, "(3D21.15)");
  EXPECT_EQ(header.rhsFormat, "(3D21.15)");
  EXPECT_EQ(header.key, "UTM300  ");

  RawTensor t = parseHarwellBoeing(mapped.data(), path);
  // Column 1 holds rows 1 and 51: "-.707106816579618E+000.707106745793467E+00".
  ASSERT_GE(t.numEntries(), 2);
  EXPECT_EQ(t.coords[0], 0);
  EXPECT_EQ(t.coords[1], 0);
  EXPECT_EQ(t.values[0], -.707106816579618);
  EXPECT_EQ(t.coords[2], 50);
  EXPECT_EQ(t.coords[3], 0);
  EXPECT_EQ(t.values[1], .707106745793467);
}

// A 3x3 unsymmetric matrix: (1,1)=1 (3,1)=2 (2,2)=-3 (3,3)=4, 1-based.
const std::string kSmall =
    "Small test matrix                                                       SMALL   \n"
    "             3             1             1             1             0\n"
    "RUA                        3             3             4             0\n"
    "(4I5)           (4I5)           (4E15.6)            \n"
    "    1    3    4    5\n"
    "    1    3    2    3\n"
    "   1.000000E+00   2.000000E+00  -3.000000E+00   4.000000D+00\n";

/// `text` with 1-based line `line` replaced by `replacement` (or removed when it is "<drop>").
std::string withLine(const std::string& text, int line, const std::string& replacement) {
  std::string out;
  size_t start = 0;
  for (int n = 1; start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    if (n != line) {
      out += text.substr(start, end - start);
    } else if (replacement != "<drop>") {
      out += replacement + "\n";
    }
    start = end;
  }
  return out;
}

TEST(HarwellBoeing, SmallMatrixInFileOrder) {
  RawTensor t = parseHarwellBoeing(kSmall, "small.rua");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(t.coords, (std::vector<int64_t>{0, 0, 2, 0, 1, 1, 2, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{1.0, 2.0, -3.0, 4.0}));
  EXPECT_FALSE(t.pattern);

  // CRLF line ends, lower-case type (as Rutherford-Boeing writes), four counts on line 2.
  std::string crlf;
  for (char c : withLine(withLine(kSmall, 3, "rua 3 3 4"), 2, "3 1 1 1")) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  RawTensor u = parseHarwellBoeing(crlf, "small.rua");
  EXPECT_EQ(u.coords, t.coords);
  EXPECT_EQ(u.values, t.values);

  // Integer matrices read their values as reals, with an I format.
  std::string integer = withLine(withLine(kSmall, 3, "IUA 3 3 4 0"), 7, "    7   -8    9   10");
  integer = withLine(integer, 4, "(4I5)           (4I5)           (4I5)");
  EXPECT_EQ(parseHarwellBoeing(integer, "i.rua").values, (std::vector<double>{7, -8, 9, 10}));

  // A right-hand side (RHSCRD = 1, its type line, one data line) is skipped.
  std::string rhs = withLine(kSmall, 2, "4 1 1 1 1");
  rhs = withLine(rhs, 4, "(4I5)           (4I5)           (4E15.6)       (3E15.6)");
  rhs.insert(rhs.find("    1    3    4    5"), "F                          1             0\n");
  rhs += "   1.000000E+00   1.000000E+00   1.000000E+00\n";
  RawTensor r = parseHarwellBoeing(rhs, "rhs.rua");
  EXPECT_EQ(r.coords, t.coords);
  EXPECT_EQ(r.values, t.values);
}

TEST(HarwellBoeing, ExpandsSymmetricSkewAndPattern) {
  // Lower triangle: (1,1)=1 (3,1)=2 (2,2)=-3 (3,3)=4 -> (3,1) mirrored to (1,3).
  RawTensor s = parseHarwellBoeing(withLine(kSmall, 3, "RSA 3 3 4 0"), "s.rsa");
  EXPECT_EQ(s.coords, (std::vector<int64_t>{0, 0, 2, 0, 0, 2, 1, 1, 2, 2}));
  EXPECT_EQ(s.values, (std::vector<double>{1, 2, 2, -3, 4}));
  RawTensor h = parseHarwellBoeing(withLine(kSmall, 3, "RHA 3 3 4 0"), "h.rha");
  EXPECT_EQ(h.coords, s.coords);

  // Skew: no diagonal; mirrored entries negated.
  std::string skew = withLine(kSmall, 3, "RZA 3 3 3 0");
  skew = withLine(skew, 5, "    1    3    4    4");
  skew = withLine(skew, 6, "    2    3    3");
  skew = withLine(skew, 7, "   2.000000E+00  -3.000000E+00   5.000000E+00");
  RawTensor z = parseHarwellBoeing(skew, "z.rza");
  EXPECT_EQ(z.coords, (std::vector<int64_t>{1, 0, 0, 1, 2, 0, 0, 2, 2, 1, 1, 2}));
  EXPECT_EQ(z.values, (std::vector<double>{2, -2, -3, 3, 5, -5}));

  // Pattern: no values line, no value format needed.
  std::string pattern = withLine(withLine(kSmall, 3, "PSA 3 3 4 0"), 7, "<drop>");
  pattern = withLine(pattern, 4, "(4I5)           (4I5)");
  RawTensor p = parseHarwellBoeing(pattern, "p.psa");
  EXPECT_TRUE(p.pattern);
  EXPECT_TRUE(p.values.empty());
  EXPECT_EQ(p.coords, s.coords);
  EXPECT_EQ(parseHarwellBoeing(withLine(pattern, 3, "QSA 3 3 4 0"), "q.qsa").coords, s.coords);

  // Empty matrices.
  std::string empty = withLine(withLine(pattern, 3, "PUA 3 3 0 0"), 6, "<drop>");
  empty = withLine(empty, 5, "    1    1    1    1");
  RawTensor e = parseHarwellBoeing(empty, "e.pua");
  EXPECT_EQ(e.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(e.numEntries(), 0);
  std::string zero = withLine(withLine(empty, 3, "PUA 0 0 0 0"), 5, "    1");
  EXPECT_EQ(parseHarwellBoeing(zero, "z.pua").shape, (std::vector<int64_t>{0, 0}));
}

void expectHbError(const std::string& text, ErrorCode code, const std::string& fragment) {
  expectError([&] { parseHarwellBoeing(text, "e.rua"); }, code, {fragment});
}

TEST(HarwellBoeing, BrokenHeaders) {
  expectHbError("", ErrorCode::kParseError,
                "e.rua:1: the file ends before the header line with the title");
  expectHbError("title only\n", ErrorCode::kParseError, "e.rua:2: the file ends before");
  expectHbError(withLine(kSmall, 2, "  3  abc  1  1"), ErrorCode::kParseError,
                "e.rua:2: expected TOTCRD PTRCRD INDCRD VALCRD [RHSCRD]: 'abc' is not");
  expectHbError(withLine(kSmall, 2, "  3  1  1"), ErrorCode::kParseError,
                "e.rua:2: expected TOTCRD PTRCRD INDCRD VALCRD [RHSCRD] (4 or more integers), "
                "found 3");
  expectHbError(withLine(kSmall, 2, "  3  1  1  1  0  9"), ErrorCode::kParseError, "found 6");
  expectHbError(withLine(kSmall, 2, "  3  -1  1  1"), ErrorCode::kParseError, "'-1' is not");
  expectHbError(withLine(kSmall, 3, "XUA 3 3 4 0"), ErrorCode::kParseError,
                "e.rua:3: unknown matrix type 'XUA'");
  expectHbError(withLine(kSmall, 3, "RU 3 3 4 0"), ErrorCode::kParseError,
                "e.rua:3: expected a three-letter matrix type");
  expectHbError(withLine(kSmall, 3, "RUA 3 3"), ErrorCode::kParseError,
                "e.rua:3: expected NROW NCOL NNZERO [NELTVL]");
  expectHbError(withLine(kSmall, 3, "RUA 3 3 99999999999999999999 0"), ErrorCode::kParseError,
                "e.rua:3: expected NROW NCOL NNZERO");
  expectHbError(withLine(kSmall, 3, "CUA 3 3 4 0"), ErrorCode::kNotSupported,
                "e.rua:3: complex matrices (type CUA) are not supported");
  expectHbError(withLine(kSmall, 3, "RUE 3 3 4 10"), ErrorCode::kNotSupported,
                "e.rua:3: elemental matrices (type RUE) are not supported");
  expectHbError(withLine(kSmall, 3, "RSA 3 4 4 0"), ErrorCode::kParseError,
                "e.rua:3: a symmetric or skew matrix (type RSA) must be square, not 3x4");
  expectHbError(withLine(kSmall, 3, "RUA 3 9223372036854775807 4 0"), ErrorCode::kParseError,
                "e.rua:3: NCOL 9223372036854775807 is too large");
  expectHbError(withLine(kSmall, 3, "RUA 3 3 9223372036854775807 0"), ErrorCode::kParseError,
                "e.rua:3: NNZERO 9223372036854775807 is too large");
  expectHbError(withLine(kSmall, 4, ""), ErrorCode::kParseError,
                "e.rua:4: expected the pointer and index formats");
  expectHbError(withLine(kSmall, 4, "(4I5)           (4I5)"), ErrorCode::kParseError,
                "e.rua:4: type RUA has values but line 4 has no value format");
  expectHbError(withLine(kSmall, 4, "(4Q5)           (4I5)           (4E15.6)"),
                ErrorCode::kParseError, "e.rua:4: PTRFMT: bad Fortran format '(4Q5)'");
  expectHbError(withLine(kSmall, 4, "(4I5)           (4I5)           (4E15.6"),
                ErrorCode::kParseError, "e.rua:4: VALFMT: bad Fortran format '(4E15.6': missing");
  expectHbError(withLine(kSmall, 4, "(4I5)           (4E5.1)         (4E15.6)"),
                ErrorCode::kParseError, "e.rua:6: row indices: format (4E5.1) has a real field");
  std::string noRhsLine = withLine(kSmall, 2, "4 1 1 1 1");
  noRhsLine = noRhsLine.substr(0, noRhsLine.find("    1    3"));
  expectHbError(noRhsLine, ErrorCode::kParseError,
                "e.rua:5: the file ends before the header line with RHSTYP NRHS NRHSIX");
}

TEST(HarwellBoeing, BrokenBlocks) {
  expectHbError(withLine(kSmall, 5, "    2    3    4    5"), ErrorCode::kParseError,
                "e.rua:5:1: the first column pointer must be 1, not 2");
  expectHbError(withLine(kSmall, 5, "    1    4    3    5"), ErrorCode::kParseError,
                "e.rua:5:11: column pointer 3 (3) is less than the one before it (4)");
  expectHbError(withLine(kSmall, 5, "    1    3    4    6"), ErrorCode::kParseError,
                "e.rua:5:16: the last column pointer must be NNZERO+1 = 5 (NNZERO = 4 on line 3)"
                ", not 6");
  expectHbError(withLine(kSmall, 5, "    1    3    4    x"), ErrorCode::kParseError,
                "e.rua:5:16: column pointers: value 4 of 4: not an integer: '    x'");
  expectHbError(withLine(kSmall, 6, "    1    4    2    3"), ErrorCode::kOutOfRange,
                "e.rua:6:6: row index 4 (entry 2) is outside 1..3 (NROW)");
  expectHbError(withLine(kSmall, 6, "    1    3    0    3"), ErrorCode::kOutOfRange,
                "e.rua:6:11: row index 0 (entry 3) is outside 1..3");
  expectHbError(withLine(kSmall, 6, "  1  3  2  3"), ErrorCode::kParseError,
                "e.rua:6:6: row indices: value 2 of 4: blank inside a number");
  expectHbError(withLine(kSmall, 7, "<drop>"), ErrorCode::kParseError,
                "e.rua:7: values: 4 values cannot fit in the 0 lines (0 bytes) left");
  expectHbError(withLine(kSmall, 7, "   1.000000E+00   2.000000X+00"), ErrorCode::kParseError,
                "e.rua:7:16: values: value 2 of 4: unexpected character in a number");
  expectHbError(withLine(kSmall, 7, "   1.000000E+00   2.000000E+00  -3.000000E+00   4.0E+999"),
                ErrorCode::kOutOfRange, "e.rua:7:46: values: value 4 of 4: value too large");
  std::string twoLines = withLine(kSmall, 4, "(4I5)           (4I5)           (2E15.6)");
  expectHbError(twoLines, ErrorCode::kParseError,
                "e.rua:7: values: 4 values cannot fit in the 1 lines (61 bytes) left");
  // As in Fortran, the columns missing from a short last line are blanks, which read as zeros.
  twoLines = withLine(twoLines, 7, "   1.000000E+00   2.000000E+00\n  -3.000000E+00");
  EXPECT_EQ(parseHarwellBoeing(twoLines, "e.rua").values, (std::vector<double>{1, 2, -3, 0}));

  std::string skew = withLine(kSmall, 3, "RZA 3 3 4 0");
  expectHbError(skew, ErrorCode::kParseError,
                "e.rua:7:1: a skew-symmetric matrix has a zero diagonal, but entry 1 at (1, 1) "
                "is 1");
}

TEST(HarwellBoeing, HugeHeaderCountsFailFastWithoutAllocating) {
  auto start = std::chrono::steady_clock::now();
  expectHbError(withLine(kSmall, 3, "RUA 3 1000000000000 4 0"), ErrorCode::kParseError,
                "e.rua:5: column pointers: 1000000000001 values cannot fit in the 3 lines");
  // Consistent pointers claiming 10^12 entries: the row indices cannot fit in what is left.
  std::string huge = withLine(kSmall, 3, "RUA 1000000000000 1 1000000000000 0");
  huge = withLine(huge, 4, "(2I14)          (4I5)           (4E15.6)");
  huge = withLine(huge, 5, "             11000000000001");
  expectHbError(huge, ErrorCode::kParseError,
                "e.rua:6: row indices: 1000000000000 values cannot fit in the 2 lines");
  std::string hugeRows = withLine(kSmall, 3, "RUA 9223372036854775807 3 4 0");
  EXPECT_EQ(parseHarwellBoeing(hugeRows, "e.rua").shape[0], INT64_MAX);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(HarwellBoeing, EveryHarwellBoeingFileUnderDataReads) {
  int files = 0;
  for (const char* extension : {".rua", ".rsa", ".psa", ".pua", ".rra", ".rb"}) {
    for (const std::string& file : testing::dataFilesWithExtension(extension)) {
      SCOPED_TRACE(file);
      RawTensor t = readHarwellBoeing(dataPath(file));
      EXPECT_EQ(t.rank(), 2);
      EXPECT_GT(t.numEntries(), 0);
      ++files;
    }
  }
  EXPECT_GE(files, 12);
}

TEST(HarwellBoeing, MissingFileIsAnIoError) {
  expectError([] { readHarwellBoeing(dataPath("no/such/file.rua")); }, ErrorCode::kIoError,
              {"no/such/file.rua"});
}

}  // namespace
}  // namespace sparseflow::io
