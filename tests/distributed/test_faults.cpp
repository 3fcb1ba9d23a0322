// Fault injection: a peer that dies or hangs, a store host that dies, bad environment
// variables, a port in use. Each test checks the error text and how long detection took;
// the "fault-figure:" lines it prints are the figures in docs/reliability.md.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/factory.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/backends/process_group_debug.h"
#include "distributed/store/tcp_store.h"
#include "distributed/store/tcp_store_server.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;
using gr::test::EnvGuard;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What a surviving rank saw: its error and the seconds from the fault to the error, as
// "<seconds>\n<message>" in `path` (written by the forked rank, read by the test).
void report(const std::string& path, double seconds, const std::string& message) {
  gr::test::write_bytes(path, std::to_string(seconds) + "\n" + message);
}

struct Seen {
  double seconds = -1;
  std::string message;
};

Seen read_report(const std::string& path) {
  std::string text = gr::test::read_bytes(path);
  Seen s;
  size_t nl = text.find('\n');
  if (nl == std::string::npos) return s;
  s.seconds = std::stod(text.substr(0, nl));
  s.message = text.substr(nl + 1);
  return s;
}

// Runs spawn() expecting it to fail (a rank dies by design); returns the launcher's error.
// The launcher stops the group when one rank dies (SIGTERM, then SIGKILL after the grace
// period); the survivors ignore SIGTERM here so that they can observe the fault themselves.
std::string spawn_expecting_failure(int n, const std::function<void(int)>& fn) {
  try {
    spawn(n, [&fn](int rank) {
      ::signal(SIGTERM, SIG_IGN);
      fn(rank);
    }, {.timeout = 60s, .grace_period = 20000ms});
  } catch (const gr::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a peer killed during training: the survivor's collective fails at once, naming the dead rank") {
  const std::string path = gr::test::temp_path("faults", "killed_peer");
  std::string launcher = spawn_expecting_failure(2, [path](int rank) {
    InitOptions o;
    o.backend = "gloo";
    o.timeout = 20s;
    ProcessGroupPtr pg = init_process_group(o);
    Tensor x = ones({1000});
    pg->allreduce(x)->wait();  // one good step first
    pg->barrier()->wait();
    if (rank == 1) ::kill(::getpid(), SIGKILL);  // the fault: no exit handlers, no goodbye
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(200ms);  // rank 1 is surely gone
    try {
      pg->allreduce(x)->wait();
      report(path, seconds_since(start), "no error");
    } catch (const gr::Error& e) {
      report(path, seconds_since(start) - 0.2, e.message());
    }
  });
  Seen seen = read_report(path);
  INFO("survivor: ", seen.message, "\nlauncher: ", launcher);
  CHECK(launcher.find("rank 1") != std::string::npos);
  CHECK(launcher.find("SIGKILL") != std::string::npos);
  CHECK(seen.message.find("gloo allreduce") != std::string::npos);
  CHECK(seen.message.find("on rank 0 failed") != std::string::npos);
  CHECK(seen.message.find("is rank 1") != std::string::npos);
  CHECK(seen.seconds >= 0);
  CHECK(seen.seconds < 5);  // far inside the 20 s timeout: the closed connection says it
  std::printf("fault-figure: killed peer (SIGKILL) -> survivor's allreduce failed after %.3f s (timeout 20 s): %s\n",
              seen.seconds, seen.message.c_str());
}

TEST_CASE("a stuck peer: the survivor's collective fails after the group's timeout, not later") {
  const std::string path = gr::test::temp_path("faults", "stuck_peer");
  spawn(2, [path](int rank) {
    InitOptions o;
    o.backend = "gloo";
    o.timeout = 2s;
    ProcessGroupPtr pg = init_process_group(o);
    pg->barrier()->wait();
    if (rank == 1) {  // the fault: alive, connected, but never joins the collective
      std::this_thread::sleep_for(6s);
      std::_Exit(0);
    }
    Tensor x = ones({10});
    auto start = std::chrono::steady_clock::now();
    try {
      pg->allreduce(x)->wait();
      report(path, seconds_since(start), "no error");
    } catch (const gr::Error& e) {
      report(path, seconds_since(start), e.message());
    }
    std::_Exit(0);  // rank 1 is still asleep: skip the group's orderly shutdown
  }, {.timeout = 60s});
  Seen seen = read_report(path);
  INFO("survivor: ", seen.message);
  CHECK(seen.message.find("gloo allreduce") != std::string::npos);
  CHECK(seen.message.find("timeout of 2000 ms") != std::string::npos);
  CHECK(seen.seconds >= 1.9);
  CHECK(seen.seconds < 4);
  std::printf("fault-figure: stuck peer -> survivor's allreduce failed after %.3f s (timeout 2 s): %s\n", seen.seconds,
              seen.message.c_str());
}

TEST_CASE("the store host (rank 0) dies: another rank's store call fails promptly instead of waiting") {
  const std::string path = gr::test::temp_path("faults", "dead_store_host");
  std::string launcher = spawn_expecting_failure(2, [path](int rank) {
    const int port = std::atoi(std::getenv("MASTER_PORT"));  // spawn's free port
    TCPStoreOptions o;
    o.is_server = rank == 0;
    o.world_size = 2;
    o.timeout = 20s;
    TCPStore store("127.0.0.1", port, o);
    // Rank 0 dies only once rank 1 is done with its own start-up calls.
    if (rank == 1) store.set("rank 1 ready", std::string("1"));
    if (rank == 0) {
      store.wait({"rank 1 ready"});
      ::kill(::getpid(), SIGKILL);
    }
    std::this_thread::sleep_for(200ms);
    auto start = std::chrono::steady_clock::now();
    try {
      store.get("never-set");  // would wait 20 s for the key on a live server
      report(path, seconds_since(start), "no error");
    } catch (const gr::Error& e) {
      report(path, seconds_since(start), e.message());
    }
  });
  Seen seen = read_report(path);
  INFO("rank 1: ", seen.message, "\nlauncher: ", launcher);
  CHECK(launcher.find("rank 0") != std::string::npos);
  CHECK_FALSE(seen.message.empty());
  CHECK(seen.message != "no error");
  CHECK(seen.seconds < 15);
  std::printf("fault-figure: store host killed -> rank 1's store get failed after %.3f s (timeout 20 s): %s\n",
              seen.seconds, seen.message.substr(0, 160).c_str());
}

TEST_CASE("bad environment variables are refused, naming the variable and its value") {
  struct Case {
    const char* name;
    const char* value;
    const char* expected;
  };
  const Case cases[] = {
      {"RANK", "one", "RANK='one' is not a non-negative integer"},
      {"RANK", "-1", "RANK='-1' is not a non-negative integer"},
      {"WORLD_SIZE", "2x", "WORLD_SIZE='2x' is not a non-negative integer"},
      {"WORLD_SIZE", "0", "no world size"},
      {"LOCAL_RANK", "first", "LOCAL_RANK='first'"},
      {"MASTER_PORT", "http", "MASTER_PORT='http' is not a non-negative integer"},
      {"MASTER_PORT", "70000", "port 70000 is out of range"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CAPTURE(c.value);
    EnvGuard rank("RANK", "0"), size("WORLD_SIZE", "1"), addr("MASTER_ADDR", "127.0.0.1"), port("MASTER_PORT", "29500");
    EnvGuard bad(c.name, c.value);
    std::string message = gr::test::error_of([] { resolve_rendezvous(InitOptions{}); });
    CHECK(message.find(c.expected) != std::string::npos);
  }
  {
    EnvGuard rank("RANK", "0"), size("WORLD_SIZE", "1"), port("MASTER_PORT", "29500"), addr("MASTER_ADDR", std::nullopt);
    CHECK(gr::test::error_of([] { resolve_rendezvous(InitOptions{}); }).find("MASTER_ADDR is not set") !=
          std::string::npos);
  }
  {
    EnvGuard debug("GRADRING_DISTRIBUTED_DEBUG", "verbose");
    CHECK(gr::test::error_of([] { debug_level(); }).find("'verbose' is not a debug level") != std::string::npos);
  }
  {  // refused by init_process_group before the rendezvous (nobody else would come here)
    EnvGuard spin("GRADRING_WAIT_SPIN_US", "fast");
    InitOptions o;
    o.backend = "gloo";
    o.rank = 0;
    o.world_size = 2;
    o.timeout = std::chrono::seconds(5);
    CHECK(gr::test::error_of([&] { init_process_group(o); })
              .find("GRADRING_WAIT_SPIN_US='fast' is not a whole number of microseconds") != std::string::npos);
    CHECK_FALSE(is_initialized());
  }
  // A network interface that does not exist: Gloo's failure, with the rank and the interface.
  const std::string path = gr::test::temp_path("faults", "bad_iface");
  spawn_expecting_failure(1, [path](int) {
    setenv("GRADRING_SOCKET_IFNAME", "nosuchif0", 1);
    try {
      init_process_group("gloo");
      report(path, 0, "no error");
    } catch (const gr::Error& e) {
      report(path, 0, e.message());
    }
  });
  Seen seen = read_report(path);
  INFO(seen.message);
  CHECK(seen.message.find("interface nosuchif0") != std::string::npos);
}

TEST_CASE("a port in use: the store server refuses it with the port and what to do") {
  // Hold a port with a listening socket of our own.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const int port = ntohs(a.sin_port);

  std::string message = gr::test::error_of([&] { TCPStoreServer server(port); });
  INFO(message);
  CHECK(message.find("cannot listen on port " + std::to_string(port)) != std::string::npos);
  CHECK(message.find("pick another port") != std::string::npos);

  // The same through init_process_group on rank 0 of a 1-rank job with that MASTER_PORT.
  InitOptions o;
  o.backend = "gloo";
  o.rank = 0;
  o.world_size = 1;
  o.init_method = "tcp://127.0.0.1:" + std::to_string(port);
  message = gr::test::error_of([&] { init_process_group(o); });
  INFO(message);
  CHECK(message.find("port " + std::to_string(port)) != std::string::npos);
  ::close(fd);
}
