// What a program built on sparseflow may set up for its whole process: removing the staging files
// of interrupted atomic writes on a terminating signal, and printing error messages safely. The
// library never does either by itself (it does not take over a host program's signals).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace sparseflow {
namespace support {
class TempPathRegistration;
}

/// A program's own staging file or folder (written completely, then renamed into place), which
/// the handlers of removeTempFilesOnSignals() remove when a signal ends the process before
/// release() or the destructor. Registering and releasing never remove anything themselves.
class StagingPath {
 public:
  StagingPath(const std::string& path, bool directory);
  ~StagingPath();
  StagingPath(StagingPath&&) noexcept;
  StagingPath& operator=(StagingPath&&) noexcept;
  /// Forgets the path (after it was renamed into place or removed).
  void release();

 private:
  std::unique_ptr<support::TempPathRegistration> registration_;
};

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files and folders
/// sparseflow's atomic writes are staging at that moment (`out.sft.tmp.PID.N`), then re-raise the
/// signal with its default action, so the exit status still says which signal ended the process.
/// Signals the program ignores stay ignored. Call it once, early in main().
void removeTempFilesOnSignals();

/// `message` (an Error's what()) with every byte that could act on a terminal or break a UTF-8
/// decoder written as `\xNN` (control bytes other than newline and tab, C1 controls,
/// bidirectional overrides, bytes that are not UTF-8): messages quote file content and names.
std::string printableMessage(std::string_view message);

}  // namespace sparseflow
