// TCP helpers for the stores and socket backends: an owning Socket, host name resolution
// (IPv4 first, IPv6 too), a dual-stack listener, connect with retries until a deadline, and
// find_free_port(), and the local address that reaches a peer. Every failure throws
// gr::Error naming the host:port involved.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

#include "distributed/store/socket.h"

namespace gr::distributed {

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

// The address this host uses to reach `peer` (the source address of a UDP "connection");
// 127.0.0.1 when there is no route.
std::string local_address_for(const std::string& peer);

void set_nonblocking(int fd, bool on);
void set_nodelay(int fd);

}  // namespace gr::distributed
