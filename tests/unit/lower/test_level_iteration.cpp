// lower/level_iteration.h per level kind (capabilities, iterate() and locate() as IR text),
// lower/array_names.h against the names a lowered kernel uses, and lower::assemblyFormatsFor.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/ir.h"
#include "lower/array_names.h"
#include "lower/level_iteration.h"
#include "lower/lower.h"
#include "pipeline/stages.h"
#include "sparseflow/error.h"
#include "sparseflow/format.h"

namespace sparseflow::lower {
namespace {

/// Level 1 of tensor A under parent position `p`, over index j (extent n_j), 32-bit arrays.
LevelContext contextOfLevelOne(const LevelType& type) {
  LevelContext ctx;
  ctx.type = type;
  ctx.pos = {posArray("tA", 1), ir::ScalarType::kI32};
  ctx.crd = {crdArray("tA", 1), ir::ScalarType::kI32};
  ctx.meta = {metaArray("tA", 1), ir::ScalarType::kU8};
  ctx.extent = ir::var(extentName("j"), ir::ScalarType::kI64);
  ctx.slots = type.k > 0 ? ir::intImm(type.k) : ir::var(slotsArray("tA", 1), ir::ScalarType::kI64);
  ctx.parentPos = ir::var("p", ir::ScalarType::kI64);
  return ctx;
}

std::string exprOrDash(const ir::Expr& e) {
  return e ? ir::toString(e) : "-";
}

/// The loop a level kind makes over the children of `p` with loop variable `q`, one field a line.
std::string iterationText(const LevelType& type) {
  const LevelLoop loop = levelIteration(type.kind).iterate(contextOfLevelOne(type),
                                                           ir::var("q", ir::ScalarType::kI64));
  return std::string(loop.singleIteration ? "single\n" : "") + "begin " + exprOrDash(loop.begin) +
         "\nend " + exprOrDash(loop.end) + "\nposition " + exprOrDash(loop.position) +
         "\ncoordinate " + exprOrDash(loop.coordinate) + "\nskip " + exprOrDash(loop.skip);
}

/// "randomAccess uniqueCoordinates coIterable" as 0/1 digits, for one level type.
std::string capabilityBits(const LevelType& type) {
  const LevelIteration& it = levelIteration(type.kind);
  return std::to_string(int{it.randomAccess()}) + std::to_string(int{it.uniqueCoordinates(type)}) +
         std::to_string(int{it.coIterable(type)});
}

std::vector<std::string> formatTexts(const std::vector<Format>& formats) {
  std::vector<std::string> out;
  for (const Format& f : formats) out.push_back(f.toString());
  return out;
}

TEST(LowerLevelIteration, CapabilitiesPerKind) {
  const LevelProperties unordered{false, true}, nonUnique{true, false};
  EXPECT_EQ(capabilityBits(LevelType::dense()), "110");
  EXPECT_EQ(capabilityBits(LevelType::compressed()), "011");
  // Co-iteration needs ordered and unique coordinates; uniqueness follows the property.
  EXPECT_EQ(capabilityBits(LevelType::compressed(unordered)), "010");
  EXPECT_EQ(capabilityBits(LevelType::compressed(nonUnique)), "000");
  EXPECT_EQ(capabilityBits(LevelType::singleton()), "010");
  EXPECT_EQ(capabilityBits(LevelType::singleton(nonUnique)), "000");
  EXPECT_EQ(capabilityBits(LevelType::ragged()), "010");
  EXPECT_EQ(capabilityBits(LevelType::fixed(4)), "010");
  EXPECT_EQ(capabilityBits(LevelType::nm(2, 4)), "010");
}

TEST(LowerLevelIteration, IterateTextPerKind) {
  EXPECT_EQ(iterationText(LevelType::dense()),
            "begin 0\nend n_j\nposition ((p * n_j) + q)\ncoordinate q\nskip -");
  EXPECT_EQ(iterationText(LevelType::compressed()),
            "begin int64_t(tA_pos1[p])\nend int64_t(tA_pos1[(p + 1)])\nposition q\n"
            "coordinate int64_t(tA_crd1[q])\nskip -");
  // One child per parent, at the parent's position: no loop.
  EXPECT_EQ(iterationText(LevelType::singleton()),
            "single\nbegin -\nend -\nposition p\ncoordinate int64_t(tA_crd1[p])\nskip -");
  EXPECT_EQ(iterationText(LevelType::ragged()),
            "begin int64_t(tA_pos1[p])\nend int64_t(tA_pos1[(p + 1)])\nposition q\n"
            "coordinate (q - int64_t(tA_pos1[p]))\nskip -");
  // k slots per parent; padding slots (coordinate -1) are skipped.
  EXPECT_EQ(iterationText(LevelType::fixed(4)),
            "begin (p * 4)\nend ((p * 4) + 4)\nposition q\ncoordinate int64_t(tA_crd1[q])\n"
            "skip (int64_t(tA_crd1[q]) < 0)");
  // fixed without k (ell chosen by data): the slot count is the tensor's runtime value.
  EXPECT_EQ(iterationText(LevelType::fixed(0)),
            "begin (p * tA_slots1)\nend ((p * tA_slots1) + tA_slots1)\nposition q\n"
            "coordinate int64_t(tA_crd1[q])\nskip (int64_t(tA_crd1[q]) < 0)");
  // 2:4: two slots per group of four, the in-group offset packed in 2 bits of meta.
  EXPECT_EQ(iterationText(LevelType::nm(2, 4)),
            "begin (p * (((n_j + 3) / 4) * 2))\n"
            "end ((p * (((n_j + 3) / 4) * 2)) + (((n_j + 3) / 4) * 2))\nposition q\n"
            "coordinate ((((q - (p * (((n_j + 3) / 4) * 2))) / 2) * 4) + "
            "((int64_t(tA_meta1[((q * 2) >> 3)]) >> ((q * 2) & 7)) & 3))\nskip -");
}

TEST(LowerLevelIteration, LocateIsArithmeticForDenseAndRefusedOtherwise) {
  const LevelContext ctx = contextOfLevelOne(LevelType::dense());
  EXPECT_EQ(
      ir::toString(
          levelIteration(LevelKind::kDense).locate(ctx, ir::var("v_j", ir::ScalarType::kI64))),
      "((p * n_j) + v_j)");
  for (LevelKind kind : {LevelKind::kCompressed, LevelKind::kSingleton, LevelKind::kRagged,
                         LevelKind::kFixed, LevelKind::kNM}) {
    SCOPED_TRACE(static_cast<int>(kind));
    try {
      levelIteration(kind).locate(ctx, ir::var("v_j", ir::ScalarType::kI64));
      FAIL() << "locate() on a searched level returned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInternal);
      EXPECT_NE(std::string(e.what()).find("locate() on a level without random access"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    levelIteration(static_cast<LevelKind>(99));
    FAIL() << "an unknown level kind has an iteration";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    EXPECT_EQ(std::string(e.what()), "no loop lowering for level kind 99");
  }
}

TEST(LowerArrayNames, NamesAreTheOnesTheLoweredKernelUses) {
  EXPECT_EQ(tensorPrefix("A"), "tA");
  EXPECT_EQ(valuesArray("tA"), "tA_vals");
  EXPECT_EQ(valuesName("A"), "tA_vals");
  EXPECT_EQ(posArray("tA", 1), "tA_pos1");
  EXPECT_EQ(crdArray("tA", 0), "tA_crd0");
  EXPECT_EQ(metaArray("tW", 1), "tW_meta1");
  EXPECT_EQ(slotsArray("tA", 1), "tA_slots1");
  EXPECT_EQ(extentName("i"), "n_i");
  EXPECT_EQ(paramName("alpha"), "p_alpha");
  EXPECT_EQ(workspacePrefix(3), "ws3");

  // The lowered kernel names its arrays, extents and parameters with these functions.
  KernelOptions options;
  options.formats = {{"A", "ell"}};
  const pipeline::CheckedStage stage =
      pipeline::checkStage(expr::parse("y(i) = alpha * A(i,j) * x(j)"), options);
  const LoweredKernel lowered = lowerKernel(stage.checked, stage.lowerOptions);
  // Every binding of A (tensor 1) is named by array_names.h from its kind and level.
  std::vector<std::string> aArrays;
  for (const ArrayBinding& b : lowered.arrays) {
    if (b.tensor != 1) continue;
    switch (b.kind) {
      case ArrayBinding::Kind::kValues: EXPECT_EQ(b.array.name, valuesName("A")); break;
      case ArrayBinding::Kind::kPos: EXPECT_EQ(b.array.name, posArray("tA", b.level)); break;
      case ArrayBinding::Kind::kCrd: EXPECT_EQ(b.array.name, crdArray("tA", b.level)); break;
      case ArrayBinding::Kind::kMeta: EXPECT_EQ(b.array.name, metaArray("tA", b.level)); break;
      case ArrayBinding::Kind::kSlots: EXPECT_EQ(b.array.name, slotsArray("tA", b.level)); break;
    }
    aArrays.push_back(b.array.name);
  }
  EXPECT_EQ(aArrays, (std::vector<std::string>{"tA_vals", "tA_crd1", "tA_slots1"}));
  EXPECT_EQ(lowered.params, std::vector<std::string>{"alpha"});
  EXPECT_EQ(lowered.indexVars, (std::vector<std::string>{"i", "j"}));
  const std::string body = ir::toString(lowered.body);
  for (const std::string& name :
       {paramName("alpha"), extentName("i"), slotsArray("tA", 1), crdArray("tA", 1)}) {
    EXPECT_NE(body.find(name), std::string::npos) << name << " not in\n" << body;
  }
}

TEST(LowerAssemblyFormats, OutputsAreAssembledAsDenseLevelsOverOneCompressedLevel) {
  // The asked format's first dimension order, then the other one.
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("dcsr", 2))),
            (std::vector<std::string>{"csr", "csc"}));
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("coo", 2))),
            (std::vector<std::string>{"csr", "csc"}));
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("csc", 2))),
            (std::vector<std::string>{"csc", "csr"}));
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("dcsc", 2))),
            (std::vector<std::string>{"csc", "csr"}));
  // Index widths are kept.
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("dcsr@i64", 2))),
            (std::vector<std::string>{"csr@i64", "csc@i64"}));
  // Rank 3: csf's order first, then the five other orders; rank 4: the dimension order only.
  const std::vector<Format> csf = assemblyFormatsFor(Format::parse("csf", 3));
  ASSERT_EQ(csf.size(), 6u);
  EXPECT_EQ(csf[0].toString(), "levels[d0:dense, d1:dense, d2:compressed]");
  EXPECT_EQ(csf[1].toString(), "levels[d0:dense, d2:dense, d1:compressed]");
  EXPECT_EQ(formatTexts(assemblyFormatsFor(Format::parse("csf", 4))),
            std::vector<std::string>{"levels[d0:dense, d1:dense, d2:dense, d3:compressed]"});
}

}  // namespace
}  // namespace sparseflow::lower
