// Runs a test body where file permissions apply: as root (CI containers, this machine) it forks a
// child that drops to nobody (uid/gid 65534) first, so read-only directories really are.
#pragma once

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

namespace sparseflow::testing {

/// Calls `body` directly when this process is not root; as root, calls it in a forked child
/// running as nobody, whose gtest failures (printed by the child) fail the test through its exit
/// status. `body` must create what it needs itself (the child cannot enter root's 0700
/// directories) and must not start OpenMP threads (a forked child has none).
inline void withFilePermissions(const std::function<void()>& body) {
  if (::geteuid() != 0) {
    body();
    return;
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    const gid_t nobody = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setgid(nobody) != 0 || ::setuid(nobody) != 0) {
      std::fprintf(stderr, "cannot drop to uid/gid 65534\n");
      ::_exit(2);
    }
    body();
    std::fflush(nullptr);
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the unprivileged child died (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the test body failed as nobody (its output is above)";
}

}  // namespace sparseflow::testing
