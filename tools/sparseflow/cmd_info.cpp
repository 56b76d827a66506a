// `sparseflow info FILE`: shape, nnz, dtype, format, storage and structural statistics.
#include <cstdio>

#include "sparseflow/commands.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"
#include "sparseflow/validate.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {

void addInfoCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Describe a tensor file: shape, nnz, format, statistics");
  auto path = std::make_shared<std::string>();
  auto limit = std::make_shared<int64_t>(0);
  cmd->add_option("FILE", *path, "tensor file (.mtx .rua/.rsa/.rb .tns .smtx .npy .sft, triplets)")
      ->required();
  addStorageLimitOption(*cmd, *limit);
  cmd->callback([&action, path, limit] {
    action = [path, limit] {
      const FileKind kind = fileKindFromPath(*path);
      ReadOptions options;  // dtype unset: the values exactly as the file has them
      options.storageLimit = *limit;
      // Text files are described from their coordinates (64-bit: any shape a file declares),
      // whose memory grows with the entries only (csr would need a row pointer per row, however
      // few entries the file holds); binary files keep the format they store, which they back.
      const bool binary =
          kind == FileKind::kSft || kind == FileKind::kSafetensors || kind == FileKind::kNpy;
      if (!binary) options.format = "coo@i64";
      Tensor t = read(*path, options);
      ValidationReport report = validate(t);
      std::printf("file       %s (%s)\n", path->c_str(),
                  fileKindName(kind == FileKind::kAuto ? FileKind::kTriplet : kind));
      std::printf("dtype      %s (%s)\n", dtypeName(t.dtype()),
                  binary ? "as stored"
                         : "text: the narrowest type that holds every value exactly");
      std::printf("tensor     %s\n", t.summary().c_str());
      std::printf("values     %s\n", report.toString().c_str());
      if (t.rank() == 2) std::printf("%s", matrixStatistics(t).toString().c_str());
      return 0;
    };
  });
}

}  // namespace sparseflow::tools
