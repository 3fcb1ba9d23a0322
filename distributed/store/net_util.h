// TCP helpers for the stores and socket backends: an owning Socket, host name resolution
// (IPv4 first, IPv6 too), a dual-stack listener, connect with retries until a deadline, and
// find_free_port(). Every failure throws gr::Error naming the host:port involved.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

namespace gr::distributed {

// Owns a file descriptor and closes it on destruction (move-only).
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { reset(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  // "127.0.0.1:29500" or "[::1]:29500".
  std::string text;
};

// The TCP addresses of `host` (a name such as "localhost" or "node3", or a literal IPv4 /
// IPv6 address) with `port`; IPv4 ones first. Throws when the name does not resolve.
std::vector<SocketAddress> resolve_host(const std::string& host, int port);
// "host:port", bracketing IPv6 literals.
std::string host_port(const std::string& host, int port);
// This machine's host name (gethostname).
std::string local_hostname();

// A listening socket on every interface (IPv6 dual-stack when available, else IPv4), with
// SO_REUSEADDR. Port 0 picks a free port; socket_port() tells which.
Socket listen_tcp(int port, int backlog = 1024);
// The local port a socket is bound to.
int socket_port(int fd);
// A port that was free a moment ago on 127.0.0.1 (bind to port 0, read it, close). Another
// process may take it before the caller binds it; servers that can should bind port 0.
int find_free_port();

// Connects to host:port, retrying (with backoff) refused or unreachable attempts and
// failed name lookups until `timeout` has passed, since the server may start later. The
// socket is blocking, close-on-exec, with TCP_NODELAY. On failure throws
// "<who> could not connect to host:port within 30 s (last error: ...)".
Socket connect_tcp(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& who);

void set_nonblocking(int fd, bool on);
void set_nodelay(int fd);

}  // namespace gr::distributed
