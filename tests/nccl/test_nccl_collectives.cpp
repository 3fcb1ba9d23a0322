// Every collective of the NCCL group on --ranks N spawned processes, one GPU each, with
// closed-form expected values (rank r contributes r + 1): all dtypes and reduce ops,
// in-place and copying paths, coalesced calls, send/recv, stream-ordered wait() and
// then(), argument errors, and the watchdog turning a missing peer into an error.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/native/copy/copy.h"
#include "cuda_kernels/runtime.h"
#include "distributed/store/file_store.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/backends/nccl/process_group_nccl.h"
#include "nccl_test_util.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;
using gr::test::expect_values;
using gr::test::g_nccl_ranks;

namespace {

// Joins the default NCCL group on this rank's GPU.
ProcessGroupPtr join_nccl(int rank, std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
  cuda::set_device(rank);
  InitOptions o;
  o.backend = "nccl";
  o.timeout = timeout;
  return init_process_group(o);
}

Tensor on(int rank, const Tensor& t) { return t.to(test::rank_device(rank)); }

void check_reductions(ProcessGroup& pg) {
  const int r = pg.rank(), n = pg.size();
  const double rr = r + 1, sum = n * (n + 1) / 2.0;
  double prod = 1;
  for (int k = 1; k <= n; ++k) prod *= k;
  for (ScalarType t : {kFloat32, kBFloat16, kFloat16, kInt64, kUInt8}) {
    struct Case {
      ReduceOp op;
      double want;
    };
    std::vector<Case> cases = {{ReduceOp::Sum, sum}, {ReduceOp::Min, 1}, {ReduceOp::Max, double(n)},
                               {ReduceOp::Product, prod}};
    if (is_floating_point(t)) cases.push_back({ReduceOp::Avg, sum / n});
    for (const Case& c : cases) {
      Tensor x = on(r, full({5, 3}, rr, t));
      pg.allreduce(x, c.op)->wait();  // stream-ordered: the copy to the host below runs after it
      expect_values(x, full({5, 3}, c.want, kFloat64),
                    "allreduce " + std::string(dtype_name(t)) + " " + reduce_op_name(c.op), r);
      for (int root = 0; root < n; ++root) {
        Tensor y = on(r, full({7}, rr, t));
        pg.reduce(y, root, c.op)->wait();
        if (r == root) expect_values(y, full({7}, c.want, kFloat64), "reduce to " + std::to_string(root), r);
      }
    }
  }
  // Large enough for several NCCL chunks and channels, per-element values.
  Tensor big = on(r, arange(3000000, kFloat32) * static_cast<float>(rr));
  pg.allreduce(big)->wait();
  expect_values(big, arange(3000000, kFloat64) * sum, "large allreduce", r);
}

void check_data_movement(ProcessGroup& pg) {
  const int r = pg.rank(), n = pg.size();
  const double rr = r + 1, sum = n * (n + 1) / 2.0;
  for (int root = 0; root < n; ++root) {
    Tensor x = on(r, full({9}, rr, kBFloat16));
    pg.broadcast(x, root)->wait();
    expect_values(x, full({9}, root + 1.0, kFloat64), "broadcast from " + std::to_string(root), r);
  }
  {  // allgather into separate tensors (a flat buffer, then copies) ...
    std::vector<Tensor> outs;
    for (int k = 0; k < n; ++k) outs.push_back(on(r, empty({2, 3}, kInt64)));
    pg.allgather(outs, on(r, full({2, 3}, static_cast<int64_t>(rr), kInt64)))->wait();
    for (int k = 0; k < n; ++k) expect_values(outs[k], full({2, 3}, k + 1.0, kFloat64), "allgather", r);
  }
  {  // ... and into views of one buffer (straight into it)
    Tensor flat = on(r, zeros({n * 4}, kFloat32));
    std::vector<Tensor> outs;
    for (int k = 0; k < n; ++k) outs.push_back(flat.narrow(0, k * 4, 4));
    pg.allgather(outs, on(r, full({4}, rr, kFloat32)))->wait();
    for (int k = 0; k < n; ++k) expect_values(outs[k], full({4}, k + 1.0, kFloat64), "allgather into views", r);
  }
  for (bool views : {false, true}) {  // reduce_scatter: slot k of rank r holds (r+1)(k+1)
    Tensor flat = on(r, empty({n * 4}, kFloat32));
    std::vector<Tensor> ins;
    for (int k = 0; k < n; ++k) {
      Tensor v = on(r, full({4}, rr * (k + 1), kFloat32));
      if (views) flat.narrow(0, k * 4, 4).copy_(v), v = flat.narrow(0, k * 4, 4);
      ins.push_back(v);
    }
    Tensor out = on(r, empty({4}, kFloat32));
    pg.reduce_scatter(out, ins, ReduceOp::Sum)->wait();
    expect_values(out, full({4}, sum * (r + 1), kFloat64), views ? "reduce_scatter of views" : "reduce_scatter", r);
    pg.reduce_scatter(out, ins, ReduceOp::Avg)->wait();
    expect_values(out, full({4}, sum * (r + 1) / n, kFloat64), "reduce_scatter avg", r);
  }
  if (n > 1) {  // a ring: everyone sends to the next rank and receives from the previous
    Tensor out = on(r, full({6}, rr, kFloat32)), in = on(r, zeros({6}, kFloat32));
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    WorkPtr a = r % 2 == 0 ? pg.send(out, next, 0) : pg.recv(in, prev, 0);
    WorkPtr b = r % 2 == 0 ? pg.recv(in, prev, 0) : pg.send(out, next, 0);
    a->wait();
    b->wait();
    expect_values(in, full({6}, prev + 1.0, kFloat64), "send/recv ring", r);
  }
}

}  // namespace

TEST_SUITE("nccl") {
  TEST_CASE("every collective matches its closed-form result") {
    spawn(g_nccl_ranks, [](int rank) {
      ProcessGroupPtr pg = join_nccl(rank);
      GR_CHECK(pg->backend_name() == "nccl" && pg->size() == g_nccl_ranks, "rank ", rank, ": wrong default group");
      check_reductions(*pg);
      check_data_movement(*pg);
      auto* nccl = dynamic_cast<ProcessGroupNCCL*>(pg.get());
      GR_CHECK(nccl && nccl->device() == rank && nccl->stream().handle() != nullptr, "rank ", rank,
               ": not on cuda:", rank);
      destroy_process_group();
    }, {.timeout = 300s});
  }

  TEST_CASE("coalesced all-reduce, collectives in flight, barrier, synchronize and is_completed") {
    spawn(g_nccl_ranks, [](int rank) {
      ProcessGroupPtr pg = join_nccl(rank);
      auto& nccl = dynamic_cast<ProcessGroupNCCL&>(*pg);
      const int n = pg->size();
      const double rr = rank + 1, sum = n * (n + 1) / 2.0;
      std::vector<Tensor> list = {on(rank, full({3}, rr, kFloat32)), on(rank, full({2, 2}, rr, kInt64)),
                                  on(rank, full({1000}, rr, kBFloat16))};
      nccl.allreduce_coalesced(list, ReduceOp::Sum)->wait();
      for (const Tensor& t : list) expect_values(t, full(t.sizes().vec(), sum, kFloat64), "allreduce_coalesced", rank);

      std::vector<Tensor> xs;
      std::vector<WorkPtr> works;
      for (int i = 0; i < 40; ++i) {
        xs.push_back(on(rank, full({(i % 5) * 70000 + 3}, rr * (i + 1), kFloat32)));
        works.push_back(i % 7 == 3 ? pg->broadcast(xs.back(), i % n) : pg->allreduce(xs.back()));
      }
      pg->barrier()->wait();  // blocks the host: everything issued before it has completed
      for (int i = 0; i < 40; ++i) {
        GR_CHECK(works[i]->is_completed() && works[i]->is_success(), "rank ", rank, ": collective ", i,
                 " not completed after the barrier");
        const double want = i % 7 == 3 ? (i % n + 1.0) * (i + 1) : sum * (i + 1);
        expect_values(xs[i], full(xs[i].sizes().vec(), want, kFloat64), "collective " + std::to_string(i), rank);
      }
      Tensor y = on(rank, full({8}, rr, kFloat32));
      WorkPtr w = pg->allreduce(y);
      w->synchronize();
      GR_CHECK(w->is_completed(), "rank ", rank, ": synchronize() returned before completion");
      GR_CHECK(nccl.in_flight() == 0, "rank ", rank, ": ", nccl.in_flight(), " collectives still in flight");
      destroy_process_group();
    }, {.timeout = 180s});
  }

  TEST_CASE("new_group of NCCL ranks, and a group created eagerly on a given device") {
    const std::string store_path = test::temp_path("nccl_eager", "store");  // chosen here, shared by the ranks
    spawn(g_nccl_ranks, [store_path](int rank) {
      ProcessGroupPtr pg = join_nccl(rank);
      ProcessGroupPtr first = new_group({0});
      GR_CHECK((rank == 0) == (first != nullptr), "rank ", rank, ": wrong new_group membership");
      if (first) {
        Tensor x = on(rank, full({3}, 5.0, kFloat32));
        first->allreduce(x)->wait();
        expect_values(x, full({3}, 5.0, kFloat64), "allreduce on a one-rank new_group", rank);
      }
      NCCLOptions o;
      o.device_id = rank;
      ProcessGroupNCCL eager(std::make_shared<FileStore>(store_path, pg->size()), rank, pg->size(), o);
      GR_CHECK(eager.device() == rank, "rank ", rank, ": the eager group is on cuda:", eager.device());
      Tensor y = on(rank, full({3}, rank + 1.0, kFloat32));
      eager.allreduce(y, ReduceOp::Max)->wait();
      expect_values(y, full({3}, double(pg->size()), kFloat64), "allreduce max on the eager group", rank);
      destroy_process_group();
    }, {.timeout = 120s});
  }

  TEST_CASE("then() post-processing is ordered after the collective (the compression hooks' pattern)") {
    spawn(g_nccl_ranks, [](int rank) {
      ProcessGroupPtr pg = join_nccl(rank);
      const int n = pg->size();
      for (int i = 0; i < 20; ++i) {
        Tensor x = on(rank, full({100000}, rank + 1.0, kFloat32));
        Tensor half = x.to(kFloat16);
        WorkPtr w = pg->allreduce(half);
        Tensor dst = x;
        w->then([half, dst] { native::copy_(dst, half); });
        if (i % 2) std::this_thread::sleep_for(5ms);  // sometimes the watchdog finishes it first
        w->wait();
        expect_values(x, full({100000}, n * (n + 1) / 2.0, kFloat64), "then() copy-back", rank);
      }
      destroy_process_group();
    }, {.timeout = 120s});
  }

  TEST_CASE("CPU, strided and mismatched tensors are refused before anything is sent") {
    spawn(g_nccl_ranks, [](int rank) {
      ProcessGroupPtr pg = join_nccl(rank);
      auto message = [](auto&& f) {
        try {
          f();
        } catch (const gr::Error& e) {
          return std::string(e.what());
        }
        return std::string();
      };
      Tensor cpu = zeros({4});
      std::string m = message([&] { pg->allreduce(cpu); });
      GR_CHECK(m.find("tensors must be CUDA tensors, got a cpu tensor") != std::string::npos, "got: ", m);
      Tensor strided = on(rank, zeros({4, 4})).t();
      m = message([&] { pg->broadcast(strided, 0); });
      GR_CHECK(m.find("nccl broadcast on rank " + std::to_string(rank) + ": tensors must be contiguous") !=
                   std::string::npos, "got: ", m);
      Tensor ints = on(rank, zeros({4}, kInt64));
      m = message([&] { pg->allreduce(ints, ReduceOp::Avg); });
      GR_CHECK(m.find("avg needs a floating point tensor") != std::string::npos, "got: ", m);
      // The group still works after refused calls.
      Tensor y = on(rank, full({4}, 1.0, kFloat32));
      pg->allreduce(y)->wait();
      expect_values(y, full({4}, double(pg->size()), kFloat64), "allreduce after refused calls", rank);
      destroy_process_group();
    }, {.timeout = 120s});
  }

  TEST_CASE("GRADRING_DISTRIBUTED_DEBUG=DETAIL checks NCCL collectives on a gloo companion group") {
    if (g_nccl_ranks < 2) return;
    spawn(2, [](int rank) {
      ::setenv("GRADRING_DISTRIBUTED_DEBUG", "DETAIL", 1);
      ProcessGroupPtr pg = join_nccl(rank, 30s);
      Tensor x = on(rank, full({4}, rank + 1.0, kFloat32));
      pg->allreduce(x)->wait();
      expect_values(x, full({4}, 3.0, kFloat64), "allreduce under DETAIL", rank);
      Tensor y = on(rank, zeros({rank == 0 ? 4 : 5}, kFloat32));
      std::string m;
      try {
        pg->allreduce(y);
      } catch (const gr::Error& e) {
        m = e.what();
      }
      GR_CHECK(m.find("differs across ranks: rank 0 called allreduce(sum) float32 [4], rank 1 called allreduce(sum) "
                      "float32 [5]") != std::string::npos,
               "rank ", rank, " got: '", m, "'");
      destroy_process_group();
    }, {.timeout = 120s});
  }

  TEST_CASE("a rank that never joins a collective: the watchdog aborts it and callers get an error naming it") {
    if (g_nccl_ranks < 2) return;
    spawn(2, [](int rank) {
      ProcessGroupPtr pg = join_nccl(rank, 30s);
      Tensor x = on(rank, ones({4}));
      pg->allreduce(x)->synchronize();  // both ranks: the communicator exists
      if (rank == 1) {
        std::this_thread::sleep_for(15s);  // alive, but never issues the second all-reduce
        return;
      }
      pg->set_timeout(3s);
      const auto start = std::chrono::steady_clock::now();
      WorkPtr w = pg->allreduce(x);
      std::string m;
      try {
        w->synchronize();
      } catch (const gr::Error& e) {
        m = e.what();
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      GR_CHECK(m.find("nccl allreduce (sum) float32 [4]") != std::string::npos &&
                   m.find("not completed after 3000 ms") != std::string::npos,
               "rank 0 got: '", m, "'");
      GR_CHECK(s < 12, "rank 0: the watchdog took ", s, " s");
      try {
        pg->allreduce(x);
        GR_ERROR("rank 0: the aborted group accepted another collective");
      } catch (const gr::Error& e) {
        GR_CHECK(std::string(e.what()).find("cannot be used any more") != std::string::npos, "got: ", e.what());
      }
      destroy_process_group();
    }, {.timeout = 90s});
  }
}
