// The temporary files and directories that atomic writes are staging right now, so that a program
// interrupted by a signal can remove them before it dies (nothing like `out.sft.tmp.1234.5678` is
// left behind). The library registers its staging paths; only a program (the CLI) installs the
// signal handlers: a library must not take over a host program's signals.
#pragma once

#include <string>

namespace sparseflow::support {

/// Registers `path` (a staging file or directory that is complete garbage if the process dies)
/// for the lifetime of this object; the destructor unregisters it without removing anything.
/// Thread-safe and lock-free; at most 256 paths of under 4096 bytes are tracked at once (others
/// are simply not cleaned up on a signal). Move-only.
class TempPathRegistration {
 public:
  enum class Kind { kFile, kDirectory };
  TempPathRegistration() = default;
  TempPathRegistration(const std::string& path, Kind kind) noexcept;
  ~TempPathRegistration();
  TempPathRegistration(TempPathRegistration&& other) noexcept;
  TempPathRegistration& operator=(TempPathRegistration&& other) noexcept;
  TempPathRegistration(const TempPathRegistration&) = delete;
  TempPathRegistration& operator=(const TempPathRegistration&) = delete;

  /// Unregisters now (after a successful rename, or after removing the path itself).
  void release() noexcept;

 private:
  int slot_ = -1;
};

/// Removes every registered path (a directory with the files in it, up to 8 levels deep). Uses
/// only async-signal-safe calls, so a signal handler may call it.
void removeRegisteredTempPaths() noexcept;

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that call removeRegisteredTempPaths() and then
/// re-raise the signal with its default action, so the exit status still says which signal ended
/// the process. Signals that the program ignores (a `nohup` SIGHUP) stay ignored. For programs;
/// the library never calls it.
void installTempCleanupOnSignals();

}  // namespace sparseflow::support
