// Output forwarding of the launcher: one poll loop over every worker pipe, whole lines out.
#include "distributed/launch/launcher_output.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gr::distributed {

namespace {

constexpr size_t kMaxLine = 64 * 1024;  // a longer run without a newline is cut into lines

void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a closed stdout: drop the output, keep supervising
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

LineSink prefixing_sink(int stdout_fd, int stderr_fd) {
  return [stdout_fd, stderr_fd](int rank, Stream stream, std::string_view line) {
    std::string text;
    text.reserve(line.size() + 16);
    if (rank >= 0) text.append("[rank ").append(std::to_string(rank)).append("] ");
    text.append(line).push_back('\n');
    write_all(stream == Stream::kStdout ? stdout_fd : stderr_fd, text);
  };
}

OutputForwarder::OutputForwarder(LineSink sink, size_t keep_stderr_lines)
    : sink_(std::move(sink)), keep_(keep_stderr_lines) {}

OutputForwarder::~OutputForwarder() {
  for (Pipe& pipe : pipes_) close_pipe(pipe);
}

void OutputForwarder::add(int rank, int stdout_fd, int stderr_fd) {
  pipes_.push_back({rank, Stream::kStdout, stdout_fd, {}});
  pipes_.push_back({rank, Stream::kStderr, stderr_fd, {}});
}

void OutputForwarder::emit(Pipe& pipe, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (pipe.stream == Stream::kStderr && keep_ > 0) {
    auto it = stderr_tail_.begin();
    while (it != stderr_tail_.end() && it->first != pipe.rank) ++it;
    if (it == stderr_tail_.end()) it = stderr_tail_.insert(it, {pipe.rank, {}});
    it->second.emplace_back(line);
    if (it->second.size() > keep_) it->second.pop_front();
  }
  sink_(pipe.rank, pipe.stream, line);
}

void OutputForwarder::read_some(Pipe& pipe) {
  char buf[65536];
  ssize_t n = ::read(pipe.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close_pipe(pipe);
    return;
  }
  std::string_view data(buf, static_cast<size_t>(n));
  size_t nl;
  while ((nl = data.find('\n')) != std::string_view::npos) {
    if (pipe.partial.empty()) {
      emit(pipe, data.substr(0, nl));
    } else {
      pipe.partial.append(data.substr(0, nl));
      std::string line = std::move(pipe.partial);
      pipe.partial.clear();
      emit(pipe, line);
    }
    data.remove_prefix(nl + 1);
  }
  pipe.partial.append(data);
  while (pipe.partial.size() >= kMaxLine) {
    std::string head = pipe.partial.substr(0, kMaxLine);
    pipe.partial.erase(0, kMaxLine);
    emit(pipe, head);
  }
}

void OutputForwarder::close_pipe(Pipe& pipe) {
  if (pipe.fd < 0) return;
  if (!pipe.partial.empty()) {
    std::string line = std::move(pipe.partial);
    pipe.partial.clear();
    emit(pipe, line);
  }
  ::close(pipe.fd);
  pipe.fd = -1;
}

void OutputForwarder::pump(std::chrono::milliseconds timeout) {
  std::vector<pollfd> pfds;
  std::vector<Pipe*> owners;
  for (Pipe& pipe : pipes_) {
    if (pipe.fd < 0) continue;
    pfds.push_back({pipe.fd, POLLIN, 0});
    owners.push_back(&pipe);
  }
  int ms = static_cast<int>(std::max<int64_t>(0, timeout.count()));
  if (pfds.empty()) {
    if (ms > 0) ::poll(nullptr, 0, ms);
    return;
  }
  if (::poll(pfds.data(), pfds.size(), ms) <= 0) return;
  for (size_t i = 0; i < pfds.size(); ++i) {
    if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) read_some(*owners[i]);
  }
}

void OutputForwarder::drain(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!open_fds().empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pump(std::min(left, std::chrono::milliseconds(50)));
  }
  for (Pipe& pipe : pipes_) close_pipe(pipe);
  pipes_.clear();
}

std::vector<int> OutputForwarder::open_fds() const {
  std::vector<int> fds;
  for (const Pipe& pipe : pipes_)
    if (pipe.fd >= 0) fds.push_back(pipe.fd);
  return fds;
}

std::vector<std::string> OutputForwarder::last_stderr(int rank) const {
  for (const auto& [r, lines] : stderr_tail_)
    if (r == rank) return {lines.begin(), lines.end()};
  return {};
}

}  // namespace gr::distributed
