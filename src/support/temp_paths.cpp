// A fixed table of staging paths guarded by per-slot sequence counters (readable from a signal
// handler without locks), and the handler that removes them and re-raises the signal.
#include "support/temp_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

namespace sparseflow::support {
namespace {

constexpr int kSlots = 256;
constexpr size_t kMaxPath = 4096;
constexpr int kMaxDepth = 8;

/// One registered path. `seq` is odd while the path is being written and even when it is stable;
/// the handler copies a path and keeps the copy only if `seq` did not change meanwhile.
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uint32_t> seq{0};
  std::atomic<bool> live{false};
  std::atomic<bool> directory{false};
  char path[kMaxPath] = {};
};

Slot gSlots[kSlots];
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

/// Removes the entries of the open directory `dir`, recursing into subdirectories; then the
/// caller removes the directory itself. Only async-signal-safe calls (getdents64 via syscall).
void removeContents(int dir, int depth) noexcept {
  alignas(8) char buffer[4096];
  bool removedAny = true;
  // Reading from the start again after each pass: removing entries while reading may skip some.
  while (removedAny) {
    removedAny = false;
    if (::lseek(dir, 0, SEEK_SET) != 0) return;
    while (true) {
      const long n = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* e = reinterpret_cast<const Entry*>(buffer + at);
        at += e->reclen;
        if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
        if (::unlinkat(dir, e->name, 0) == 0) {
          removedAny = true;
          continue;
        }
        if (depth >= kMaxDepth) continue;
        const int sub = ::openat(dir, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        removeContents(sub, depth + 1);
        ::close(sub);
        if (::unlinkat(dir, e->name, AT_REMOVEDIR) == 0) removedAny = true;
      }
    }
  }
}

void removePath(const char* path, bool directory) noexcept {
  if (!directory) {
    ::unlink(path);
    return;
  }
  const int dir = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir >= 0) {
    removeContents(dir, 0);
    ::close(dir);
  }
  ::rmdir(path);
}

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void onTerminatingSignal(int signal) {
  const int savedErrno = errno;
  removeRegisteredTempPaths();
  // SA_RESETHAND restored the default action; the signal is blocked until this handler returns,
  // and then it ends the process with the status a shell reports as "killed by SIGINT".
  ::raise(signal);
  errno = savedErrno;
}

}  // namespace

TempPathRegistration::TempPathRegistration(const std::string& path, Kind kind) noexcept {
  if (path.empty() || path.size() >= kMaxPath) return;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!gSlots[i].used.compare_exchange_strong(expected, true)) continue;
    Slot& s = gSlots[i];
    s.seq.fetch_add(1);  // odd: being written
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.directory.store(kind == Kind::kDirectory);
    s.live.store(true);
    s.seq.fetch_add(1);  // even: stable
    slot_ = i;
    return;
  }
}

TempPathRegistration::~TempPathRegistration() {
  release();
}

TempPathRegistration::TempPathRegistration(TempPathRegistration&& other) noexcept
    : slot_(std::exchange(other.slot_, -1)) {}

TempPathRegistration& TempPathRegistration::operator=(TempPathRegistration&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

void TempPathRegistration::release() noexcept {
  if (slot_ < 0) return;
  Slot& s = gSlots[slot_];
  s.seq.fetch_add(1);
  s.live.store(false);
  s.seq.fetch_add(1);
  s.used.store(false);
  slot_ = -1;
}

void removeRegisteredTempPaths() noexcept {
  char path[kMaxPath];
  for (Slot& s : gSlots) {
    if (!s.used.load()) continue;
    const uint32_t before = s.seq.load();
    if (before % 2 != 0 || !s.live.load()) continue;
    std::memcpy(path, s.path, kMaxPath);
    path[kMaxPath - 1] = '\0';
    const bool directory = s.directory.load();
    if (s.seq.load() != before) continue;  // changed while copied: not a path we can trust
    removePath(path, directory);
  }
}

void installTempCleanupOnSignals() {
  for (int signal : kSignals) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN) continue;  // `nohup` and friends: leave ignored signals be
    struct sigaction action {};
    action.sa_handler = onTerminatingSignal;
    sigemptyset(&action.sa_mask);
    for (int other : kSignals) sigaddset(&action.sa_mask, other);  // one cleanup at a time
    action.sa_flags = SA_RESETHAND;
    ::sigaction(signal, &action, nullptr);
  }
}

}  // namespace sparseflow::support
