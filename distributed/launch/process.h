// Child-process plumbing for the launcher and spawn(): fork a worker into its own process
// group with piped stdout/stderr and a death signal tied to its parent, then run a command
// (exec) or a function; observe its exit without reaping it; signal its whole group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gr::distributed {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct ProcessSpec {
  // Command mode: argv[0] is a path or a name looked up in PATH (resolved in the parent, so a
  // missing program is a gr::Error before anything is forked).
  std::vector<std::string> argv;
  // Function mode (when set): the forked child runs fn and exits 0, or prints what() of an
  // exception to its stderr and exits 1. The child inherits the parent's memory (fork
  // without exec), so call this from a process that has not started threads holding locks
  // fn needs.
  std::function<void()> fn;
  // Set (overriding) on top of the parent's environment.
  EnvVars env;
  // File descriptors a function-mode child closes first (the other workers' pipes).
  std::vector<int> close_fds;
};

// How a process ended. A signal exit maps to 128 + signal as a shell reports it.
struct ExitStatus {
  bool exited = false;  // false: still running
  int code = 0;         // exit code, or 128 + signal
  int signal = 0;       // the terminating signal, 0 for a normal exit
  bool success() const { return exited && code == 0 && signal == 0; }
  // "exit code 3" or "signal 11 (SIGSEGV)".
  std::string describe() const;
};

// One started child. The pid is also the process group id. Movable, not copyable; the
// destructor kills the group (SIGKILL) and reaps the child if that has not happened, and
// closes the pipes.
class Process {
 public:
  Process() = default;
  explicit Process(const ProcessSpec& spec);
  ~Process();
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Read ends of the child's stdout and stderr pipes (-1 once released or closed).
  int stdout_fd() const { return out_fd_; }
  int stderr_fd() const { return err_fd_; }
  // Hands the pipe read ends to the caller, which then closes them.
  std::pair<int, int> release_pipes();

  // Non-blocking: the exit status once the child has ended. The child is left a zombie
  // (not reaped) so its pid, and so its process group id, cannot be reused while we may
  // still signal the group; reap() releases it.
  ExitStatus poll();
  // Sends `sig` to the child's whole process group (nothing after it was reaped).
  void signal_group(int sig) const;
  // Reaps the child (waits for it; call after it has exited or been sent SIGKILL).
  void reap();
  bool reaped() const { return reaped_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = true;
  ExitStatus status_;
  void destroy();
};

// The absolute path of an executable: `name` itself if it contains a '/', else the first
// match in PATH. Throws gr::Error when it does not exist or is not executable.
std::string find_executable(const std::string& name);

// Runs a command to completion with captured output (tests and tools), killing its process
// group after `timeout`.
struct CompletedProcess {
  ExitStatus status;
  std::string out;
  std::string err;
  bool timed_out = false;
};
CompletedProcess run_command(const std::vector<std::string>& argv, const EnvVars& env = {},
                             std::chrono::milliseconds timeout = std::chrono::seconds(60));

// "SIGTERM" for 15, "signal 77" for unknown numbers.
std::string signal_name(int sig);

}  // namespace gr::distributed
