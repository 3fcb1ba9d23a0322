// fully_shard (distributed/fsdp/) on 1, 2 and 4 spawned ranks (gloo and shm; mpi/mpi_check.cpp
// runs fsdp_checks.h on MPI): float64 training equal to DDP with the full optimizer (bitwise
// where both add in one order) and to one process on the concatenated batch, with uneven
// shards, every element-wise optimizer, gradient accumulation, clipping over the shards and
// reshard_after_forward off; mixed precision against a hand-made reference; memory held
// between steps and the peak within a step; the errors for bad use; no reference cycles;
// prefetch seen in the trace and the flight recorder; DETAIL's unit order check.
#include <chrono>
#include <filesystem>
#include <map>

#include "core/profiler.h"
#include "distributed/backends/init.h"
#include "distributed/fsdp/fsdp_unit.h"
#include "distributed/launch/launcher.h"
#include "fsdp_checks.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;

TEST_CASE("fully_shard equals DDP and one process on 1, 2 and 4 ranks (gloo, shm; SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta, Adamax, NAdam, RAdam; uneven shards; reduce-scatters and gathers in pieces; explicit and no prefetch)") {
  for (const char* backend : {"gloo", "shm"})
    for (int world : {1, 2, 4}) {
      CAPTURE(backend);
      CAPTURE(world);
      spawn(world, [world, backend](int rank) {
        init_process_group(backend);
        // Two ranks add in one order whatever the collective (a + b == b + a): bitwise. Four
        // ranks' all-reduce and reduce-scatter add in different orders.
        const double tol = world <= 2 ? 0.0 : 1e-12;
        for (FsdpOpt opt : {FsdpOpt::SGD, FsdpOpt::Adam, FsdpOpt::AdamW, FsdpOpt::Adagrad, FsdpOpt::RMSprop,
                            FsdpOpt::Adadelta, FsdpOpt::Adamax, FsdpOpt::NAdam, FsdpOpt::RAdam})
          // RAdam's rectified step starts at step 6 (before it, SGD with momentum): 7 steps.
          check_fsdp_equals_ddp<Uneven>(rank, world, FsdpCase{.opt = opt, .steps = opt == FsdpOpt::RAdam ? 7 : 3}, tol);
        check_fsdp_equals_ddp<Deep>(rank, world, FsdpCase{.opt = FsdpOpt::AdamW}, tol);
        // Reduce-scatters and gathers in pieces (Note [FSDP reduce-scatter buckets]): every
        // parameter alone (uneven shards), a Linear's weight and bias together (Deep); no
        // prefetch, and explicit prefetch two units ahead.
        check_fsdp_equals_ddp<Uneven>(rank, world, FsdpCase{.opt = FsdpOpt::AdamW, .bucket_mb = 1e-6, .prefetch = 0}, tol);
        check_fsdp_equals_ddp<Deep>(rank, world, FsdpCase{.opt = FsdpOpt::Adam, .bucket_mb = 0.004}, tol);
        check_fsdp_equals_ddp<Deep>(rank, world, FsdpCase{.opt = FsdpOpt::SGD, .prefetch = 2}, tol);
        destroy_process_group();
      }, {.timeout = 240s});
    }
}

TEST_CASE("fully_shard on the hierarchical backend (2 nodes x 2 ranks) equals DDP (float64; accumulation, clipping, pieces, no prefetch)") {
  spawn(4, [](int rank) {
    init_process_group("hierarchical");
    check_fsdp_equals_ddp<Uneven>(rank, 4, FsdpCase{.opt = FsdpOpt::AdamW}, 1e-12);
    check_fsdp_equals_ddp<Deep>(rank, 4, FsdpCase{.opt = FsdpOpt::SGD, .micro = 2, .clip = 0.05}, 1e-12);
    check_fsdp_equals_ddp<Deep>(rank, 4, FsdpCase{.opt = FsdpOpt::Adam, .bucket_mb = 0.004, .prefetch = 0}, 1e-12);
    destroy_process_group();
  }, {.timeout = 240s, .env = {{"LOCAL_WORLD_SIZE", "2"}}});
}

TEST_CASE("fully_shard with gradient accumulation (set_requires_gradient_sync), clipping over the shards, reshard_after_forward off and gradients in pieces equals DDP") {
  for (const char* backend : {"gloo", "shm"})
    for (int world : {2, 4}) {
      CAPTURE(backend);
      CAPTURE(world);
      spawn(world, [world, backend](int rank) {
        init_process_group(backend);
        const double tol = world <= 2 ? 0.0 : 1e-12;
        check_fsdp_equals_ddp<Uneven>(rank, world, FsdpCase{.opt = FsdpOpt::Adam, .micro = 3}, tol);
        check_fsdp_equals_ddp<Deep>(rank, world, FsdpCase{.opt = FsdpOpt::SGD, .micro = 2, .clip = 0.05}, tol);
        check_fsdp_equals_ddp<Uneven>(rank, world, FsdpCase{.opt = FsdpOpt::AdamW, .clip = 0.1}, tol);
        check_fsdp_equals_ddp<Uneven>(
            rank, world, FsdpCase{.opt = FsdpOpt::Adam, .micro = 2, .reshard_after_forward = false}, tol);
        check_fsdp_equals_ddp<Deep>(
            rank, world, FsdpCase{.opt = FsdpOpt::AdamW, .micro = 3, .clip = 0.05, .bucket_mb = 1e-6, .prefetch = 0}, tol);
        destroy_process_group();
      }, {.timeout = 240s});
    }
}

TEST_CASE("fully_shard holds 1/N of the parameters between steps; the shards' layout is torch.chunk's on dim 0") {
  spawn(4, [](int rank) {
    init_process_group("gloo");
    Uneven model;
    model->to(kFloat64);
    const int64_t total = param_bytes(*model);
    auto root = shard_children_then_root(model);
    // fc1.weight [20, 6]: 5 rows each; fc2.weight [7, 20]: 2, 2, 2, 1 (+1 padding row);
    // fc3.bias [3]: 1, 1, 1, 0 (+1).
    const auto shards = root.named_parameters();
    GR_CHECK(shards.find("fc1.weight")->sizes() == IntArrayRef({5, 6}) &&
                 shards.find("fc2.weight")->sizes() == IntArrayRef({2, 20}) && shards.find("fc3.bias")->sizes() == IntArrayRef({1}),
             "rank ", rank, ": shard shapes");
    int64_t held = 0;
    for (const Tensor& s : root.parameters()) held += static_cast<int64_t>(s.nbytes());
    int64_t padded_rows = 0;  // one padding row at most per parameter
    for (const Tensor& s : root.parameters()) padded_rows += static_cast<int64_t>(s.nbytes()) / std::max<int64_t>(s.size(0), 1);
    GR_CHECK(held <= total / 4 + padded_rows, "rank ", rank, ": holds ", held, " bytes of shards for ", total,
             " bytes of parameters");
    for (const Tensor& p : model->parameters())
      GR_CHECK(p.storage().nbytes() == 0, "rank ", rank, ": a module parameter holds memory outside forward");
    destroy_process_group();
  }, {.timeout = 60s});
}

// Twelve equal units: the ZeRO-3 goal (16/N bytes per parameter plus one unit, +10%) leaves
// 3.5 units beside the shards on 2 ranks, so the bound of Note [FSDP memory bound] (3 units)
// meets it; a reduce-scatter overlapping the next unit's gradients (4.5 units) does not.
// `n` Linear(width, width), each followed by tanh.
struct ChainImpl : nn::Module {
  ChainImpl(int n, int64_t width) {
    for (int i = 0; i < n; ++i) layers.push_back(register_module("fc" + std::to_string(i), nn::Linear(width, width)));
  }
  Tensor forward(Tensor x) {
    for (auto& l : layers) x = tanh(l(x));
    return x;
  }
  std::vector<nn::Linear> layers;
};
GR_MODULE(Chain);

TEST_CASE("fully_shard's peak within a step stays within the ZeRO-3 goal: 16/N bytes per parameter plus one unit, +10% (12 units, 2 ranks, Adam)") {
  for (const char* backend : {"gloo", "shm"}) {
    CAPTURE(backend);
    spawn(2, [backend](int rank) {
      init_process_group(backend);
      Chain model(12, 256);
      const int64_t params = param_bytes(*model) / 4;  // float32
      auto root = shard_children_then_root(model);
      auto opt = make_optimizer(FsdpOpt::Adam, root.parameters());
      const Tensor x = randn({8, 256}), y = randn({8, 256});
      auto step = [&] {
        opt->zero_grad();
        mse_loss(model(x), y).backward();
        opt->step();
      };
      step();
      step();  // the first step learned the prefetch orders
      fsdp::reset_peak_memory_stats();
      const int64_t before = fsdp::memory_stats().gathered_bytes;
      step();
      const double transient = static_cast<double>(fsdp::memory_stats().peak_gathered_bytes - before);
      const double unit = 256.0 * 257.0 * 4.0;
      int64_t shards = 0;
      for (const Tensor& s : root.parameters()) shards += static_cast<int64_t>(s.nbytes());
      const double held = 4.0 * static_cast<double>(shards);  // shards, their gradients, Adam's two moments
      const double goal = 1.1 * (16.0 * static_cast<double>(params) / 2.0 + unit);
      GR_CHECK(before == 0, "rank ", rank, ": ", before, " bytes held between steps");
      GR_CHECK(transient <= 3.0 * unit, "rank ", rank, ": ", transient / unit, " units held beside the shards at once, over 3");
      GR_CHECK(held + transient <= goal, "rank ", rank, ": peak ", (held + transient) / static_cast<double>(params),
               " bytes per parameter, over the goal's ", goal / static_cast<double>(params));
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

// Twelve units of four Linear(128, 128) each, so a unit's gradients and gathers can go in
// pieces (a Linear's weight and bias, a quarter of the unit).
struct QuadChainImpl : nn::Module {
  QuadChainImpl() {
    for (int i = 0; i < 12; ++i) blocks.push_back(register_module("b" + std::to_string(i), Chain(4, 128)));
  }
  Tensor forward(Tensor x) {
    for (auto& b : blocks) x = b(x);
    return x;
  }
  std::vector<Chain> blocks;
};
GR_MODULE(QuadChain);

TEST_CASE("fully_shard without prefetch and with gradients and gathers in pieces holds about one unit beside the shards (12 units of 4 Linear, 2 ranks, Adam)") {
  for (const char* backend : {"gloo", "shm"}) {
    CAPTURE(backend);
    spawn(2, [backend](int rank) {
      init_process_group(backend);
      const double unit = 4.0 * 128.0 * 129.0 * 4.0, piece = unit / 4.0;
      // The most held beside the shards within the third step, in units.
      // lean: no prefetch, pieces of `mb` MiB.
      auto transient = [&](bool lean, double mb) {
        QuadChain model;
        auto root = shard_children_then_root(
            model, fsdp::FullyShardOptions().reduce_scatter_bucket_cap_mb(lean ? mb : 0).all_gather_bucket_cap_mb(lean ? mb : 0));
        if (lean) set_prefetch(*model, 0);
        auto opt = make_optimizer(FsdpOpt::Adam, root.parameters());
        const Tensor x = randn({8, 128}), y = randn({8, 128});
        for (int s = 0; s < 3; ++s) {
          if (s == 2) fsdp::reset_peak_memory_stats();
          opt->zero_grad();
          mse_loss(model(x), y).backward();
          opt->step();
        }
        GR_CHECK(fsdp::memory_stats().gathered_bytes == 0, "rank ", rank, ": bytes held between steps");
        return static_cast<double>(fsdp::memory_stats().peak_gathered_bytes) / unit;
      };
      // Pieces of a Linear (its weight and bias), and of half of one (a piece ends inside a weight).
      const double full = transient(false, 0), lean = transient(true, piece / (1 << 20)),
                   leaner = transient(true, piece / 2 / (1 << 20));
      MESSAGE("rank " << rank << ": " << full << " units beside the shards by default, " << lean << " lean, " << leaner
                      << " in half-Linear pieces");
      // Default: a unit's parameters, its gradients and the next unit's prefetched gather
      // (Note [FSDP memory bound]). Lean: the unit's parameters plus a few pieces (the gather
      // copying one piece out while the next arrives; a piece's gradients, its reduce-scatter
      // buffers and the previous piece's in flight).
      GR_CHECK(full > 2.5 && full <= 3.0, "rank ", rank, ": ", full, " units by default, expected 2.5 to 3");
      GR_CHECK(lean <= 1.0 + 3.0 * piece / unit, "rank ", rank, ": ", lean, " units without prefetch, in pieces, over 1.75");
      // Half-Linear pieces: the parameters, one weight's full gradient (alive until its last
      // piece is copied in: autograd hands it over whole) and about 1.5 half-pieces of buffers.
      GR_CHECK(leaner < lean && leaner <= 1.45, "rank ", rank, ": ", leaner, " units in half-Linear pieces (", lean,
               " in Linear pieces), over 1.45");
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

TEST_CASE("fully_shard: mixed precision (bfloat16 gather and compute, float32 master shards and reduction)") {
  for (int world : {1, 2}) {
    CAPTURE(world);
    spawn(world, [world](int rank) {
      init_process_group("gloo");
      // Reference: float32 master weights; each step a bfloat16 copy computes forward and
      // backward on this rank's batch, its gradients widened to float32 and averaged.
      Data data = make_data(3, 4 * world, kFloat32);
      Uneven master, model, shadow;
      model->load_state_dict(master->state_dict());
      auto root = shard_children_then_root(
          model, fsdp::FullyShardOptions().mp_policy(fsdp::MixedPrecisionPolicy().param_dtype(kBFloat16).reduce_dtype(kFloat32)));
      shadow->to(kBFloat16);
      optim::Adam opt_ref(master->parameters(), optim::AdamOptions(1e-2)), opt(root.parameters(), optim::AdamOptions(1e-2));
      for (int s = 0; s < 3; ++s) {
        Tensor x = data.x[s].narrow(0, rank * 4, 4).to(kBFloat16), y = data.y[s].narrow(0, rank * 4, 4).to(kBFloat16);
        {
          NoGradGuard no_grad;
          auto src = master->named_parameters();
          for (auto& [name, p] : shadow->named_parameters()) p.copy_(*src.find(name));
        }
        shadow->zero_grad();
        mse_loss(shadow(x), y).backward();
        auto grads = shadow->named_parameters();
        for (auto& [name, p] : master->named_parameters()) {
          Tensor g = grads.find(name)->grad().to(kFloat32);
          if (world > 1) {
            g = g * (1.0 / world);
            default_group()->allreduce(g)->wait();
          }
          p.mutable_grad() = g;
        }
        opt_ref.step();
        opt_ref.zero_grad();
        Tensor out = model(x);
        GR_CHECK(out.scalar_type() == kBFloat16, "rank ", rank, ": the unit computed in ", out.scalar_type());
        mse_loss(out, y).backward();
        for (const Tensor& p : root.parameters())
          GR_CHECK(p.scalar_type() == kFloat32 && p.grad().scalar_type() == kFloat32, "rank ", rank, ": master shards in ",
                   p.scalar_type());
        opt.step();
        opt.zero_grad();
      }
      unshard_all(*model);
      // Gathered in bfloat16: the master weights rounded; on one rank the same sums (bitwise).
      auto want = master->named_parameters();
      for (const auto& [name, p] : model->named_parameters()) {
        GR_CHECK(p.scalar_type() == kBFloat16, "rank ", rank, ": ", name, " gathered as ", p.scalar_type());
        const double d = max_abs_diff(p, want.find(name)->to(kBFloat16));
        GR_CHECK(d <= (world == 1 ? 0.0 : 1e-2), "rank ", rank, ": ", name, " differs from the reference by ", d);
      }
      reshard_all(*model);
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

TEST_CASE("fully_shard: a unit's parameters read outside its forward, LBFGS on the shards, and units that differ between ranks, are clear errors") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    {
      Uneven model;
      model->to(kFloat64);
      auto root = shard_children_then_root(model);
      Tensor x = randn({4, 6}, TensorOptions(kFloat64));
      // Reading a sharded parameter, or a forward that bypasses the holder (no pre-hook).
      require_error([&] { (void)model->fc1->weight.sum().item<double>(); }, "unit 'fc1'", "reading fc1.weight");
      require_error([&] { (void)model->fc1->forward(x); }, "hold no memory outside the unit's forward", "fc1->forward");
      // A second fully_shard on a unit, and a parameter of two units.
      require_error([&] { fsdp::fully_shard(model->fc1); }, "already a fully_shard unit", "fully_shard twice");
      // LBFGS needs whole parameters (Note [Sharded parameters]); on the plain model it is fine.
      require_error([&] { optim::LBFGS(root.parameters()); }, "parameter 0 is this rank's shard of 'fc1.weight' of the "
                    "fully_shard unit 'fc1'", "LBFGS on the shards");
      Uneven plain;
      optim::LBFGS whole(plain->parameters());
      // Through the holder it works, and an eval forward reshards everything.
      NoGradGuard no_grad;
      Tensor y = model(x);
      GR_CHECK(y.sizes() == IntArrayRef({4, 3}), "rank ", rank, ": output shape");
      for (const Tensor& p : model->parameters()) GR_CHECK(p.storage().is_released(), "rank ", rank, ": kept after eval");
    }
    // Rank 1 builds another width: every rank fails in fully_shard, naming the unit.
    struct OtherImpl : ThreeLayerImpl {
      explicit OtherImpl(int64_t h) : ThreeLayerImpl(h, 7) {}
    };
    auto other = std::make_shared<OtherImpl>(rank == 0 ? 20 : 21);
    require_error([&] { fsdp::fully_shard(other->fc1); }, "differs between ranks", "mismatched units");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("fully_shard: the unit lives as long as its module (no reference cycles through hooks or graphs)") {
  spawn(1, [](int) {
    init_process_group("gloo");
    std::weak_ptr<fsdp::FSDPUnit> root_unit, child_unit;
    std::weak_ptr<nn::Module> module;
    Tensor loss;
    {
      Uneven model;
      model->to(kFloat64);
      auto root = shard_children_then_root(model);
      root_unit = fsdp::find_unit(model.get());
      child_unit = fsdp::find_unit(model->fc2.get());
      module = model.ptr();
      optim::SGD opt(root.parameters(), optim::SGDOptions(0.1));
      mse_loss(model(randn({4, 6}, TensorOptions(kFloat64))), randn({4, 3}, TensorOptions(kFloat64))).backward();
      opt.step();
      loss = mse_loss(model(randn({4, 6}, TensorOptions(kFloat64))), randn({4, 3}, TensorOptions(kFloat64)));
    }
    // A graph that outlives the model holds the units weakly.
    loss = Tensor();
    GR_CHECK(module.expired() && root_unit.expired() && child_unit.expired(),
             "the model or its units outlived every handle (a reference cycle)");
    destroy_process_group();
  }, {.timeout = 60s});
}

namespace {

// Profiler spans by name, in order: the last iteration's are the last of each name.
struct Spans {
  int rank = 0;
  std::map<std::string, std::vector<profiler::Event>> by_name;
  const profiler::Event& last(const std::string& name, size_t from_end = 0) {
    const auto& v = by_name[name];
    GR_CHECK(v.size() > from_end, "rank ", rank, ": the trace has ", v.size(), " '", name, "' span(s)");
    return v[v.size() - 1 - from_end];
  }
  static int64_t end(const profiler::Event& e) { return e.start_ns + e.duration_ns; }
};

// Three SGD steps of Deep (every Linear a unit; ahead >= 0: set_prefetch(model, ahead); -2:
// every unit given empty lists, torch's default) under
// the profiler; `trace_dir`: write the Chrome trace there and return its path in it.
Spans traced_deep_steps(int rank, int ahead, std::string* trace_dir = nullptr) {
  Deep model;
  model->to(kFloat64);
  auto root = shard_children_then_root(model);
  if (ahead >= 0) set_prefetch(*model, ahead);
  if (ahead == -2)
    for (fsdp::FSDPModule& unit : child_units(*model)) {
      unit.set_modules_to_forward_prefetch({});
      unit.set_modules_to_backward_prefetch({});
    }
  optim::SGD opt(root.parameters(), optim::SGDOptions(0.01));
  Data data = make_data(3, 8);
  profiler::reset();
  profiler::enable();
  for (int s = 0; s < 3; ++s) {
    mse_loss(model(data.x[s].narrow(0, rank * 4, 4)), data.y[s].narrow(0, rank * 4, 4)).backward();
    opt.step();
    opt.zero_grad();
  }
  profiler::enable(false);
  if (trace_dir) *trace_dir = root.write_chrome_trace(*trace_dir);
  Spans spans{rank, {}};
  for (const profiler::Event& e : profiler::events()) spans.by_name[e.name].push_back(e);
  return spans;
}

}  // namespace

TEST_CASE("fully_shard prefetches one unit ahead in forward and in backward (learned orders): the trace shows the gathers overlapping compute; the flight recorder has every gather and reduce-scatter") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    std::string path = test::temp_path("gradring_fsdp_trace", "r" + std::to_string(rank));
    Spans trace = traced_deep_steps(rank, -1, &path);
    GR_CHECK(std::filesystem::exists(path), "rank ", rank, ": no trace at ", path);
    auto& spans = trace.by_name;
    auto last = [&](const std::string& name, size_t from_end = 0) -> const profiler::Event& { return trace.last(name, from_end); };
    auto end = Spans::end;
    // Nine Linear units: each gathered twice per iteration (forward, backward), reduce-scattered once.
    for (int i = 0; i < 9; ++i) {
      const std::string unit = "fc" + std::to_string(i);
      GR_CHECK(spans["all-gather " + unit].size() == 6 && spans["reduce-scatter " + unit].size() == 3 &&
                   spans["forward " + unit].size() == 3 && spans["backward " + unit].size() == 3,
               "rank ", rank, ": unit ", unit, "'s spans: ", spans["all-gather " + unit].size(), " gathers, ",
               spans["reduce-scatter " + unit].size(), " reduce-scatters");
      GR_CHECK(std::string(last("all-gather " + unit).track) == "fsdp all-gather" &&
                   std::string(last("reduce-scatter " + unit).track) == "fsdp reduce-scatter" &&
                   std::string(last("forward " + unit).track) == "fsdp units",
               "rank ", rank, ": unit ", unit, "'s spans are on the wrong rows");
    }
    // Prefetch: in the last iteration fc(i+1)'s forward gather was issued before fc(i)'s
    // forward computed, and fc(i-1)'s backward gather before fc(i)'s backward.
    for (int i = 0; i + 1 < 9; ++i) {
      const std::string a = "fc" + std::to_string(i), b = "fc" + std::to_string(i + 1);
      GR_CHECK(last("all-gather " + b, 1).start_ns <= last("forward " + a).start_ns, "rank ", rank, ": ", b,
               "'s forward gather was not issued before ", a, "'s forward");
      GR_CHECK(last("all-gather " + a).start_ns <= end(last("backward " + b)), "rank ", rank, ": ", a,
               "'s backward gather was not issued during ", b, "'s backward");
    }
    const nlohmann::json flight = nlohmann::json::parse(default_group()->flight_recorder()->to_json());
    int gathers = 0, scatters = 0;
    for (const auto& e : flight["entries"]) {
      gathers += e["op"] == "allgather";
      scatters += e["op"] == "reduce_scatter";
    }
    GR_CHECK(gathers >= 54 && scatters == 27, "rank ", rank, ": the flight recorder holds ", gathers, " all-gathers and ",
             scatters, " reduce-scatters");
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("fully_shard's explicit prefetch (set_modules_to_forward_prefetch / _backward_prefetch): two units ahead, the default with empty lists, none after set_prefetch_enabled(false), as the trace shows") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    for (int ahead : {2, 0, -2}) {
      CAPTURE(ahead);
      Spans trace = traced_deep_steps(rank, ahead);
      // The last iteration's spans: a unit's forward gather is its second-to-last, its backward one its last.
      auto last = [&](const std::string& name, size_t from_end = 0) -> const profiler::Event& { return trace.last(name, from_end); };
      auto end = Spans::end;
      auto fc = [](int i) { return "fc" + std::to_string(i); };
      for (int i = 0; i < 9; ++i) {
        if (ahead == 2) {
          // fc(i)'s hooks issued the gathers of fc(i+2) (forward) and fc(i-2) (backward).
          if (i + 2 < 9)
            GR_CHECK(last("all-gather " + fc(i + 2), 1).start_ns <= last("forward " + fc(i)).start_ns, "rank ", rank, ": ",
                     fc(i + 2), "'s forward gather was not issued before ", fc(i), "'s forward");
          if (i >= 2)
            GR_CHECK(last("all-gather " + fc(i - 2)).start_ns <= end(last("backward " + fc(i))), "rank ", rank, ": ",
                     fc(i - 2), "'s backward gather was not issued during ", fc(i), "'s backward");
        } else if (ahead == -2) {
          // Empty lists are the default: fc(i+1)'s forward gather issued before fc(i)'s forward
          // computed, fc(i-1)'s backward gather during fc(i)'s backward.
          if (i + 1 < 9)
            GR_CHECK(last("all-gather " + fc(i + 1), 1).start_ns <= last("forward " + fc(i)).start_ns, "rank ", rank,
                     ": empty lists: ", fc(i + 1), "'s forward gather was not issued before ", fc(i), "'s forward");
          if (i >= 1)
            GR_CHECK(last("all-gather " + fc(i - 1)).start_ns <= end(last("backward " + fc(i))), "rank ", rank,
                     ": empty lists: ", fc(i - 1), "'s backward gather was not issued during ", fc(i), "'s backward");
        } else {
          // No prefetch: each gather is issued by the unit's own hook, after the previous unit is done.
          if (i + 1 < 9)
            GR_CHECK(last("all-gather " + fc(i + 1), 1).start_ns >= end(last("forward " + fc(i))), "rank ", rank, ": ",
                     fc(i + 1), "'s forward gather was issued during ", fc(i), "'s forward");
          if (i >= 1)
            GR_CHECK(last("all-gather " + fc(i - 1)).start_ns >= end(last("backward " + fc(i))), "rank ", rank, ": ",
                     fc(i - 1), "'s backward gather was issued during ", fc(i), "'s backward");
        }
      }
    }
    // A unit of another tree cannot be prefetched.
    Deep a, b;
    auto root_a = shard_children_then_root(a);
    shard_children_then_root(b);
    fsdp::fsdp_module(*a->layers[0]).set_modules_to_forward_prefetch({fsdp::fsdp_module(*b->layers[5])});
    require_error([&] { a(randn({2, 6})); }, "which is not a unit of its tree", "prefetching another tree's unit");
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("fully_shard at GRADRING_DISTRIBUTED_DEBUG=DETAIL: ranks running the units in different orders fail naming them") {
  struct SwapImpl : nn::Module {
    explicit SwapImpl(bool swap) : swap(swap) {
      a = register_module("a", nn::Linear(5, 5));
      b = register_module("b", nn::Linear(5, 5));
    }
    Tensor forward(const Tensor& x) { return swap ? a(b(x)) : b(a(x)); }
    bool swap;
    nn::Linear a{nullptr}, b{nullptr};
  };
  spawn(2, [](int rank) {
    ::setenv("GRADRING_DISTRIBUTED_DEBUG", "DETAIL", 1);
    init_process_group("gloo");
    auto model = std::make_shared<SwapImpl>(rank == 1);
    fsdp::fully_shard(model->a);
    fsdp::fully_shard(model->b);
    nn::ModuleHolder<SwapImpl> holder(model);
    fsdp::fully_shard(holder);
    require_error([&] { holder(ones({2, 5})); }, "rank 0 gathers unit 'a' (#1), rank 1 gathers unit 'b' (#2)",
                  "units in different orders");
    destroy_process_group();
  }, {.timeout = 60s});
}

namespace {

// torch.utils.checkpoint's reentrant form, by hand: forward runs `recompute` without grad,
// backward runs it again with grad and backpropagates through it, so the fully_shard unit
// inside runs its forward within the outer backward.
std::function<Tensor(const Tensor&)> g_recompute;
struct ReentrantCheckpoint : autograd::Function<ReentrantCheckpoint> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return g_recompute(x);
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_();
    Tensor y;
    {
      AutoGradMode grad(true);
      y = g_recompute(x);
    }
    autograd::backward({y}, {grads[0]});
    return {x.grad()};
  }
};

struct CheckpointedImpl : ThreeLayerImpl {
  CheckpointedImpl() : ThreeLayerImpl(20, 7) {}
  Tensor forward(const Tensor& x) { return fc3(relu(ReentrantCheckpoint::apply(relu(fc1(x))))); }
};
GR_MODULE(Checkpointed);

}  // namespace

TEST_CASE("fully_shard with a unit recomputed inside backward (a reentrant checkpoint) equals one process") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    Data data = make_data(3, 8);
    Uneven single;
    Checkpointed model;
    single->to(kFloat64);
    model->to(kFloat64);
    model->load_state_dict(single->state_dict());
    g_recompute = [&](const Tensor& h) { return model->fc2(h); };  // through the holder: fc2's hooks run
    auto root = shard_children_then_root(model);
    optim::Adam opt_single(single->parameters(), optim::AdamOptions(1e-2)), opt(root.parameters(), optim::AdamOptions(1e-2));
    profiler::reset();
    profiler::enable();
    for (int s = 0; s < 3; ++s) {
      mse_loss(single(data.x[s]), data.y[s]).backward();
      mse_loss(model(data.x[s].narrow(0, rank * 4, 4)), data.y[s].narrow(0, rank * 4, 4)).backward();
      for (optim::Optimizer* o : {static_cast<optim::Optimizer*>(&opt_single), static_cast<optim::Optimizer*>(&opt)}) {
        o->step();
        o->zero_grad();
      }
    }
    profiler::enable(false);
    // Two gathers per step each: fc2 in the no-grad forward and in its recomputation (not again
    // for a pre-backward), fc3 in forward and backward (the recomputation prefetches nothing).
    std::map<std::string, int> gathers;
    for (const profiler::Event& e : profiler::events()) ++gathers[e.name];
    GR_CHECK(gathers["all-gather fc2"] == 6 && gathers["all-gather fc3"] == 6, "rank ", rank, ": fc2 gathered ",
             gathers["all-gather fc2"], " times and fc3 ", gathers["all-gather fc3"], " in 3 steps (6 each expected)");
    unshard_all(*model);
    require_same_params(*model, *single, 1e-12, "reentrant checkpoint on rank " + std::to_string(rank));
    reshard_all(*model);
    g_recompute = nullptr;
    destroy_process_group();
  }, {.timeout = 60s});
}
