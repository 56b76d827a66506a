// Format text: every preset parses and prints back the same; bad text gets a clear error.
#include <gtest/gtest.h>

#include "sparseflow/error.h"
#include "sparseflow/format.h"

namespace sparseflow {
namespace {

TEST(FormatText, PresetsPrintBackTheSame) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"dense", 2},   {"dense", 3},   {"csr", 2},      {"csc", 2},         {"coo", 2},
      {"coo", 3},     {"dcsr", 2},    {"dcsc", 2},     {"bsr:4x4", 2},     {"bsr:1x4", 2},
      {"bsr:16x16", 2}, {"bsr:32x1", 2}, {"ell:8", 2},  {"ell", 2},         {"hyb", 2},
      {"hyb:3", 2},   {"2:4", 2},     {"1:4", 2},      {"2:8", 2},         {"4:8", 2},
      {"csf", 3},     {"dcsf", 3},    {"csf", 4},      {"csr@i64", 2},     {"bsr:2x3@p64", 2},
      {"2:4@i64", 2}, {"hyb:2@i64", 2}, {"coo", 1},    {"dense", 1}};
  for (const auto& [text, rank] : cases) {
    Format f = Format::parse(text, rank);
    EXPECT_EQ(f.toString(), text) << "rank " << rank;
    EXPECT_EQ(Format::parse(f.toString(), rank), f) << text;
  }
}

TEST(FormatText, LevelStructureOfPresets) {
  Format csc = Format::parse("csc", 2);
  ASSERT_EQ(csc.numLevels(), 2);
  EXPECT_EQ(csc.level(0).expr.dim, 1);
  EXPECT_EQ(csc.level(1).type.kind, LevelKind::kCompressed);
  Format bsr = Format::parse("bsr:4x2", 2);
  ASSERT_EQ(bsr.numLevels(), 4);
  EXPECT_EQ(bsr.level(1).expr.op, LevelExpr::Op::kDiv);
  EXPECT_EQ(bsr.level(3).expr.block, 2);
  EXPECT_EQ(bsr.levelExtent(0, {10, 10}), 3);
  Format coo = Format::parse("coo", 3);
  EXPECT_FALSE(coo.level(0).type.props.unique);
  EXPECT_FALSE(coo.level(1).type.props.unique);
  EXPECT_TRUE(coo.level(2).type.props.unique);
  Format hyb = Format::parse("hyb:4", 2);
  ASSERT_TRUE(hyb.isHybrid());
  EXPECT_EQ(hyb.parts().size(), 2u);
  EXPECT_EQ(hyb.parts()[0].toString(), "ell:4");
  EXPECT_EQ(hyb.parts()[1].toString(), "coo");
}

TEST(FormatText, GeneralFormRoundTrips) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"levels[d1:compressed, d0:dense]", 2},
      {"levels[d0:dense, d1:ragged]", 2},
      {"levels[d0:compressed(nu,no), d1:singleton]", 2},
      {"levels[d0/8:dense, d1:fixed(4), d0%8:dense]", 2},
      {"levels[d2:dense, d0:compressed, d1:compressed]", 3},
      {"bsr:4x4+csr", 2},
      {"2:4+coo@i64", 2}};
  for (const auto& [text, rank] : cases) {
    Format f = Format::parse(text, rank);
    EXPECT_EQ(f.toString(), text);
  }
  // A general form that is a preset prints as the preset.
  EXPECT_EQ(Format::parse("levels[d0:dense, d1:compressed]", 2).toString(), "csr");
}

void expectError(const std::string& text, int rank, const std::string& fragment) {
  try {
    Format::parse(text, rank);
    ADD_FAILURE() << "no error for '" << text << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

TEST(FormatText, BadTextNamesTheProblem) {
  expectError("csrr", 2, "unknown format 'csrr'");
  expectError("csr", 3, "rank-2");
  expectError("bsr", 2, "block shape");
  expectError("bsr:0x4", 2, "not a positive integer");
  expectError("4:2", 2, "0 < n < m");
  expectError("ell:-1", 2, "not a positive integer");
  expectError("csf", 2, "rank 3 or more");
  expectError("levels[d0:dense]", 2, "dimension d1");
  expectError("levels[d0:dense, d1:sparse]", 2, "unknown level type 'sparse'");
  expectError("levels[d0:dense, d2:compressed]", 2, "names no dimension");
  expectError("levels[d0/4:dense, d1:compressed, d0%2:dense]", 2, "same b");
  expectError("csr@i16", 2, "width suffix");
  expectError("", 2, "empty format");
}

}  // namespace
}  // namespace sparseflow
