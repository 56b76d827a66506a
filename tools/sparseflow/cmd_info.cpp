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
      Tensor t = read(*path);  // ReadOptions::dtype unset: the values exactly as the file has them
      ValidationReport report = validate(t);
      const bool binary = kind == FileKind::kNpy || kind == FileKind::kSft ||
                          kind == FileKind::kSafetensors;
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
