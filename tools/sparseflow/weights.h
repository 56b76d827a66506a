// The weights `sparseflow convert` and `sparseflow audit` work on: the tensors of a .safetensors
// checkpoint, the weight files of a directory, or one file; with --include/--exclude selection.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sparseflow/checkpoint.h"
#include "sparseflow/io.h"
#include "sparseflow/tensor.h"

namespace sparseflow::tools {

/// How weights are loaded and chosen (the options both commands share).
struct WeightOptions {
  std::vector<std::string> include;  ///< glob patterns (fnmatch); empty: every tensor
  std::vector<std::string> exclude;  ///< glob patterns; win over include
  std::string fill = "random";       ///< values of pattern-only DLMC files: random or ones
  uint64_t seed = 0;                 ///< of --fill random
  std::optional<DType> dtype;        ///< the value type to work in; unset: as stored
  int64_t storageLimit = 0;          ///< ReadOptions::storageLimit of files (0: the default)
};

/// Adds --include, --exclude, --fill, --seed, --dtype and --storage-limit to a subcommand.
void addWeightOptions(CLI::App& cmd, WeightOptions& options);

/// Adds --storage-limit SIZE (bytes, or with a K, M, G or T suffix of powers of 1024; "none" for
/// no limit) to a subcommand: ReadOptions::storageLimit, the most memory a tensor read from a
/// file may take.
void addStorageLimitOption(CLI::App& cmd, int64_t& limit);

/// "4G" → 4 << 30, "512M", "1000", "none" → -1; kInvalidArgument for anything else.
int64_t parseByteSize(const std::string& text);

/// One tensor of the input, loaded on demand.
struct Weight {
  std::string name;    ///< the tensor's name in the checkpoint, or the file name without extension
  std::string origin;  ///< the file it comes from
  /// Known before loading for checkpoints (from the header); else filled by load().
  std::vector<int64_t> shape;
  std::string dtype;  ///< "f32", "bf16", "i64", "bool"... as stored (known after loading for files)
  bool readable = true;
  /// The checkpoint holding it, for copying it unchanged (empty for files).
  std::optional<Checkpoint> checkpoint;
  /// Reads the tensor as stored, exactly (errors name the file and the tensor).
  std::function<Tensor()> loadSource;
  /// Reads the tensor in WeightOptions::dtype (loadSource when unset).
  std::function<Tensor()> load;
};

/// The tensors of `input`: a .safetensors checkpoint (every tensor, in file order), a directory
/// (its .smtx, .mtx, .npy, .sft and single-tensor .safetensors files, sorted by name; other
/// files are listed in `ignored`), or one weight file. Errors name the path.
std::vector<Weight> listWeights(const std::string& input, const WeightOptions& options,
                                std::vector<std::string>* ignored = nullptr);

/// Why a weight is not selected ("" when it is): not a float tensor, not 2-d, not matched by
/// --include, or matched by --exclude. Only shape and dtype are needed (known after load() for
/// files).
std::string skipReason(const Weight& weight, const WeightOptions& options);

/// Why a 2-d weight is an embedding table (a lookup by index, not a linear layer), or "": by name
/// (a component such as embed, embeddings, embed_tokens, wte, wpe, word_embeddings,
/// position_embeddings, token_type_embeddings, shared) or, for names that say nothing either way,
/// by a vocabulary-sized first dimension (at least 30000 rows and 8 times more rows than columns).
/// Output projections that share the vocabulary size (lm_head, classifier...) are not tables.
std::string embeddingReason(const std::string& name, const std::vector<int64_t>& shape);

/// What an existing path is when it is not a regular file or a directory ("a character device",
/// "a FIFO (named pipe)", "a socket", "a block device"), else "".
std::string specialFileKind(const std::string& path);

/// "768x3072" or "[768]".
std::string shapeText(const std::vector<int64_t>& shape);
/// "9.4 MB", "512 B".
std::string bytesText(double bytes);

/// A file name for `name` inside an output directory: characters other than letters, digits,
/// '.', '-' and '_' become '_', and names that could leave the directory ("", ".", "..") are
/// refused, so that nothing is ever written outside it.
std::string safeFileName(const std::string& name);

}  // namespace sparseflow::tools
