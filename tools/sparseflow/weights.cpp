// Listing and selecting the weights of a checkpoint, a directory or a file.
#include "sparseflow/weights.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include "sparseflow/convert.h"
#include "sparseflow/error.h"

namespace sparseflow::tools {
namespace {

namespace fs = std::filesystem;

bool matchesAny(const std::vector<std::string>& patterns, const std::string& name,
                std::string* which = nullptr) {
  for (const std::string& p : patterns) {
    if (::fnmatch(p.c_str(), name.c_str(), 0) == 0) {
      if (which) *which = p;
      return true;
    }
  }
  return false;
}

ReadOptions readOptions(const WeightOptions& options) {
  ReadOptions read;
  read.fill = options.fill == "ones" ? ValueFill::kOnes : ValueFill::kRandom;
  read.seed = options.seed;  // read.dtype unset: the values as the file holds them, exactly
  read.storageLimit = options.storageLimit;
  return read;
}

Tensor withDType(Tensor t, const WeightOptions& options) {
  if (!options.dtype || t.dtype() == *options.dtype) return t;
  ConvertOptions convert;
  convert.changeDType = true;
  convert.dtype = *options.dtype;
  return sparseflow::convert(t, t.format(), convert);
}

std::string lowerCase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

void addCheckpoint(std::vector<Weight>& out, const std::string& path,
                   const WeightOptions& options) {
  Checkpoint checkpoint = Checkpoint::open(path);
  for (const CheckpointEntry& e : checkpoint.entries()) {
    Weight w;
    w.name = e.name;
    w.origin = path;
    w.shape = e.shape;
    w.dtype = lowerCase(e.dtype);  // "f32", "bf16", "i64", "bool": as sparseflow names types
    w.readable = e.readable();
    w.checkpoint = checkpoint;
    w.loadSource = [checkpoint, name = e.name] { return checkpoint.tensor(name); };
    w.load = [source = w.loadSource, options] { return withDType(source(), options); };
    out.push_back(std::move(w));
  }
}

bool isWeightFile(const fs::path& p) {
  const FileKind kind = fileKindFromPath(p.string());
  return kind == FileKind::kDlmc || kind == FileKind::kMatrixMarket || kind == FileKind::kNpy ||
         kind == FileKind::kSft || kind == FileKind::kSafetensors;
}

Weight fileWeight(const fs::path& p, const WeightOptions& options) {
  Weight w;
  w.name = p.stem().string();
  w.origin = p.string();
  const ReadOptions read = readOptions(options);
  w.loadSource = [path = p.string(), read] { return sparseflow::read(path, read); };
  w.load = [source = w.loadSource, options] { return withDType(source(), options); };
  return w;
}

}  // namespace

void addWeightOptions(CLI::App& cmd, WeightOptions& options) {
  cmd.add_option("--include", options.include,
                 "only tensors whose name matches this glob (repeatable; default: all)");
  cmd.add_option("--exclude", options.exclude,
                 "skip tensors whose name matches this glob (repeatable; wins over --include)");
  cmd.add_option("--fill", options.fill,
                 "values for pattern-only DLMC (.smtx) files: random (uniform in [-1, 1)) or ones")
      ->check(CLI::IsMember({"random", "ones"}))
      ->capture_default_str();
  cmd.add_option("--seed", options.seed, "seed of --fill random")->capture_default_str();
  cmd.add_option_function<std::string>(
      "--dtype", [&options](const std::string& text) { options.dtype = parseDType(text); },
      "value type of the weights (f32, f64, f16, bf16); default: as stored (text files: f32 "
      "when every value is an f32 exactly, else f64)");
  addStorageLimitOption(cmd, options.storageLimit);
}

void addStorageLimitOption(CLI::App& cmd, int64_t& limit) {
  cmd.add_option_function<std::string>(
      "--storage-limit", [&limit](const std::string& text) { limit = parseByteSize(text); },
      "most memory a tensor read from a file may take, such as 4G (K, M, G, T: powers of 1024), or "
      "none; default: 256M or 16 times the file's size, whichever is larger, so that a header "
      "declaring a huge shape cannot make a small file allocate gigabytes");
}

int64_t parseByteSize(const std::string& text) {
  if (text == "none") return -1;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M" || suffix == "m") shift = 20;
  if (suffix == "G" || suffix == "g") shift = 30;
  if (suffix == "T" || suffix == "t") shift = 40;
  if (digits == 0 || digits > 12 || shift < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "'" + text + "' is not a size (bytes, or a number with K, M, G or T; or none)");
  }
  const int64_t value = std::stoll(text.substr(0, digits));
  if (value > (INT64_MAX >> shift)) {
    throw Error(ErrorCode::kInvalidArgument, "'" + text + "' is too large a size");
  }
  return value << shift;
}

std::vector<Weight> listWeights(const std::string& input, const WeightOptions& options,
                                std::vector<std::string>* ignored) {
  std::vector<Weight> out;
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
      std::error_code typeError;
      if (!entry.is_regular_file(typeError)) {
        const std::string special = specialFileKind(entry.path().string());
        if (ignored && !special.empty()) {
          ignored->push_back(entry.path().filename().string() + " (" + special + ")");
        }
        continue;
      }
      if (isWeightFile(entry.path())) {
        files.push_back(entry.path());
      } else if (ignored) {
        ignored->push_back(entry.path().filename().string());
      }
    }
    if (ec) throw Error(ErrorCode::kIoError, input + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      if (fileKindFromPath(p.string()) == FileKind::kSafetensors) {
        // A one-tensor checkpoint stands for a file named after it.
        Checkpoint checkpoint = Checkpoint::open(p.string());
        if (checkpoint.entries().size() != 1) {
          throw Error(ErrorCode::kInvalidArgument,
                      p.string() + ": holds " + std::to_string(checkpoint.entries().size()) +
                          " tensors; a directory of weights takes one-tensor files (give the "
                          "checkpoint itself as the input)");
        }
        std::vector<Weight> one;
        addCheckpoint(one, p.string(), options);
        one.front().name = p.stem().string();
        out.push_back(std::move(one.front()));
      } else {
        out.push_back(fileWeight(p, options));
      }
    }
    std::vector<std::string> names;
    for (const Weight& w : out) names.push_back(w.name);
    std::sort(names.begin(), names.end());
    auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) {
      throw Error(ErrorCode::kInvalidArgument,
                  input + ": two files are named '" + *dup + "' (with different extensions)");
    }
    return out;
  }
  if (!fs::exists(input, ec)) {
    throw Error(ErrorCode::kIoError, input + ": no such file or directory");
  }
  if (fileKindFromPath(input) == FileKind::kSafetensors) {
    addCheckpoint(out, input, options);
  } else {
    out.push_back(fileWeight(input, options));
  }
  return out;
}

std::string skipReason(const Weight& weight, const WeightOptions& options) {
  if (!weight.readable) return "dtype " + weight.dtype + " is not a float weight";
  if (weight.shape.size() != 2) return "not 2-d (shape " + shapeText(weight.shape) + ")";
  std::string pattern;
  if (matchesAny(options.exclude, weight.name, &pattern)) return "excluded by '" + pattern + "'";
  if (!options.include.empty() && !matchesAny(options.include, weight.name)) {
    return "not matched by --include";
  }
  return "";
}

namespace {

/// The components of a tensor name split at '.', '/', ':' and '_'... lower-cased, and the
/// dot-separated parts too ("model.embed_tokens.weight" → embed, tokens, embed_tokens...).
std::vector<std::string> nameParts(const std::string& name) {
  std::vector<std::string> parts;
  std::string dotted, word;
  const auto flush = [&](std::string& part) {
    if (!part.empty()) parts.push_back(part);
    part.clear();
  };
  for (char c : lowerCase(name)) {
    if (c == '.' || c == '/' || c == ':') {
      flush(word);
      flush(dotted);
    } else if (c == '_' || c == '-') {
      flush(word);
      dotted += c;
    } else {
      word += c;
      dotted += c;
    }
  }
  flush(word);
  flush(dotted);
  return parts;
}

}  // namespace

std::string embeddingReason(const std::string& name, const std::vector<int64_t>& shape) {
  static const std::set<std::string> kTables = {"embed",
                                                "embeds",
                                                "embedding",
                                                "embeddings",
                                                "embed_tokens",
                                                "embed_positions",
                                                "wte",
                                                "wpe",
                                                "word_embeddings",
                                                "position_embeddings",
                                                "token_type_embeddings",
                                                "tok_embeddings",
                                                "shared",
                                                "emb"};
  static const std::set<std::string> kProjections = {
      "lm_head", "head",    "classifier", "proj", "out_proj", "fc",  "dense", "linear",
      "output",  "decoder", "query",      "key",  "value",    "mlp", "attn",  "attention"};
  for (const std::string& part : nameParts(name)) {
    if (kTables.count(part)) return "embedding table (a lookup by index, not a linear layer)";
  }
  if (shape.size() != 2 || shape[0] < 30000 || shape[0] < 8 * shape[1]) return "";
  for (const std::string& part : nameParts(name)) {
    if (kProjections.count(part)) return "";
  }
  return "embedding table (vocabulary-sized: " + shapeText(shape) +
         "; a lookup by index, not a linear layer)";
}

std::string specialFileKind(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec) return "";
  switch (status.type()) {
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::socket: return "a socket";
    default: return "";
  }
}

std::string shapeText(const std::vector<int64_t>& shape) {
  if (shape.size() == 2) return std::to_string(shape[0]) + "x" + std::to_string(shape[1]);
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string bytesText(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

std::string safeFileName(const std::string& name) {
  std::string safe = name;
  for (char& c : safe) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) c = '_';
  }
  if (safe.empty() || safe == "." || safe == "..") {
    throw Error(ErrorCode::kInvalidArgument,
                "tensor name '" + name + "' cannot be a file name in the output directory");
  }
  return safe;
}

}  // namespace sparseflow::tools
