// A progress bar on stderr for the tools' long runs: drawn on a terminal, silent when piped.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace sparseflow::tools {

/// A one-line progress bar: `audit [#######.......] 23/54 layer_name 3.1s`. It draws only when
/// its file descriptor is a terminal (and TERM is not "dumb"), so piped or redirected output stays
/// clean; redraws at most every 50 ms; the destructor erases the line. Thread-safe.
///
///   Progress bar("audit", layers.size());
///   for (auto& layer : layers) { bar.step(layer.name); audit(layer); }
class Progress {
 public:
  /// A bar of `total` steps titled `title`, on stderr (or on `fd`, for tests).
  Progress(std::string title, int64_t total, int fd = 2);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// One more step begins: the count goes up by one and `label` names what runs now.
  void step(std::string_view label = {});
  /// Erases the bar (also done by the destructor); later steps draw it again.
  void clear();
  /// True when the bar draws (its descriptor is a terminal).
  bool active() const { return active_; }
  /// Steps so far.
  int64_t count() const;

 private:
  void draw(bool force);

  std::string title_;
  int64_t total_;
  int fd_;
  bool active_;
  bool drawn_ = false;
  int64_t count_ = 0;
  std::string label_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  mutable std::mutex mutex_;
};

}  // namespace sparseflow::tools
