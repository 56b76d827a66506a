// The tuning database on disk (database.h).
#include "tune/database.h"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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
  std::ifstream in(path_);
  if (!in) return std::nullopt;  // no decisions yet
  std::optional<TuningRecord> found;
  std::string line;
  while (std::getline(in, line)) {
    // Most lines are other problems: parse only those that mention these inputs.
    if (line.find(inputs) == std::string::npos) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("kernel", "") == kernel && j.value("machine", "") == machine &&
          j.value("inputs", "") == inputs)
        found = fromJson(j);
    } catch (const std::exception&) {
      // A line cut short by a crash, or edited by hand: not a decision.
    }
  }
  return found;
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
