// read()/write(): choose the file kind, call its reader or writer, and build the Tensor.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "format/value_cast.h"
#include "io/dlmc.h"
#include "io/file_magic.h"
#include "io/frostt.h"
#include "io/harwell_boeing.h"
#include "io/matrix_market.h"
#include "io/npy.h"
#include "io/sft.h"
#include "io/storage_bounds.h"
#include "io/triplet.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "support/check.h"
#include "support/half.h"

namespace sparseflow {
namespace {

/// The kind from the first bytes of the file, for paths without a telling extension; files that
/// no reader takes (a PyTorch checkpoint, an archive...) are refused here, naming what they are.
FileKind sniff(const std::string& path) {
  const support::MappedFile file = io::mapInput(path);
  const std::string_view h = file.data().substr(0, 16);
  if (h.starts_with("%%MatrixMarket") || h.starts_with("%%matrixmarket")) {
    return FileKind::kMatrixMarket;
  }
  if (h.starts_with("\x93NUMPY")) return FileKind::kNpy;
  if (h.starts_with("SFTENSOR")) return FileKind::kSft;
  return FileKind::kTriplet;
}

io::RawTensor readRaw(const std::string& path, FileKind kind, const ReadOptions& options) {
  switch (kind) {
    case FileKind::kMatrixMarket: return io::readMatrixMarket(path);
    case FileKind::kHarwellBoeing: return io::readHarwellBoeing(path);
    case FileKind::kFrostt: return io::readFrostt(path);
    case FileKind::kDlmc: {
      io::DlmcOptions dlmc;
      dlmc.fill = options.fill == ValueFill::kRandom ? io::DlmcOptions::Fill::kRandom
                                                     : io::DlmcOptions::Fill::kOnes;
      dlmc.seed = options.seed;
      return io::readDlmc(path, dlmc);
    }
    case FileKind::kNpy: return io::toRawTensor(io::readNpy(path));
    case FileKind::kTriplet: return io::readTriplets(path);
    default: SF_FAIL(kInternal) << "readRaw for kind " << fileKindName(kind);
  }
}

FileKind resolveKind(const std::string& path, FileKind kind) {
  if (kind != FileKind::kAuto) return kind;
  FileKind fromExt = fileKindFromPath(path);
  return fromExt != FileKind::kAuto ? fromExt : sniff(path);
}

/// The tensor options.tensor names in a .safetensors file, or its only tensor.
Tensor readSafetensorsTensor(const std::string& path, const ReadOptions& options) {
  Checkpoint checkpoint = Checkpoint::open(path);
  if (!options.tensor.empty()) return checkpoint.tensor(options.tensor);
  const auto& entries = checkpoint.entries();
  if (entries.size() != 1) {
    std::string names;
    for (size_t i = 0; i < entries.size() && i < 8; ++i) {
      names += (i ? ", " : "") + entries[i].name;
    }
    SF_FAIL(kInvalidArgument) << path << ": holds " << entries.size()
                              << " tensors; name the one to read (" << names
                              << (entries.size() > 8 ? ", ..." : "") << ")";
  }
  return checkpoint.tensor(entries.front().name);
}

/// The narrowest value type that holds every value of the file exactly (ReadOptions::dtype unset).
DType exactValueType(const io::RawTensor& raw) {
  if (raw.storedType) return *raw.storedType;
  if (raw.pattern) return DType::kF32;
  return fitsF32Exactly(raw.values.data(), static_cast<int64_t>(raw.values.size())) ? DType::kF32
                                                                                    : DType::kF64;
}

Coo rawToCoo(io::RawTensor&& raw) {
  Coo coo;
  coo.shape = raw.shape;
  if (raw.dense) {
    const int64_t total = numElements(raw.shape);
    const auto rank = static_cast<int64_t>(raw.shape.size());
    std::vector<int64_t> index(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < total; ++i) {
      if (raw.values[static_cast<size_t>(i)] != 0) {
        coo.coords.insert(coo.coords.end(), index.begin(), index.end());
        coo.values.push_back(raw.values[static_cast<size_t>(i)]);
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[static_cast<size_t>(d)] < raw.shape[static_cast<size_t>(d)]) break;
        index[static_cast<size_t>(d)] = 0;
      }
    }
    return coo;
  }
  const auto entries = static_cast<size_t>(raw.numEntries());
  coo.coords = std::move(raw.coords);
  coo.values = raw.pattern ? std::vector<double>(entries, 1.0) : std::move(raw.values);
  return coo;
}

/// "763 MiB", "1.5 GiB": sizes in messages, in the units of --storage-limit.
std::string bytesText(int64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (bytes < (int64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.0f MiB", b / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%.1f GiB", b / (1 << 30));
  }
  return text;
}

/// Throws kOutOfMemory naming `path` when a tensor of `format` built from the file's `entries`
/// would take more than ReadOptions::storageLimit allows (io/storage_bounds.h).
void checkStorage(const std::string& path, const Format& format, const std::vector<int64_t>& shape,
                  int64_t entries, const ReadOptions& options) {
  if (options.storageLimit < 0) return;
  struct stat st {};
  const uint64_t fileBytes = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  const int64_t limit =
      options.storageLimit > 0 ? options.storageLimit : io::defaultStorageLimit(fileBytes);
  const int64_t bytes =
      io::estimatedStorageBytes(format, shape, entries, options.dtype.value_or(DType::kF64));
  if (bytes <= limit) return;
  std::string shapeText;
  for (size_t d = 0; d < shape.size(); ++d)
    shapeText += (d ? " x " : "") + std::to_string(shape[d]);
  SF_FAIL(kOutOfMemory)
      << path << ": a " << format.toString() << " tensor of " << shapeText << " would take "
      << bytesText(bytes) << " (storage that grows with the "
      << "shape, not with the " << entries << " entries of this " << fileBytes
      << "-byte file), over the limit of " << bytesText(limit)
      << (options.storageLimit > 0 ? "" : " (256 MiB or 16 times the file)")
      << "; read it in a format that grows with its entries only (coo), or "
      << "raise the limit (ReadOptions::storageLimit; --storage-limit of info, convert and "
      << "audit)";
}

/// Runs `body`, turning a failed allocation into kOutOfMemory naming `path` and `doing`.
template <typename Body>
auto namingOutOfMemory(const std::string& path, const char* doing, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    SF_FAIL(kOutOfMemory) << path << ": out of memory while " << doing;
  }
}

}  // namespace

const char* fileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kAuto: return "auto";
    case FileKind::kMatrixMarket: return "matrix-market";
    case FileKind::kHarwellBoeing: return "harwell-boeing";
    case FileKind::kFrostt: return "frostt";
    case FileKind::kDlmc: return "dlmc";
    case FileKind::kNpy: return "npy";
    case FileKind::kSft: return "sft";
    case FileKind::kTriplet: return "triplet";
    case FileKind::kSafetensors: return "safetensors";
  }
  return "unknown";
}

FileKind fileKindFromPath(const std::string& path) {
  const std::string ext = io::lowerExtension(path);
  if (ext == "mtx" || ext == "mm" || ext == "ttx") return FileKind::kMatrixMarket;
  if (ext == "rua" || ext == "rsa" || ext == "psa" || ext == "pua" || ext == "rra" || ext == "rb" ||
      ext == "hb" || ext == "rse" || ext == "rue") {
    return FileKind::kHarwellBoeing;
  }
  if (ext == "tns") return FileKind::kFrostt;
  if (ext == "smtx") return FileKind::kDlmc;
  if (ext == "npy") return FileKind::kNpy;
  if (ext == "sft") return FileKind::kSft;
  if (ext == "safetensors") return FileKind::kSafetensors;
  return FileKind::kAuto;
}

namespace {

Coo readCooUnchecked(const std::string& path, const ReadOptions& options) {
  const FileKind kind = resolveKind(path, options.kind);
  if (kind == FileKind::kSafetensors) return toCoo(readSafetensorsTensor(path, options));
  if (kind == FileKind::kSft) {
    io::SftReadOptions sft;
    sft.verifyChecksum = options.verifyChecksum;
    return toCoo(io::readSft(path, sft));
  }
  return rawToCoo(readRaw(path, kind, options));
}

Tensor readUnchecked(const std::string& path, const ReadOptions& options) {
  const FileKind kind = resolveKind(path, options.kind);
  if (kind == FileKind::kSft || kind == FileKind::kSafetensors) {
    io::SftReadOptions sft;
    sft.verifyChecksum = options.verifyChecksum;
    Tensor t =
        kind == FileKind::kSft ? io::readSft(path, sft) : readSafetensorsTensor(path, options);
    const DType dtype = options.dtype.value_or(t.dtype());
    if (options.format.empty() && dtype == t.dtype()) return t;
    ConvertOptions convertOptions;
    convertOptions.changeDType = true;
    convertOptions.dtype = dtype;
    Format target = options.format.empty() ? t.format() : Format::parse(options.format, t.rank());
    if (!options.format.empty()) checkStorage(path, target, t.shape(), t.values().size(), options);
    return convert(t, target, convertOptions);
  }
  io::RawTensor raw = readRaw(path, kind, options);
  const auto rank = static_cast<int32_t>(raw.shape.size());
  std::string formatText = options.format;
  if (formatText.empty()) formatText = raw.dense ? "dense" : rank == 2 ? "csr" : "coo";
  Format format = Format::parse(formatText, rank);
  checkStorage(path, format, raw.shape, raw.numEntries(), options);
  const DType dtype = options.dtype ? *options.dtype : exactValueType(raw);
  if (raw.dense) {
    return fromDense(raw.shape, raw.values.data(), format, dtype);
  }
  BuildOptions build;
  build.dtype = dtype;
  build.duplicates = options.duplicates;
  try {
    return fromCoo(rawToCoo(std::move(raw)), format, build);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());  // the builder's message lacks the file
  }
}

void writeUnchecked(const std::string& path, const Tensor& tensor, const WriteOptions& options) {
  FileKind kind = options.kind != FileKind::kAuto ? options.kind : fileKindFromPath(path);
  SF_USER_CHECK(kind != FileKind::kAuto)
      << path << ": cannot tell the file kind from the extension (use .mtx, .tns, .smtx, .npy, "
      << ".sft or .safetensors)";
  if (kind == FileKind::kSft) return io::writeSft(path, tensor);
  if (kind == FileKind::kSafetensors) {
    CheckpointWriter writer;
    writer.add(options.tensor, tensor);
    return writer.write(path);
  }
  if (kind == FileKind::kNpy) {
    io::NpyArray array;
    array.shape = tensor.shape();
    std::vector<double> dense = toDense(tensor);
    if (tensor.dtype() == DType::kF64) {
      array.dtype = "f64";
      array.bytes.resize(dense.size() * 8);
      std::memcpy(array.bytes.data(), dense.data(), array.bytes.size());
    } else if (tensor.dtype() == DType::kF16) {
      array.dtype = "f16";
      array.bytes.resize(dense.size() * 2);
      for (size_t i = 0; i < dense.size(); ++i) {
        uint16_t h = floatToF16(static_cast<float>(dense[i]));
        std::memcpy(array.bytes.data() + 2 * i, &h, 2);
      }
    } else {  // f32, and bf16 (numpy has no bfloat16): widened to f32 exactly
      array.dtype = "f32";
      array.bytes.resize(dense.size() * 4);
      for (size_t i = 0; i < dense.size(); ++i) {
        float f = static_cast<float>(dense[i]);
        std::memcpy(array.bytes.data() + 4 * i, &f, 4);
      }
    }
    return io::writeNpy(path, array);
  }
  io::RawTensor raw;
  raw.shape = tensor.shape();
  if (!tensor.isHybrid() && tensor.format().isDenseRowMajor() && kind == FileKind::kMatrixMarket) {
    raw.dense = true;
    raw.values = toDense(tensor);
  } else {
    Coo coo = toCoo(tensor);
    raw.coords = std::move(coo.coords);
    raw.values = std::move(coo.values);
  }
  switch (kind) {
    case FileKind::kMatrixMarket: return io::writeMatrixMarket(path, raw);
    case FileKind::kFrostt: return io::writeFrostt(path, raw);
    case FileKind::kDlmc: return io::writeDlmc(path, raw);
    default:
      SF_FAIL(kNotSupported) << path << ": writing " << fileKindName(kind)
                             << " files is not supported (use .mtx, .tns, .smtx, .npy, .sft or "
                             << ".safetensors)";
  }
}

}  // namespace

Coo readCoo(const std::string& path, const ReadOptions& options) {
  return namingOutOfMemory(path, "reading it", [&] { return readCooUnchecked(path, options); });
}

Tensor read(const std::string& path, const ReadOptions& options) {
  return namingOutOfMemory(path, "reading it", [&] { return readUnchecked(path, options); });
}

void write(const std::string& path, const Tensor& tensor, const WriteOptions& options) {
  namingOutOfMemory(path, "writing it", [&] { writeUnchecked(path, tensor, options); });
}

}  // namespace sparseflow
