// Module: dlopen/dlsym/dlclose of one JIT shared object from a sealed private copy of its verified
// bytes, and pinning of the OpenMP runtime.
#include <dlfcn.h>
#include <link.h>

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "jit/jit.h"
#include "jit/sealed_image.h"
#include "support/check.h"

namespace sparseflow::jit {
namespace {

/// Marks every loaded OpenMP runtime RTLD_NODELETE. A JIT module pulls libgomp (or libomp) in as
/// a dependency; if dlclose of the last module unloaded it, its idle pool threads and TLS
/// destructors would point into unmapped code. One extra reference per runtime, held forever.
void pinOpenMpRuntimes() {
  static std::mutex mutex;
  static std::set<std::string> pinned;
  std::set<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
        const size_t slash = name.rfind('/');
        const std::string_view base =
            slash == std::string_view::npos ? name : name.substr(slash + 1);
        if (base.starts_with("libgomp.so") || base.starts_with("libomp.so") ||
            base.starts_with("libiomp5.so")) {
          static_cast<std::set<std::string>*>(data)->emplace(name);
        }
        return 0;
      },
      &found);
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& name : found) {
    if (pinned.count(name) != 0) continue;
    if (dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr)
      pinned.insert(name);
  }
}

}  // namespace

std::shared_ptr<const Module> Module::load(const std::string& bytes,
                                           std::filesystem::path libraryPath,
                                           std::filesystem::path removeOnClose) {
  using detail::SealedImage;
  // A sealed memfd first; an owner-only temporary file where memfds, /proc or executable memfds
  // (vm.memfd_noexec) are unavailable. dlerror() is per thread in glibc: the message is ours.
  std::unique_ptr<SealedImage> image;
  void* handle = nullptr;
  std::string errors;
  for (SealedImage::Kind kind : {SealedImage::Kind::kMemfd, SealedImage::Kind::kPrivateFile}) {
    try {
      image = std::make_unique<SealedImage>(bytes, kind, libraryPath.string());
    } catch (const Error& e) {
      errors += std::string(errors.empty() ? "" : "; ") + e.what();
      continue;
    }
    handle = dlopen(image->path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    const char* error = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (error ? error : "unknown dlopen error");
    image.reset();
  }
  if (handle == nullptr) {
    SF_FAIL(kCompileError) << "JIT: cannot load " << libraryPath.string() << ": " << errors;
  }
  pinOpenMpRuntimes();
  try {
    return std::shared_ptr<const Module>(
        new Module(handle, std::move(image), std::move(libraryPath), std::move(removeOnClose)));
  } catch (...) {
    dlclose(handle);
    throw;
  }
}

Module::Module(void* handle, std::unique_ptr<detail::SealedImage> image,
               std::filesystem::path libraryPath, std::filesystem::path removeOnClose)
    : handle_(handle),
      image_(std::move(image)),
      libraryPath_(std::move(libraryPath)),
      removeOnClose_(std::move(removeOnClose)) {}

Module::~Module() {
  dlclose(handle_);
  // A module that stays resident (a GNU unique symbol, another dlopen of it) is what glibc hands
  // back for its path: the path must then go on naming these bytes for the life of the process.
  if (void* resident = dlopen(image_->path().c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(resident);
    image_->keepForever();
  }
  if (!removeOnClose_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(removeOnClose_, ignored);
  }
}

void* Module::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (address == nullptr) {
    const char* error = dlerror();
    SF_FAIL(kCompileError) << "JIT: symbol '" << name << "' not found in " << libraryPath_.string()
                           << " (is it declared extern \"C\"?)"
                           << (error ? std::string(": ") + error : std::string());
  }
  return address;
}

}  // namespace sparseflow::jit
