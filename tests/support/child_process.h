// Runs a program as a real child process, for the tests that need one (the command line's errors,
// the kernel cache shared between users, limits on processes and memory): in its own working
// directory, with its own environment, user and process limit; its output captured and a hang
// killed. Header-only: each test executable that includes it compiles it in.
#pragma once
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace ember_test {

/// The user nobody, for the cases that run a child as a second user (they need root).
constexpr uid_t kNobody = 65534;

struct ChildOptions {
  std::filesystem::path cwd;                             // working directory; empty: the test's
  std::vector<std::pair<std::string, std::string>> env;  // set in the child
  std::vector<std::string> unset_env;                    // removed from the child's environment
  uid_t uid = 0;           // run as this user (the test runs as root); 0: as the test's user
  rlim_t nproc = 0;        // RLIMIT_NPROC of the child; 0: unchanged
  double timeout_s = 300;  // a child still running after this long is killed (SIGKILL)
};

struct ChildResult {
  int status = -1;      // exit code, 128 + signal, or -1 when it was killed as a hang
  std::string output;   // stdout and stderr, as the child wrote them
  double seconds = 0;   // wall time
  long max_rss_kb = 0;  // peak resident memory (getrusage's ru_maxrss)
};

/// A new directory /tmp/<prefix>-XXXXXX, mode 0755 so that a child run as another user can enter
/// it; std::system_error when it cannot be made.
inline std::filesystem::path shared_temp_dir(const std::string& prefix) {
  std::string templ = "/tmp/" + prefix + "-XXXXXX";
  if (!mkdtemp(templ.data())) throw std::system_error(errno, std::generic_category(), templ);
  std::filesystem::permissions(templ, std::filesystem::perms(0755));
  return templ;
}

/// A copy of the program `exe` in `dir` (same name, mode 0755), for a child run as another user:
/// that user may not reach the build tree (a clone under /root is 0700).
inline std::filesystem::path runnable_copy(const std::filesystem::path& exe,
                                           const std::filesystem::path& dir) {
  const std::filesystem::path copy = dir / exe.filename();
  std::filesystem::copy_file(exe, copy);
  std::filesystem::permissions(copy, std::filesystem::perms(0755));
  return copy;
}

/// Runs argv (argv[0]: the program's path) and waits for it. In the child a failed chdir exits
/// with 97, a failed exec with 98 and a failed switch of user with 99.
inline ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& o = {}) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) _exit(97);
    for (const auto& [k, v] : o.env) setenv(k.c_str(), v.c_str(), 1);
    for (const auto& k : o.unset_env) unsetenv(k.c_str());
    if (o.nproc) {
      const rlimit r{o.nproc, o.nproc};
      setrlimit(RLIMIT_NPROC, &r);
    }
    if (o.uid && (setgroups(0, nullptr) != 0 || setgid(o.uid) != 0 || setuid(o.uid) != 0))
      _exit(99);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(98);
  }
  close(fds[1]);
  ChildResult c;
  // The output is read on a thread so that a child that fills the pipe and one that hangs are
  // both seen by the wait below.
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) c.output.append(buf, static_cast<size_t>(n));
  });
  int st = 0;
  rusage ru{};
  bool killed = false;
  for (;;) {
    if (wait4(pid, &st, WNOHANG, &ru) == pid) break;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > o.timeout_s && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  reader.join();
  close(fds[0]);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.max_rss_kb = ru.ru_maxrss;
  c.status = killed ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return c;
}

}  // namespace ember_test
