// TCPStoreServer: one poll() loop serving every TCPStore client, with parked get()/wait().
#include "distributed/store/tcp_store_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "distributed/store/store_util.h"
#include "distributed/store/tcp_store_wire.h"

namespace gr::distributed {

using Clock = std::chrono::steady_clock;
using wire::Op;
using wire::Parse;
using wire::Request;
using wire::Response;
using wire::Status;

namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kReadsPerWake = 16;             // at most 1 MiB per client per loop turn
constexpr size_t kMaxPendingOutput = 1 << 20;    // stop reading a client that does not read
constexpr auto kAcceptPause = std::chrono::milliseconds(100);  // after EMFILE and the like

struct Conn {
  Socket socket;
  std::vector<uint8_t> in;  // received bytes; in[in_pos..] not parsed yet
  size_t in_pos = 0;
  size_t need = 1;  // bytes after in_pos needed before parsing again
  std::vector<uint8_t> out;
  size_t out_pos = 0;
  bool dead = false;
  // A get()/wait() waiting for keys: `waiting` holds its distinct keys that were missing
  // (each registered in watchers_), `missing` how many of them are still unset.
  bool parked = false;
  Request request;
  std::vector<std::string> waiting;
  size_t missing = 0;
  Clock::time_point deadline = Clock::time_point::max();

  size_t pending_output() const { return out.size() - out_pos; }
};

class Loop {
 public:
  Loop(TCPStoreServer& owner, int listener, int wake) : owner_(owner), listener_(listener), wake_(wake) {}
  void run(const std::atomic<bool>& stop);

 private:
  void accept_clients();
  void read_from(Conn& c);
  void service(uint64_t id, bool readable);
  void process(Conn& c, uint64_t id);
  void handle(Conn& c, uint64_t id, Request& r);
  void respond(Conn& c, Op op, const Response& r) { wire::append_response(c.out, op, r); }
  void flush(Conn& c);
  void park(Conn& c, uint64_t id, Request& r, std::vector<std::string> missing);
  void unpark(Conn& c, uint64_t id);
  void complete(Conn& c, uint64_t id);
  void key_created(const std::string& key);
  void expire(Clock::time_point now);
  void drop(uint64_t id);
  std::vector<std::string> missing_keys(const std::vector<std::string>& keys) const;

  TCPStoreServer& owner_;
  int listener_;
  int wake_;
  Clock::time_point accept_paused_until_{};
  std::unordered_map<std::string, Bytes> data_;
  std::unordered_map<std::string, std::vector<uint64_t>> watchers_;  // key -> parked clients
  std::map<uint64_t, Conn> conns_;
  std::vector<uint64_t> ready_;  // clients whose parked request was answered
  uint64_t next_id_ = 1;
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(kReadChunk);
};

void Loop::run(const std::atomic<bool>& stop) {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  while (!stop.load()) {
    auto now = Clock::now();
    expire(now);
    while (!ready_.empty()) {
      uint64_t id = ready_.back();
      ready_.pop_back();
      service(id, false);
    }
    fds.clear();
    ids.clear();
    fds.push_back({wake_, POLLIN, 0});
    bool accepting = now >= accept_paused_until_;
    if (accepting) fds.push_back({listener_, POLLIN, 0});
    auto next_timer = accepting ? Clock::time_point::max() : accept_paused_until_;
    for (auto& [id, c] : conns_) {
      short events = (!c.parked && c.pending_output() < kMaxPendingOutput) ? POLLIN : POLLRDHUP;
      if (c.pending_output() > 0) events |= POLLOUT;
      fds.push_back({c.socket.fd(), events, 0});
      ids.push_back(id);
      if (c.parked) next_timer = std::min(next_timer, c.deadline);
    }
    int timeout_ms = -1;
    if (next_timer != Clock::time_point::max()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(next_timer - now).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60000));
    }
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      GR_ERROR("TCPStore server: poll failed: ", std::strerror(errno));
    }
    if (n == 0) continue;
    if (fds[0].revents) {
      uint8_t buf[64];
      while (::read(wake_, buf, sizeof buf) > 0) {
      }
      if (stop.load()) break;
    }
    size_t first = accepting ? 2 : 1;
    if (accepting && fds[1].revents) accept_clients();
    for (size_t i = first; i < fds.size(); ++i) {
      short ev = fds[i].revents;
      if (!ev) continue;
      uint64_t id = ids[i - first];
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;
      if (ev & (POLLERR | POLLHUP | POLLNVAL | POLLRDHUP)) {
        drop(id);  // the client went away (maybe mid-request or while parked)
        continue;
      }
      service(id, (ev & POLLIN) != 0);
    }
  }
}

void Loop::accept_clients() {
  for (;;) {
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until_ = Clock::now() + kAcceptPause;
      return;
    }
    set_nodelay(fd);
    conns_[next_id_++].socket.reset(fd);
  }
}

void Loop::read_from(Conn& c) {
  for (size_t i = 0; i < kReadsPerWake; ++i) {
    ssize_t n = ::recv(c.socket.fd(), scratch_.data(), scratch_.size(), MSG_DONTWAIT);
    if (n > 0) {
      c.in.insert(c.in.end(), scratch_.data(), scratch_.data() + n);
      if (static_cast<size_t>(n) < scratch_.size()) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.dead = true;  // orderly close (n == 0) or a socket error
    return;
  }
}

// Reads (when readable), runs every complete request the client sent unless one parks, and
// sends the answers; drops the client on a malformed request or a dead socket.
void Loop::service(uint64_t id, bool readable) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (readable) read_from(c);
  if (!c.dead) process(c, id);
  if (!c.dead) flush(c);
  if (c.dead) drop(id);
}

void Loop::process(Conn& c, uint64_t id) {
  Request r;
  while (!c.parked && !c.dead && c.pending_output() < kMaxPendingOutput) {
    size_t avail = c.in.size() - c.in_pos;
    if (avail < c.need) break;
    Parse p = wire::parse_request(c.in.data() + c.in_pos, avail, r);
    if (p.kind == Parse::Malformed) {
      c.dead = true;
      return;
    }
    if (p.kind == Parse::Incomplete) {
      c.need = p.size;
      break;
    }
    c.in_pos += p.size;
    c.need = 1;
    handle(c, id, r);
  }
  if (c.in_pos == c.in.size()) {
    c.in.clear();
    c.in_pos = 0;
  } else if (c.in_pos > kReadChunk && c.in_pos * 2 > c.in.size()) {
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<ptrdiff_t>(c.in_pos));
    c.in_pos = 0;
  }
}

void Loop::flush(Conn& c) {
  while (c.pending_output() > 0) {
    ssize_t n = ::send(c.socket.fd(), c.out.data() + c.out_pos, c.pending_output(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c.out_pos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // POLLOUT resumes it
    c.dead = true;
    return;
  }
  c.out.clear();
  c.out_pos = 0;
}

std::vector<std::string> Loop::missing_keys(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const auto& k : keys) {
    if (!data_.count(k) && std::find(missing.begin(), missing.end(), k) == missing.end()) missing.push_back(k);
  }
  return missing;
}

void Loop::handle(Conn& c, uint64_t id, Request& r) {
  Response resp;
  const std::string& key = r.keys.empty() ? std::string() : r.keys[0];
  switch (r.op) {
    case Op::Set: {
      bool created = data_.insert_or_assign(key, std::move(r.value)).second;
      respond(c, r.op, resp);
      if (created) key_created(key);
      return;
    }
    case Op::Get: {
      auto it = data_.find(key);
      if (it == data_.end()) return park(c, id, r, {key});
      resp.value = it->second;
      break;
    }
    case Op::Add: {
      auto it = data_.find(key);
      try {
        resp.number = add_to_value(key, it == data_.end() ? Bytes() : it->second, r.number);
      } catch (const gr::Error& e) {
        resp.status = Status::Error;
        resp.error = e.message();
        break;
      }
      data_[key] = int_to_bytes(resp.number);
      respond(c, r.op, resp);
      if (it == data_.end()) key_created(key);
      return;
    }
    case Op::CompareSet: {
      auto it = data_.find(key);
      if (it == data_.end()) {
        if (!r.value.empty()) break;  // stays missing; the empty value answers
        resp.value = r.desired;
        data_.emplace(key, std::move(r.desired));
        respond(c, r.op, resp);
        key_created(key);
        return;
      }
      if (it->second == r.value) it->second = std::move(r.desired);
      resp.value = it->second;
      break;
    }
    case Op::Check:
      resp.number = missing_keys(r.keys).empty() ? 1 : 0;
      break;
    case Op::Wait: {
      auto missing = missing_keys(r.keys);
      if (!missing.empty()) return park(c, id, r, std::move(missing));
      break;
    }
    case Op::Delete:
      resp.number = data_.erase(key) ? 1 : 0;
      break;
    case Op::NumKeys:
      resp.number = static_cast<int64_t>(data_.size());
      break;
    case Op::Join:
      resp.number = owner_.on_join();
      break;
  }
  respond(c, r.op, resp);
}

void Loop::park(Conn& c, uint64_t id, Request& r, std::vector<std::string> missing) {
  c.parked = true;
  c.request = std::move(r);
  c.deadline = c.request.number > 0 ? Clock::now() + std::chrono::milliseconds(c.request.number)
                                    : Clock::time_point::max();
  c.missing = missing.size();
  for (const auto& k : missing) watchers_[k].push_back(id);
  c.waiting = std::move(missing);
}

void Loop::unpark(Conn& c, uint64_t id) {
  for (const auto& k : c.waiting) {
    auto it = watchers_.find(k);
    if (it == watchers_.end()) continue;
    auto& ids = it->second;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    if (ids.empty()) watchers_.erase(it);
  }
  c.parked = false;
  c.waiting.clear();
  c.missing = 0;
  c.deadline = Clock::time_point::max();
}

void Loop::complete(Conn& c, uint64_t id) {
  Response resp;
  if (c.request.op == Op::Get) resp.value = data_.at(c.request.keys[0]);
  respond(c, c.request.op, resp);
  unpark(c, id);
  ready_.push_back(id);
}

void Loop::key_created(const std::string& key) {
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  std::vector<uint64_t> ids = std::move(it->second);
  watchers_.erase(it);
  for (uint64_t id : ids) {
    auto c = conns_.find(id);
    if (c == conns_.end() || !c->second.parked) continue;
    if (--c->second.missing == 0) complete(c->second, id);
  }
}

void Loop::expire(Clock::time_point now) {
  for (auto& [id, c] : conns_) {
    if (!c.parked || c.deadline > now) continue;
    Response resp;
    resp.status = Status::Timeout;
    resp.missing = missing_keys(c.request.keys);
    respond(c, c.request.op, resp);
    unpark(c, id);
    ready_.push_back(id);
  }
}

void Loop::drop(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (it->second.parked) unpark(it->second, id);
  conns_.erase(it);
}

}  // namespace

TCPStoreServer::TCPStoreServer(int port) {
  listener_ = listen_tcp(port);
  set_nonblocking(listener_.fd(), true);
  port_ = socket_port(listener_.fd());
  int fds[2];
  GR_CHECK(::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0, "TCPStore server: pipe2 failed: ", std::strerror(errno));
  wake_read_.reset(fds[0]);
  wake_write_.reset(fds[1]);
  thread_ = std::thread([this] { serve(); });
}

TCPStoreServer::~TCPStoreServer() {
  stop_.store(true);
  uint8_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_write_.fd(), &one, 1);
  if (thread_.joinable()) thread_.join();
}

void TCPStoreServer::serve() {
  // The loop's state (keys, connections) lives on this thread and dies with it.
  try {
    Loop loop(*this, listener_.fd(), wake_read_.fd());
    loop.run(stop_);
  } catch (const std::exception& e) {
    // Only allocation failure or a broken poll() land here: say so once; clients then see
    // their connections close instead of the process terminating.
    std::fprintf(stderr, "gradring TCPStore server on port %d stopped: %s\n", port_, e.what());
  }
}

int64_t TCPStoreServer::on_join() {
  std::lock_guard lock(join_mutex_);
  ++joined_;
  join_cv_.notify_all();
  return joined_;
}

int64_t TCPStoreServer::wait_for_joins(int64_t count, Milliseconds timeout) {
  std::unique_lock lock(join_mutex_);
  auto enough = [&] { return joined_ >= count; };
  if (timeout.count() > 0) {
    join_cv_.wait_for(lock, timeout, enough);
  } else {
    join_cv_.wait(lock, enough);
  }
  return joined_;
}

}  // namespace gr::distributed
