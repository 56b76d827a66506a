// `sparseflow info FILE`: shape, nnz, dtype, format, storage and structural statistics.
#include <cstdio>

#include "sparseflow/commands.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"
#include "sparseflow/validate.h"

namespace sparseflow::tools {

void addInfoCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Describe a tensor file: shape, nnz, format, statistics");
  auto path = std::make_shared<std::string>();
  cmd->add_option("FILE", *path, "tensor file (.mtx .rua/.rsa/.rb .tns .smtx .npy .sft, triplets)")
      ->required();
  cmd->callback([&action, path] {
    action = [path] {
      const FileKind kind = fileKindFromPath(*path);
      ReadOptions options;
      options.dtype = DType::kF64;
      Tensor t = read(*path, options);
      ValidationReport report = validate(t);
      std::printf("file       %s (%s)\n", path->c_str(),
                  fileKindName(kind == FileKind::kAuto ? FileKind::kTriplet : kind));
      std::printf("tensor     %s\n", t.summary().c_str());
      std::printf("values     %s\n", report.toString().c_str());
      if (t.rank() == 2) std::printf("%s", matrixStatistics(t).toString().c_str());
      return 0;
    };
  });
}

}  // namespace sparseflow::tools
