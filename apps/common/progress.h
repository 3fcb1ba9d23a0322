// A one-line progress bar for terminals ("epoch 1/5 [####....] 312/938 loss 0.41 1840 img/s"),
// redrawn at most ten times a second. When stdout is not a terminal (a pipe, or gradring-run
// forwarding a rank's lines) it is silent, or with `plain_interval` > 0 prints a plain line
// ("epoch 1/5 312/938 loss 0.41 1840 img/s") at most that often. ProgressLines: a benchmark's
// stages as lines on stderr.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace gr::apps {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, std::chrono::milliseconds plain_interval = {})
      : label_(std::move(label)),
        total_(total),
        enabled_(::isatty(STDOUT_FILENO) != 0),
        plain_interval_(plain_interval),
        last_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() { finish(); }

  void update(int64_t done, const std::string& status) {
    auto now = std::chrono::steady_clock::now();
    if (!enabled_) {
      if (plain_interval_.count() <= 0 || done >= total_ || now - last_ < plain_interval_) return;
      last_ = now;
      std::printf("%s %lld/%lld %s\n", label_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
                  status.c_str());
      std::fflush(stdout);
      return;
    }
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 30;
    int filled = total_ > 0 ? static_cast<int>(width * done / total_) : width;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(width, '.');
    std::printf("\r%s [%s] %lld/%lld %s\x1b[K", label_.c_str(), bar.c_str(), static_cast<long long>(done),
                static_cast<long long>(total_), status.c_str());
    std::fflush(stdout);
    drawn_ = true;
  }

  // Clears the bar so the next line prints cleanly.
  void finish() {
    if (!drawn_) return;
    std::printf("\r\x1b[K");
    std::fflush(stdout);
    drawn_ = false;
  }

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  std::chrono::milliseconds plain_interval_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

// "<prefix>: <text>" lines on stderr while a benchmark runs (when `on`: rank 0): line()
// always, tick() at most every two seconds.
class ProgressLines {
 public:
  ProgressLines(std::string prefix, bool on) : prefix_(std::move(prefix)), on_(on) {}
  void line(const char* fmt, auto... args) {
    if (!on_) return;
    std::fprintf(stderr, "%s: ", prefix_.c_str());
    std::fprintf(stderr, fmt, args...);
    std::fprintf(stderr, "\n");
    last_ = std::chrono::steady_clock::now();
  }
  void tick(const char* fmt, auto... args) {
    if (on_ && std::chrono::steady_clock::now() - last_ > std::chrono::seconds(2)) line(fmt, args...);
  }

 private:
  std::string prefix_;
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace gr::apps
