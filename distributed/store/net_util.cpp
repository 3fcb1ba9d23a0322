// TCP helpers: name resolution, listening, connecting with retries, free ports.
#include "distributed/store/net_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "distributed/store/store_util.h"

namespace gr::distributed {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

static std::string address_text(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
  return std::string(1, '[').append(buf).append("]:").append(std::to_string(ntohs(in6->sin6_port)));
}

std::string host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return std::string(1, '[').append(host).append("]:").append(std::to_string(port));
  return host + ":" + std::to_string(port);
}

std::vector<SocketAddress> resolve_host(const std::string& host, int port) {
  GR_CHECK(port >= 0 && port <= 65535, "resolve_host: port ", port, " is not in [0, 65535]");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  GR_CHECK(rc == 0, "cannot resolve host '", host, "': ", rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc));
  std::vector<SocketAddress> out;
  for (addrinfo* ai = list; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    SocketAddress a;
    std::memcpy(&a.storage, ai->ai_addr, ai->ai_addrlen);
    a.length = ai->ai_addrlen;
    a.text = address_text(ai->ai_addr);
    bool dup = std::any_of(out.begin(), out.end(), [&](const SocketAddress& b) { return b.text == a.text; });
    if (!dup) out.push_back(std::move(a));
  }
  ::freeaddrinfo(list);
  std::stable_partition(out.begin(), out.end(), [](const SocketAddress& a) { return a.storage.ss_family == AF_INET; });
  GR_CHECK(!out.empty(), "cannot resolve host '", host, "': no IPv4 or IPv6 address");
  return out;
}

std::string local_hostname() {
  char buf[256] = {};
  GR_CHECK(::gethostname(buf, sizeof buf - 1) == 0, "gethostname failed: ", std::strerror(errno));
  return buf;
}

void set_nonblocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  GR_CHECK(flags >= 0, "fcntl(F_GETFL) failed: ", std::strerror(errno));
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  GR_CHECK(::fcntl(fd, F_SETFL, flags) == 0, "fcntl(F_SETFL) failed: ", std::strerror(errno));
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int socket_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  GR_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0, "getsockname failed: ", std::strerror(errno));
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

Socket listen_tcp(int port, int backlog) {
  GR_CHECK(port >= 0 && port <= 65535, "listen_tcp: port ", port, " is not in [0, 65535]");
  int one = 1, zero = 0;
  // Dual-stack IPv6 first: it accepts IPv4 clients too (as ::ffff:a.b.c.d).
  Socket s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.valid()) {
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    ::setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      int err = errno;
      GR_CHECK(err != EADDRINUSE, "cannot listen on port ", port, ": ", std::strerror(err),
               " (another job's store may be using it; pick another port, or 0 for a free one)");
      s.reset();  // no IPv6 on this machine: fall back to IPv4
    }
  }
  if (!s.valid()) {
    s.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    GR_CHECK(s.valid(), "socket() failed: ", std::strerror(errno));
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    GR_CHECK(::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "cannot listen on port ", port, ": ",
             std::strerror(errno), errno == EADDRINUSE ? " (another job's store may be using it; pick another port, or 0 for a free one)" : "");
  }
  GR_CHECK(::listen(s.fd(), backlog) == 0, "listen on port ", port, " failed: ", std::strerror(errno));
  return s;
}

int find_free_port() {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  GR_CHECK(s.valid(), "find_free_port: socket() failed: ", std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  GR_CHECK(::bind(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "find_free_port: bind failed: ",
           std::strerror(errno));
  return socket_port(s.fd());
}

// One non-blocking connect to `addr`, waiting at most until `deadline`. Returns the
// connected socket, or an invalid one with `error` set.
static Socket try_connect(const SocketAddress& addr, Clock::time_point deadline, std::string& error) {
  Socket s(::socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) {
    error = std::strerror(errno);
    return s;
  }
  int rc = ::connect(s.fd(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length);
  if (rc != 0 && errno != EINPROGRESS) {
    error = std::strerror(errno);
    return Socket();
  }
  if (rc != 0) {
    // Each attempt gets a moment even at the deadline, so that a refused connection is
    // reported as such rather than as a timeout.
    deadline = std::max(deadline, Clock::now() + milliseconds(100));
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        error = "connect timed out";
        return Socket();
      }
      pollfd p{s.fd(), POLLOUT, 0};
      int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) break;
      if (n < 0) {
        error = std::strerror(errno);
        return Socket();
      }
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      error = std::strerror(err);
      return Socket();
    }
  }
  // A connect to a free local port in the ephemeral range can land on its own source port
  // (TCP simultaneous open): the socket is then connected to itself. Nobody listens there.
  sockaddr_storage self{}, peer{};
  socklen_t self_len = sizeof self, peer_len = sizeof peer;
  if (::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&self), &self_len) == 0 &&
      ::getpeername(s.fd(), reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0 && self_len == peer_len &&
      std::memcmp(&self, &peer, self_len) == 0) {
    error = std::strerror(ECONNREFUSED);
    return Socket();
  }
  set_nonblocking(s.fd(), false);
  set_nodelay(s.fd());
  return s;
}

Socket connect_tcp(const std::string& host, int port, milliseconds timeout, const std::string& who) {
  GR_CHECK(port > 0 && port <= 65535, who, ": cannot connect to ", host_port(host, port), ": the port is not in [1, 65535]");
  auto start = Clock::now();
  auto deadline = start + timeout;
  std::string error = "no attempt made";
  milliseconds backoff{10};
  for (;;) {
    try {
      for (const SocketAddress& addr : resolve_host(host, port)) {
        Socket s = try_connect(addr, deadline, error);
        if (s.valid()) return s;
        if (addr.text != host_port(host, port)) error += " (" + addr.text + ")";
      }
    } catch (const gr::Error& e) {
      error = e.message();  // the name may not resolve yet (a node still booting)
    }
    auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, milliseconds(500));
  }
  auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  GR_ERROR(who, " could not connect to ", host_port(host, port), " within ", format_duration(waited), " (last error: ", error,
           "); is the server running, and are the address and port right?");
}

std::string local_address_for(const std::string& peer) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  GR_CHECK(::getaddrinfo(peer.c_str(), "9", &hints, &res) == 0 && res, "cannot resolve host '", peer, "'");
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  std::string address = "127.0.0.1";
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    char text[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text))
      address = text;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return address;
}

}  // namespace gr::distributed
