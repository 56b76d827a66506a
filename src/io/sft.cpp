// .sft writer and reader (see sft.h for the layout).
#include "io/sft.h"

#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <optional>
#include <cstring>
#include <limits>
#include <sstream>

#include "format/levels/level_impl.h"
#include "io/file_magic.h"
#include "io/storage_bounds.h"
#include "sparseflow/validate.h"
#include "support/check.h"
#include "support/quote.h"
#include "support/file_checks.h"
#include "support/hash.h"
#include "support/mapped_file.h"

namespace sparseflow::io {
namespace {

constexpr size_t kHeaderBytes = 48;
constexpr size_t kRecordBytes = 32;
constexpr uint32_t kValuesLevel = 0xffffffffu;
enum Role : uint32_t { kPos = 0, kCrd = 1, kMeta = 2, kValues = 3 };

struct Record {
  uint32_t part, level, role, dtype;
  uint64_t count, offset;
};

template <typename T>
void put(std::string& out, size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof(T));
}
template <typename T>
T get(const char* base, size_t at) {
  T value;
  std::memcpy(&value, base + at, sizeof(T));
  return value;
}

size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

struct ArrayRef {
  Record record;
  const Buffer* buffer;
};

std::vector<const Tensor*> partsOf(const Tensor& t) {
  std::vector<const Tensor*> parts;
  if (t.isHybrid()) {
    for (const Tensor& p : t.parts()) parts.push_back(&p);
  } else {
    parts.push_back(&t);
  }
  return parts;
}

}  // namespace

std::string formatSft(const Tensor& tensor) {
  std::ostringstream desc;
  desc << "shape:";
  for (int64_t s : tensor.shape()) desc << " " << s;
  desc << "\ndtype: " << dtypeName(tensor.dtype()) << "\nformat: " << tensor.format().toString()
       << "\n";
  const std::string descriptor = desc.str();

  std::vector<ArrayRef> arrays;
  std::vector<const Tensor*> parts = partsOf(tensor);
  for (uint32_t p = 0; p < parts.size(); ++p) {
    const Tensor& t = *parts[p];
    for (int32_t l = 0; l < t.format().numLevels(); ++l) {
      auto caps = format::levelImpl(t.format().level(l).type.kind).capabilities();
      const LevelStorage& s = t.level(l);
      auto add = [&](bool used, Role role, const Buffer& b) {
        if (used) arrays.push_back({{p, static_cast<uint32_t>(l), role,
                                     static_cast<uint32_t>(b.dtype()),
                                     static_cast<uint64_t>(b.size()), 0},
                                    &b});
      };
      add(caps.hasPos, kPos, s.pos);
      add(caps.hasCrd, kCrd, s.crd);
      add(caps.hasMeta, kMeta, s.meta);
    }
    arrays.push_back({{p, kValuesLevel, kValues, static_cast<uint32_t>(t.values().dtype()),
                       static_cast<uint64_t>(t.values().size()), 0},
                      &t.values()});
  }
  size_t at = alignUp(kHeaderBytes + descriptor.size(), 8) + arrays.size() * kRecordBytes;
  for (ArrayRef& a : arrays) {
    at = alignUp(at, 64);
    a.record.offset = at;
    at += static_cast<size_t>(a.buffer->bytes());
  }
  std::string out(at, '\0');
  std::memcpy(out.data(), kSftMagic, 8);
  put<uint32_t>(out, 8, kSftVersion);
  put<uint64_t>(out, 16, descriptor.size());
  put<uint64_t>(out, 24, arrays.size());
  put<uint64_t>(out, 32, out.size());
  std::memcpy(out.data() + kHeaderBytes, descriptor.data(), descriptor.size());
  size_t table = alignUp(kHeaderBytes + descriptor.size(), 8);
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Record& r = arrays[i].record;
    size_t rec = table + i * kRecordBytes;
    put(out, rec, r.part), put(out, rec + 4, r.level), put(out, rec + 8, r.role);
    put(out, rec + 12, r.dtype), put(out, rec + 16, r.count), put(out, rec + 24, r.offset);
    if (arrays[i].buffer->bytes() > 0) {
      std::memcpy(out.data() + r.offset, arrays[i].buffer->data(),
                  static_cast<size_t>(arrays[i].buffer->bytes()));
    }
  }
  put<uint64_t>(out, 40, checksum64(out.data() + kHeaderBytes, out.size() - kHeaderBytes));
  return out;
}

void writeSft(const std::string& path, const Tensor& tensor) {
  support::writeFileAtomically(path, formatSft(tensor));
}

namespace {

// A parse error that names the file and the byte offset at fault.
#define SFT_FAIL(offset) SF_FAIL(kParseError) << name << ": byte " << (offset) << ": "

/// Decodes .sft bytes; arrays view `base` (kept alive by `keepAlive`) or are copied.
Tensor decodeSft(char* base, size_t size, const std::string& name, const SftReadOptions& options,
                 const std::shared_ptr<void>& keepAlive, bool copy) {
  if (size < kHeaderBytes) SFT_FAIL(size) << "file of " << size << " bytes is too short for .sft";
  if (std::memcmp(base, kSftMagic, 8) != 0) SFT_FAIL(0) << "not a .sft file (wrong magic)";
  const auto version = get<uint32_t>(base, 8);
  SF_CHECK_CODE(version == kSftVersion, ErrorCode::kNotSupported)
      << name << ": byte 8: .sft version " << version << " is not supported (this reads "
      << kSftVersion << ")";
  const auto descBytes = get<uint64_t>(base, 16);
  const auto count = get<uint64_t>(base, 24);
  const auto fileBytes = get<uint64_t>(base, 32);
  if (fileBytes != size) {
    SFT_FAIL(32) << "header says " << fileBytes << " bytes but the file has " << size
             << " (truncated or extended)";
  }
  if (descBytes > size - kHeaderBytes) SFT_FAIL(16) << "descriptor runs past the end of the file";
  const size_t table = alignUp(kHeaderBytes + descBytes, 8);
  if (count > (size - std::min(size, table)) / kRecordBytes) {
    SFT_FAIL(24) << "array table of " << count << " records runs past the end of the file";
  }
  if (options.verifyChecksum &&
      checksum64(base + kHeaderBytes, size - kHeaderBytes) != get<uint64_t>(base, 40)) {
    SFT_FAIL(40) << "checksum mismatch: the file is corrupt";
  }
  // Descriptor.
  std::istringstream desc(std::string(base + kHeaderBytes, descBytes));
  std::string line, formatText;
  std::vector<int64_t> shape;
  std::optional<DType> dtype;
  bool haveShape = false;
  while (std::getline(desc, line)) {
    if (line.rfind("shape:", 0) == 0) {
      std::istringstream dims(line.substr(6));
      int64_t d;
      while (dims >> d) {
        if (d < 0 || shape.size() >= 64) {
          SFT_FAIL(kHeaderBytes) << "bad shape line " << support::quoted(line, 80);
        }
        shape.push_back(d);
      }
      if (!dims.eof()) SFT_FAIL(kHeaderBytes) << "bad shape line " << support::quoted(line, 80);
      haveShape = true;
    } else if (line.rfind("dtype: ", 0) == 0) {
      try {
        dtype = parseDType(line.substr(7));
      } catch (const Error& e) {
        throw Error(e.code(), name + ": byte " + std::to_string(kHeaderBytes) + ": " +
                                  support::printable(e.what()));
      }
    } else if (line.rfind("format: ", 0) == 0) {
      formatText = line.substr(8);
    }
  }
  if (!haveShape || !dtype || formatText.empty()) {
    SFT_FAIL(kHeaderBytes) << "descriptor lacks a shape, dtype or format line";
  }
  Format format;
  try {
    format = Format::parse(formatText, static_cast<int32_t>(shape.size()));
  } catch (const Error& e) {
    throw Error(e.code(), name + ": byte " + std::to_string(kHeaderBytes) + ": " +
                                  support::printable(e.what()));
  }
  std::vector<Format> partFormats = format.isHybrid() ? format.parts() : std::vector<Format>{format};
  std::vector<std::vector<LevelStorage>> levels(partFormats.size());
  std::vector<Buffer> values(partFormats.size());
  std::vector<bool> haveValues(partFormats.size(), false);
  std::vector<size_t> valuesRecord(partFormats.size(), 0);
  std::vector<std::vector<std::array<bool, 3>>> seen(partFormats.size());
  for (size_t p = 0; p < partFormats.size(); ++p) {
    levels[p].resize(static_cast<size_t>(partFormats[p].numLevels()));
    seen[p].assign(levels[p].size(), {false, false, false});
  }
  for (uint64_t i = 0; i < count; ++i) {
    const size_t rec = table + i * kRecordBytes;
    Record r{get<uint32_t>(base, rec), get<uint32_t>(base, rec + 4), get<uint32_t>(base, rec + 8),
             get<uint32_t>(base, rec + 12), get<uint64_t>(base, rec + 16),
             get<uint64_t>(base, rec + 24)};
    if (r.part >= partFormats.size()) SFT_FAIL(rec) << "array " << i << " names part " << r.part;
    if (r.dtype > static_cast<uint32_t>(DType::kU8)) SFT_FAIL(rec) << "array " << i << ": bad dtype";
    const auto type = static_cast<DType>(r.dtype);
    const auto elem = static_cast<uint64_t>(dtypeSize(type));
    if (r.offset % 64 != 0 || r.offset > size || r.count > (size - r.offset) / elem) {
      SFT_FAIL(rec) << "array " << i << " (" << r.count << " elements at byte " << r.offset
                << ") lies outside the file or is misaligned";
    }
    Buffer b = Buffer::view(type, base + r.offset, static_cast<int64_t>(r.count), keepAlive);
    if (copy) b = b.clone();
    if (r.role == kValues && r.level == kValuesLevel) {
      if (haveValues[r.part]) SFT_FAIL(rec) << "values of part " << r.part << " appear twice";
      values[r.part] = std::move(b);
      haveValues[r.part] = true;
      valuesRecord[r.part] = rec;
      continue;
    }
    if (r.level >= levels[r.part].size() || r.role > kMeta) {
      SFT_FAIL(rec) << "array " << i << " names level " << r.level << " role " << r.role
                << ", which the format " << partFormats[r.part].toString() << " does not have";
    }
    if (seen[r.part][r.level][r.role]) SFT_FAIL(rec) << "array " << i << " appears twice";
    seen[r.part][r.level][r.role] = true;
    LevelStorage& s = levels[r.part][r.level];
    Buffer& slot = r.role == kPos ? s.pos : r.role == kCrd ? s.crd : s.meta;
    slot = std::move(b);
  }
  std::vector<Tensor> parts;
  for (size_t p = 0; p < partFormats.size(); ++p) {
    if (!haveValues[p]) SFT_FAIL(table) << "part " << p << " has no values array";
    for (size_t l = 0; l < levels[p].size(); ++l) {
      auto caps = format::levelImpl(partFormats[p].level(static_cast<int32_t>(l)).type.kind)
                      .capabilities();
      const auto& got = seen[p][l];
      if ((caps.hasPos && !got[kPos]) || (caps.hasCrd && !got[kCrd]) ||
          (caps.hasMeta && !got[kMeta])) {
        SFT_FAIL(table) << "part " << p << " level " << l << " lacks an array its format needs";
      }
    }
    // The values must be as many as the shape and the levels need: a header that declares a
    // larger shape than its arrays back is refused here, before anything trusts it.
    const int64_t needed =
        storedPositions(partFormats[p], shape, levels[p],
                        name + ": byte " + std::to_string(kHeaderBytes) + ": part " +
                            std::to_string(p));
    if (values[p].size() != needed) {
      SFT_FAIL(valuesRecord[p]) << "the values array of part " << p << " holds "
                                << values[p].size() << " elements but the shape and format "
                                << partFormats[p].toString() << " need " << needed;
    }
    parts.emplace_back(shape, *dtype, partFormats[p], std::move(levels[p]), std::move(values[p]));
  }
  Tensor tensor = format.isHybrid() ? Tensor::hybrid(shape, *dtype, format, std::move(parts))
                                    : std::move(parts.front());
  if (options.validate) {
    try {
      validate(tensor);
    } catch (const Error& e) {
      SF_FAIL(kInvalidFormat) << name << ": " << e.what();
    }
  }
  return tensor;
}

/// decodeSft, with every error naming the file.
Tensor decodeSftChecked(char* base, size_t size, const std::string& name,
                        const SftReadOptions& options, const std::shared_ptr<void>& keepAlive,
                        bool copy) {
  try {
    return decodeSft(base, size, name, options, keepAlive, copy);
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(name)) throw;
    throw Error(e.code(), name + ": " + e.what());
  }
}

}  // namespace

Tensor parseSft(std::string_view bytes, const std::string& name, const SftReadOptions& options) {
  // Copy into 64-byte-aligned memory so views are aligned, then copy the arrays out.
  Buffer scratch = Buffer::zeros(DType::kU8, static_cast<int64_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(scratch.data(), bytes.data(), bytes.size());
  return decodeSftChecked(static_cast<char*>(scratch.data()), bytes.size(), name, options, nullptr,
                          true);
}

Tensor readSft(const std::string& path, const SftReadOptions& options) {
  support::RegularFile file(path);  // a FIFO or device is refused, without blocking
  const auto size = static_cast<size_t>(file.size());
  if (size == 0) SF_FAIL(kParseError) << path << ": byte 0: empty file is not a .sft file";
  // Copy-on-write: callers may modify arrays without touching the file.
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0);
  if (map == MAP_FAILED) {
    const int err = errno;
    SF_FAIL(kIoError) << path << ": cannot map: " << support::systemReason(err);
  }
  std::shared_ptr<void> keepAlive(map, [size](void* p) { ::munmap(p, size); });
  const std::string_view bytes(static_cast<const char*>(map), size);
  if (!bytes.starts_with(std::string_view(kSftMagic, 8))) refuseForeignFile(bytes, path);
  return decodeSftChecked(static_cast<char*>(map), size, path, options, keepAlive, false);
}

}  // namespace sparseflow::io
