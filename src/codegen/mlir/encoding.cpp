// Format → `#sparse_tensor.encoding` in MLIR 16's spelling (see encoding.h).
#include "codegen/mlir/encoding.h"

#include <cctype>
#include <sstream>

#include "format/levels/level_impl.h"
#include "support/check.h"

namespace sparseflow::codegen::mlir {
namespace {

/// MLIR 16 spells level properties as suffixes: "-nu" not unique, "-no" not ordered.
std::string propertySuffix(const LevelProperties& props) {
  std::string s;
  if (!props.unique) s += "-nu";
  if (!props.ordered) s += "-no";
  return s;
}

}  // namespace

bool hasSparseLevel(const Format& format) {
  if (format.isHybrid()) return true;
  for (const LevelSpec& l : format.levels()) {
    if (!format::levelImpl(l.type.kind).capabilities().allCoordinates) return true;
  }
  return false;
}

std::optional<std::string> encodingAttr(const std::string& tensor, const Format& format) {
  SF_CHECK_CODE(!format.isHybrid(), ErrorCode::kNotSupported)
      << "tensor " << tensor << ": hybrid format " << format.toString()
      << " has no MLIR 16 sparse_tensor encoding; convert it to one plain format first";
  if (format.isDenseRowMajor()) return std::nullopt;
  std::ostringstream levels, ordering;
  bool identity = true;
  for (int32_t l = 0; l < format.numLevels(); ++l) {
    const LevelSpec& spec = format.level(l);
    SF_CHECK_CODE(spec.expr.op == LevelExpr::Op::kIdentity, ErrorCode::kNotSupported)
        << "tensor " << tensor << ": format " << format.toString() << " is blocked (level " << l
        << " stores d" << spec.expr.dim << (spec.expr.op == LevelExpr::Op::kDiv ? " / " : " % ")
        << spec.expr.block
        << "), which MLIR 16's sparse_tensor encoding cannot express; export it as csr or dense";
    const format::LevelCapabilities caps = format::levelImpl(spec.type.kind).capabilities();
    SF_CHECK_CODE(!caps.mlirName.empty(), ErrorCode::kNotSupported)
        << "tensor " << tensor << ": format " << format.toString() << " has a level kind (level "
        << l
        << ") that MLIR 16's sparse_tensor encoding cannot express "
           "(only dense, compressed and singleton); export it as csr or dense";
    // Dense levels are always unique and ordered: MLIR 16 takes no properties on them.
    std::string name = std::string(caps.mlirName) +
                       (caps.allCoordinates ? std::string() : propertySuffix(spec.type.props));
    levels << (l ? ", " : "") << '"' << name << '"';
    ordering << (l ? ", " : "") << 'd' << spec.expr.dim;
    identity = identity && spec.expr.dim == l;
  }
  std::ostringstream out;
  out << "#sparse_tensor.encoding<{ dimLevelType = [ " << levels.str() << " ]";
  if (!identity) {
    out << ", dimOrdering = affine_map<(";
    for (int32_t d = 0; d < format.rank(); ++d) out << (d ? ", " : "") << 'd' << d;
    out << ") -> (" << ordering.str() << ")>";
  }
  out << ", pointerBitWidth = " << format.posWidth() << ", indexBitWidth = " << format.crdWidth()
      << " }>";
  return out.str();
}

std::string encodingAliasBase(const Format& format) {
  const std::string text = format.toString();
  if (text.rfind("levels", 0) == 0) return "ENC";
  std::string alias;
  for (char c : text) {
    alias += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  }
  if (alias.empty() || !std::isalpha(static_cast<unsigned char>(alias[0]))) alias = "ENC_" + alias;
  return alias;
}

}  // namespace sparseflow::codegen::mlir
