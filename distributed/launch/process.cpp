// Child-process plumbing: fork into an own process group with piped output and
// PR_SET_PDEATHSIG, exec or run a function, observe the exit without reaping, signal groups.
#include "distributed/launch/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace gr::distributed {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child's environment: the parent's, with `env` overriding or adding entries.
std::vector<std::string> merged_environment(const EnvVars& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [k, v] : env) overridden = overridden || k == name;
    if (!overridden) out.push_back(std::move(entry));
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the child right after fork: default signal handling, an own process group, death
// with the parent, stdout/stderr onto the pipes. Only async-signal-safe calls.
// Signals are blocked across fork (see Process::Process) until the handlers are reset, so a
// signal sent to the new group at once never runs a parent's handler in the child.
void setup_child(pid_t parent, int out_w, int err_w) {
  // Default handling for every caught signal (as exec would; a function-mode child must not
  // run its parent's handlers, such as a test framework's crash reporter), and for these.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
      signal(sig, SIG_DFL);
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(128 + SIGKILL);  // the parent died before prctl
  dup2(out_w, STDOUT_FILENO);
  dup2(err_w, STDERR_FILENO);
}

void write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void run_function_child(const ProcessSpec& spec) {
  for (int fd : spec.close_fds) ::close(fd);
  for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int code = 0;
  try {
    spec.fn();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::string msg = std::string(e.what()) + "\n";
    write_all(STDERR_FILENO, msg.data(), msg.size());
    code = 1;
  } catch (...) {
    const char msg[] = "unknown exception\n";
    write_all(STDERR_FILENO, msg, sizeof msg - 1);
    code = 1;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(code);  // no atexit handlers or static destructors of the parent's copy
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string ExitStatus::describe() const {
  if (!exited) return "still running";
  if (signal) return "signal " + std::to_string(signal) + " (" + signal_name(signal) + ")";
  return "exit code " + std::to_string(code);
}

std::string find_executable(const std::string& name) {
  GR_CHECK(!name.empty(), "launcher: no program given");
  auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    GR_CHECK(::stat(name.c_str(), &st) == 0, "launcher: program '", name, "' not found");
    GR_CHECK(runnable(name), "launcher: program '", name, "' is not an executable file");
    return name;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
    start = end + 1;
  }
  GR_ERROR("launcher: program '", name, "' not found in PATH");
}

Process::Process(const ProcessSpec& spec) {
  std::string path;
  std::vector<std::string> argv_strings = spec.argv, env_strings;
  if (!spec.fn) {
    GR_CHECK(!spec.argv.empty(), "launcher: empty command");
    path = find_executable(spec.argv[0]);
    env_strings = merged_environment(spec.env);
  }
  std::vector<char*> argv = c_strings(argv_strings), envp = c_strings(env_strings);
  int out[2], err[2];
  GR_CHECK(::pipe2(out, O_CLOEXEC) == 0, "launcher: pipe failed: ", std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    GR_ERROR("launcher: pipe failed: ", std::strerror(e));
  }
  std::cout.flush();  // or the child would repeat what is still buffered
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t parent = ::getpid();
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  pid_t pid = ::fork();
  if (pid == 0) {
    setup_child(parent, out[1], err[1]);
    if (spec.fn) run_function_child(spec);
    ::close_range(3, UINT_MAX, 0);
    ::execve(path.c_str(), argv.data(), envp.data());
    const char msg[] = "launcher: exec failed\n";
    write_all(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    ::close(out[0]);
    ::close(err[0]);
    GR_ERROR("launcher: fork failed: ", std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we may signal it
  pid_ = pid;
  out_fd_ = out[0];
  err_fd_ = err[0];
  reaped_ = false;
  fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, fcntl(err_fd_, F_GETFL) | O_NONBLOCK);
}

Process::~Process() { destroy(); }

void Process::destroy() {
  if (!reaped_) {
    signal_group(SIGKILL);
    reap();
  }
  close_fd(out_fd_);
  close_fd(err_fd_);
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    destroy();
    pid_ = std::exchange(other.pid_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    reaped_ = std::exchange(other.reaped_, true);
    status_ = other.status_;
  }
  return *this;
}

std::pair<int, int> Process::release_pipes() {
  return {std::exchange(out_fd_, -1), std::exchange(err_fd_, -1)};
}

ExitStatus Process::poll() {
  if (status_.exited || reaped_) return status_;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
    return status_;
  status_.exited = true;
  if (info.si_code == CLD_EXITED) {
    status_.code = info.si_status;
  } else {
    status_.signal = info.si_status;
    status_.code = 128 + info.si_status;
  }
  return status_;
}

void Process::signal_group(int sig) const {
  if (!reaped_ && pid_ > 0) ::kill(-pid_, sig);
}

void Process::reap() {
  if (reaped_) return;
  // Bounded: a SIGKILLed process normally goes within milliseconds.
  for (int i = 0; i < 2000; ++i) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      if (r == pid_ && !status_.exited) {
        status_.exited = true;
        status_.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        status_.code = WIFSIGNALED(st) ? 128 + status_.signal : WEXITSTATUS(st);
      }
      reaped_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

CompletedProcess run_command(const std::vector<std::string>& argv, const EnvVars& env,
                             std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  Process p(ProcessSpec{argv, {}, env, {}});
  CompletedProcess result;
  auto deadline = Clock::now() + timeout;
  std::optional<Clock::time_point> drain_until;  // after exit, grandchildren may hold the pipes
  int fds[2] = {p.stdout_fd(), p.stderr_fd()};
  std::string* sinks[2] = {&result.out, &result.err};
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfds[2];
    for (int i = 0; i < 2; ++i) pfds[i] = {fds[i], POLLIN, 0};
    ::poll(pfds, 2, 20);
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || !(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n > 0) sinks[i]->append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) fds[i] = -1;  // Process closes it
    }
    auto now = Clock::now();
    if (!result.timed_out && now > deadline) {
      result.timed_out = true;
      p.signal_group(SIGKILL);
    }
    if (!drain_until && p.poll().exited) drain_until = now + std::chrono::seconds(2);
    if (drain_until && now > *drain_until) break;
  }
  if (!result.timed_out && !p.poll().exited) {
    auto until = Clock::now() + (deadline - Clock::now());
    while (!p.poll().exited && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!p.poll().exited) {
      result.timed_out = true;
      p.signal_group(SIGKILL);
    }
  }
  p.signal_group(SIGKILL);  // leftovers of its group
  p.reap();
  result.status = p.poll();
  return result;
}

}  // namespace gr::distributed
