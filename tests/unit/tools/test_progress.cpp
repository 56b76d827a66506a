// The tools' progress bar: drawn on a terminal (a pseudo-terminal here), nothing when piped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <string>

#include "sparseflow/progress.h"

namespace {

using sparseflow::tools::Progress;

/// Everything readable from `fd` right now.
std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 100) > 0 && (p.revents & POLLIN) != 0) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

TEST(Progress, DrawsOnATerminalAndErasesItself) {
  int master = -1, slave = -1;
  winsize size{};
  size.ws_col = 100;
  size.ws_row = 24;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, &size), 0);
  ::setenv("TERM", "xterm", 1);
  std::string out;
  {
    Progress bar("audit", 3, slave);
    EXPECT_TRUE(bar.active());
    bar.step("layer_a");
    bar.step("layer_b");
    bar.step("layer_c");
    EXPECT_EQ(bar.count(), 3);
    out = drain(master);
    // The first and the last step always draw; the one between may be skipped (50 ms limit).
    EXPECT_NE(out.find("audit ["), std::string::npos) << out;
    EXPECT_NE(out.find("1/3 layer_a"), std::string::npos) << out;
    // 100 columns: a bar of 25 cells.
    EXPECT_NE(out.find("[" + std::string(25, '#') + "] 3/3 layer_c"), std::string::npos) << out;
    EXPECT_EQ(out.find('\n'), std::string::npos) << "the bar stays on one line";
  }
  out = drain(master);
  EXPECT_EQ(out, "\r\x1b[K") << "the destructor erases the bar";
  ::close(master);
  ::close(slave);
}

TEST(Progress, LongLabelsAreCutToTheTerminalWidth) {
  int master = -1, slave = -1;
  winsize size{};
  size.ws_col = 60;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, &size), 0);
  ::setenv("TERM", "xterm", 1);
  {
    Progress bar("convert", 1, slave);
    std::string label(200, 'x');
    label += "_end";  // appended, not `+`: GCC 12 warns falsely on that temporary
    bar.step(label);
    std::string out = drain(master);
    std::string line = out.substr(1, out.find("\x1b[K") - 1);  // without \r and the erase code
    EXPECT_LE(line.size(), 59u) << line;
    EXPECT_NE(line.find("...x"), std::string::npos) << line;
    EXPECT_NE(line.find("_end"), std::string::npos) << "the end of the label stays: " << line;
  }
  ::close(master);
  ::close(slave);
}

TEST(Progress, SilentWhenPiped) {
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  {
    Progress bar("audit", 2, pipeFds[1]);
    EXPECT_FALSE(bar.active());
    bar.step("a");
    bar.step("b");
    EXPECT_EQ(bar.count(), 2);
  }
  ::close(pipeFds[1]);
  char c;
  EXPECT_EQ(::read(pipeFds[0], &c, 1), 0) << "nothing was written to the pipe";
  ::close(pipeFds[0]);
}

TEST(Progress, SilentOnADumbTerminal) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  ::setenv("TERM", "dumb", 1);
  {
    Progress bar("audit", 1, slave);
    EXPECT_FALSE(bar.active());
    bar.step("a");
  }
  EXPECT_EQ(drain(master), "");
  ::setenv("TERM", "xterm", 1);
  ::close(master);
  ::close(slave);
}

}  // namespace
