// `sparseflow survey DIR...`: read every matrix file under the directories, convert it through
// the format presets and print a table of storage bytes and conversion times; files that are
// refused are listed with their error. `make demo` runs it on the bundled real data.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "sparseflow/commands.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/quick_timing.h"

namespace sparseflow::tools {
namespace {

struct SurveyArgs {
  std::vector<std::string> dirs;
  std::vector<std::string> formats = {"csr", "csc", "coo", "dcsr", "bsr:4x4", "ell", "hyb", "2:4"};
};

bool looksLikeMatrixFile(const std::filesystem::path& p) {
  FileKind kind = fileKindFromPath(p.string());
  if (kind == FileKind::kMatrixMarket || kind == FileKind::kHarwellBoeing ||
      kind == FileKind::kDlmc) {
    return true;
  }
  // Headerless triplet files (CSparse's Matrix/ folder) have no extension.
  return kind == FileKind::kAuto && !p.has_extension() && p.parent_path().filename() == "Matrix";
}

int runSurvey(const SurveyArgs& args) {
  std::vector<std::filesystem::path> files;
  for (const std::string& dir : args.dirs) {
    if (std::filesystem::is_regular_file(dir)) {
      files.emplace_back(dir);
      continue;
    }
    if (!std::filesystem::is_directory(dir)) {
      throw sparseflow::Error(ErrorCode::kIoError, dir + ": no such file or directory");
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file() && looksLikeMatrixFile(entry.path()))
        files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::printf("%-44s %13s %9s %8s", "matrix", "shape", "nnz", "read ms");
  for (const std::string& f : args.formats) std::printf(" %15s", f.c_str());
  std::printf("\n%-44s %13s %9s %8s", "", "", "", "");
  for (size_t i = 0; i < args.formats.size(); ++i) std::printf(" %15s", "KB / ms");
  std::printf("\n");
  std::vector<std::string> refused;
  int64_t surveyed = 0;
  for (const auto& file : files) {
    std::string name = file.string();
    std::string shortName = name.size() > 44 ? "..." + name.substr(name.size() - 41) : name;
    auto start = std::chrono::steady_clock::now();
    Tensor csr;
    try {
      csr = read(name);
    } catch (const sparseflow::Error& e) {
      refused.push_back(std::string(e.what()));
      continue;
    }
    double readMs = msSince(start);
    if (csr.rank() != 2) continue;
    ++surveyed;
    std::string shape = std::to_string(csr.shape()[0]) + "x" + std::to_string(csr.shape()[1]);
    std::printf("%-44s %13s %9lld %8.1f", shortName.c_str(), shape.c_str(),
                static_cast<long long>(csr.numStored()), readMs);
    for (const std::string& f : args.formats) {
      char cell[32];
      try {
        start = std::chrono::steady_clock::now();
        Tensor t = convert(csr, f);
        std::snprintf(cell, sizeof cell, "%.0f / %.1f", static_cast<double>(t.storageBytes()) / 1e3,
                      msSince(start));
      } catch (const sparseflow::Error& e) {
        std::snprintf(cell, sizeof cell, "does not fit");
      }
      std::printf(" %15s", cell);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  std::printf("\n%lld matrices surveyed; %zu files refused with a clear error:\n",
              static_cast<long long>(surveyed), refused.size());
  for (const std::string& r : refused) std::printf("  %s\n", r.c_str());
  return 0;
}

}  // namespace

void addSurveyCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "survey", "Read every matrix under the given folders and compare storage formats");
  auto args = std::make_shared<SurveyArgs>();
  cmd->add_option("DIR", args->dirs, "folders or files to survey")->required();
  cmd->add_option("--formats", args->formats, "formats to compare")->delimiter(',');
  cmd->callback([&action, args] { action = [args] { return runSurvey(*args); }; });
}

}  // namespace sparseflow::tools
