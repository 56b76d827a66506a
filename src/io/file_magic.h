// Files that no sparseflow reader takes, recognised by their first bytes (PyTorch checkpoints,
// pickles, zip and tar archives, HDF5, compressed files, GGUF, ONNX, UTF-16 text), so that the
// error says what the file is and what to do instead of a parse error about its first byte.
#pragma once

#include <string>
#include <string_view>

#include "support/mapped_file.h"

namespace sparseflow::io {

/// What `bytes` (a whole file, or at least its first 512 bytes) is and what to do with it, as
/// the end of a sentence starting "PATH is ..."; empty when it is none of the kinds above (or
/// could be a .safetensors file: its 8-byte header length may start with any byte).
/// `path` is used only for its extension (.onnx) and in the advice.
/// The extension of `path`'s last component, lower-cased ("MTX" -> "mtx"); "" when it has none.
std::string lowerExtension(std::string_view path);

std::string describeForeignFile(std::string_view bytes, const std::string& path);

/// Throws kNotSupported "PATH is <what>; <advice>" when describeForeignFile finds a kind.
void refuseForeignFile(std::string_view bytes, const std::string& path);

/// Maps `path` for a reader (regular files only: support::MappedFile) and refuses foreign files.
support::MappedFile mapInput(const std::string& path);

}  // namespace sparseflow::io
