// Every collective of the Gloo process group on 2 and 4 spawned ranks (closed-form values),
// new_group, the default group API, timeouts, and rendezvous errors.
#include <chrono>

#include "collective_checks.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

TEST_CASE("gloo: every collective on 2 and 4 ranks") {
  for (int n : {2, 4}) {
    CAPTURE(n);
    spawn(n, [](int) {
      ProcessGroupPtr pg = init_process_group("gloo");
      GR_CHECK(pg->size() == get_world_size() && pg->rank() == get_rank(), "default group mismatch");
      gr::test::check_collectives(*pg);
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

TEST_CASE("gloo: many collectives in flight at once (two worker threads) each get their own result") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_process_group("gloo");
    std::vector<Tensor> xs;
    std::vector<WorkPtr> works;
    for (int i = 0; i < 40; ++i) {  // sizes from a few elements to several Gloo segments
      xs.push_back(full({(i % 5) * 70000 + 3}, (rank + 1.0) * (i + 1), kFloat32));
      works.push_back(i % 7 == 3 ? pg->broadcast(xs.back(), i % 2) : pg->allreduce(xs.back(), ReduceOp::Sum));
    }
    WorkPtr fence = pg->barrier();
    fence->wait();
    for (int i = 0; i < 40; ++i) {
      // The barrier finished, so every collective issued before it has finished too.
      GR_CHECK(works[i]->is_completed(), "rank ", rank, ": collective ", i, " not done after the barrier");
      const double want = i % 7 == 3 ? (i % 2 + 1.0) * (i + 1) : 3.0 * (i + 1);
      GR_CHECK(xs[i].min().item<double>() == want && xs[i].max().item<double>() == want, "rank ", rank,
               ": collective ", i, " got ", xs[i].min().item<double>(), " want ", want);
    }
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("gloo: new_group of some ranks, and non-members get null") {
  spawn(4, [](int rank) {
    init_process_group("gloo");
    gr::test::check_odd_even_groups(rank);
    destroy_process_group();
  });
}

TEST_CASE("rendezvous settings are checked with clear messages") {
  InitOptions o;
  o.rank = 2;
  o.world_size = 2;
  CHECK_THROWS_WITH_AS(resolve_rendezvous(o), doctest::Contains("RANK (2) must be smaller than WORLD_SIZE (2)"),
                       gr::Error);
  o.rank = 0;
  o.init_method = "tcp://nohost";
  CHECK_THROWS_WITH_AS(resolve_rendezvous(o), doctest::Contains("tcp://host:port"), gr::Error);
  o.init_method = "udp://x:1";
  CHECK_THROWS_WITH_AS(resolve_rendezvous(o), doctest::Contains("unknown init_method"), gr::Error);
  o.init_method = "tcp://127.0.0.1:70000";
  CHECK_THROWS_WITH_AS(resolve_rendezvous(o), doctest::Contains("out of range"), gr::Error);
  CHECK_THROWS_WITH_AS(init_process_group(InitOptions{.backend = "carrier-pigeon"}),
                       doctest::Contains("unknown backend 'carrier-pigeon'"), gr::Error);
  CHECK_THROWS_WITH_AS(default_group(), doctest::Contains("init_process_group() first"), gr::Error);
}

TEST_CASE("a rank that never arrives makes the others fail within the timeout, naming what they waited for") {
  // World size 2, but only rank 0 exists: its rendezvous must time out, not hang.
  std::string message;
  auto start = std::chrono::steady_clock::now();
  try {
    spawn(1, [](int) {
      InitOptions o;
      o.backend = "gloo";
      o.world_size = 2;
      o.timeout = 2s;
      init_process_group(o);
    }, {.timeout = 60s});
  } catch (const gr::Error& e) {
    message = e.what();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("message: ", message);
  CHECK_FALSE(message.empty());
  CHECK(seconds < 30);
  CHECK(message.find("rank 0 waited 2 s for rank(s) 1 of 2 to join") != std::string::npos);
}
