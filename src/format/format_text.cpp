// Format text: presets (csr, bsr:4x4, 2:4, hyb...) and the general levels[...] form, both ways.
#include <charconv>
#include <optional>

#include "format/levels/level_impl.h"
#include "sparseflow/format.h"
#include "support/check.h"

namespace sparseflow {
namespace {

using format::findLevelImpl;
using format::levelImpl;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Splits on `sep` at bracket depth 0.
std::vector<std::string_view> splitTop(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') ++depth;
    if (s[i] == ')' || s[i] == ']') --depth;
    if (s[i] == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  return out;
}

std::optional<int64_t> parseInt(std::string_view s) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

int64_t positiveInt(std::string_view s, std::string_view text, const char* what) {
  auto v = parseInt(s);
  SF_USER_CHECK(v && *v > 0) << "format '" << text << "': " << what << " '" << s
                             << "' is not a positive integer";
  return *v;
}

LevelSpec spec(LevelType type, int32_t dim, LevelExpr::Op op = LevelExpr::Op::kIdentity,
               int64_t block = 1) {
  return LevelSpec{type, LevelExpr{dim, op, block}};
}

void requireRank(std::string_view name, int32_t rank, int32_t want, std::string_view text) {
  SF_USER_CHECK(rank == want) << "format '" << text << "': " << name << " is for rank-" << want
                              << " tensors, this one has rank " << rank;
}

std::vector<LevelSpec> denseLevels(int32_t rank) {
  std::vector<LevelSpec> levels;
  for (int32_t d = 0; d < rank; ++d) levels.push_back(spec(LevelType::dense(), d));
  return levels;
}

std::vector<LevelSpec> cooLevels(int32_t rank) {
  if (rank == 1) return {spec(LevelType::compressed(), 0)};
  std::vector<LevelSpec> levels = {spec(LevelType::compressed({true, false}), 0)};
  for (int32_t d = 1; d < rank; ++d) {
    levels.push_back(spec(LevelType::singleton({true, d == rank - 1}), d));
  }
  return levels;
}

std::vector<LevelSpec> csfLevels(int32_t rank, bool compressedRoot) {
  std::vector<LevelSpec> levels;
  levels.push_back(spec(compressedRoot ? LevelType::compressed() : LevelType::dense(), 0));
  for (int32_t d = 1; d < rank; ++d) levels.push_back(spec(LevelType::compressed(), d));
  return levels;
}

std::vector<LevelSpec> bsrLevels(int64_t r, int64_t c) {
  return {spec(LevelType::dense(), 0, LevelExpr::Op::kDiv, r),
          spec(LevelType::compressed(), 1, LevelExpr::Op::kDiv, c),
          spec(LevelType::dense(), 0, LevelExpr::Op::kMod, r),
          spec(LevelType::dense(), 1, LevelExpr::Op::kMod, c)};
}

std::vector<LevelSpec> nmLevels(int32_t rank, int32_t n, int32_t m) {
  std::vector<LevelSpec> levels;
  for (int32_t d = 0; d + 1 < rank; ++d) levels.push_back(spec(LevelType::dense(), d));
  levels.push_back(spec(LevelType::nm(n, m), rank - 1));
  return levels;
}

/// A plain preset (no width suffix, not hybrid), or nullopt when `name` is none.
std::optional<Format> parsePlainPreset(std::string_view name, int32_t rank, std::string_view text) {
  auto colon = name.find(':');
  std::string_view head = name.substr(0, colon);
  std::string_view param = colon == std::string_view::npos ? "" : name.substr(colon + 1);
  auto noParam = [&] {
    SF_USER_CHECK(param.empty()) << "format '" << text << "': " << head << " takes no parameter";
  };
  if (head == "dense") return noParam(), Format(rank, denseLevels(rank));
  if (head == "coo") return noParam(), Format(rank, cooLevels(rank));
  if (head == "csr" || head == "csc" || head == "dcsr" || head == "dcsc") {
    noParam();
    requireRank(head, rank, 2, text);
    bool doubly = head[0] == 'd';
    bool rows = head.back() == 'r';
    LevelType outer = doubly ? LevelType::compressed() : LevelType::dense();
    return Format(2, {spec(outer, rows ? 0 : 1), spec(LevelType::compressed(), rows ? 1 : 0)});
  }
  if (head == "csf" || head == "dcsf") {
    noParam();
    SF_USER_CHECK(rank >= 3) << "format '" << text << "': " << head
                             << " is for tensors of rank 3 or more (use csr/dcsr for matrices)";
    return Format(rank, csfLevels(rank, head == "dcsf"));
  }
  if (head == "bsr" || head == "bcsr") {
    requireRank(head, rank, 2, text);
    auto x = param.find('x');
    SF_USER_CHECK(!param.empty() && x != std::string_view::npos)
        << "format '" << text << "': bsr needs a block shape, as in bsr:4x4";
    int64_t r = positiveInt(param.substr(0, x), text, "block rows");
    int64_t c = positiveInt(param.substr(x + 1), text, "block columns");
    return Format(2, bsrLevels(r, c));
  }
  if (head == "ell") {
    requireRank(head, rank, 2, text);
    int64_t k = param.empty() ? 0 : positiveInt(param, text, "ELL width");
    return Format(2, {spec(LevelType::dense(), 0), spec(LevelType::fixed(k), 1)});
  }
  if (auto n = parseInt(head); n && !param.empty()) {
    int64_t m = positiveInt(param, text, "group size m");
    SF_USER_CHECK(*n > 0 && *n < m && m <= 256)
        << "format '" << text << "': n:m needs 0 < n < m <= 256";
    SF_USER_CHECK(rank >= 1) << "format '" << text << "': n:m needs rank >= 1";
    return Format(rank, nmLevels(rank, static_cast<int32_t>(*n), static_cast<int32_t>(m)));
  }
  return std::nullopt;
}

LevelExpr parseLevelExpr(std::string_view s, int32_t rank, std::string_view text) {
  SF_USER_CHECK(s.size() >= 2 && s[0] == 'd')
      << "format '" << text << "': '" << s << "' is not a dimension (d0, d1/4, d1%4)";
  auto opPos = s.find_first_of("/%");
  LevelExpr e;
  auto dim = parseInt(s.substr(1, opPos == std::string_view::npos ? s.npos : opPos - 1));
  SF_USER_CHECK(dim && *dim >= 0 && *dim < rank)
      << "format '" << text << "': '" << s << "' names no dimension of a rank-" << rank
      << " tensor";
  e.dim = static_cast<int32_t>(*dim);
  if (opPos != std::string_view::npos) {
    e.op = s[opPos] == '/' ? LevelExpr::Op::kDiv : LevelExpr::Op::kMod;
    e.block = positiveInt(s.substr(opPos + 1), text, "block size");
  }
  return e;
}

LevelType parseLevelType(std::string_view s, std::string_view text) {
  auto open = s.find('(');
  std::string_view name = trim(s.substr(0, open));
  const format::LevelImpl* impl = findLevelImpl(name);
  SF_USER_CHECK(impl != nullptr) << "format '" << text << "': unknown level type '" << name
                                 << "' (dense, compressed, singleton, ragged, fixed, nm)";
  std::vector<std::string> params;
  if (open != std::string_view::npos) {
    SF_USER_CHECK(s.back() == ')') << "format '" << text << "': missing ')' in '" << s << "'";
    std::string_view inner = trim(s.substr(open + 1, s.size() - open - 2));
    if (!inner.empty()) {
      for (std::string_view p : splitTop(inner, ',')) params.emplace_back(p);
    }
  }
  return impl->parse(params, s);
}

Format parseGeneral(std::string_view body, int32_t rank, std::string_view text) {
  SF_USER_CHECK(body.back() == ']') << "format '" << text << "': missing ']'";
  std::string_view inner = trim(body.substr(7, body.size() - 8));
  std::vector<LevelSpec> levels;
  if (!inner.empty()) {
    for (std::string_view item : splitTop(inner, ',')) {
      auto colon = item.find(':');
      SF_USER_CHECK(colon != std::string_view::npos)
          << "format '" << text << "': level '" << item << "' needs the form dN:type";
      levels.push_back({parseLevelType(trim(item.substr(colon + 1)), text),
                        parseLevelExpr(trim(item.substr(0, colon)), rank, text)});
    }
  }
  return Format(rank, std::move(levels));
}

Format parsePlain(std::string_view body, int32_t rank, std::string_view text) {
  if (body.starts_with("levels[")) return parseGeneral(body, rank, text);
  if (auto preset = parsePlainPreset(body, rank, text)) return *preset;
  SF_FAIL(kInvalidArgument) << "unknown format '" << text << "'; expected one of dense, csr, csc, "
                            << "coo, dcsr, dcsc, bsr:RxC, ell[:K], hyb[:K], N:M (as 2:4), csf, "
                            << "dcsf, or levels[d0:dense, d1:compressed, ...]";
}

std::string printExpr(const LevelExpr& e) {
  std::string s = "d" + std::to_string(e.dim);
  if (e.op == LevelExpr::Op::kDiv) s += "/" + std::to_string(e.block);
  if (e.op == LevelExpr::Op::kMod) s += "%" + std::to_string(e.block);
  return s;
}

std::string widthSuffix(const Format& f) {
  if (f.posWidth() == 64 && f.crdWidth() == 64) return "@i64";
  if (f.posWidth() == 64) return "@p64";
  if (f.crdWidth() == 64) return "@c64";
  return "";
}

/// The preset name of a plain format with 32-bit widths, if it is one.
std::optional<std::string> presetName(const Format& f) {
  const Format base = f.withWidths(32, 32);
  const int32_t rank = f.rank();
  std::vector<std::string> candidates = {"dense", "coo"};
  if (rank == 2) candidates.insert(candidates.end(), {"csr", "csc", "dcsr", "dcsc"});
  if (rank >= 3) candidates.insert(candidates.end(), {"csf", "dcsf"});
  for (const std::string& name : candidates) {
    if (*parsePlainPreset(name, rank, name) == base) return name;
  }
  const auto& lv = base.levels();
  if (rank == 2 && lv.size() == 4 && Format(2, bsrLevels(lv[0].expr.block, lv[1].expr.block)) ==
                                         base) {
    return "bsr:" + std::to_string(lv[0].expr.block) + "x" + std::to_string(lv[1].expr.block);
  }
  if (rank == 2 && lv.size() == 2 && lv[1].type.kind == LevelKind::kFixed &&
      Format(2, {spec(LevelType::dense(), 0), spec(LevelType::fixed(lv[1].type.k), 1)}) == base) {
    return lv[1].type.k > 0 ? "ell:" + std::to_string(lv[1].type.k) : std::string("ell");
  }
  if (!lv.empty() && lv.back().type.kind == LevelKind::kNM &&
      Format(rank, nmLevels(rank, lv.back().type.n, lv.back().type.m)) == base) {
    return std::to_string(lv.back().type.n) + ":" + std::to_string(lv.back().type.m);
  }
  return std::nullopt;
}

std::string printPlain(const Format& f) {
  if (auto name = presetName(f)) return *name + widthSuffix(f);
  std::string s = "levels[";
  for (int32_t l = 0; l < f.numLevels(); ++l) {
    const LevelSpec& ls = f.level(l);
    s += (l ? ", " : "") + printExpr(ls.expr) + ":" + levelImpl(ls.type.kind).print(ls.type);
  }
  return s + "]" + widthSuffix(f);
}

Format applyWidths(Format f, std::string_view suffix, std::string_view text) {
  if (suffix.empty() || suffix == "i32") return f;
  if (suffix == "i64") return f.withWidths(64, 64);
  if (suffix == "p64") return f.withWidths(64, 32);
  if (suffix == "c64") return f.withWidths(32, 64);
  SF_FAIL(kInvalidArgument) << "format '" << text << "': unknown width suffix '@" << suffix
                            << "' (expected @i32, @i64, @p64 or @c64)";
}

}  // namespace

Format Format::parse(std::string_view text, int32_t rank) {
  std::string_view body = trim(text);
  SF_USER_CHECK(!body.empty()) << "empty format text";
  std::string_view suffix;
  if (auto at = body.rfind('@'); at != std::string_view::npos) {
    suffix = trim(body.substr(at + 1));
    body = trim(body.substr(0, at));
  }
  std::vector<std::string_view> partsText = splitTop(body, '+');
  if (partsText.size() > 1) {
    std::vector<Format> parts;
    for (std::string_view p : partsText) parts.push_back(parsePlain(p, rank, text));
    return applyWidths(Format::hybrid(std::move(parts)), suffix, text);
  }
  if (body == "hyb" || body.starts_with("hyb:")) {
    SF_USER_CHECK(rank == 2) << "format '" << text << "': hyb is for rank-2 tensors";
    int64_t k = body.size() > 4 ? positiveInt(body.substr(4), text, "ELL width") : 0;
    Format ell(2, {spec(LevelType::dense(), 0), spec(LevelType::fixed(k), 1)});
    return applyWidths(Format::hybrid({ell, Format(2, cooLevels(2))}, k), suffix, text);
  }
  return applyWidths(parsePlain(body, rank, text), suffix, text);
}

std::string Format::toString() const {
  if (!isHybrid()) return printPlain(*this);
  const Format& first = parts_.front();
  if (parts_.size() == 2 && rank_ == 2 && first.numLevels() == 2 &&
      first.level(1).type.kind == LevelKind::kFixed && parts_[1].withWidths(32, 32) ==
                                                           Format(2, cooLevels(2)) &&
      presetName(first) && first.level(1).type.k == splitK_) {
    return (splitK_ > 0 ? "hyb:" + std::to_string(splitK_) : std::string("hyb")) +
           widthSuffix(first);
  }
  std::string s;
  for (size_t i = 0; i < parts_.size(); ++i) {
    s += (i ? "+" : "") + printPlain(parts_[i].withWidths(32, 32));
  }
  return s + widthSuffix(first);
}

std::vector<std::string> formatPresetNames() {
  return {"dense", "csr", "csc", "coo", "dcsr", "dcsc", "bsr:RxC", "ell[:K]", "hyb[:K]", "N:M",
          "csf", "dcsf"};
}

}  // namespace sparseflow
