// TCPStore: every operation, parked get/wait, concurrent clients and processes, connect
// retries and timeouts, and a server that survives malformed and vanishing clients.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "distributed/store/net_util.h"
#include "distributed/store/tcp_store.h"
#include "distributed/store/tcp_store_wire.h"
#include "test_store_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

TCPStoreOptions server_options(Milliseconds timeout = 10s) {
  TCPStoreOptions o;
  o.is_server = true;
  o.timeout = timeout;
  return o;
}

TCPStoreOptions client_options(Milliseconds timeout = 10s) {
  TCPStoreOptions o;
  o.timeout = timeout;
  return o;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A raw connection for speaking (or garbling) the protocol by hand.
Socket raw_connect(int port) { return connect_tcp("127.0.0.1", port, 5s, "test"); }

void send_raw(const Socket& s, const std::vector<uint8_t>& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(s.fd(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    REQUIRE(n > 0);
    sent += static_cast<size_t>(n);
  }
}

// True when the server closes the connection within `limit` (reads and discards data).
bool closed_by_server(const Socket& s, Milliseconds limit = 3s) {
  auto deadline = Clock::now() + limit;
  uint8_t buf[256];
  while (Clock::now() < deadline) {
    pollfd p{s.fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
    if (n <= 0) return true;
  }
  return false;
}

std::vector<uint8_t> encode(wire::Op op, std::vector<std::string> keys, const std::string& value = "", int64_t number = 0) {
  wire::Request r;
  r.op = op;
  r.keys = std::move(keys);
  r.value = bytes(value);
  r.number = number;
  std::vector<uint8_t> out;
  wire::append_request(out, r);
  return out;
}

void append_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

TEST_CASE("TCPStore: every operation, through the server's own client and a second client") {
  TCPStore server("127.0.0.1", 0, server_options());
  CHECK(server.is_server());
  CHECK(server.port() > 0);
  check_store_operations(server);
  TCPStore client("127.0.0.1", server.port(), client_options());
  CHECK_FALSE(client.is_server());
  check_store_operations(client);
  client.set("shared", "from client");
  CHECK(server.get_string("shared") == "from client");
  CHECK(server.num_keys() == 1);

  std::vector<uint8_t> big(8 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7919 >> 3);
  client.set("big", big);
  CHECK(server.get("big") == big);
}

TEST_CASE("TCPStore: a get() parks on the server until another client sets the key") {
  TCPStore server("127.0.0.1", 0, server_options());
  TCPStore client("localhost", server.port(), client_options());
  std::string got;
  double waited_ms = 0;
  std::thread getter([&] {
    auto t0 = Clock::now();
    got = client.get_string("late");
    waited_ms = ms_since(t0);
  });
  std::this_thread::sleep_for(150ms);
  server.set("late", "here");
  getter.join();
  CHECK(got == "here");
  CHECK(waited_ms >= 100);
  CHECK(waited_ms < 5000);

  // wait() on several keys returns once the last one is set, by whichever client.
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    client.wait({"k1", "k2", "k1"});
    returned = true;
  });
  server.set("k1", "1");
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(returned.load());
  server.add("k2", 1);  // add creates the key: that wakes waiters too
  waiter.join();
  CHECK(returned.load());
  // compare_set creating a key wakes a getter as well.
  std::thread getter2([&] { got = client.get_string("cs"); });
  std::this_thread::sleep_for(50ms);
  server.compare_set("cs", {}, bytes("made"));
  getter2.join();
  CHECK(got == "made");
}

TEST_CASE("TCPStore: add() from many clients and threads hands out every value exactly once") {
  TCPStore server("127.0.0.1", 0, server_options());
  constexpr int kClients = 6, kThreadsOnShared = 3, kAdds = 200;
  std::vector<std::vector<int64_t>> seen(kClients + kThreadsOnShared);
  TCPStore shared("127.0.0.1", server.port(), client_options());  // one object, several threads
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients + kThreadsOnShared; ++c) {
    threads.emplace_back([&, c] {
      std::unique_ptr<TCPStore> own;
      if (c < kClients) own = std::make_unique<TCPStore>("127.0.0.1", server.port(), client_options());
      Store& s = own ? static_cast<Store&>(*own) : shared;
      for (int i = 0; i < kAdds; ++i) seen[c].push_back(s.add("counter", 1));
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int64_t> all;
  for (auto& v : seen) {
    CHECK(std::is_sorted(v.begin(), v.end()));  // each client sees its values increase
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  REQUIRE(all.size() == size_t((kClients + kThreadsOnShared) * kAdds));
  for (size_t i = 0; i < all.size(); ++i) REQUIRE(all[i] == int64_t(i + 1));
  CHECK(server.get_string("counter") == std::to_string(all.size()));
}

TEST_CASE("TCPStore: timeouts say who waited how long for which keys") {
  TCPStore server("127.0.0.1", 0, server_options(200ms));
  TCPStore client("127.0.0.1", server.port(), client_options(200ms));
  client.set_label("rank 1");
  auto t0 = Clock::now();
  std::string msg = error_of([&] { client.get("x"); });
  double took = ms_since(t0);
  CHECK(msg.find("TCPStore.get: rank 1 waited 200 ms for key 'x'") != std::string::npos);
  CHECK(msg.find("127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
  CHECK(took >= 190);
  CHECK(took < 3000);

  server.set("a", "1");
  msg = error_of([&] { client.wait({"a", "b"}, 150ms); });
  CHECK(msg.find("rank 1 waited 150 ms for keys 'a', 'b', still missing 'b'") != std::string::npos);
  // The connection is still good after a timeout, and a later set of the key is harmless.
  server.set("x", "now");
  CHECK(client.get_string("x") == "now");
  CHECK(client.num_keys() == 2);
}

TEST_CASE("TCPStore: a client started before the server retries until it is up") {
  int port = find_free_port();
  std::unique_ptr<TCPStore> client;
  std::string error;
  std::thread t([&] {
    try {
      client = std::make_unique<TCPStore>("localhost", port, client_options(10s));
    } catch (const gr::Error& e) {
      error = e.message();
    }
  });
  std::this_thread::sleep_for(300ms);
  TCPStore server("127.0.0.1", port, server_options());
  CHECK(server.port() == port);
  t.join();
  REQUIRE(error.empty());
  client->set("k", "v");
  CHECK(server.get_string("k") == "v");
}

TEST_CASE("TCPStore: a client that cannot connect names host:port and the time waited") {
  int port = find_free_port();  // nobody listens there
  auto t0 = Clock::now();
  std::string msg = error_of([&] { TCPStore("127.0.0.1", port, client_options(300ms)); });
  INFO(msg);
  // "within 300 ms", or a little more on a loaded machine: the time actually waited.
  CHECK(msg.find("could not connect to 127.0.0.1:" + std::to_string(port) + " within ") != std::string::npos);
  CHECK(msg.find("last error: Connection refused") != std::string::npos);
  CHECK(ms_since(t0) < 3000);
  msg = error_of([&] { TCPStore("no-such-host.invalid", port, client_options(200ms)); });
  CHECK(msg.find("no-such-host.invalid:" + std::to_string(port)) != std::string::npos);
  CHECK(msg.find("cannot resolve host 'no-such-host.invalid'") != std::string::npos);

  TCPStore server("127.0.0.1", 0, server_options());
  msg = error_of([&] { TCPStore("127.0.0.1", server.port(), server_options()); });
  CHECK(msg.find("cannot listen on port " + std::to_string(server.port())) != std::string::npos);
}

TEST_CASE("TCPStore: the server waits for world_size workers when asked") {
  TCPStoreOptions o = server_options(10s);
  int port = find_free_port();
  o.world_size = 3;
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&] {
      std::this_thread::sleep_for(100ms);
      TCPStore c("127.0.0.1", port, client_options());
      c.add("joined", 1);
    });
  }
  auto t0 = Clock::now();
  TCPStore server("127.0.0.1", port, o);  // returns once both clients connected
  CHECK(ms_since(t0) >= 50);
  for (auto& w : workers) w.join();
  CHECK(server.get_string("joined") == "2");
  CHECK(server.num_keys() == 1);  // joining leaves no keys behind

  TCPStoreOptions lonely = server_options(200ms);
  lonely.world_size = 2;
  std::string msg = error_of([&] { TCPStore("127.0.0.1", 0, lonely); });
  CHECK(msg.find("only 1 of 2 workers connected to the store server on port") != std::string::npos);
  CHECK(msg.find("within 200 ms") != std::string::npos);
}

TEST_CASE("TCPStore: ranks as separate processes") {
  TCPStore server("127.0.0.1", 0, server_options());
  server.set_label("rank 0");
  int port = server.port();
  constexpr int kWorld = 4;
  auto pids = spawn_children(kWorld - 1, [&](int i) {
    int rank = i + 1;
    TCPStore store("127.0.0.1", port, client_options(10s));
    store.set_label("rank " + std::to_string(rank));
    store.add("arrived", 1);
    store.set("rank" + std::to_string(rank), std::to_string(rank * 10));
    for (int r = 1; r < kWorld; ++r) {
      if (store.get_string("rank" + std::to_string(r)) != std::to_string(r * 10)) return 1;
    }
    store.wait({"go"});  // the parent sets it once every rank arrived
    return store.get_string("go") == "go" ? 0 : 1;
  });
  server.wait({"rank1", "rank2", "rank3"});
  CHECK(server.get_string("arrived") == "3");
  server.set("go", "go");
  CHECK(all_zero(wait_children(pids, 30s)));
}

TEST_CASE("TCPStore: the server survives garbage, absurd lengths, truncation and vanishing clients") {
  TCPStore server("127.0.0.1", 0, server_options());
  int port = server.port();
  server.set("before", "1");

  {  // an unknown request type
    Socket s = raw_connect(port);
    send_raw(s, {0xff, 'h', 'e', 'l', 'l', 'o'});
    CHECK(closed_by_server(s));
  }
  {  // a key length far over the limit: dropped before anything is allocated
    Socket s = raw_connect(port);
    std::vector<uint8_t> req{static_cast<uint8_t>(wire::Op::Set)};
    append_u64(req, uint64_t(1) << 62);
    send_raw(s, req);
    CHECK(closed_by_server(s));
  }
  {  // a value length just over 1 GiB
    Socket s = raw_connect(port);
    std::vector<uint8_t> req = encode(wire::Op::Set, {"k"});
    req.resize(req.size() - 8);
    append_u64(req, (uint64_t(1) << 30) + 1);
    send_raw(s, req);
    CHECK(closed_by_server(s));
  }
  {  // too many keys in a wait
    Socket s = raw_connect(port);
    std::vector<uint8_t> req{static_cast<uint8_t>(wire::Op::Wait)};
    append_u64(req, uint64_t(1) << 40);
    send_raw(s, req);
    CHECK(closed_by_server(s));
  }
  {  // a negative timeout
    Socket s = raw_connect(port);
    send_raw(s, encode(wire::Op::Get, {"k"}, "", -5));
    CHECK(closed_by_server(s));
  }
  {  // a truncated message, then the client goes away
    Socket s = raw_connect(port);
    std::vector<uint8_t> req = encode(wire::Op::Set, {"truncated"}, "value");
    req.resize(req.size() - 3);
    send_raw(s, req);
  }
  // A client stuck halfway through a message does not block the others.
  Socket stuck = raw_connect(port);
  {
    std::vector<uint8_t> req = encode(wire::Op::Set, {"half"}, "value");
    req.resize(req.size() / 2);
    send_raw(stuck, req);
  }
  {  // clients that disconnect while parked in get() and wait()
    Socket g = raw_connect(port);
    send_raw(g, encode(wire::Op::Get, {"parked"}));
    Socket w = raw_connect(port);
    send_raw(w, encode(wire::Op::Wait, {"parked", "parked2"}, "", 100000));
    std::this_thread::sleep_for(50ms);  // let the server park them
  }
  {  // several requests in one send are answered in order
    Socket s = raw_connect(port);
    std::vector<uint8_t> batch = encode(wire::Op::Set, {"p"}, "v");
    auto more = encode(wire::Op::Add, {"n"}, "", 4);
    batch.insert(batch.end(), more.begin(), more.end());
    more = encode(wire::Op::Get, {"p"});
    batch.insert(batch.end(), more.begin(), more.end());
    send_raw(s, batch);
    std::vector<uint8_t> expect{0, 0};  // set: ok; add: ok 4; get: ok "v"
    append_u64(expect, 4);
    expect.push_back(0);
    append_u64(expect, 1);
    expect.push_back('v');
    std::vector<uint8_t> got(expect.size());
    size_t have = 0;
    while (have < got.size()) {
      pollfd p{s.fd(), POLLIN, 0};
      REQUIRE(::poll(&p, 1, 3000) == 1);
      ssize_t n = ::recv(s.fd(), got.data() + have, got.size() - have, 0);
      REQUIRE(n > 0);
      have += static_cast<size_t>(n);
    }
    CHECK(got == expect);
  }

  // The server still serves a normal client correctly, parked keys included.
  TCPStore client("127.0.0.1", port, client_options());
  CHECK(client.get_string("before") == "1");
  CHECK_FALSE(client.check({"truncated"}));
  client.set("parked", "now set");
  client.set("parked2", "too");
  CHECK(client.get_string("parked") == "now set");
  CHECK(client.add("n", 1) == 5);
  CHECK(client.num_keys() == 5);  // before, parked, parked2, p, n
  CHECK(client.get_string("p") == "v");
}

TEST_CASE("TCPStore: destroying the server ends parked clients' waits promptly") {
  auto server = std::make_unique<TCPStore>("127.0.0.1", 0, server_options());
  TCPStore client("127.0.0.1", server->port(), client_options(20s));
  client.set_label("rank 3");
  std::string msg;
  double took = 0;
  std::thread t([&] {
    auto t0 = Clock::now();
    msg = error_of([&] { client.get("never"); });
    took = ms_since(t0);
  });
  std::this_thread::sleep_for(100ms);
  auto t0 = Clock::now();
  server.reset();
  CHECK(ms_since(t0) < 1000);
  t.join();
  CHECK(took < 3000);
  CHECK(msg.find("TCPStore.get: rank 3 lost the connection to the store server at 127.0.0.1:") != std::string::npos);
  CHECK(msg.find("the server closed the connection") != std::string::npos);
  // Later calls fail at once, saying why.
  msg = error_of([&] { client.set("k", "v"); });
  CHECK(msg.find("was lost earlier (the server closed the connection)") != std::string::npos);
}

namespace {
// Whether a socket can bind ::1 here (containers may run without IPv6).
bool has_ipv6_loopback() {
  Socket probe(::socket(AF_INET6, SOCK_STREAM, 0));
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  return probe.valid() && ::bind(probe.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}
}  // namespace

TEST_CASE("TCPStore: clients reach the server by host name") {
  TCPStore server("", 0, server_options());
  TCPStore by_name(local_hostname(), server.port(), client_options(5s));
  by_name.set("name", "1");
  TCPStore by_address("127.0.0.1", server.port(), client_options(5s));
  CHECK(by_address.get_string("name") == "1");
}

TEST_CASE("TCPStore: clients reach the server by IPv6 loopback" *
          skip_unless(has_ipv6_loopback(), "no IPv6 loopback (::1) on this machine")) {
  TCPStore server("", 0, server_options());
  TCPStore by_name(local_hostname(), server.port(), client_options(5s));
  by_name.set("name", "1");
  TCPStore v6("::1", server.port(), client_options(5s));
  CHECK(v6.get_string("name") == "1");
}

TEST_CASE("net_util: resolving names and addresses") {
  auto local = resolve_host("localhost", 80);
  REQUIRE_FALSE(local.empty());
  CHECK(local[0].storage.ss_family == AF_INET);  // IPv4 first
  CHECK(local[0].text == "127.0.0.1:80");
  CHECK(resolve_host("10.1.2.3", 29500)[0].text == "10.1.2.3:29500");
  CHECK(resolve_host("::1", 5)[0].text == "[::1]:5");
  CHECK(host_port("::1", 5) == "[::1]:5");
  CHECK(host_port("node3", 29500) == "node3:29500");
  CHECK_FALSE(local_hostname().empty());
  CHECK(error_of([] { resolve_host("no-such-host.invalid", 1); }).find("cannot resolve host 'no-such-host.invalid'") !=
        std::string::npos);
  int port = find_free_port();
  CHECK(port > 0);
  CHECK(port < 65536);
}

TEST_CASE("TCPStore: loopback round trip time" * doctest::timeout(60)) {
  TCPStore server("127.0.0.1", 0, server_options());
  TCPStore client("127.0.0.1", server.port(), client_options());
  Bytes value(16, 1);
  for (int i = 0; i < 200; ++i) client.set("warm", value);
  double best_set = 1e9, best_get = 1e9;
  constexpr int kIters = 2000;
  for (int round = 0; round < 3; ++round) {
    auto t0 = Clock::now();
    for (int i = 0; i < kIters; ++i) client.set("k", value);
    best_set = std::min(best_set, ms_since(t0) * 1000 / kIters);
    t0 = Clock::now();
    for (int i = 0; i < kIters; ++i) client.get("k");
    best_get = std::min(best_get, ms_since(t0) * 1000 / kIters);
  }
  MESSAGE("TCPStore loopback round trip (best of 3 x ", kIters, "): set ", best_set, " us, get ", best_get, " us");
  CHECK(best_get < 2000);  // sanity only: a loaded 2-core machine is noisy
}
