// ZeroRedundancyOptimizer (ZeRO-1), the optimizer in backward and ZeRO-2 (shard_gradients)
// on 1, 2 and 4 spawned ranks (gloo and shm) against plain DDP with the full optimizer
// (zero_checks.h; mpi/mpi_check.cpp runs the same checks on MPI): parameters equal after K
// steps (SGD with momentum, Adam, AdamW, float64, uneven parameter sizes, several buckets),
// the consolidated state equal to the full optimizer's, memory bounds, sharded snapshots
// resuming bit-exact, a shard refused on another world size (a consolidated state re-sharded
// instead), the refused combinations and the trace spans.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "distributed/backends/init.h"
#include "distributed/ddp/ddp.h"
#include "core/profiler.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "distributed/launch/launcher.h"
#include "nn/snapshot.h"
#include "test_util.h"
#include "zero_checks.h"

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using namespace std::chrono_literals;
using namespace gr::test;  // zero_checks.h: the models, optimizers and checks

TEST_CASE("ZeRO partition: largest first to the least loaded rank, deterministic") {
  // 100 -> r0, 60 -> r1, 50 -> r1 (110), 40 -> r0 (140), 10 -> r1 (120).
  CHECK(partition_parameters({40, 100, 10, 60, 50}, 2) == std::vector<int>({0, 0, 1, 1, 1}));
  CHECK(partition_parameters({8, 8, 8, 8}, 3) == std::vector<int>({0, 1, 2, 0}));
  CHECK(partition_parameters({5, 7}, 4) == std::vector<int>({1, 0}));  // ranks 2 and 3 own nothing
  CHECK(partition_parameters({5, 7}, 1) == std::vector<int>({0, 0}));
  CHECK_THROWS_WITH_AS(partition_parameters({1}, 0), doctest::Contains("world_size must be at least 1"), gr::Error);
}

TEST_CASE("ZeRO-1 on 2 and 4 ranks equals DDP with the full optimizer, bitwise (gloo and shm; SGD, Adam, AdamW)") {
  for (const char* backend : {"gloo", "shm"})
    for (int world : {2, 4}) {
      CAPTURE(backend);
      CAPTURE(world);
      spawn(world, [world, backend](int rank) {
        init_process_group(backend);
        for (Kind kind : {Kind::SGD, Kind::Adam, Kind::AdamW}) {
          // Uneven sizes in one bucket and in buckets of 48 bytes (several all-gathers).
          check_zero_equals_ddp<Uneven>(rank, world, kind, 25, false);
          check_zero_equals_ddp<Uneven>(rank, world, kind, 48.0 / (1 << 20), false);
          check_zero_equals_ddp<Deep>(rank, world, kind, 25, true);
        }
        destroy_process_group();
      }, {.timeout = 180s});
    }
}

TEST_CASE("ZeRO-1 on one rank is the wrapped optimizer") {
  spawn(1, [](int rank) {
    init_process_group("gloo");
    check_zero_equals_ddp<Uneven>(rank, 1, Kind::Adam, 25, false);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("ZeRO-1 prints its partition at GRADRING_DISTRIBUTED_DEBUG=INFO and follows the groups' lr") {
  spawn(2, [](int rank) {
    const std::string log = "/tmp/gradring_zero_info_" + std::to_string(::getppid()) + "_rank" + std::to_string(rank);
    ::setenv("GRADRING_DISTRIBUTED_DEBUG", "INFO", 1);
    GR_CHECK(std::freopen(log.c_str(), "w", stderr) != nullptr, "cannot redirect stderr");
    init_process_group("gloo");
    Uneven model;
    model->to(kFloat64);
    ZeroRedundancyOptimizer zero(model->parameters(), factory_of(Kind::SGD));
    std::fflush(stderr);
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // 1120 -> r0, 960 -> r1, 168 -> r1, 160 -> r0, 56 -> r1, 24 -> r1.
    GR_CHECK(text.find("ZeroRedundancyOptimizer (SGD): 6 parameters, 2488 bytes over 2 rank(s)") != std::string::npos &&
                 text.find("rank 0: 2 parameter(s), 1280 bytes") != std::string::npos &&
                 text.find("rank 1: 4 parameter(s), 1208 bytes") != std::string::npos,
             "rank ", rank, ": INFO log lacks the partition:\n", text);
    // A scheduler writes the lr into the ZeRO optimizer's groups; the local one follows.
    zero.param_groups()[0].set_lr(0.0);
    const Tensor before = model->fc1->weight.clone();
    model->fc1->weight.mutable_grad() = ones_like(model->fc1->weight);
    for (Tensor& p : model->parameters())
      if (!p.grad().defined()) p.mutable_grad() = ones_like(p);
    zero.step();
    GR_CHECK(max_abs_diff(model->fc1->weight, before) == 0, "rank ", rank, ": lr 0 still moved fc1.weight");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("ZeRO-1 sharded snapshots resume bit-exact; a shard is refused on another world size, a consolidated state re-shards") {
  const std::string dir = test::temp_path("gradring_zero_snap", "");
  const int steps = 6, cut = 3;
  spawn(2, [&](int rank) {
    init_process_group("shm");
    Data data = make_data(steps, 8);
    // Uninterrupted run; the snapshot after `cut` steps, one file per rank, plus the
    // consolidated state (on rank 0) for the re-shard below.
    Uneven a;
    a->to(kFloat64);
    DistributedDataParallel ddp_a(a, default_group());
    ZeroRedundancyOptimizer zero_a(ddp_a.parameters(), factory_of(Kind::Adam));
    for (int s = 0; s < steps; ++s) {
      if (s == cut) {
        Snapshot snap = capture_snapshot(*a);
        snap.optimizer = zero_a.local_state_dict();
        snap.world_size = 2;
        snap.global_step = s;
        save_snapshot(dir + "/rank" + std::to_string(rank) + ".snap", snap);
        zero_a.consolidate_state_dict(0);
        if (rank == 0) {
          snap.optimizer = zero_a.state_dict();
          save_snapshot(dir + "/full.snap", snap);
        }
      }
      train_step(ddp_a, zero_a, data, s, rank, 2);
    }
    // A fresh model and optimizer (other random weights) resume from this rank's shard.
    Uneven b;
    b->to(kFloat64);
    DistributedDataParallel ddp_b(b, default_group());
    ZeroRedundancyOptimizer zero_b(ddp_b.parameters(), factory_of(Kind::Adam));
    const Snapshot snap = load_snapshot(dir + "/rank" + std::to_string(rank) + ".snap", 2);
    restore_snapshot(snap, *b, &zero_b);
    for (int s = static_cast<int>(snap.global_step); s < steps; ++s) train_step(ddp_b, zero_b, data, s, rank, 2);
    require_same_params(*b, *a, 0.0, "resumed from a sharded snapshot on rank " + std::to_string(rank));
    // The other rank's shard is refused, naming both places.
    const Snapshot other = load_snapshot(dir + "/rank" + std::to_string(1 - rank) + ".snap", 2);
    bool threw = false;
    try {
      zero_b.load_state_dict(other.optimizer);
    } catch (const gr::Error& e) {
      const std::string m = e.what();
      threw = m.find("shard of rank " + std::to_string(1 - rank) + " of a world of 2") != std::string::npos &&
              m.find("consolidate_state_dict") != std::string::npos;
    }
    GR_CHECK(threw, "rank ", rank, ": loading another rank's shard must fail with a clear error");
    if (rank == 0) save(*a, dir + "/final.st");
    destroy_process_group();
  }, {.timeout = 120s});

  spawn(4, [&](int rank) {
    init_process_group("gloo");
    Data data = make_data(steps, 8);
    Uneven m;
    m->to(kFloat64);
    DistributedDataParallel ddp(m, default_group());
    ZeroRedundancyOptimizer zero(ddp.parameters(), factory_of(Kind::Adam));
    // A 2-rank shard on 4 ranks: refused.
    bool threw = false;
    try {
      zero.load_state_dict(load_snapshot(dir + "/rank0.snap").optimizer);
    } catch (const gr::Error& e) {
      threw = std::string(e.what()).find("of a world of 2 ranks, but this is rank") != std::string::npos;
    }
    GR_CHECK(threw, "rank ", rank, ": a 2-rank shard must be refused on 4 ranks");
    // The consolidated state re-shards: 4 ranks finish the run (the same global batches).
    const Snapshot full = load_snapshot(dir + "/full.snap");
    restore_snapshot(full, *m, &zero);
    for (int s = cut; s < steps; ++s) train_step(ddp, zero, data, s, rank, 4);
    Uneven want;
    want->to(kFloat64);
    load(want, dir + "/final.st");
    require_same_params(*m, *want, 1e-12, "re-sharded from 2 to 4 ranks on rank " + std::to_string(rank));
    destroy_process_group();
  }, {.timeout = 120s});
}

// ---- The optimizer in backward and ZeRO-2 (DDP's shard_gradients) ----


TEST_CASE("Optimizer in backward equals DDP + step, bitwise (2 and 4 ranks, gloo and shm; SGD, Adam, AdamW; no_sync)") {
  for (const char* backend : {"gloo", "shm"})
    for (int world : {2, 4}) {
      CAPTURE(backend);
      CAPTURE(world);
      spawn(world, [world, backend](int rank) {
        init_process_group(backend);
        for (Kind kind : {Kind::SGD, Kind::Adam, Kind::AdamW}) {
          check_in_backward_equals_ddp<Uneven>(rank, world, kind, false, 25, 0.0);
          check_in_backward_equals_ddp<Uneven>(rank, world, kind, false, 1e-9, 0.0);  // a bucket per parameter
        }
        check_in_backward_equals_ddp<Deep>(rank, world, Kind::Adam, false, 1e-9, 0.0, /*micro=*/3);
        destroy_process_group();
      }, {.timeout = 180s});
    }
}

TEST_CASE("ZeRO-2 (shard_gradients), with and without gather_in_forward, equals DDP + the full optimizer: bitwise on 1 and 2 ranks, 1e-12 on 4 (gloo and shm; no_sync; reads between steps)") {
  for (const char* backend : {"gloo", "shm"})
    for (int world : {1, 2, 4}) {
      CAPTURE(backend);
      CAPTURE(world);
      spawn(world, [world, backend](int rank) {
        init_process_group(backend);
        // Two ranks sum in one order whatever the collective (a + b == b + a): bitwise. Four
        // ranks' all-reduce and reduce-scatter add in different orders.
        const double exact = world <= 2 ? 0.0 : 1e-12;
        for (Kind kind : {Kind::SGD, Kind::Adam, Kind::AdamW}) {
          check_in_backward_equals_ddp<Uneven>(rank, world, kind, true, 25, exact);
          check_in_backward_equals_ddp<Uneven>(rank, world, kind, true, 200.0 / (1 << 20), exact);
          check_in_backward_equals_ddp<Deep>(rank, world, kind, true, 25, exact);
          // gather_in_forward. A bucket per parameter for Direct: fc2 (called as ->forward)
          // and the model's own scale are gathered before the forward, the others by their hooks.
          check_in_backward_equals_ddp<Uneven>(rank, world, kind, true, 200.0 / (1 << 20), exact, 1, true);
          check_in_backward_equals_ddp<Direct>(rank, world, kind, true, 1e-9, exact, 1, true);
        }
        for (bool gather : {false, true})
          check_in_backward_equals_ddp<Deep>(rank, world, Kind::AdamW, true, 1000.0 / (1 << 20), 1e-12, /*micro=*/3, gather);
        destroy_process_group();
      }, {.timeout = 240s});
    }
}

TEST_CASE("ZeRO-2 with gather_in_forward: the buffer broadcast moves to the end of forward; a rank-local state_dict between steps keeps the collectives in step") {
  // BatchNorm's running stats are broadcast from rank 0: with gather_in_forward at the end
  // of the previous forward. Rank 0 alone reads state_dict between steps (a snapshot saved
  // by the leader), which finishes that broadcast early on rank 0 only: the ranks must still
  // issue the same collectives, and end with the reference's buffers.
  spawn(2, [](int rank) {
    init_process_group("shm");
    {
    auto make = [] {
      nn::Sequential m(nn::Linear(6, 8), nn::BatchNorm1d(8), nn::ReLU(), nn::Linear(8, 3));
      m->to(kFloat64);
      return m;
    };
    nn::Sequential ref = make(), model = make();
    model->load_state_dict(ref->state_dict());
    auto opts = DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9);
    DistributedDataParallel ddp_ref(ref, default_group(), opts);
    DistributedDataParallel ddp(model, default_group(), DistributedDataParallelOptions(opts).shard_gradients(true).gather_in_forward(true));
    std::unique_ptr<optim::Optimizer> full = factory_of(Kind::Adam)({optim::OptimizerParamGroup(ddp_ref.parameters())});
    ddp.apply_optimizer_in_backward(factory_of(Kind::Adam));
    Data data = make_data(4, 8);
    for (int s = 0; s < 4; ++s) {
      // Different inputs per rank: the running stats differ until rank 0's are broadcast.
      Tensor x = data.x[s].narrow(0, rank * 4, 4), y = data.y[s].narrow(0, rank * 4, 4);
      full->zero_grad();
      mse_loss(ddp_ref(x), y).backward();
      full->step();
      mse_loss(ddp(x), y).backward();
      if (rank == 0) {
        const double d = max_abs_diff(ddp.state_dict(), ddp_ref.state_dict());  // the same keys, or it throws
        GR_CHECK(d == 0, "rank 0: the state_dict after step ", s, " differs by ", d);
      }
    }
    // An evaluation forward: both broadcast rank 0's buffers first (ddp_ref now, ddp the one
    // its last forward issued), so every rank ends with the reference's parameters and buffers.
    {
      NoGradGuard no_grad;
      ddp.eval();
      ddp_ref.eval();
      GR_CHECK(max_abs_diff(ddp(data.x[0]), ddp_ref(data.x[0])) == 0, "rank ", rank, ": evaluation differs");
    }
    const double d = max_abs_diff(model->state_dict(), ref->state_dict());
    GR_CHECK(d == 0, "rank ", rank, ": the state_dict differs by ", d, " at the end");
    }
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("ZeRO-2 and the optimizer in backward refuse what cannot work, with clear errors") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    auto expect = [rank](const std::function<void()>& f, const std::string& text) {
      bool threw = false;
      std::string got;
      try {
        f();
      } catch (const gr::Error& e) {
        got = e.what();
        threw = got.find(text) != std::string::npos;
      }
      GR_CHECK(threw, "rank ", rank, ": expected an error containing '", text, "', got '", got, "'");
    };
    Uneven model;
    model->to(kFloat64);
    using O = DistributedDataParallelOptions;
    expect([&] { DistributedDataParallel d(model, default_group(), O().shard_gradients(true).find_unused_parameters(true)); },
           "shard_gradients cannot be combined with find_unused_parameters");
    expect([&] { DistributedDataParallel d(model, default_group(), O().shard_gradients(true).gradient_as_bucket_view(true)); },
           "shard_gradients cannot be combined with gradient_as_bucket_view");
    expect([&] { DistributedDataParallel d(model, default_group(), O().gather_in_forward(true)); },
           "gather_in_forward needs shard_gradients");
    {
      DistributedDataParallel d(model, default_group(), O().shard_gradients(true));
      expect([&] { d.register_comm_hook(nn::parallel::fp16_compress_hook); }, "a communication hook");
      expect([&] { d(randn({2, 6}, kFloat64)); }, "shard_gradients needs the optimizer in backward");
    }
    {
      DistributedDataParallel d(model, default_group(), O().find_unused_parameters(true));
      expect([&] { d.apply_optimizer_in_backward(factory_of(Kind::SGD)); }, "not with find_unused_parameters");
    }
    {
      DistributedDataParallel d(model, default_group());
      d.apply_optimizer_in_backward(factory_of(Kind::SGD));
      expect([&] { d.apply_optimizer_in_backward(factory_of(Kind::SGD)); }, "call it once");
      expect([&] { d.join([] {}); }, "not with apply_optimizer_in_backward");
    }
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("ZeRO-2's Chrome trace has reduce-scatter, shard-step and all-gather spans per bucket; with gather_in_forward the gathers are waited in forward") {
  spawn(2, [](int rank) {
    init_process_group("shm");
    for (bool gather : {false, true}) {
      Uneven model;
      model->to(kFloat64);
      DistributedDataParallel ddp(model, default_group(),
                                  DistributedDataParallelOptions().shard_gradients(true).gather_in_forward(gather).bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9));
      ddp.apply_optimizer_in_backward(factory_of(Kind::Adam));
      profiler::reset();
      profiler::enable();
      for (int s = 0; s < 2; ++s) mse_loss(ddp(randn({4, 6}, kFloat64)), randn({4, 3}, kFloat64)).backward();
      ddp.wait_for_parameters();  // the last backward's gathers (gather_in_forward)
      profiler::enable(false);
      const std::string path = ddp.write_chrome_trace(test::temp_path("gradring_zero_trace", "r" + std::to_string(rank)));
      std::ifstream in(path);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto count = [&](const std::string& what) {
        int n = 0;
        for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
      };
      // 6 parameters, a bucket each, 2 iterations.
      GR_CHECK(count("\"reduce_scatter bucket ") == 12 && count("\"shard step bucket ") == 12 &&
                   count("\"allgather bucket ") == 12,
               "rank ", rank, ": trace has ", count("\"reduce_scatter bucket "), " reduce-scatter, ",
               count("\"shard step bucket "), " shard-step and ", count("\"allgather bucket "), " all-gather spans");
      // The first backward's gathers are waited by the second forward (by the modules'
      // hooks: ThreeLayer calls every child through its holder), the second's by
      // wait_for_parameters.
      GR_CHECK(count("\"DDP gather wait bucket ") == (gather ? 12 : 0), "rank ", rank, ": ",
               count("\"DDP gather wait bucket "), " gather-wait spans");
      if (gather) {
        std::vector<profiler::Event> forwards, waits;
        for (const profiler::Event& e : profiler::events()) {
          if (e.name == "DDP forward") forwards.push_back(e);
          if (e.name.rfind("DDP gather wait bucket ", 0) == 0) waits.push_back(e);
        }
        GR_CHECK(forwards.size() == 2, "rank ", rank, ": ", forwards.size(), " DDP forward spans");
        int in_second = 0;
        for (const profiler::Event& w : waits)
          if (w.start_ns >= forwards[1].start_ns && w.start_ns + w.duration_ns <= forwards[1].start_ns + forwards[1].duration_ns)
            ++in_second;
        GR_CHECK(in_second == 6, "rank ", rank, ": ", in_second, " of the first backward's 6 gathers were waited inside the second forward");
      }
    }
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("ZeRO-2 and the optimizer in backward: snapshots resume bit-exact; a gradient shard is refused on another rank") {
  const std::string dir = test::temp_path("gradring_zero2_snap", "");
  spawn(2, [&](int rank) {
    init_process_group("shm");
    const int steps = 5, cut = 2;
    Data data = make_data(steps, 8);
    for (bool shard : {true, false}) {
      const std::string what = std::string(shard ? "ZeRO-2" : "optimizer in backward") + " on rank " + std::to_string(rank);
      const std::string path = dir + "/" + (shard ? "z2" : "ib") + "_rank" + std::to_string(rank) + ".snap";
      auto run_steps = [&](DistributedDataParallel<UnevenImpl>& ddp, int from, int to) {
        for (int s = from; s < to; ++s)
          mse_loss(ddp(data.x[s].narrow(0, rank * 4, 4)), data.y[s].narrow(0, rank * 4, 4)).backward();
      };
      const auto opts = DistributedDataParallelOptions().shard_gradients(shard).bucket_cap_mb(1000.0 / (1 << 20));
      Uneven a;
      a->to(kFloat64);
      DistributedDataParallel ddp_a(a, default_group(), opts);
      ddp_a.apply_optimizer_in_backward(factory_of(Kind::AdamW));
      run_steps(ddp_a, 0, cut);
      Snapshot snap = capture_snapshot(*a);
      snap.optimizer = ddp_a.optimizer_state_dict();
      snap.world_size = 2;
      snap.global_step = cut;
      save_snapshot(path, snap);
      run_steps(ddp_a, cut, steps);
      Uneven b;
      b->to(kFloat64);
      DistributedDataParallel ddp_b(b, default_group(), opts);
      ddp_b.apply_optimizer_in_backward(factory_of(Kind::AdamW));
      const Snapshot loaded = load_snapshot(path, 2);
      restore_snapshot(loaded, *b);
      ddp_b.load_optimizer_state_dict(loaded.optimizer);
      run_steps(ddp_b, cut, steps);
      require_same_params(*b, *a, 0.0, what + ", resumed");
      if (shard) {
        default_group()->barrier()->wait();  // the other rank's file exists
        bool threw = false;
        try {
          ddp_b.load_optimizer_state_dict(load_snapshot(dir + "/z2_rank" + std::to_string(1 - rank) + ".snap").optimizer);
        } catch (const gr::Error& e) {
          threw = std::string(e.what()).find("shard of rank " + std::to_string(1 - rank) + " of a world of 2") !=
                  std::string::npos;
        }
        GR_CHECK(threw, what, ": another rank's gradient shard must be refused");
      }
    }
    destroy_process_group();
  }, {.timeout = 120s});
}
