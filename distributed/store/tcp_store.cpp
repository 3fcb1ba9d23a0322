// TCPStore client side: one connection per store object, requests serialized by a mutex.
#include "distributed/store/tcp_store.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "distributed/store/store_util.h"
#include "distributed/store/tcp_store_server.h"
#include "distributed/store/tcp_store_wire.h"

namespace gr::distributed {

using Clock = std::chrono::steady_clock;
using wire::Op;
using wire::Parse;
using wire::Request;
using wire::Response;
using wire::Status;

// How long past a get()/wait() timeout the client waits for the server's own timeout answer
// before declaring the server unresponsive.
constexpr Milliseconds kServerAnswerGrace{10000};

static Request make_request(Op op, std::vector<std::string> keys = {}, int64_t number = 0) {
  Request r;
  r.op = op;
  r.keys = std::move(keys);
  r.number = number;
  return r;
}

static void check_key(const char* op, const std::string& key) {
  GR_CHECK(key.size() <= kMaxStoreValueBytes, "TCPStore.", op, ": a key of ", key.size(), " bytes is over the limit of ",
           kMaxStoreValueBytes, " bytes");
}

TCPStore::TCPStore(std::string host, int port, TCPStoreOptions options) : host_(std::move(host)), port_(port) {
  GR_CHECK(!options.world_size || *options.world_size >= 1, "TCPStore: world_size must be at least 1, got ",
           *options.world_size);
  GR_CHECK(options.timeout.count() >= 0, "TCPStore: the timeout must not be negative");
  timeout_ = options.timeout;
  if (options.is_server) {
    server_ = std::make_unique<TCPStoreServer>(port);
    port_ = server_->port();
  }
  Milliseconds connect_timeout = options.timeout.count() > 0 ? options.timeout : kDefaultStoreTimeout;
  // The server's own client goes through loopback: the server listens on every interface.
  socket_ = connect_tcp(server_ ? "127.0.0.1" : host_, port_, connect_timeout, "TCPStore: " + label_);
  set_nonblocking(socket_.fd(), true);
  call(make_request(Op::Join), timeout_);
  if (server_ && options.world_size && options.wait_for_workers) {
    int64_t joined = server_->wait_for_joins(*options.world_size, options.timeout);
    GR_CHECK(joined >= *options.world_size, "TCPStore: only ", joined, " of ", *options.world_size,
             " workers connected to the store server on port ", port_, " within ", format_duration(options.timeout),
             " (did every rank start, with the same MASTER_ADDR and MASTER_PORT?)");
  }
}

TCPStore::~TCPStore() = default;

void TCPStore::fail_connection(const Request& request, const std::string& why) {
  socket_.reset();
  broken_ = why;
  GR_ERROR("TCPStore.", wire::op_name(request.op), ": ", label_, " lost the connection to the store server at ",
           host_port(host_, port_), " (", why, ")");
}

Response TCPStore::call(const Request& request, Milliseconds wait_limit) {
  std::lock_guard lock(mutex_);
  GR_CHECK(broken_.empty(), "TCPStore.", wire::op_name(request.op), ": the connection of ", label_,
           " to the store server at ", host_port(host_, port_), " was lost earlier (", broken_, ")");
  auto deadline = wait_limit.count() > 0 ? Clock::now() + wait_limit : Clock::time_point::max();
  // Waits until the socket is ready for `events`; false once the deadline has passed.
  auto await = [&](short events) {
    for (;;) {
      int ms = -1;
      if (deadline != Clock::time_point::max()) {
        auto left = std::chrono::ceil<Milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        ms = static_cast<int>(std::min<int64_t>(left, 60000));
      }
      pollfd p{socket_.fd(), events, 0};
      int n = ::poll(&p, 1, ms);
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) fail_connection(request, std::string("poll: ") + std::strerror(errno));
    }
  };
  auto no_answer = [&] { return "the server did not answer within " + format_duration(wait_limit); };

  send_buffer_.clear();
  wire::append_request(send_buffer_, request);
  for (size_t sent = 0; sent < send_buffer_.size();) {
    ssize_t n = ::send(socket_.fd(), send_buffer_.data() + sent, send_buffer_.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!await(POLLOUT)) fail_connection(request, no_answer());
    } else if (n < 0 && errno != EINTR) {
      fail_connection(request, std::string("send: ") + std::strerror(errno));
    }
  }

  Response response;
  size_t have = 0, need = 1;
  for (;;) {
    if (have >= need) {
      Parse p = wire::parse_response(recv_buffer_.data(), have, request.op, response);
      if (p.kind == Parse::Complete) {
        if (p.size != have) fail_connection(request, "unexpected bytes after a response");  // one at a time
        break;
      }
      if (p.kind == Parse::Malformed) fail_connection(request, "malformed response (is that port a TCPStore server?)");
      need = p.size;
    }
    // The buffer grows with what arrives (at most doubling), not with what a length prefix
    // claims: whatever answers on the port (not always a TCPStore server) could otherwise
    // make the client zero a gigabyte before sending another byte.
    size_t want = std::max<size_t>(std::min(need - have, have), 64 * 1024);
    if (recv_buffer_.size() < have + want) recv_buffer_.resize(have + want);
    ssize_t n = ::recv(socket_.fd(), recv_buffer_.data() + have, recv_buffer_.size() - have, 0);
    if (n > 0) {
      have += static_cast<size_t>(n);
    } else if (n == 0) {
      fail_connection(request, "the server closed the connection");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!await(POLLIN)) fail_connection(request, no_answer());
    } else if (errno != EINTR) {
      fail_connection(request, std::string("recv: ") + std::strerror(errno));
    }
  }
  if (recv_buffer_.size() > (4 << 20)) std::vector<uint8_t>().swap(recv_buffer_);  // do not keep a huge value
  if (response.status == Status::Error) GR_ERROR("TCPStore.", wire::op_name(request.op), ": ", response.error);
  return response;
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  check_key("set", key);
  GR_CHECK(value.size() <= kMaxStoreValueBytes, "TCPStore.set: a value of ", value.size(),
           " bytes is over the limit of ", kMaxStoreValueBytes, " bytes (key '", key, "')");
  Request r = make_request(Op::Set, {key});
  r.value = value;
  call(r, timeout_);
}

// get() and wait(): the server parks the request and answers when the keys exist, or with
// the keys still missing once `timeout` has passed.
static Milliseconds parked_limit(Milliseconds timeout) {
  return timeout.count() > 0 ? timeout + kServerAnswerGrace : Milliseconds(0);
}

Bytes TCPStore::get(const std::string& key) {
  check_key("get", key);
  Response r = call(make_request(Op::Get, {key}, timeout_.count()), parked_limit(timeout_));
  GR_CHECK(r.status == Status::Ok, "TCPStore.get: ", wait_timeout_message(label_, timeout_, {key}, r.missing),
           " [store server ", host_port(host_, port_), "]");
  return std::move(r.value);
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  check_key("add", key);
  return call(make_request(Op::Add, {key}, delta), timeout_).number;
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key("compare_set", key);
  GR_CHECK(expected.size() <= kMaxStoreValueBytes && desired.size() <= kMaxStoreValueBytes,
           "TCPStore.compare_set: a value over the limit of ", kMaxStoreValueBytes, " bytes (key '", key, "')");
  Request r = make_request(Op::CompareSet, {key});
  r.value = expected;
  r.desired = desired;
  return std::move(call(r, timeout_).value);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  GR_CHECK(keys.size() <= kMaxStoreKeys, "TCPStore.check: ", keys.size(), " keys are over the limit of ", kMaxStoreKeys);
  for (const auto& k : keys) check_key("check", k);
  return call(make_request(Op::Check, keys), timeout_).number != 0;
}

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  GR_CHECK(keys.size() <= kMaxStoreKeys, "TCPStore.wait: ", keys.size(), " keys are over the limit of ", kMaxStoreKeys);
  GR_CHECK(timeout.count() >= 0, "TCPStore.wait: the timeout must not be negative");
  if (keys.empty()) return;
  for (const auto& k : keys) check_key("wait", k);
  Response r = call(make_request(Op::Wait, keys, timeout.count()), parked_limit(timeout));
  GR_CHECK(r.status == Status::Ok, "TCPStore.wait: ", wait_timeout_message(label_, timeout, keys, r.missing),
           " [store server ", host_port(host_, port_), "]");
}

bool TCPStore::delete_key(const std::string& key) {
  check_key("delete_key", key);
  return call(make_request(Op::Delete, {key}), timeout_).number != 0;
}

int64_t TCPStore::num_keys() { return call(make_request(Op::NumKeys), timeout_).number; }

}  // namespace gr::distributed
