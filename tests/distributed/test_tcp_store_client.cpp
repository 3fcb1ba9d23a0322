// TCPStore's client reading responses (the bytes fuzz/fuzz_tcp_store_response feeds it):
// responses no server sends (a yes/no byte other than 0 or 1, a timeout answering a request
// that never parks) are refused with a clear error, here by the parser and by a client
// talking to a fake server that sends them; a length prefix alone does not make the client
// allocate what it claims.
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "distributed/store/net_util.h"
#include "distributed/store/tcp_store.h"
#include "distributed/store/tcp_store_wire.h"
#include "test_store_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;

namespace {

std::vector<uint8_t> encoded(wire::Op op, const wire::Response& r) {
  std::vector<uint8_t> out;
  wire::append_response(out, op, r);
  return out;
}

wire::Parse::Kind parsed(wire::Op op, const std::vector<uint8_t>& bytes) {
  wire::Response r;
  return wire::parse_response(bytes.data(), bytes.size(), op, r).kind;
}

// Accepts one client, answers its join, then answers its next request with `reply` and
// waits for the client to hang up.
class FakeServer {
 public:
  explicit FakeServer(std::vector<uint8_t> reply) : listener_(listen_tcp(0)), port_(socket_port(listener_.fd())) {
    thread_ = std::thread([this, reply = std::move(reply)] {
      Socket s(::accept(listener_.fd(), nullptr, nullptr));
      if (!s.valid()) return;
      timeval limit{10, 0};  // never hang the test
      ::setsockopt(s.fd(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      wire::Response joined;
      joined.number = 1;
      if (!answer(s, encoded(wire::Op::Join, joined)) || !answer(s, reply)) return;
      uint8_t byte;
      while (::recv(s.fd(), &byte, 1, 0) > 0) {
      }
    });
  }
  ~FakeServer() { thread_.join(); }
  int port() const { return port_; }

 private:
  // Reads one whole request, then sends `bytes`.
  static bool answer(const Socket& s, const std::vector<uint8_t>& bytes) {
    std::vector<uint8_t> in;
    wire::Request r;
    while (wire::parse_request(in.data(), in.size(), r).kind != wire::Parse::Complete) {
      uint8_t buf[256];
      ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.insert(in.end(), buf, buf + n);
    }
    return ::send(s.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  Socket listener_;
  int port_;
  std::thread thread_;
};

TCPStoreOptions client_options(Milliseconds timeout = 5s) {
  TCPStoreOptions o;
  o.timeout = timeout;
  return o;
}

// This process's resident memory now (the client keeps its receive buffer after a failure).
double resident_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

}  // namespace

TEST_CASE("TCPStore wire: a yes/no byte other than 0 or 1 and a timeout that answers no parked request are malformed") {
  using wire::Op;
  using wire::Parse;
  wire::Response yes;
  yes.number = 1;
  CHECK(parsed(Op::Check, encoded(Op::Check, yes)) == Parse::Complete);
  CHECK(parsed(Op::Delete, encoded(Op::Delete, yes)) == Parse::Complete);
  CHECK(parsed(Op::Check, {0, 2}) == Parse::Malformed);
  CHECK(parsed(Op::Delete, {0, 255}) == Parse::Malformed);

  wire::Response timeout;
  timeout.status = wire::Status::Timeout;
  timeout.missing = {"a"};
  for (int op = static_cast<int>(Op::Set); op <= static_cast<int>(Op::Join); ++op) {
    const auto o = static_cast<Op>(op);
    CAPTURE(wire::op_name(o));
    const bool parks = o == Op::Get || o == Op::Wait;
    CHECK(parsed(o, encoded(o, timeout)) == (parks ? Parse::Complete : Parse::Malformed));
  }
}

TEST_CASE("TCPStore: a client refuses responses no server sends, naming the connection") {
  {
    FakeServer server(encoded(wire::Op::Delete, [] {
      wire::Response r;
      r.number = 1;
      return r;
    }()));
    TCPStore client("127.0.0.1", server.port(), client_options());
    CHECK(client.delete_key("k"));  // the fake server itself works
  }
  {
    FakeServer server({0, 2});  // check(): "yes" spelled 2
    TCPStore client("127.0.0.1", server.port(), client_options());
    const std::string msg = error_of([&] { client.check({"k"}); });
    CHECK(msg.find("TCPStore.check: this process lost the connection to the store server at 127.0.0.1:") !=
          std::string::npos);
    CHECK(msg.find("malformed response") != std::string::npos);
  }
  {
    wire::Response timeout;
    timeout.status = wire::Status::Timeout;
    timeout.missing = {"counter"};
    FakeServer server(encoded(wire::Op::Get, timeout));  // add() answered as if it had parked
    TCPStore client("127.0.0.1", server.port(), client_options());
    const std::string msg = error_of([&] { client.add("counter", 1); });
    CHECK(msg.find("TCPStore.add: ") != std::string::npos);
    CHECK(msg.find("malformed response") != std::string::npos);
  }
}

TEST_CASE("TCPStore: a length prefix alone does not make the client allocate the value it announces") {
  // compare_set's answer: OK, then a value of 1 GiB (the limit) of which no byte follows.
  std::vector<uint8_t> reply = {0};
  for (int i = 0; i < 8; ++i) reply.push_back(static_cast<uint8_t>((uint64_t(1) << 30) >> (8 * i)));
  FakeServer server(reply);
  TCPStore client("127.0.0.1", server.port(), client_options(500ms));
  const double before = resident_mb();
  const std::string msg = error_of([&] { client.compare_set("k", bytes("a"), bytes("b")); });
  CHECK(msg.find("the server did not answer within") != std::string::npos);
  CHECK(resident_mb() - before < 256);  // the buffer was resized (and zeroed) to 1 GiB at once
}
