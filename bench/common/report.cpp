// Result rows: medians, floors, number formatting, the Markdown table and the TSV hand-over file.
#include "common/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace sparseflow::bench {
namespace {

std::string format(const char* pattern, double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value, unit);
  return text;
}

/// Three significant digits at most, never in exponent form.
std::string threeDigits(double value, const char* unit) {
  const double a = std::fabs(value);
  return format(a >= 100 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s", value, unit);
}

std::string number(double value) {
  if (std::isnan(value)) return "nan";
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

double parseNumber(const std::string& text) {
  return text == "nan" ? NAN : std::stod(text);
}

/// Tabs and newlines would break the TSV file; they never belong in these fields.
std::string clean(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return NAN;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

void setBandwidthFloor(ResultRow& row, double bytes, double bandwidth) {
  row.floorSeconds = bytes / bandwidth;
  row.floorBasis = formatBytes(bytes) + " at " + threeDigits(bandwidth / 1e9, "GB/s");
}

void setComputeFloor(ResultRow& row, double flops, double peak) {
  row.floorSeconds = flops / peak;
  row.floorBasis = threeDigits(flops / 1e9, "GFLOP") + " at " + threeDigits(peak / 1e9, "GFLOP/s");
}

std::string formatSeconds(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (seconds >= 1) return threeDigits(seconds, "s");
  if (seconds >= 1e-3) return threeDigits(seconds * 1e3, "ms");
  if (seconds >= 1e-6) return threeDigits(seconds * 1e6, "us");
  return threeDigits(seconds * 1e9, "ns");
}

std::string formatBytes(double bytes) {
  if (bytes >= 1e9) return threeDigits(bytes / 1e9, "GB");
  if (bytes >= 1e6) return threeDigits(bytes / 1e6, "MB");
  if (bytes >= 1e3) return threeDigits(bytes / 1e3, "kB");
  return threeDigits(bytes, "B");
}

std::string shellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void printTable(std::ostream& out, const std::vector<ResultRow>& rows) {
  out << "| case | threads | sparseflow | peer | peer time | speedup (peer/ours) | floor | "
         "of limit | note |\n"
      << "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | --- |\n";
  for (const ResultRow& r : rows) {
    char ratio[32] = "-", fraction[32] = "-";
    if (!std::isnan(r.ratio())) std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio());
    if (!std::isnan(r.fractionOfLimit())) {
      std::snprintf(fraction, sizeof fraction, "%.1f%%", 100 * r.fractionOfLimit());
    }
    out << "| " << r.name << " | " << r.threads << " | " << formatSeconds(r.seconds) << " | "
        << (r.peer.empty() ? "-" : r.peer) << " | " << formatSeconds(r.peerSeconds) << " | "
        << ratio << " | "
        << (std::isnan(r.floorSeconds) ? "-"
                                       : formatSeconds(r.floorSeconds) + " (" + r.floorBasis + ")")
        << " | " << fraction << " | " << r.note << " |\n";
  }
  out << "\nReproducers (one line per case):\n\n";
  for (const ResultRow& r : rows) out << "- `" << r.name << "`: `" << r.reproducer << "`\n";
}

void appendRows(const std::string& path, const std::vector<ResultRow>& rows) {
  std::ofstream out(path, std::ios::app);
  for (const ResultRow& r : rows) {
    out << clean(r.name) << '\t' << r.threads << '\t' << number(r.seconds) << '\t' << clean(r.peer)
        << '\t' << number(r.peerSeconds) << '\t' << number(r.floorSeconds) << '\t'
        << clean(r.floorBasis) << '\t' << clean(r.note) << '\t' << clean(r.reproducer) << '\n';
  }
  if (!out) throw std::runtime_error(path + ": cannot append result rows");
}

std::vector<ResultRow> readRows(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read result rows");
  std::vector<ResultRow> rows;
  std::string line;
  for (int lineNumber = 1; std::getline(in, line); ++lineNumber) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
    while (f.size() < 9) f.emplace_back();  // getline drops a trailing empty field
    try {
      ResultRow r;
      r.name = f[0];
      r.threads = std::stoi(f[1]);
      r.seconds = parseNumber(f[2]);
      r.peer = f[3];
      r.peerSeconds = parseNumber(f[4]);
      r.floorSeconds = parseNumber(f[5]);
      r.floorBasis = f[6];
      r.note = f[7];
      r.reproducer = f[8];
      rows.push_back(std::move(r));
    } catch (const std::exception&) {
      throw std::runtime_error(path + ":" + std::to_string(lineNumber) + ": malformed result row");
    }
  }
  return rows;
}

}  // namespace sparseflow::bench
