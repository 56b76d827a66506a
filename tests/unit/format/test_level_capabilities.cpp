// What each level kind declares about itself (format/levels/level_impl.h), which the rest of
// sparseflow reads instead of switching on the kind: consistent capabilities, the parameters the
// data chooses, parameter checks that name the level, and the named formats' shapes.
#include <gtest/gtest.h>

#include <string>

#include "format/format_shapes.h"
#include "format/levels/level_impl.h"
#include "sparseflow/error.h"
#include "sparseflow/format.h"

namespace sparseflow {
namespace {

const LevelKind kKinds[] = {LevelKind::kDense,  LevelKind::kCompressed, LevelKind::kSingleton,
                            LevelKind::kRagged, LevelKind::kFixed,      LevelKind::kNM};

TEST(LevelCapabilities, EachKindDeclaresWhatItStoresAndDoes) {
  for (const LevelKind kind : kKinds) {
    const format::LevelImpl& impl = format::levelImpl(kind);
    SCOPED_TRACE(std::string(impl.name()));
    const format::LevelCapabilities caps = impl.capabilities();
    // A level with every coordinate stores no arrays, locates in O(1), and knows its children.
    if (caps.allCoordinates) {
      EXPECT_TRUE(caps.randomAccess && caps.fillsZeros && caps.childrenFromShape);
      EXPECT_FALSE(caps.hasPos || caps.hasCrd || caps.hasMeta);
    }
    // A pos array means the data says how many children a parent has.
    if (caps.hasPos) {
      EXPECT_FALSE(caps.childrenFromShape);
    }
    EXPECT_EQ(format::findLevelImpl(impl.name()), &impl);
  }
  EXPECT_TRUE(format::levelImpl(LevelKind::kDense).capabilities().allCoordinates);
  for (const LevelKind kind : {LevelKind::kCompressed, LevelKind::kSingleton, LevelKind::kRagged,
                               LevelKind::kFixed, LevelKind::kNM}) {
    EXPECT_FALSE(format::levelImpl(kind).capabilities().allCoordinates);
  }
  // MLIR 16's sparse_tensor encoding has three of the kinds.
  EXPECT_EQ(format::levelImpl(LevelKind::kDense).capabilities().mlirName, "dense");
  EXPECT_EQ(format::levelImpl(LevelKind::kCompressed).capabilities().mlirName, "compressed");
  EXPECT_EQ(format::levelImpl(LevelKind::kSingleton).capabilities().mlirName, "singleton");
  for (const LevelKind kind : {LevelKind::kRagged, LevelKind::kFixed, LevelKind::kNM})
    EXPECT_TRUE(format::levelImpl(kind).capabilities().mlirName.empty());
}

TEST(LevelCapabilities, EllWithoutKLeavesItToTheData) {
  const format::LevelImpl& fixed = format::levelImpl(LevelKind::kFixed);
  EXPECT_TRUE(fixed.chosenByData(LevelType::fixed(0)));
  EXPECT_FALSE(fixed.chosenByData(LevelType::fixed(3)));
  EXPECT_TRUE(Format::parse("ell", 2).needsData());
  EXPECT_FALSE(Format::parse("ell:3", 2).needsData());
  for (const LevelType& type : {LevelType::dense(), LevelType::compressed(), LevelType::nm(2, 4)})
    EXPECT_FALSE(format::levelImpl(type.kind).chosenByData(type));
}

TEST(LevelCapabilities, ParameterChecksNameTheLevel) {
  const auto errorOf = [](const LevelType& type) -> std::string {
    try {
      Format(2, {LevelSpec{LevelType::dense(), LevelExpr{0}}, LevelSpec{type, LevelExpr{1}}});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  LevelType nm = LevelType::nm(2, 4);
  EXPECT_EQ(errorOf(nm), "");
  nm.n = 4;
  EXPECT_NE(errorOf(nm).find("format level 1: n:m needs 0 < n < m <= 256 (got 4:4)"),
            std::string::npos)
      << errorOf(nm);
  LevelType fixed = LevelType::fixed(0);
  fixed.k = -1;
  EXPECT_NE(errorOf(fixed).find("format level 1: fixed(k) needs k >= 0"), std::string::npos)
      << errorOf(fixed);
}

TEST(LevelCapabilities, TheMatrixNMShapeAtAnyWidth) {
  int32_t n = 0, m = 0;
  EXPECT_TRUE(format::isMatrixNM(Format::parse("2:4", 2), &n, &m));
  EXPECT_EQ(n, 2);
  EXPECT_EQ(m, 4);
  EXPECT_TRUE(format::isMatrixNM(Format::parse("1:8", 2).withWidths(64, 64), &n, &m));
  EXPECT_EQ(m, 8);
  EXPECT_FALSE(format::isMatrixNM(Format::parse("csr", 2)));
  EXPECT_FALSE(format::isMatrixNM(Format::parse("levels[d1:dense, d0:nm(2,4)]", 2)));
}

}  // namespace
}  // namespace sparseflow
