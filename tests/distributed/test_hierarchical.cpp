// The hierarchical backend (shm inside a node, Gloo between the nodes' leaders): every
// collective with closed-form values on 2 simulated nodes x 2 ranks (and 1 x 2, 2 x 1), the
// same bits on every rank, a bucket larger than shm's chunk, and the error for ranks that do
// not make whole nodes. DDP with it: test_ddp.cpp; on an emulated cluster: docs/benchmarks.md.
#include <chrono>
#include <cstring>

#include "collective_checks.h"
#include "distributed/backends/init.h"
#include "distributed/backends/process_group_hierarchical.h"
#include "distributed/launch/launcher.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

namespace {

// Runs `fn(rank, group)` on `world` spawned ranks in nodes of `local` ranks (LOCAL_WORLD_SIZE).
void on_nodes(int world, int local, const std::function<void(int, ProcessGroup&)>& fn) {
  spawn(world, [fn](int rank) {
    ProcessGroupPtr pg = init_process_group("hierarchical");
    fn(rank, *pg);
    destroy_process_group();
  }, {.timeout = 120s, .env = {{"LOCAL_WORLD_SIZE", std::to_string(local)}}});
}

}  // namespace

TEST_CASE("hierarchical: every collective on 2 nodes x 2 ranks, 1 node x 2 and 2 nodes x 1") {
  for (auto [world, local] : {std::pair{4, 2}, {2, 2}, {2, 1}}) {
    CAPTURE(world);
    CAPTURE(local);
    on_nodes(world, local, [local](int rank, ProcessGroup& pg) {
      auto& h = dynamic_cast<ProcessGroupHierarchical&>(pg);
      GR_CHECK(h.backend_name() == "hierarchical" && h.local_size() == local && h.is_leader() == (rank % local == 0),
               "rank ", rank, ": unexpected layout");
      gr::test::check_collectives(pg);
    });
  }
}

TEST_CASE("hierarchical: a 3 MB all-reduce (several shm chunks) gives every rank the same bits") {
  on_nodes(4, 2, [](int rank, ProcessGroup& pg) {
    Generator gen(17 + rank);
    Tensor x = randn({3 << 18}, kFloat32, &gen), want = x.clone();
    std::vector<Tensor> all(4);
    for (Tensor& t : all) t = empty_like(x);
    pg.allgather(all, x)->wait();
    want = ((all[0] + all[1]) + (all[2] + all[3]));  // node sums first, then across nodes
    pg.allreduce(x)->wait();
    GR_CHECK(test::max_abs_diff(x, want) <= 1e-5, "rank ", rank, ": all-reduce differs from the sum");
    std::vector<Tensor> got(4);
    for (Tensor& t : got) t = empty_like(x);
    pg.allgather(got, x)->wait();
    for (const Tensor& t : got)
      GR_CHECK(std::memcmp(t.data_ptr(), x.data_ptr(), x.nbytes()) == 0, "rank ", rank, ": ranks differ bitwise");
  });
}

// The check runs first in the constructor, before the store is touched, so one rank shows it.
// (Not through spawned ranks: there the first failure reported may be another rank's lost
// store connection, once rank 0, which hosts the store, has thrown and exited.)
TEST_CASE("hierarchical: ranks that do not make whole nodes are an error") {
  CHECK_THROWS_WITH_AS(ProcessGroupHierarchical(nullptr, 0, 4, 3, std::chrono::seconds(1)),
                       doctest::Contains("4 ranks do not make whole nodes of 3 ranks (LOCAL_WORLD_SIZE)"), gr::Error);
}
