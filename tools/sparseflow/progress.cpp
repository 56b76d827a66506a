// Progress: draws `title [####....] k/n label t` with a carriage return on a terminal.
#include "sparseflow/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sparseflow::tools {
namespace {

bool isTerminal(int fd) {
  if (::isatty(fd) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

int terminalWidth(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  return 80;
}

void writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a progress bar never fails the run
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Progress::Progress(std::string title, int64_t total, int fd)
    : title_(std::move(title)),
      total_(std::max<int64_t>(total, 0)),
      fd_(fd),
      active_(isTerminal(fd)),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  clear();
}

int64_t Progress::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return count_;
}

void Progress::step(std::string_view label) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++count_;
  label_.assign(label);
  draw(count_ >= total_ || count_ == 1);
}

void Progress::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_ || !drawn_) return;
  writeAll(fd_, "\r\x1b[K");
  drawn_ = false;
}

void Progress::draw(bool force) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - lastDraw_ < std::chrono::milliseconds(50)) return;
  lastDraw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const int width = terminalWidth(fd_);
  const int64_t shown = std::min(count_, total_);
  char counts[64];
  std::snprintf(counts, sizeof counts, " %lld/%lld ", static_cast<long long>(shown),
                static_cast<long long>(total_));
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " %.1fs", seconds);
  const int barWidth = std::clamp(width / 4, 10, 30);
  const int filled =
      total_ > 0 ? static_cast<int>(static_cast<double>(barWidth) * static_cast<double>(shown) /
                                    static_cast<double>(total_))
                 : barWidth;
  std::string line = "\r" + title_ + " [" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(barWidth - filled), '.') + "]" + counts;
  // The label gets what is left of the line (less one column, so the cursor never wraps).
  const auto room = static_cast<int64_t>(width) - static_cast<int64_t>(line.size()) -
                    static_cast<int64_t>(std::strlen(elapsed)) - 1;
  if (room > 3) {
    std::string label = label_;
    if (static_cast<int64_t>(label.size()) > room) {
      label = "..." + label.substr(label.size() - static_cast<size_t>(room - 3));
    }
    line += label;
  }
  line += elapsed;
  line += "\x1b[K";
  writeAll(fd_, line);
  drawn_ = true;
}

}  // namespace sparseflow::tools
