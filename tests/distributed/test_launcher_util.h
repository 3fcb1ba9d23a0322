// Helpers of the launcher tests: where gradring-run and the test worker are, line splitting,
// whether a process is gone, and a launcher running in the background with its output read.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/launch/launcher.h"

namespace gr::test {

#ifdef GRADRING_TEST_WORKER
inline const std::string kWorker = GRADRING_TEST_WORKER;
#else
inline const std::string kWorker;
#endif
#ifdef GRADRING_RUN
inline const std::string kRun = GRADRING_RUN;
#else
inline const std::string kRun;  // built without the apps: those tests skip
#endif

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The pids of "ready pid=N" lines.
inline std::vector<int> ready_pids(const std::vector<std::string>& lines) {
  std::vector<int> pids;
  for (const std::string& line : lines) {
    size_t at = line.find("ready pid=");
    if (at != std::string::npos) pids.push_back(std::stoi(line.substr(at + 10)));
  }
  return pids;
}

// True when `pid` no longer runs (gone, or a zombie waiting for its new parent to reap it).
inline bool process_gone(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

inline bool all_gone(const std::vector<int>& pids, std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (true) {
    bool gone = true;
    for (int pid : pids) gone = gone && process_gone(pid);
    if (gone) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

inline distributed::CompletedProcess run_launcher(std::vector<std::string> args, const distributed::EnvVars& env = {},
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  args.insert(args.begin(), kRun);
  return distributed::run_command(args, env, timeout);
}

// gradring-run started in the background; its stdout and stderr lines are collected.
class BackgroundLauncher {
 public:
  explicit BackgroundLauncher(std::vector<std::string> args)
      : out_([this](int, distributed::Stream s, std::string_view line) {
          (s == distributed::Stream::kStdout ? lines : err_lines).emplace_back(line);
        }) {
    args.insert(args.begin(), kRun);
    process = distributed::Process(distributed::ProcessSpec{args, {}, {}, {}});
    auto [o, e] = process.release_pipes();
    out_.add(0, o, e);
  }
  // Reads output until pred() holds or the timeout passes; returns pred().
  bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (!pred() && std::chrono::steady_clock::now() < end) out_.pump(std::chrono::milliseconds(20));
    return pred();
  }
  // Waits for the launcher to exit (reading its output); its status, "still running" after
  // the timeout.
  distributed::ExitStatus wait_exit(std::chrono::milliseconds timeout) {
    wait_for([this] { return process.poll().exited; }, timeout);
    if (process.poll().exited) out_.drain(std::chrono::seconds(2));
    return process.poll();
  }

  distributed::Process process;
  std::vector<std::string> lines, err_lines;

 private:
  distributed::OutputForwarder out_;
};

}  // namespace gr::test
