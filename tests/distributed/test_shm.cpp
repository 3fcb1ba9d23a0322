// The shm backend: every collective on 1, 2 and 4 ranks (closed-form values, one-chunk and
// many-chunk rounds), bit-identical sums across ranks, the segment's name removed after the
// rendezvous, and its errors: mismatched collectives, a rank that exits, a rank that never
// comes, a message with the wrong tag, a bad chunk size.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "collective_checks.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/backends/process_group_shm.h"
#include "distributed/backends/queued_process_group.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

namespace {

// Runs `fn(rank)` on `n` spawned ranks of the shm backend; `timeout` is the group's.
void on_shm_ranks(int n, const std::function<void(int, ProcessGroup&)>& fn, std::chrono::milliseconds timeout = 60s,
                  EnvVars env = {}) {
  spawn(n, [fn, timeout](int rank) {
    InitOptions o;
    o.backend = "shm";
    o.timeout = timeout;
    ProcessGroupPtr pg = init_process_group(o);
    fn(rank, *pg);
    destroy_process_group();
  }, {.timeout = 120s, .env = std::move(env)});
}

// Runs `fn` and returns its error message (empty if it did not throw).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const gr::Error& e) {
    return e.what();
  }
  return {};
}

void require_contains(const std::string& message, const std::string& part, int rank) {
  GR_CHECK(message.find(part) != std::string::npos, "rank ", rank, ": expected an error containing '", part,
           "', got: '", message, "'");
}

}  // namespace

TEST_CASE("shm: every collective on 1, 2 and 4 ranks, in one-chunk and many-chunk rounds") {
  for (int n : {1, 2, 4}) {
    CAPTURE(n);
    on_shm_ranks(n, [](int, ProcessGroup& pg) {
      GR_CHECK(pg.backend_name() == "shm", "wrong backend ", pg.backend_name());
      gr::test::check_collectives(pg);
    });
  }
  // 4 KiB chunks: the 12 MB all-reduce of check_collectives takes 3000 rounds, and a 6-element
  // message still fits one chunk.
  on_shm_ranks(2, [](int, ProcessGroup& pg) {
    GR_CHECK(dynamic_cast<ProcessGroupShm&>(pg).chunk_bytes() == 4096, "GRADRING_SHM_CHUNK_KB was not applied");
    gr::test::check_collectives(pg);
    // A message of several chunks.
    Tensor big = arange(5000, kFloat64), got = zeros({5000}, kFloat64);
    if (pg.rank() == 0) pg.send(big, 1, 3)->wait();
    if (pg.rank() == 1) {
      pg.recv(got, 0, 3)->wait();
      gr::test::expect_equal(got, big, "multi-chunk send/recv", 1);
    }
  }, 60s, {{"GRADRING_SHM_CHUNK_KB", "4"}});
}

// Which thread runs a job is up to the scheduler (the worker wins when it wakes first), so
// this checks that results and order hold with both, and prints how often each ran one.
TEST_CASE("shm: a waiting thread may run queued collectives itself, in order, and results stay right") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    std::atomic<int> by_waiter = 0, by_worker = 0;
    for (int round = 0; round < 100; ++round) {
      // A few collectives in flight, waited for in reverse order: the waiter of the last runs
      // the earlier ones first (or the worker does), never out of order.
      std::vector<Tensor> xs;
      std::vector<WorkPtr> works;
      for (int i = 0; i < 4; ++i) {
        xs.push_back(full({1000 * (i + 1)}, (rank + 1.0) * (round + i), kFloat32));
        works.push_back(pg.allreduce(xs.back()));
        works.back()->then([&] { ++(QueuedProcessGroup::on_waiting_thread() ? by_waiter : by_worker); });
      }
      for (int i = 3; i >= 0; --i) works[i]->wait();
      for (int i = 0; i < 4; ++i) {
        const double want = 3.0 * (round + i);
        GR_CHECK(xs[i].min().item<double>() == want && xs[i].max().item<double>() == want, "rank ", rank, ": round ",
                 round, " collective ", i, " got ", xs[i].min().item<double>(), " want ", want);
      }
    }
    std::printf("rank %d: %d collectives run by the waiting thread, %d by the worker\n", rank, by_waiter.load(), by_worker.load());
    GR_CHECK(by_waiter + by_worker == 400, "rank ", rank, ": ", by_waiter + by_worker, " callbacks, want 400");
  });
}

TEST_CASE("shm: every rank gets bitwise the same sum, the sum in rank order") {
  on_shm_ranks(4, [](int rank, ProcessGroup& pg) {
    auto data_of = [](int r) {
      Generator g(100 + r);
      return randn({300000}, &g, kFloat32);
    };
    Tensor x = data_of(rank);
    pg.allreduce(x)->wait();
    Tensor want = data_of(0);
    for (int r = 1; r < 4; ++r) want = want + data_of(r);
    GR_CHECK(x.equal(want), "rank ", rank, ": the sum differs from the sum in rank order");
    std::vector<Tensor> all;
    for (int r = 0; r < 4; ++r) all.push_back(empty({300000}, kFloat32));
    pg.allgather(all, x)->wait();
    for (int r = 0; r < 4; ++r)
      GR_CHECK(all[r].equal(x), "rank ", rank, ": rank ", r, "'s sum differs from this rank's");
  });
}

TEST_CASE("shm: new_group makes a segment per subgroup; non-members get null") {
  spawn(4, [](int rank) {
    init_process_group("shm");
    gr::test::check_odd_even_groups(rank);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("shm: the segment's name is gone from /dev/shm once every rank has joined") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    auto& shm = dynamic_cast<ProcessGroupShm&>(pg);
    pg.barrier()->wait();  // rank 0 removed the name before its constructor returned
    const std::string name = shm.segment_name();
    GR_CHECK(rank != 0 || name.rfind("/gradring-shm-", 0) == 0, "unexpected segment name '", name, "'");
    const std::string path = "/dev/shm" + (name.empty() ? std::string("/gradring-shm-none") : name);
    GR_CHECK(::access(path.c_str(), F_OK) != 0, "rank ", rank, ": ", path, " still exists");
    Tensor x = full({3}, 1.0, kFloat32);
    pg.allreduce(x)->wait();  // the memory itself lives on
    GR_CHECK(x[0].item<double>() == 2, "rank ", rank, ": wrong sum after the name was removed");
  });
}

TEST_CASE("shm: ranks that issue different collectives fail naming both calls") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    Tensor x = full({10}, 1.0, kFloat32);
    std::string message = error_of([&] {
      if (rank == 0) pg.allreduce(x)->wait();
      else pg.broadcast(x, 0)->wait();
    });
    require_contains(message, "ranks issued different collectives", rank);
    require_contains(message, "#0 allreduce (sum) float32 of 40 bytes", rank);
    require_contains(message, "#0 broadcast float32 of 40 bytes root 0", rank);
    // The group is unusable afterwards, and says so.
    require_contains(error_of([&] { pg.barrier()->wait(); }), "an earlier collective of this group failed", rank);
  });
}

TEST_CASE("shm: a rank that exits makes the others fail at once, naming it") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    if (rank == 1) ::_exit(0);  // leaves without a word
    auto start = std::chrono::steady_clock::now();
    Tensor x = full({10}, 1.0, kFloat32);
    std::string message = error_of([&] { pg.allreduce(x)->wait(); });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    require_contains(message, "rank 1 (pid ", 0);
    require_contains(message, "has exited while this rank waited for rank 1 to reach #0 allreduce", 0);
    GR_CHECK(seconds < 10, "took ", seconds, " s to notice (the group's timeout is 60 s)");
  });
}

TEST_CASE("shm: a rank that never comes to a collective makes the others time out, naming it") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    if (rank == 1) {
      std::this_thread::sleep_for(3s);  // alive, but issues nothing
      return;
    }
    auto start = std::chrono::steady_clock::now();
    Tensor x = full({10}, 1.0, kFloat32);
    std::string message = error_of([&] { pg.allreduce(x)->wait(); });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    require_contains(message, "no progress for 1000 ms waiting for rank 1 to reach #0 allreduce", 0);
    GR_CHECK(seconds < 2.5, "took ", seconds, " s for a 1 s timeout");
  }, 1s);
}

TEST_CASE("shm: a message with another tag than the receive expects is an error naming both") {
  on_shm_ranks(2, [](int rank, ProcessGroup& pg) {
    Tensor x = full({4}, 1.0, kFloat64);
    if (rank == 0) {
      pg.send(x, 1, 5)->wait();  // fits a chunk: completes without the receiver
      return;
    }
    std::string message = error_of([&] { pg.recv(x, 0, 6)->wait(); });
    require_contains(message, "expected a message from rank 0 (tag 6) of 32 bytes, but the next message from rank 0 "
                              "has tag 5 and 32 bytes", 1);
  });
}

TEST_CASE("shm: GRADRING_SHM_CHUNK_KB is checked") {
  CHECK(ProcessGroupShm::parse_chunk_kb(nullptr) == (size_t(1) << 20));
  CHECK(ProcessGroupShm::parse_chunk_kb("64") == 65536);
  for (const char* bad : {"0", "3", "-1", "1.5", "lots", "2000000"})
    CHECK_THROWS_WITH_AS(ProcessGroupShm::parse_chunk_kb(bad), doctest::Contains("GRADRING_SHM_CHUNK_KB='"), gr::Error);
}
