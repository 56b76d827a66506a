// `sparseflow convert IN --to FORMAT -o OUT`: any readable file to any format and file kind.
#include <cstdio>

#include "sparseflow/commands.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/validate.h"

namespace sparseflow::tools {

namespace {
struct ConvertArgs {
  std::string input, output, format, dtype = "f32", fill = "ones";
  uint64_t seed = 0;
};
}  // namespace

void addConvertCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("convert", "Convert a tensor file to another format and file kind");
  auto args = std::make_shared<ConvertArgs>();
  cmd->add_option("IN", args->input, "input tensor file")->required();
  cmd->add_option("--to", args->format,
                  "target format: dense, csr, csc, coo, dcsr, dcsc, bsr:RxC, ell[:K], hyb[:K], "
                  "N:M, csf, dcsf, levels[...], with @i64 for 64-bit indices")
      ->required();
  cmd->add_option("-o,--output", args->output, "output file: .sft, .mtx, .npy, .tns or .smtx")
      ->required();
  cmd->add_option("--dtype", args->dtype, "value type: f32, f64, f16, bf16")->capture_default_str();
  cmd->add_option("--fill", args->fill, "values for pattern-only DLMC input: ones or random")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of --fill random")->capture_default_str();
  cmd->callback([&action, args] {
    action = [args] {
      ReadOptions options;
      options.dtype = parseDType(args->dtype);
      if (args->fill != "ones" && args->fill != "random") {
        throw sparseflow::Error(ErrorCode::kInvalidArgument,
                    "--fill must be ones or random, not '" + args->fill + "'");
      }
      options.fill = args->fill == "random" ? ValueFill::kRandom : ValueFill::kOnes;
      options.seed = args->seed;
      Tensor in = read(args->input, options);
      ConversionReport report;
      Tensor out = convert(in, args->format, &report);
      ValidationReport check = validate(out);
      write(args->output, out);
      std::printf("%s\n%s\nwrote %s: %s\n", report.toString().c_str(), check.toString().c_str(),
                  args->output.c_str(), out.summary().c_str());
      return 0;
    };
  });
}

}  // namespace sparseflow::tools
