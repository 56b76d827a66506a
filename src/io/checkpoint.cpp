// Checkpoint and CheckpointWriter: named tensors in .safetensors, compressed ones as several arrays
// plus a `__metadata__["sparseflow"]` record (the layout is in docs/tools.md).
#include "sparseflow/checkpoint.h"

#include <cstring>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "format/levels/level_impl.h"
#include "io/file_magic.h"
#include "io/safetensors.h"
#include "io/storage_bounds.h"
#include "sparseflow/validate.h"
#include "support/check.h"
#include "support/mapped_file.h"
#include "support/quote.h"

namespace sparseflow {
namespace {

using Json = nlohmann::json;

/// The `__metadata__` key holding the layout record, and the record's version.
constexpr const char* kLayoutKey = "sparseflow";
constexpr int kLayoutVersion = 1;
/// Tensor names are quoted in full up to this many bytes (real names reach ~100).
constexpr size_t kNameBytes = 200;

enum class Role { kPos, kCrd, kMeta, kValues };

/// One file array of a compressed tensor.
struct LayoutArray {
  std::string name;
  size_t part = 0;
  int32_t level = -1;  // -1 for values
  Role role = Role::kValues;
};

std::vector<Format> partFormats(const Format& format) {
  return format.isHybrid() ? format.parts() : std::vector<Format>{format};
}

/// The arrays a tensor of `format` is stored as under `name`: `name.values`,
/// `name.level<L>.pos|crd|meta`, with `name.part<P>.` before them for each part of a hybrid.
std::vector<LayoutArray> layoutArrays(const std::string& name, const Format& format) {
  std::vector<LayoutArray> arrays;
  const std::vector<Format> parts = partFormats(format);
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string prefix = name + (format.isHybrid() ? ".part" + std::to_string(p) : "");
    for (int32_t l = 0; l < parts[p].numLevels(); ++l) {
      const auto caps = format::levelImpl(parts[p].level(l).type.kind).capabilities();
      const std::string level = prefix + ".level" + std::to_string(l);
      if (caps.hasPos) arrays.push_back({level + ".pos", p, l, Role::kPos});
      if (caps.hasCrd) arrays.push_back({level + ".crd", p, l, Role::kCrd});
      if (caps.hasMeta) arrays.push_back({level + ".meta", p, l, Role::kMeta});
    }
    arrays.push_back({prefix + ".values", p, -1, Role::kValues});
  }
  return arrays;
}

bool isValueDType(std::string_view dtype) {
  return dtype == "F32" || dtype == "F64" || dtype == "F16" || dtype == "BF16";
}

/// An owned copy of `bytes` as a buffer of `type`.
Buffer copyBuffer(DType type, std::string_view bytes) {
  Buffer b = Buffer::zeros(type, static_cast<int64_t>(bytes.size()) / dtypeSize(type));
  if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
  return b;
}

std::string_view bufferBytes(const Buffer& b) {
  return {static_cast<const char*>(b.data()), static_cast<size_t>(b.bytes())};
}

}  // namespace

bool CheckpointEntry::readable() const {
  return isValueDType(dtype);
}

struct Checkpoint::Impl {
  std::string path;
  std::unique_ptr<support::MappedFile> mapped;
  std::string owned;
  std::string_view file;
  io::SafetensorsHeader header;
  std::map<std::string, size_t> arrayIndex;  // array name → header.arrays
  std::vector<CheckpointEntry> entries;
  std::map<std::string, size_t> entryIndex;
  std::map<std::string, std::string> metadata;
  std::map<std::string, Format> formats;  // compressed entries' formats
  std::string layoutRecord;               // the raw record, copied by CheckpointWriter::copy

  const io::SafetensorsArray& array(const std::string& name) const {
    return header.arrays[arrayIndex.at(name)];
  }
  std::string_view bytes(const io::SafetensorsArray& a) const {
    return file.substr(header.dataStart + a.begin, a.end - a.begin);
  }
  void resolve();
  void resolveLayout(const std::string& record, std::map<std::string, std::string>& owner);
};

// A parse error naming the file (inside Checkpoint::Impl, whose `path` it is).
#define CK_FAIL SF_FAIL(kParseError) << path << ": "

void Checkpoint::Impl::resolveLayout(const std::string& record,
                                     std::map<std::string, std::string>& owner) {
  Json json;
  try {
    json = Json::parse(record);
  } catch (const Json::exception& e) {
    CK_FAIL << "__metadata__ \"" << kLayoutKey
            << "\" is not valid JSON: " << support::printable(e.what());
  }
  if (!json.is_object() || !json.contains("version") || !json.contains("tensors") ||
      !json["tensors"].is_object()) {
    CK_FAIL << "__metadata__ \"" << kLayoutKey
            << "\" must be {\"version\": 1, \"tensors\": {...}} (docs/tools.md)";
  }
  SF_CHECK_CODE(json["version"] == kLayoutVersion, ErrorCode::kNotSupported)
      << path << ": sparseflow layout version " << json["version"].dump()
      << " is not supported (this reads " << kLayoutVersion << ")";
  for (const auto& [name, info] : json["tensors"].items()) {
    const std::string where = "compressed tensor " + support::quoted(name, kNameBytes);
    if (!info.is_object() || !info.contains("format") || !info["format"].is_string() ||
        !info.contains("shape") || !info["shape"].is_array() || !info.contains("dtype") ||
        !info["dtype"].is_string()) {
      CK_FAIL << where << ": the record needs a format, a shape and a dtype";
    }
    CheckpointEntry entry;
    entry.name = name;
    entry.dtype = info["dtype"].get<std::string>();
    if (!isValueDType(entry.dtype)) CK_FAIL << where << ": dtype must be F32, F64, F16 or BF16";
    for (const Json& d : info["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 62) ||
          entry.shape.size() >= 64) {
        CK_FAIL << where << ": bad shape " << info["shape"].dump();
      }
      entry.shape.push_back(d.get<int64_t>());
    }
    if (arrayIndex.count(name)) CK_FAIL << where << " has the name of an array";
    Format format;
    try {
      format = Format::parse(info["format"].get<std::string>(),
                             static_cast<int32_t>(entry.shape.size()));
    } catch (const Error& e) {
      SF_FAIL(kParseError) << path << ": " << where << ": " << e.what();
    }
    entry.format = format.toString();
    for (const LayoutArray& la : layoutArrays(name, format)) {
      auto found = arrayIndex.find(la.name);
      if (found == arrayIndex.end()) {
        CK_FAIL << where << " (" << entry.format << ") lacks its array "
                << support::quoted(la.name, kNameBytes);
      }
      const io::SafetensorsArray& a = header.arrays[found->second];
      const bool dtypeOk = la.role == Role::kValues ? a.dtype == entry.dtype
                           : la.role == Role::kMeta ? a.dtype == "U8"
                                                    : (a.dtype == "I32" || a.dtype == "I64");
      if (a.shape.size() != 1 || !dtypeOk) {
        CK_FAIL << where << ": array " << support::quoted(la.name, kNameBytes) << " must be 1-d "
                << (la.role == Role::kValues ? entry.dtype
                    : la.role == Role::kMeta ? std::string("U8")
                                             : std::string("I32 or I64"))
                << ", not " << a.dtype << " of rank " << a.shape.size();
      }
      if (!owner.emplace(la.name, name).second) {
        CK_FAIL << "array " << support::quoted(la.name, kNameBytes) << " is claimed by both "
                << support::quoted(owner[la.name], kNameBytes) << " and "
                << support::quoted(name, kNameBytes);
      }
      entry.arrays.push_back(la.name);
      entry.bytes += static_cast<int64_t>(a.end - a.begin);
    }
    formats.emplace(name, format);
    entryIndex.emplace(name, entries.size());
    entries.push_back(std::move(entry));
  }
}

void Checkpoint::Impl::resolve() {
  header = io::parseSafetensorsHeader(file, path);
  for (size_t i = 0; i < header.arrays.size(); ++i) arrayIndex.emplace(header.arrays[i].name, i);
  std::map<std::string, std::string> owner;  // array → compressed tensor
  for (const auto& [key, value] : header.metadata) {
    if (key == kLayoutKey) {
      layoutRecord = value;
      resolveLayout(value, owner);
    } else {
      metadata.emplace(key, value);
    }
  }
  // Plain arrays become entries; all entries are then ordered by where their data starts.
  for (const io::SafetensorsArray& a : header.arrays) {
    if (owner.count(a.name)) continue;
    CheckpointEntry entry;
    entry.name = a.name;
    entry.shape = a.shape;
    entry.dtype = a.dtype;
    entry.format = "dense";
    entry.arrays = {a.name};
    entry.bytes = static_cast<int64_t>(a.end - a.begin);
    entries.push_back(std::move(entry));
  }
  auto firstByte = [&](const CheckpointEntry& e) {
    uint64_t first = UINT64_MAX;
    for (const std::string& a : e.arrays) first = std::min(first, array(a).begin);
    return std::make_pair(first, e.name);
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const auto& a, const auto& b) { return firstByte(a) < firstByte(b); });
  entryIndex.clear();
  for (size_t i = 0; i < entries.size(); ++i) entryIndex.emplace(entries[i].name, i);
}

Checkpoint Checkpoint::open(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->mapped = std::make_unique<support::MappedFile>(io::mapInput(path));
  impl->file = impl->mapped->data();
  impl->resolve();
  Checkpoint c;
  c.impl_ = std::move(impl);
  return c;
}

Checkpoint Checkpoint::parse(std::string_view bytes, const std::string& name) {
  auto impl = std::make_shared<Impl>();
  impl->path = name;
  impl->owned.assign(bytes);
  impl->file = impl->owned;
  impl->resolve();
  Checkpoint c;
  c.impl_ = std::move(impl);
  return c;
}

const std::string& Checkpoint::path() const {
  return impl_->path;
}
const std::vector<CheckpointEntry>& Checkpoint::entries() const {
  return impl_->entries;
}
const std::map<std::string, std::string>& Checkpoint::metadata() const {
  return impl_->metadata;
}
bool Checkpoint::contains(const std::string& name) const {
  return impl_->entryIndex.count(name);
}

const CheckpointEntry& Checkpoint::entry(const std::string& name) const {
  auto found = impl_->entryIndex.find(name);
  if (found == impl_->entryIndex.end()) {
    std::string some;
    for (size_t i = 0; i < impl_->entries.size() && i < 8; ++i) {
      some += (i ? ", " : "") + support::quoted(impl_->entries[i].name, kNameBytes);
    }
    if (impl_->entries.size() > 8) some += ", ...";
    SF_FAIL(kInvalidArgument) << impl_->path << ": no tensor named "
                              << support::quoted(name, kNameBytes) << " (it holds "
                              << impl_->entries.size() << ": " << some << ")";
  }
  return impl_->entries[found->second];
}

std::string_view Checkpoint::arrayBytes(const std::string& arrayName) const {
  auto found = impl_->arrayIndex.find(arrayName);
  SF_USER_CHECK(found != impl_->arrayIndex.end())
      << impl_->path << ": no array named " << support::quoted(arrayName, kNameBytes);
  return impl_->bytes(impl_->header.arrays[found->second]);
}

Tensor Checkpoint::tensor(const std::string& name) const {
  const CheckpointEntry& e = entry(name);
  SF_CHECK_CODE(e.readable(), ErrorCode::kNotSupported)
      << impl_->path << ": tensor " << support::quoted(name, kNameBytes) << " has dtype " << e.dtype
      << "; tensor values must be F32, F64, F16 or BF16 (it can still be copied unchanged)";
  const DType dtype = *io::dtypeFromSafetensors(e.dtype);
  try {
    if (e.format == "dense") {
      // A plain array (its byte size matches its shape: the header check), or a sparseflow record
      // in the dense format, whose one values array must hold the recorded shape too.
      Format format = Format::parse("dense", static_cast<int32_t>(e.shape.size()));
      std::vector<LevelStorage> levels(static_cast<size_t>(format.numLevels()));
      const io::SafetensorsArray& a = impl_->array(e.arrays.front());
      const int64_t needed = io::storedPositions(format, e.shape, levels, "part 0");
      SF_CHECK_CODE(static_cast<int64_t>((a.end - a.begin) / dtypeSize(dtype)) == needed,
                    ErrorCode::kParseError)
          << "byte " << impl_->header.dataStart + a.begin << ": the values array of part 0 holds "
          << (a.end - a.begin) / dtypeSize(dtype) << " elements but shape " << Json(e.shape).dump()
          << " in format dense needs " << needed;
      return Tensor(e.shape, dtype, format, std::move(levels), copyBuffer(dtype, impl_->bytes(a)));
    }
    const Format& format = impl_->formats.at(name);
    const std::vector<Format> formats = partFormats(format);
    std::vector<std::vector<LevelStorage>> levels(formats.size());
    std::vector<Buffer> values(formats.size());
    std::vector<uint64_t> valuesOffset(formats.size(), 0);  // in the file, for messages
    for (size_t p = 0; p < formats.size(); ++p) {
      levels[p].resize(static_cast<size_t>(formats[p].numLevels()));
    }
    for (const LayoutArray& la : layoutArrays(name, format)) {
      const io::SafetensorsArray& a = impl_->array(la.name);
      Buffer b = copyBuffer(*io::dtypeFromSafetensors(a.dtype), impl_->bytes(a));
      if (la.role == Role::kValues) {
        values[la.part] = std::move(b);
        valuesOffset[la.part] = impl_->header.dataStart + a.begin;
        continue;
      }
      LevelStorage& s = levels[la.part][static_cast<size_t>(la.level)];
      (la.role == Role::kPos ? s.pos : la.role == Role::kCrd ? s.crd : s.meta) = std::move(b);
    }
    std::vector<Tensor> parts;
    for (size_t p = 0; p < formats.size(); ++p) {
      // As many values as the recorded shape needs: a record that declares more than its arrays
      // hold is refused before anything trusts the shape.
      const int64_t needed =
          io::storedPositions(formats[p], e.shape, levels[p], "part " + std::to_string(p));
      SF_CHECK_CODE(values[p].size() == needed, ErrorCode::kParseError)
          << "byte " << valuesOffset[p] << ": the values array of part " << p << " holds "
          << values[p].size() << " elements but shape " << Json(e.shape).dump() << " in format "
          << formats[p].toString() << " needs " << needed;
      parts.emplace_back(e.shape, dtype, formats[p], std::move(levels[p]), std::move(values[p]));
    }
    Tensor t = format.isHybrid() ? Tensor::hybrid(e.shape, dtype, format, std::move(parts))
                                 : std::move(parts.front());
    validate(t);
    return t;
  } catch (const Error& err) {
    throw Error(err.code() == ErrorCode::kInvalidArgument ? ErrorCode::kInvalidFormat : err.code(),
                impl_->path + ": tensor " + support::quoted(name, kNameBytes) + ": " + err.what());
  }
}

// ---- writer ----

struct CheckpointWriter::Impl {
  std::vector<io::SafetensorsOutArray> arrays;
  std::deque<Tensor> tensors;       // keep the arrays alive
  std::vector<Checkpoint> sources;  // keep copied files mapped
  std::vector<std::string> names;   // tensors, in order
  std::set<std::string> used;       // tensor and array names
  Json records = Json::object();    // compressed tensors' layout records
  std::vector<std::pair<std::string, std::string>> metadata;

  void claim(const std::string& arrayName, const std::string& tensorName) {
    SF_USER_CHECK(used.insert(arrayName).second)
        << "checkpoint: the name '" << arrayName << "' (of tensor '" << tensorName
        << "') is already taken";
  }
  std::vector<std::pair<std::string, std::string>> allMetadata() const {
    auto all = metadata;
    if (!records.empty()) {
      all.emplace_back(kLayoutKey, Json{{"version", kLayoutVersion}, {"tensors", records}}.dump());
    }
    return all;
  }
};

CheckpointWriter::CheckpointWriter() : impl_(std::make_unique<Impl>()) {}
CheckpointWriter::~CheckpointWriter() = default;
CheckpointWriter::CheckpointWriter(CheckpointWriter&&) noexcept = default;
CheckpointWriter& CheckpointWriter::operator=(CheckpointWriter&&) noexcept = default;

void CheckpointWriter::add(const std::string& name, const Tensor& tensor) {
  SF_USER_CHECK(!name.empty()) << "checkpoint: a tensor needs a name";
  Impl& w = *impl_;
  const Tensor& t = w.tensors.emplace_back(tensor);
  if (!t.isHybrid() && t.format().isDenseRowMajor()) {
    w.claim(name, name);
    w.arrays.push_back(
        {name, io::safetensorsDTypeName(t.dtype()), t.shape(), bufferBytes(t.values())});
    w.names.push_back(name);
    return;
  }
  SF_USER_CHECK(!w.used.count(name)) << "checkpoint: the name '" << name << "' is already taken";
  std::vector<const Tensor*> parts;
  if (t.isHybrid()) {
    for (const Tensor& p : t.parts()) parts.push_back(&p);
  } else {
    parts.push_back(&t);
  }
  for (const LayoutArray& la : layoutArrays(name, t.format())) {
    const Tensor& part = *parts.at(la.part);
    const LevelStorage* s = la.level >= 0 ? &part.level(la.level) : nullptr;
    const Buffer& b = la.role == Role::kValues ? part.values()
                      : la.role == Role::kPos  ? s->pos
                      : la.role == Role::kCrd  ? s->crd
                                               : s->meta;
    w.claim(la.name, name);
    w.arrays.push_back({la.name, io::safetensorsDTypeName(b.dtype()), {b.size()}, bufferBytes(b)});
  }
  w.used.insert(name);
  w.records[name] = {{"format", t.format().toString()},
                     {"shape", t.shape()},
                     {"dtype", io::safetensorsDTypeName(t.dtype())}};
  w.names.push_back(name);
}

void CheckpointWriter::copy(const Checkpoint& source, const std::string& name) {
  Impl& w = *impl_;
  const CheckpointEntry& e = source.entry(name);
  w.sources.push_back(source);
  if (e.format != "dense") {
    SF_USER_CHECK(!w.used.count(name)) << "checkpoint: the name '" << name << "' is already taken";
  }
  for (const std::string& arrayName : e.arrays) {
    w.claim(arrayName, name);
    const auto& header = source.impl_->array(arrayName);
    w.arrays.push_back({arrayName, header.dtype, header.shape, source.arrayBytes(arrayName)});
  }
  if (e.format != "dense") {
    w.used.insert(name);
    w.records[name] = Json::parse(source.impl_->layoutRecord)["tensors"][name];
  }
  w.names.push_back(name);
}

void CheckpointWriter::setMetadata(const std::string& key, const std::string& value) {
  SF_USER_CHECK(key != kLayoutKey) << "checkpoint: the __metadata__ key '" << kLayoutKey
                                   << "' is reserved for the layout of compressed tensors";
  for (auto& [k, v] : impl_->metadata) {
    if (k == key) {
      v = value;
      return;
    }
  }
  impl_->metadata.emplace_back(key, value);
}

std::vector<std::string> CheckpointWriter::names() const {
  return impl_->names;
}

void CheckpointWriter::write(const std::string& path) const {
  io::writeSafetensors(path, impl_->arrays, impl_->allMetadata());
}

std::string CheckpointWriter::bytes() const {
  return io::formatSafetensors(impl_->arrays, impl_->allMetadata());
}

}  // namespace sparseflow
