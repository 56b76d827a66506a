// describeForeignFile: magic numbers of the formats users hand to sparseflow by mistake.
#include "io/file_magic.h"

#include <cstdint>

#include "support/check.h"
#include "support/quote.h"

namespace sparseflow::io {
namespace {

uint8_t byteAt(std::string_view bytes, size_t i) {
  return i < bytes.size() ? static_cast<uint8_t>(bytes[i]) : 0;
}

uint16_t u16At(std::string_view bytes, size_t i) {
  return static_cast<uint16_t>(byteAt(bytes, i) | byteAt(bytes, i + 1) << 8);
}

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// A .safetensors file starts with its header length (little-endian, at most 100 MB, so bytes 4
/// to 7 are zero) and then '{'. Such bytes are never taken for another kind.
bool couldBeSafetensors(std::string_view bytes) {
  return bytes.size() > 8 && byteAt(bytes, 8) == '{' && byteAt(bytes, 4) == 0 &&
         byteAt(bytes, 5) == 0 && byteAt(bytes, 6) == 0 && byteAt(bytes, 7) == 0;
}

constexpr const char* kToSafetensors =
    "save the tensors as .safetensors instead, in Python: "
    "safetensors.torch.save_file(torch.load('PATH'), 'model.safetensors') for a state_dict";

std::string describeZip(std::string_view bytes) {
  // The first local file header: name length at 26, the name at 30.
  std::string_view first;
  if (bytes.substr(0, 4) == "PK\x03\x04" && bytes.size() >= 30) {
    first = bytes.substr(30, u16At(bytes, 26));
  }
  if (endsWith(first, "data.pkl") || endsWith(first, "/version") ||
      first.find("/data/") != std::string_view::npos) {
    return std::string(
               "a PyTorch checkpoint (a zip archive written by torch.save), which "
               "sparseflow does not read; ") +
           kToSafetensors;
  }
  if (endsWith(first, ".npy")) {
    return "a NumPy .npz archive (a zip of .npy files), which sparseflow does not read; extract "
           "it (unzip PATH) and give the .npy files";
  }
  return "a zip archive (first entry " + support::quoted(first, 60) +
         "), which sparseflow does not read; extract it first (unzip PATH)";
}

}  // namespace

std::string describeForeignFile(std::string_view bytes, const std::string& path) {
  if (bytes.empty() || couldBeSafetensors(bytes)) return "";
  const uint8_t b0 = byteAt(bytes, 0), b1 = byteAt(bytes, 1);
  if (bytes.substr(0, 4) == "PK\x03\x04" || bytes.substr(0, 4) == "PK\x05\x06" ||
      bytes.substr(0, 4) == "PK\x07\x08") {
    return describeZip(bytes);
  }
  if (b0 == 0x80 && b1 >= 2 && b1 <= 5) {
    return std::string("a Python pickle (protocol ") + std::to_string(b1) +
           "; torch.save before PyTorch 1.6 or with _use_new_zipfile_serialization=False writes "
           "these), which sparseflow does not read; " +
           kToSafetensors + ", or numpy.save for an array";
  }
  if (bytes.substr(0, 8) == "\x89HDF\r\n\x1a\n") {
    return "an HDF5 file (Keras .h5 weights, MATLAB v7.3 .mat...), which sparseflow does not "
           "read; export the weights as .safetensors or .npy";
  }
  if (b0 == 0x1f && b1 == 0x8b) {
    return "compressed with gzip; decompress it first (gunzip -k PATH) and give the result";
  }
  if (bytes.substr(0, 6) == std::string_view("\xfd"
                                             "7zXZ\0",
                                             6)) {
    return "compressed with xz; decompress it first (unxz -k PATH) and give the result";
  }
  if (bytes.substr(0, 4) == "\x28\xb5\x2f\xfd") {
    return "compressed with zstd; decompress it first (unzstd PATH) and give the result";
  }
  if (bytes.size() >= 10 && bytes.substr(0, 3) == "BZh" && byteAt(bytes, 3) >= '1' &&
      byteAt(bytes, 3) <= '9' &&
      (bytes.substr(4, 6) == "1AY&SY" || bytes.substr(4, 6) == "\x17\x72\x45\x38\x50\x90")) {
    return "compressed with bzip2; decompress it first (bunzip2 -k PATH) and give the result";
  }
  if (bytes.size() >= 262 && bytes.substr(257, 5) == "ustar") {
    return "a tar archive (SuiteSparse downloads are .tar.gz files); extract the matrix file "
           "from it first (tar xf PATH)";
  }
  if (bytes.substr(0, 4) == "GGUF") {
    return "a GGUF model file (llama.cpp), which sparseflow does not read; export the weights as "
           ".safetensors";
  }
  if (lowerExtension(path) == "onnx" && b0 == 0x08) {  // field 1 (ir_version), a varint
    return "an ONNX model, which sparseflow does not read; export its weights as .safetensors "
           "(or give the model's .safetensors/.npy weights)";
  }
  if ((b0 == 0xff && b1 == 0xfe) || (b0 == 0xfe && b1 == 0xff)) {
    return "UTF-16 text; save it as UTF-8 (or ASCII) text first (iconv -f UTF-16 -t UTF-8)";
  }
  return "";
}

void refuseForeignFile(std::string_view bytes, const std::string& path) {
  std::string what = describeForeignFile(bytes, path);
  if (what.empty()) return;
  // The advice names the file as PATH; put the real one in.
  for (size_t at = what.find("PATH"); at != std::string::npos; at = what.find("PATH", at)) {
    what.replace(at, 4, path);
    at += path.size();
  }
  SF_FAIL(kNotSupported) << path << " is " << what;
}

support::MappedFile mapInput(const std::string& path) {
  support::MappedFile file(path);
  refuseForeignFile(file.data(), path);
  return file;
}

std::string lowerExtension(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return "";
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

}  // namespace sparseflow::io
