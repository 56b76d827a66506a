// The tuning database on disk (database.h).
#include "tune/database.h"

#include <fcntl.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jit/disk_cache.h"
#include "kernels/dense_gemm/dense_gemm.h"
#include "support/check.h"

namespace sparseflow::tune {
namespace {

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown CPU";
}

/// FNV-1a over 8-byte words, then a final mix: not cryptographic, only a fingerprint.
uint64_t mix(uint64_t h, uint64_t word) {
  h ^= word;
  h *= 0x100000001b3ULL;
  return h ^ (h >> 29);
}

/// `buffer`'s size and up to 4,096 evenly spaced elements (the first and last among them).
uint64_t sampledHash(uint64_t h, const Buffer& buffer) {
  const int64_t n = buffer.size();
  h = mix(h, static_cast<uint64_t>(n));
  if (n == 0) return h;
  const auto* bytes = static_cast<const unsigned char*>(buffer.data());
  const size_t width = static_cast<size_t>(dtypeSize(buffer.dtype()));
  constexpr int64_t kSamples = 4096;
  const int64_t count = std::min(n, kSamples);
  for (int64_t s = 0; s < count; ++s) {
    const int64_t e = count == 1 ? 0 : s * (n - 1) / (count - 1);
    uint64_t word = 0;
    std::memcpy(&word, bytes + static_cast<size_t>(e) * width, std::min<size_t>(width, 8));
    h = mix(h, word);
  }
  return h;
}

uint64_t patternHash(uint64_t h, const Tensor& t) {
  if (t.format().isHybrid()) {
    for (const Tensor& part : t.parts()) h = patternHash(h, part);
    return h;
  }
  for (const LevelStorage& level : t.levels()) {
    h = sampledHash(h, level.pos);
    h = sampledHash(h, level.crd);
    h = sampledHash(h, level.meta);
  }
  return h;
}

nlohmann::json toJson(const TuningRecord& r) {
  return {{"kernel", r.kernel},
          {"machine", r.machine},
          {"inputs", r.inputs},
          {"formats", r.chosen.formats},
          {"schedule", r.chosen.schedule},
          {"hand_tuned", r.chosen.handTuned},
          {"parallel", r.chosen.parallel},
          {"split", r.chosen.split},
          {"unroll", r.chosen.unroll},
          {"median_ms", r.medianMs},
          {"default_ms", r.defaultMs},
          {"space", r.space},
          {"measured", r.measured},
          {"model", r.model}};
}

TuningRecord fromJson(const nlohmann::json& j) {
  TuningRecord r;
  r.kernel = j.at("kernel").get<std::string>();
  r.machine = j.at("machine").get<std::string>();
  r.inputs = j.at("inputs").get<std::string>();
  r.chosen.formats = j.at("formats").get<std::map<std::string, std::string>>();
  r.chosen.schedule = j.at("schedule").get<std::string>();
  r.chosen.handTuned = j.at("hand_tuned").get<bool>();
  r.chosen.parallel = j.value("parallel", true);  // records before the knob ran in parallel
  r.chosen.split = j.value("split", int64_t{0});
  r.chosen.unroll = j.value("unroll", int64_t{0});
  r.medianMs = j.value("median_ms", 0.0);
  r.defaultMs = j.value("default_ms", 0.0);
  r.space = j.value("space", int64_t{0});
  r.measured = j.value("measured", 0);
  r.model = j.value("model", "");
  return r;
}

/// The value of a JSON line's top-level "inputs" field, found without parsing the rest of the
/// line (a small scanner over strings and nesting, jumping from quote to quote inside strings);
/// nullopt when the line has none. A line only JSON reads otherwise (the key spelled with
/// escapes, or given twice: nlohmann takes the last) is filed under what the scanner read, so its
/// lookups miss (the caller searches again); the library never writes such lines.
std::optional<std::string> inputsOf(std::string_view line) {
  int depth = 0;
  char last = 0;  // the last structural character outside strings
  bool keyIsInputs = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '"') {
      size_t end = i;
      bool escaped = false;
      do {  // the closing quote: the next one not escaped by an odd run of backslashes
        end = line.find('"', end + 1);
        if (end == std::string_view::npos) return std::nullopt;  // cut short
        size_t slashes = 0;
        while (line[end - 1 - slashes] == '\\') ++slashes;
        escaped = slashes % 2 == 1;
      } while (escaped);
      const std::string_view content = line.substr(i + 1, end - i - 1);
      if (depth == 1 && (last == '{' || last == ',')) {
        keyIsInputs = content == "inputs";
      } else if (depth == 1 && last == ':' && keyIsInputs) {
        if (content.find('\\') == std::string_view::npos) return std::string(content);
        try {  // escapes: JSON's own reading of the string
          return nlohmann::json::parse(line.substr(i, end + 1 - i)).get<std::string>();
        } catch (const std::exception&) {
          return std::nullopt;
        }
      }
      last = '"';
      i = end;
    } else if (ch == '{' || ch == '[') {
      ++depth;
      last = ch;
    } else if (ch == '}' || ch == ']') {
      --depth;
      last = ch;
    } else if (ch == ',' || ch == ':') {
      last = ch;
      if (ch == ',') keyIsInputs = false;
    }
  }
  return std::nullopt;
}

/// The lines of one database file by a hash of their inputs field, indexed up to `indexed` bytes
/// (whole lines), so that a lookup reads and parses only the lines of its inputs (and the rare
/// line whose inputs share the hash). The file only grows (records are appended); another file at
/// the path, or a shorter one, is indexed again.
struct FileIndex {
  struct Line {
    uint64_t inputsHash;
    off_t start;
    size_t length;
  };
  dev_t device = 0;
  ino_t inode = 0;
  off_t indexed = 0;
  /// The first and the last bytes indexed (up to 4 KiB each): a file replaced at the path or
  /// rewritten in place (even one with the same inode and records of the same length) shows other
  /// bytes there, and is indexed again.
  std::string head, tail;
  std::vector<Line> lines;  ///< in file order
};

/// The file's bytes [begin, end) as read now.
std::string bytesAt(int fd, off_t begin, off_t end) {
  std::string bytes(static_cast<size_t>(std::max<off_t>(0, end - begin)), '\0');
  const ssize_t n = ::pread(fd, bytes.data(), bytes.size(), begin);
  bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return bytes;
}
std::string headOf(int fd, off_t indexed) {
  return bytesAt(fd, 0, std::min<off_t>(indexed, 4096));
}
std::string tailOf(int fd, off_t indexed) {
  return bytesAt(fd, std::max<off_t>(0, indexed - 4096), indexed);
}

std::mutex indexMutex;
std::unordered_map<std::string, FileIndex> fileIndexes;  ///< by path (guarded by indexMutex)

uint64_t inputsHash(std::string_view inputs) {
  return std::hash<std::string_view>{}(inputs);
}

/// Brings `index` up to the file's `size` bytes: the lines appended since the last lookup, read
/// in chunks of 1 MiB (pread: a file cut short meanwhile reads short, where a mapping would
/// fault).
void indexAppended(int fd, off_t size, FileIndex& index) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::string carry;                // a chunk read after the start of a line that continues into it
  off_t at = index.indexed;         // the next byte to read
  off_t lineStart = index.indexed;  // where `carry` begins in the file
  while (at < size) {
    const size_t kept = carry.size();
    carry.resize(kept +
                 static_cast<size_t>(std::min<off_t>(static_cast<off_t>(kChunk), size - at)));
    const ssize_t n = ::pread(fd, carry.data() + kept, carry.size() - kept, at);
    if (n <= 0) {  // cut short meanwhile: what was read is indexed
      carry.resize(kept);
      break;
    }
    carry.resize(kept + static_cast<size_t>(n));
    at += n;
    size_t start = 0;
    for (size_t newline = carry.find('\n'); newline != std::string::npos;
         start = newline + 1, newline = carry.find('\n', start)) {
      const std::string_view line(carry.data() + start, newline - start);
      if (auto inputs = inputsOf(line)) {
        index.lines.push_back(
            {inputsHash(*inputs), lineStart + static_cast<off_t>(start), line.size()});
      }
    }
    lineStart += static_cast<off_t>(start);
    carry.erase(0, start);
  }
  index.indexed = lineStart;  // a last line without its newline: read again next time
  index.head = headOf(fd, index.indexed);
  index.tail = tailOf(fd, index.indexed);
}

/// The record of this key on a line, if the line parses and holds it.
std::optional<TuningRecord> recordOn(const std::string& line, const std::string& kernel,
                                     const std::string& machine, const std::string& inputs) {
  try {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("kernel", "") == kernel && j.value("machine", "") == machine &&
        j.value("inputs", "") == inputs)
      return fromJson(j);
  } catch (const std::exception&) {
    // A line cut short by a crash, or edited by hand: not a decision.
  }
  return std::nullopt;
}

/// A file descriptor closed on every way out.
struct ReadOnlyFile {
  int fd;
  explicit ReadOnlyFile(const std::filesystem::path& path)
      : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ReadOnlyFile() {
    if (fd >= 0) ::close(fd);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
};

}  // namespace

std::string machineFingerprint() {
  static const std::string fingerprint = cpuModel() + " | f32x" +
                                         std::to_string(kernels::denseGemmLanes()) + " | " +
                                         std::to_string(omp_get_max_threads()) + " threads";
  return fingerprint;
}

std::string decisionKey(const std::string& text, const KernelOptions& options,
                        const std::map<std::string, const Tensor*>& tuned) {
  std::string key;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n') key += c;
  }
  for (const auto& [name, dtype] : options.dtypes)
    key += std::string(" ") + name + ":" + dtypeName(dtype);
  std::string pinned;
  for (const auto& [name, format] : options.formats) {
    if (!tuned.count(name)) pinned += " " + name + "=" + format;
  }
  if (!pinned.empty()) key += " | pinned" + pinned;
  key += " | tuning";
  for (const auto& [name, tensor] : tuned) key += " " + name;
  return key;
}

std::string inputFingerprint(const std::map<std::string, const Tensor*>& inputs) {
  std::ostringstream out;
  for (const auto& [name, tensor] : inputs) {
    if (out.tellp() > 0) out << "; ";
    out << name << ":" << dtypeName(tensor->dtype()) << ":" << tensor->format().toString() << ":";
    for (size_t d = 0; d < tensor->shape().size(); ++d) out << (d ? "x" : "") << tensor->shape()[d];
    if (tensor->format().isDenseRowMajor()) continue;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(patternHash(0xcbf29ce484222325ULL, *tensor)));
    out << ":stored=" << tensor->numStored() << ":h=" << hash;
  }
  return out.str();
}

TuningDatabase::TuningDatabase(std::filesystem::path path) : path_(std::move(path)) {
  if (path_ == "-") {
    path_.clear();
    return;
  }
  if (!path_.empty()) return;
  if (const char* env = std::getenv("SPARSEFLOW_TUNE_DB"); env != nullptr && *env != '\0') {
    path_ = env;
    return;
  }
  const std::filesystem::path cache = jit::detail::resolveCacheDir({});
  if (!cache.empty()) path_ = cache / "tuning.jsonl";
}

std::optional<TuningRecord> TuningDatabase::find(const std::string& kernel,
                                                 const std::string& machine,
                                                 const std::string& inputs) const {
  if (path_.empty()) return std::nullopt;
  const ReadOnlyFile file(path_);
  if (file.fd < 0) return std::nullopt;  // no decisions yet
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(indexMutex);
  FileIndex& index = fileIndexes[path_.string()];
  if (index.device != st.st_dev || index.inode != st.st_ino || st.st_size < index.indexed ||
      headOf(file.fd, index.indexed) != index.head ||
      tailOf(file.fd, index.indexed) != index.tail) {
    index = FileIndex{st.st_dev, st.st_ino, 0, {}, {}, {}};
  }
  if (st.st_size > index.indexed) indexAppended(file.fd, st.st_size, index);
  // A whole last line without its newline (written by hand or by another tool) is the newest.
  if (st.st_size > index.indexed) {
    const std::string rest = bytesAt(file.fd, index.indexed, st.st_size);
    if (auto inputsThere = inputsOf(rest); inputsThere && *inputsThere == inputs) {
      if (auto record = recordOn(rest, kernel, machine, inputs)) return record;
    }
  }
  const uint64_t wanted = inputsHash(inputs);
  // The last record of the key wins: from the end. A line that no longer parses or no longer
  // holds this key (the file rewritten in place) is passed over: a miss, never another key.
  for (auto it = index.lines.rbegin(); it != index.lines.rend(); ++it) {
    if (it->inputsHash != wanted) continue;
    std::string line(it->length, '\0');
    if (::pread(file.fd, line.data(), line.size(), it->start) != static_cast<ssize_t>(line.size()))
      continue;
    if (auto record = recordOn(line, kernel, machine, inputs)) return record;
  }
  return std::nullopt;
}

void TuningDatabase::add(const TuningRecord& record) const {
  if (path_.empty()) return;
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  const std::string line = toJson(record).dump() + "\n";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  SF_CHECK_CODE(fd >= 0, ErrorCode::kIoError) << "the tuning database '" << path_.string()
                                              << "' cannot be opened: " << std::strerror(errno);
  // One write with O_APPEND: concurrent writers append whole lines.
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int saved = errno;
  ::close(fd);
  SF_CHECK_CODE(written == static_cast<ssize_t>(line.size()), ErrorCode::kIoError)
      << "the tuning database '" << path_.string()
      << "': a record was not written: " << std::strerror(saved);
}

}  // namespace sparseflow::tune
