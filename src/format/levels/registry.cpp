// The list of level kinds and the helpers they share.
#include <array>
#include <charconv>

#include "format/levels/level_common.h"

namespace sparseflow::format {

namespace {
const std::array<const LevelImpl*, 6>& allLevels() {
  static const std::array<const LevelImpl*, 6> levels = {
      &denseLevelImpl(),  &compressedLevelImpl(), &singletonLevelImpl(),
      &raggedLevelImpl(), &fixedLevelImpl(),      &nmLevelImpl()};
  return levels;
}
}  // namespace

const LevelImpl& levelImpl(LevelKind kind) {
  for (const LevelImpl* impl : allLevels()) {
    if (impl->kind() == kind) return *impl;
  }
  SF_FAIL(kInvalidArgument) << "unknown level kind code " << static_cast<int>(kind);
}

const LevelImpl* findLevelImpl(std::string_view name) {
  for (const LevelImpl* impl : allLevels()) {
    if (impl->name() == name) return impl;
  }
  return nullptr;
}

std::string LevelImpl::print(const LevelType&) const {
  return std::string(name());
}

int64_t childPositions(int64_t parents, int64_t perParent) {
  int64_t product = 0;
  SF_CHECK_CODE(
      parents >= 0 && perParent >= 0 && !__builtin_mul_overflow(parents, perParent, &product),
      ErrorCode::kOutOfMemory)
      << parents << " x " << perParent << " positions do not fit a 64-bit count";
  return product;
}

std::string describeLevel(const Format& format, int32_t level) {
  const LevelSpec& spec = format.level(level);
  std::string text = "level " + std::to_string(level) + " (" +
                     levelImpl(spec.type.kind).print(spec.type) + ", d" +
                     std::to_string(spec.expr.dim);
  if (spec.expr.op == LevelExpr::Op::kDiv) text += "/" + std::to_string(spec.expr.block);
  if (spec.expr.op == LevelExpr::Op::kMod) text += "%" + std::to_string(spec.expr.block);
  return text + ")";
}

int32_t nmMetaBits(int32_t m) {
  if (m <= 4) return 2;
  if (m <= 16) return 4;
  return 8;
}

std::string printWithProps(std::string_view name, const LevelType& type) {
  std::string text(name);
  std::vector<std::string> flags;
  if (!type.props.unique) flags.push_back("nu");
  if (!type.props.ordered) flags.push_back("no");
  if (flags.empty()) return text;
  text += "(";
  for (size_t i = 0; i < flags.size(); ++i) text += (i ? "," : "") + flags[i];
  return text + ")";
}

LevelProperties parseProps(const std::vector<std::string>& params, std::string_view text) {
  LevelProperties props;
  for (const std::string& p : params) {
    if (p == "nu" || p == "nonunique") {
      props.unique = false;
    } else if (p == "no" || p == "unordered") {
      props.ordered = false;
    } else {
      SF_FAIL(kInvalidArgument) << "level '" << text << "': unknown property '" << p
                                << "' (expected nu or no)";
    }
  }
  return props;
}

int64_t parsePositiveParam(const std::string& param, std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(param.data(), param.data() + param.size(), value);
  SF_USER_CHECK(ec == std::errc() && end == param.data() + param.size() && value > 0)
      << "level '" << text << "': '" << param << "' is not a positive integer";
  return value;
}

void validatePositions(const Buffer& pos, int64_t numParents, int64_t crdSize,
                       const std::string& where) {
  SF_CHECK_CODE(pos.size() == numParents + 1, ErrorCode::kInvalidFormat)
      << where << ": pos has " << pos.size() << " entries, expected " << numParents + 1;
  SF_CHECK_CODE(pos.index(0) == 0, ErrorCode::kInvalidFormat)
      << where << ": pos[0] is " << pos.index(0) << ", expected 0";
  for (int64_t p = 0; p < numParents; ++p) {
    SF_CHECK_CODE(pos.index(p) <= pos.index(p + 1), ErrorCode::kInvalidFormat)
        << where << ": pos decreases at parent position " << p << " (pos[" << p
        << "] = " << pos.index(p) << " > pos[" << p + 1 << "] = " << pos.index(p + 1) << ")";
  }
  SF_CHECK_CODE(pos.index(numParents) == crdSize, ErrorCode::kInvalidFormat)
      << where << ": pos[" << numParents << "] = " << pos.index(numParents) << " but crd has "
      << crdSize << " entries";
}

void validateRun(const LevelType& type, int64_t extent, const Buffer& crd, int64_t begin,
                 int64_t end, int64_t parent, const std::string& where) {
  for (int64_t q = begin; q < end; ++q) {
    int64_t c = crd.index(q);
    SF_CHECK_CODE(c >= 0 && c < extent, ErrorCode::kInvalidFormat)
        << where << ": crd[" << q << "] = " << c << " is outside [0, " << extent
        << ") (parent position " << parent << ")";
    if (q > begin) {
      int64_t prev = crd.index(q - 1);
      SF_CHECK_CODE(!type.props.ordered || prev <= c, ErrorCode::kInvalidFormat)
          << where << ": crd is not sorted at position " << q << " (" << prev << " then " << c
          << ", parent position " << parent << ")";
      SF_CHECK_CODE(!type.props.unique || !type.props.ordered || prev != c,
                    ErrorCode::kInvalidFormat)
          << where << ": coordinate " << c << " repeats at position " << q << " (parent position "
          << parent << ")";
    }
  }
}

}  // namespace sparseflow::format

namespace sparseflow {

LevelArrays storedArrays(LevelKind kind) {
  const format::LevelCapabilities caps = format::levelImpl(kind).capabilities();
  return {caps.hasPos, caps.hasCrd, caps.hasMeta};
}

}  // namespace sparseflow
