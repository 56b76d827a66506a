// The table, JSON, CSV and staged output files of `sparseflow benchmark` (see benchmark_output.h).
#include "benchmark/benchmark_output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "common/report.h"
#include "sparseflow/error.h"

namespace sparseflow::tools::benchmark {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string printf1(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

/// A number for JSON: null when not measured.
Json number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

/// Three significant digits at most: "12.3x", "1.25x", "0.046x".
std::string speedupText(double speedup) {
  if (!std::isfinite(speedup)) return "-";
  return printf1(speedup >= 10 ? "%.1fx" : speedup >= 1 ? "%.2fx" : "%.2gx", speedup);
}

std::string threeDigits(double value) {
  return printf1(value >= 100  ? "%.0f"
                 : value >= 10 ? "%.1f"
                 : value >= 1  ? "%.2f"
                               : "%.2g",
                 value);
}

/// What a peer's cell says: its time and our speed-up, or why it has none.
std::string peerText(const PeerCell& cell) {
  if (cell.status == "ok")
    return bench::formatSeconds(cell.seconds) + " " + speedupText(cell.speedup);
  if (cell.status == "wrong") return "WRONG";
  if (cell.status == "unavailable") return "-";
  if (cell.status == "not run") return "";
  return cell.status;  // failed, n/a
}

std::string oursText(const CaseResult& c) {
  if (c.status == "ok") return bench::formatSeconds(c.seconds);
  if (c.status == "skipped") return "skipped";
  return c.status == "wrong" ? "WRONG" : "FAILED";
}

std::string reproducer(const Results& r, const CaseResult& c) {
  std::string peers;
  for (const std::string& p : r.plan.peers) peers += (peers.empty() ? "" : ",") + p;
  std::string line = "sparseflow benchmark --inputs " + bench::shellQuote(c.path) + " --kernels " +
                     c.kernel + " --format " + bench::shellQuote(c.format) + " --repeat " +
                     std::to_string(r.plan.repeat) + " --threads " + std::to_string(r.plan.threads);
  if (!peers.empty()) line += " --peers " + peers;
  return line;
}

/// Left-aligned columns separated by two spaces; numbers (`right`) aligned right.
void printColumns(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<bool>& right) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const size_t pad = width[i] - row[i].size();
      const bool alignRight = i < right.size() && right[i];
      if (i) line += "  ";
      line += alignRight ? std::string(pad, ' ') + row[i] : row[i];
      if (!alignRight && i + 1 < row.size()) line += std::string(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csvNumber(double value) {
  return std::isfinite(value) ? printf1("%.9g", value) : "";
}

}  // namespace

std::vector<Geomean> geomeans(const Results& r) {
  std::vector<Geomean> out;
  for (const bench::KernelSpec& k : r.plan.kernels) {
    for (size_t j = 0; j < r.peers.size(); ++j) {
      Geomean g{k.name(), k.format, r.peers[j].peer};
      double logs = 0;
      for (const CaseResult& c : r.cases) {
        if (c.kernel != g.kernel || c.format != g.format || c.status != "ok") continue;
        const PeerCell& cell = c.peers[j];
        if (cell.status != "ok" || !(cell.speedup > 0)) continue;
        logs += std::log(cell.speedup);
        ++g.cases;
      }
      if (g.cases) g.speedup = std::exp(logs / g.cases);
      out.push_back(g);
    }
  }
  return out;
}

void printTable(std::ostream& out, const Results& r) {
  std::string kernels;
  for (const bench::KernelSpec& k : r.plan.kernels) {
    const std::string name = k.name() + " " + k.format;
    kernels += (kernels.empty() ? "" : ", ") + name;
  }
  out << "sparseflow benchmark: " << r.inputs.size()
      << (r.inputs.size() == 1 ? " input" : " inputs") << "; " << kernels << "; " << r.plan.threads
      << (r.plan.threads == 1 ? " thread" : " threads") << ", median of " << r.plan.repeat
      << (r.plan.repeat == 1 ? " run" : " runs") << "\n";
  out << "machine: " << r.limits.toString() << " [" << r.limitsSource << "]\n";
  if (std::isfinite(r.loadAverage)) {
    out << "load average " << printf1("%.2f", r.loadAverage) << " at the start"
        << (r.loadAverage > r.plan.threads
                ? " (WARNING: a machine busier than the threads asked for gives unreliable times)"
                : "")
        << "\n";
  }
  std::string peers;
  for (const PeerInfo& p : r.peers) {
    peers += (peers.empty() ? "" : "; ") + p.peer + " = " +
             (p.unavailable.empty() ? (p.name.empty() ? p.peer : p.name) : "unavailable");
  }
  if (!peers.empty()) out << "peers: " << peers << "\n";
  out << "\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"input", "kernel",  "format", "rows x cols", "nnz",
                                   "ours",  "GFLOP/s", "GB/s",   "of BW"};
  for (const PeerInfo& p : r.peers) head.push_back(p.peer);
  head.push_back("note");
  rows.push_back(head);
  for (const CaseResult& c : r.cases) {
    const bool ok = c.status == "ok";
    std::vector<std::string> row = {c.input,
                                    c.kernel,
                                    c.format,
                                    std::to_string(c.rows) + "x" + std::to_string(c.cols),
                                    std::to_string(c.nnz),
                                    oursText(c),
                                    ok ? threeDigits(c.gflops()) : "",
                                    ok ? threeDigits(c.gbPerSecond()) : "",
                                    ok ? threeDigits(100 * c.bandwidthFraction) + "%" : ""};
    for (const PeerCell& cell : c.peers) row.push_back(peerText(cell));
    row.push_back(ok ? "" : (c.status == "skipped" ? "" : "ERROR: ") + c.detail);
    rows.push_back(row);
  }
  std::vector<bool> right = {false, false, false, true, true, true, true, true, true};
  right.resize(head.size() - 1, true);
  printColumns(out, rows, right);
  out << "\nours: checked against a float64 reference, then timed; a peer: its result's sum "
         "checked, "
         "then timed; time (speed-up = peer time / ours, above 1: sparseflow is faster)\n";

  if (!r.peers.empty()) {
    out << "\ngeomean speed-up over the cases both ran (cases):\n";
    std::vector<std::vector<std::string>> g = {{"kernel", "format"}};
    for (const PeerInfo& p : r.peers) g[0].push_back(p.peer);
    std::map<std::string, size_t> rowOf;
    for (const Geomean& m : geomeans(r)) {
      const std::string key = m.kernel + "\t" + m.format;
      if (!rowOf.count(key)) {
        rowOf[key] = g.size();
        g.push_back({m.kernel, m.format});
      }
      g[rowOf[key]].push_back(
          m.cases ? speedupText(m.speedup) + " (" + std::to_string(m.cases) + ")" : "-");
    }
    std::vector<bool> gRight(g[0].size(), true);
    gRight[0] = gRight[1] = false;
    printColumns(out, g, gRight);
  }

  // What the peers could not do, once per peer and reason, with the cases it concerns.
  std::map<std::string, std::vector<std::string>> notes;
  for (const CaseResult& c : r.cases) {
    for (const PeerCell& cell : c.peers) {
      if (cell.status == "ok" || cell.status == "not run" || cell.status == "unavailable") continue;
      notes[cell.peer + " " + cell.status + ": " + cell.detail].push_back(c.input + " " + c.kernel);
    }
  }
  bool header = false;
  auto note = [&](const std::string& line) {
    if (!header) out << "\nnotes:\n";
    header = true;
    out << "  " << line << "\n";
  };
  for (const PeerInfo& p : r.peers) {
    if (!p.unavailable.empty()) note(p.peer + " unavailable: " + p.unavailable);
  }
  for (const auto& [what, cases] : notes) {
    std::string where;
    for (size_t i = 0; i < cases.size() && i < 3; ++i) where += (i ? ", " : "") + cases[i];
    if (cases.size() > 3) where += ", and " + std::to_string(cases.size() - 3) + " more";
    note(what + " (" + where + ")");
  }
  for (size_t i = 0; i < r.leftOut.size() && i < 10; ++i) {
    note("left out " + r.leftOut[i].first + ": " + r.leftOut[i].second);
  }
  if (r.leftOut.size() > 10) {
    note("left out " + std::to_string(r.leftOut.size() - 10) + " more files (listed in --json)");
  }
}

std::string toJson(const Results& r) {
  Json j;
  j["tool"] = "sparseflow benchmark";
  const bench::MachineLimits& l = r.limits;
  j["machine"] = {{"cpu", l.cpu},
                  {"simd", l.simd},
                  {"limits", r.limitsSource},
                  {"read_bandwidth_bytes_per_second", number(l.readBandwidth(r.plan.threads))},
                  {"fma_peak_flops_per_second", number(l.fmaPeak(r.plan.threads))},
                  {"limits_threads", l.threads},
                  {"load_average", number(r.loadAverage)}};
  Json kernels = Json::array(), formats = Json::array();
  for (const bench::KernelSpec& k : r.plan.kernels) {
    if (std::find(kernels.begin(), kernels.end(), k.name()) == kernels.end())
      kernels.push_back(k.name());
    if (std::find(formats.begin(), formats.end(), k.format) == formats.end())
      formats.push_back(k.format);
  }
  j["settings"] = {{"kernels", kernels},        {"formats", formats},
                   {"peers", r.plan.peers},     {"repeat", r.plan.repeat},
                   {"threads", r.plan.threads}, {"python", r.plan.python}};
  j["peers"] = Json::array();
  for (const PeerInfo& p : r.peers) {
    j["peers"].push_back({{"peer", p.peer},
                          {"name", p.name.empty() ? Json(nullptr) : Json(p.name)},
                          {"available", p.unavailable.empty()},
                          {"why", p.unavailable}});
  }
  j["inputs"] = Json::array();
  for (const InputMatrix& m : r.inputs) {
    j["inputs"].push_back(
        {{"label", m.label}, {"path", m.path}, {"rows", m.rows}, {"cols", m.cols}, {"nnz", m.nnz}});
  }
  j["left_out"] = Json::array();
  for (const auto& [path, why] : r.leftOut) j["left_out"].push_back({{"path", path}, {"why", why}});
  j["results"] = Json::array();
  for (const CaseResult& c : r.cases) {
    const bool ok = c.status == "ok";
    Json peers = Json::array();
    for (const PeerCell& cell : c.peers) {
      peers.push_back({{"peer", cell.peer},
                       {"status", cell.status},
                       {"correct", cell.status == "ok"},
                       {"seconds", number(cell.seconds)},
                       {"speedup", number(cell.speedup)},
                       {"how", cell.how},
                       {"detail", cell.detail}});
    }
    j["results"].push_back({{"input", c.input},
                            {"path", c.path},
                            {"kernel", c.kernel},
                            {"format", c.format},
                            {"rows", c.rows},
                            {"cols", c.cols},
                            {"nnz", c.nnz},
                            {"status", c.status},
                            {"correct", ok},
                            {"checked_against", ok ? "float64 reference" : ""},
                            {"detail", c.detail},
                            {"seconds", number(c.seconds)},
                            {"gflops", number(ok ? c.gflops() : NAN)},
                            {"gbytes_per_second", number(ok ? c.gbPerSecond() : NAN)},
                            {"bandwidth_fraction", number(c.bandwidthFraction)},
                            {"flops", number(ok ? c.flops : NAN)},
                            {"bytes", number(ok ? c.bytes : NAN)},
                            {"peers", peers},
                            {"reproducer", reproducer(r, c)}});
  }
  j["geomean"] = Json::array();
  for (const Geomean& g : geomeans(r)) {
    j["geomean"].push_back({{"kernel", g.kernel},
                            {"format", g.format},
                            {"peer", g.peer},
                            {"speedup", number(g.speedup)},
                            {"cases", g.cases}});
  }
  j["failures"] = r.failures();
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string toCsv(const Results& r) {
  std::ostringstream out;
  out << "input,path,kernel,format,rows,cols,nnz,status,correct,seconds,gflops,gbytes_per_second,"
         "bandwidth_fraction";
  for (const PeerInfo& p : r.peers) {
    out << "," << p.peer << "_status," << p.peer << "_seconds," << p.peer << "_speedup";
  }
  out << ",detail\n";
  for (const CaseResult& c : r.cases) {
    const bool ok = c.status == "ok";
    out << csvField(c.input) << "," << csvField(c.path) << "," << c.kernel << ","
        << csvField(c.format) << "," << c.rows << "," << c.cols << "," << c.nnz << "," << c.status
        << "," << (ok ? "true" : "false") << "," << csvNumber(c.seconds) << ","
        << csvNumber(ok ? c.gflops() : NAN) << "," << csvNumber(ok ? c.gbPerSecond() : NAN) << ","
        << csvNumber(c.bandwidthFraction);
    for (const PeerCell& cell : c.peers) {
      out << "," << csvField(cell.status) << "," << csvNumber(cell.seconds) << ","
          << csvNumber(cell.speedup);
    }
    out << "," << csvField(c.detail) << "\n";
  }
  return out.str();
}

StagedOutputs::~StagedOutputs() {
  for (const auto& [temp, target] : staged_) {
    std::error_code ignored;
    fs::remove(temp, ignored);
  }
}

std::string StagedOutputs::stage(const std::string& target) {
  const fs::path path(target);
  const std::string temp = (path.parent_path() / ("." + path.filename().string() + ".sparseflow-" +
                                                  std::to_string(::getpid()) + ".tmp"))
                               .string();
  staged_.emplace_back(temp, target);
  return temp;
}

std::string StagedOutputs::write(const std::string& target, const std::string& text) {
  const std::string temp = stage(target);
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error(ErrorCode::kIoError, "cannot write '" + target + "'");
  return temp;
}

void StagedOutputs::commit() {
  for (const auto& [temp, target] : staged_) {
    std::error_code ec;
    fs::rename(temp, target, ec);
    if (ec) throw Error(ErrorCode::kIoError, "cannot write '" + target + "': " + ec.message());
  }
  staged_.clear();
}

void checkOutputPath(const std::string& option, const std::string& path) {
  const fs::path p(path);
  const fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (path.empty() || p.filename().empty() || fs::is_directory(p, ec)) {
    throw Error(ErrorCode::kInvalidArgument, option + " '" + path + "': expected a file name");
  }
  // The output is renamed over the path: a FIFO or a device (/dev/null) would be replaced.
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) {
    throw Error(ErrorCode::kIoError, option + " '" + path +
                                         "': not a regular file (a device, FIFO or socket is "
                                         "never replaced)");
  }
  if (!fs::is_directory(folder, ec)) {
    throw Error(ErrorCode::kIoError,
                option + " '" + path + "': the folder '" + folder.string() + "' does not exist");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::kIoError,
                option + " '" + path + "': the folder '" + folder.string() + "' is not writable");
  }
}

}  // namespace sparseflow::tools::benchmark
