// A plain-text table with aligned columns for the tools' reports.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace sparseflow::tools {

/// Columns sized to their widest cell; the first column left-aligned, the others right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str() const {
    std::vector<size_t> width;
    for (const auto& r : rows_) {
      if (width.size() < r.size()) width.resize(r.size(), 0);
      for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    }
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (size_t c = 0; c < r.size(); ++c) {
        const std::string pad(width[c] - r[c].size(), ' ');
        line += c == 0 ? r[c] + pad : "  " + pad + r[c];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace sparseflow::tools
