// The launcher's output forwarding: reads every worker's stdout/stderr pipes in one poll
// loop and hands each complete line, with its rank, to a sink (by default: written whole,
// prefixed "[rank N] ", to the launcher's own stdout/stderr). Keeps each rank's last
// stderr lines for failure summaries. Lines never interleave mid-line; a partial last line
// is flushed when its pipe closes.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gr::distributed {

enum class Stream { kStdout = 1, kStderr = 2 };

// rank >= 0: a worker's line (without its newline). rank < 0: a message of the launcher.
using LineSink = std::function<void(int rank, Stream stream, std::string_view line)>;

// Writes "[rank N] line\n" (or the launcher's "line\n") with one write to fd 1 or 2.
LineSink prefixing_sink(int stdout_fd = 1, int stderr_fd = 2);

class OutputForwarder {
 public:
  explicit OutputForwarder(LineSink sink, size_t keep_stderr_lines = 10);
  ~OutputForwarder();
  OutputForwarder(const OutputForwarder&) = delete;
  OutputForwarder& operator=(const OutputForwarder&) = delete;

  // Takes ownership of a worker's pipe read ends.
  void add(int rank, int stdout_fd, int stderr_fd);
  // Waits up to `timeout` for output and forwards every complete line that arrived. Returns
  // early when there was output or a signal interrupted the wait.
  void pump(std::chrono::milliseconds timeout);
  // Forwards until every pipe is closed or `timeout` passes, then flushes partial lines and
  // closes the pipes.
  void drain(std::chrono::milliseconds timeout);
  // Open pipe descriptors (a function-mode child closes its siblings' pipes).
  std::vector<int> open_fds() const;
  // The last stderr lines of `rank` (oldest first).
  std::vector<std::string> last_stderr(int rank) const;
  void message(std::string_view line) { sink_(-1, Stream::kStderr, line); }

 private:
  struct Pipe {
    int rank;
    Stream stream;
    int fd;
    std::string partial;
  };
  void emit(Pipe& pipe, std::string_view line);
  void read_some(Pipe& pipe);
  void close_pipe(Pipe& pipe);

  LineSink sink_;
  size_t keep_;
  std::vector<Pipe> pipes_;
  std::vector<std::pair<int, std::deque<std::string>>> stderr_tail_;
};

}  // namespace gr::distributed
