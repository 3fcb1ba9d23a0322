// DistributedDataParallel on 2 and 4 spawned ranks against one process trained on the
// concatenated batches: parameters after K steps (float64 to 1e-12, float32 to 1e-5), with
// several bucket layouts, gradient_as_bucket_view, bucket rebuild, comm hooks, no_sync,
// find_unused_parameters, join with uneven inputs, SyncBatchNorm; and each error.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/profiler.h"
#include "distributed/ddp/ddp.h"
#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/ddp/sync_batch_norm.h"
#include "ddp_test_util.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using namespace std::chrono_literals;
using test::Data;
using test::make_data;
using test::max_rel_diff;

namespace {

struct NetImpl : test::ThreeLayerImpl {
  NetImpl() : ThreeLayerImpl(8, 8) {}
};
GR_MODULE(Net);

// Two heads; `use_b` false leaves head b (and its parameters) out of the output.
struct BranchyImpl : nn::Module {
  BranchyImpl()
      : trunk(register_module("trunk", nn::Linear(6, 8))),
        a(register_module("a", nn::Linear(8, 3))),
        b(register_module("b", nn::Linear(8, 3))) {}
  Tensor forward(const Tensor& x, bool use_b) {
    Tensor h = relu(trunk(x));
    return use_b ? a(h) + b(h) : a(h);
  }
  nn::Linear trunk, a, b;
};
GR_MODULE(Branchy);

// Builds the reference model and this rank's DDP copy: rank 0 starts from the reference's
// weights, the others from different random ones (DDP's broadcast must fix that).
template <class M>
std::pair<M, M> twin_models(int rank, ScalarType dtype) {
  M ref, model;
  ref->to(dtype);
  model->to(dtype);
  if (rank == 0) model->load_state_dict(ref->state_dict());
  return {ref, model};
}

// K SGD steps of DDP (each rank its slice of every batch) and of one process on the whole
// batches; returns the largest relative parameter difference.
void check_equivalence(int rank, int world, ScalarType dtype, const DistributedDataParallelOptions& opts,
                       double tol, const char* what, CommHook hook = nullptr) {
  const int64_t per_rank = 4, steps = 4;
  Data data = make_data(steps, per_rank * world, dtype);
  auto [ref, model] = twin_models<Net>(rank, dtype);
  DistributedDataParallel ddp(model, default_group(), opts);
  if (hook) ddp.register_comm_hook(hook);
  optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int s = 0; s < steps; ++s) {
    opt_ref.zero_grad();
    mse_loss(ref(data.x[s]), data.y[s]).backward();
    opt_ref.step();
    opt.zero_grad();
    Tensor xs = data.x[s].narrow(0, rank * per_rank, per_rank), ys = data.y[s].narrow(0, rank * per_rank, per_rank);
    mse_loss(ddp(xs), ys).backward();
    opt.step();
  }
  test::require_same_params(*model, *ref, tol, std::string(what) + " on rank " + std::to_string(rank), /*relative=*/true);
  if (opts.gradient_as_bucket_view()) {
    // .grad is a view into its bucket: the gradients of one bucket share one storage.
    const TensorList params = model->parameters();
    int shared = 0;
    for (const auto& bucket : ddp.reducer().bucket_indices())
      for (size_t i : bucket) {
        GR_CHECK(params[i].grad().storage().data() == params[bucket[0]].grad().storage().data(), what,
                 ": .grad of ", ddp.reducer().parameter_names()[i], " is not a view into its bucket");
        shared += i != bucket[0];
      }
    GR_CHECK(shared > 0, what, ": expected a bucket with several parameters");
  }
}

}  // namespace

TEST_CASE("DDP on 2 and 4 ranks equals one process on the concatenated batch (float64, several bucket layouts)") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    spawn(world, [world](int rank) {
      init_process_group("gloo");
      check_equivalence(rank, world, kFloat64, DistributedDataParallelOptions(), 1e-12, "default buckets");
      // Every parameter its own bucket; then two-ish per bucket; with views.
      check_equivalence(rank, world, kFloat64, DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9),
                        1e-12, "one bucket per parameter");
      check_equivalence(rank, world, kFloat64,
                        DistributedDataParallelOptions().bucket_cap_mb(300.0 / (1 << 20)).first_bucket_cap_mb(100.0 / (1 << 20)).gradient_as_bucket_view(true),
                        1e-12, "small buckets as gradient views");
      destroy_process_group();
    }, {.timeout = 180s});
  }
}

TEST_CASE("DDP on the shm backend equals one process on the concatenated batch (2 and 4 ranks, float64)") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    spawn(world, [world](int rank) {
      init_process_group("shm");
      check_equivalence(rank, world, kFloat64, DistributedDataParallelOptions(), 1e-12, "shm, default buckets");
      check_equivalence(rank, world, kFloat64, DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9),
                        1e-12, "shm, one bucket per parameter");
      destroy_process_group();
    }, {.timeout = 180s});
  }
}

TEST_CASE("DDP on the hierarchical backend (2 nodes x 2 ranks) equals one process on the concatenated batch (float64)") {
  spawn(4, [](int rank) {
    init_process_group("hierarchical");
    check_equivalence(rank, 4, kFloat64, DistributedDataParallelOptions(), 1e-12, "hierarchical, default buckets");
    check_equivalence(rank, 4, kFloat64, DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9),
                      1e-12, "hierarchical, one bucket per parameter");
    destroy_process_group();
  }, {.timeout = 180s, .env = {{"LOCAL_WORLD_SIZE", "2"}}});
}

TEST_CASE("DDP float32 and compression hooks stay close to the single-process result") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    check_equivalence(rank, 2, kFloat32, DistributedDataParallelOptions(), 1e-5, "float32");
    check_equivalence(rank, 2, kFloat32, DistributedDataParallelOptions(), 1e-2, "fp16 hook", nn::parallel::fp16_compress_hook);
    check_equivalence(rank, 2, kFloat32, DistributedDataParallelOptions(), 5e-2, "bf16 hook", nn::parallel::bf16_compress_hook);
    // A custom hook sees every bucket once per iteration, last one flagged.
    int calls = 0, lasts = 0;
    check_equivalence(rank, 2, kFloat32, DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9), 1e-5,
                      "custom hook", [&](ProcessGroup& g, GradBucket& b) {
                        ++calls;
                        lasts += b.is_last;
                        GR_CHECK(b.parameter_names.size() == 1, "one parameter per bucket expected");
                        return allreduce_hook(g, b);
                      });
    GR_CHECK(calls == 4 * 6 && lasts == 4, "rank ", rank, ": hook called ", calls, " times, ", lasts, " last");
    destroy_process_group();
  }, {.timeout = 120s});
}

TEST_CASE("DDP buckets: reverse registration order, 1 MiB first bucket, rebuilt after the first iteration") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    auto [ref, model] = twin_models<Net>(rank, kFloat32);
    // Bytes in registration order: fc1.w 192, fc1.b 32, fc2.w 256, fc2.b 32, fc3.w 96, fc3.b 12.
    // A bucket closes once it reaches its cap (200 B for the first, 300 B after).
    DistributedDataParallel ddp(model, default_group(),
                                DistributedDataParallelOptions().first_bucket_cap_mb(200.0 / (1 << 20)).bucket_cap_mb(300.0 / (1 << 20)));
    auto layout = ddp.reducer().bucket_indices();
    // {fc1.w, fc1.b} {fc2.w, fc2.b, fc3.w} {fc3.b}, reversed: the last layers first.
    GR_CHECK(layout.size() == 3 && layout[0] == std::vector<size_t>({5}) && layout[1] == std::vector<size_t>({2, 3, 4}) &&
                 layout[2] == std::vector<size_t>({0, 1}),
             "rank ", rank, ": unexpected initial layout\n", ddp.reducer().layout_string());
    Tensor x = randn({4, 6}), y = randn({4, 3});
    for (int s = 0; s < 2; ++s) mse_loss(ddp(x), y).backward();
    GR_CHECK(ddp.reducer().buckets_rebuilt(), "rank ", rank, ": buckets not rebuilt after the first iteration");
    // Gradients arrive last layer first, bias before weight.
    auto rebuilt = ddp.reducer().bucket_indices();
    GR_CHECK(rebuilt.front().front() == 5 || rebuilt.front().front() == 4, "rank ", rank, ": rebuilt layout starts with ",
             rebuilt.front().front(), "\n", ddp.reducer().layout_string());
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP no_sync over k micro-batches equals one step on the k-times batch") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    const int world = 2, k = 3;
    const int64_t micro = 2;
    Data data = make_data(k, micro * world, kFloat64);
    auto [ref, model] = twin_models<Net>(rank, kFloat64);
    DistributedDataParallel ddp(model, default_group());
    Tensor X = gr::cat(data.x, 0), Y = gr::cat(data.y, 0);
    mse_loss(ref(X), Y).backward();
    for (int m = 0; m < k; ++m) {
      Tensor xs = data.x[m].narrow(0, rank * micro, micro), ys = data.y[m].narrow(0, rank * micro, micro);
      if (m + 1 < k) {
        auto guard = ddp.no_sync();
        (mse_loss(ddp(xs), ys) / static_cast<double>(k)).backward();
      } else {
        (mse_loss(ddp(xs), ys) / static_cast<double>(k)).backward();
      }
    }
    for (const auto& [name, p] : ref->named_parameters()) {
      const double d = max_rel_diff(model->named_parameters().find(name)->grad(), p.grad());
      GR_CHECK(d < 1e-12, "rank ", rank, ": gradient of ", name, " differs by ", d);
    }
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP unused parameters: the error names them; find_unused_parameters trains correctly") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    {
      auto [ref, model] = twin_models<Branchy>(rank, kFloat64);
      DistributedDataParallel ddp(model, default_group());
      Tensor x = randn({3, 6}, kFloat64);
      ddp(x, false).sum().backward();
      bool threw = false;
      try {
        ddp(x, false);
      } catch (const gr::Error& e) {
        const std::string m = e.what();
        threw = m.find("b.weight") != std::string::npos && m.find("b.bias") != std::string::npos &&
                m.find("find_unused_parameters") != std::string::npos && m.find("trunk.weight") == std::string::npos;
      }
      GR_CHECK(threw, "rank ", rank, ": expected the unused-parameter error naming b.weight and b.bias");
    }
    {
      // Head b is used on rank 1 only in odd steps: gradients must still match one process.
      const int steps = 4;
      const int64_t per = 3;
      Data data = make_data(steps, per * 2, kFloat64);
      auto [ref, model] = twin_models<Branchy>(rank, kFloat64);
      DistributedDataParallel ddp(model, default_group(), DistributedDataParallelOptions().find_unused_parameters(true));
      optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.05));
      optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.05));
      for (int s = 0; s < steps; ++s) {
        const bool b_on_1 = s % 2 == 1;
        opt_ref.zero_grad();
        Tensor loss_ref = (mse_loss(ref(data.x[s].narrow(0, 0, per), false), data.y[s].narrow(0, 0, per)) +
                           mse_loss(ref(data.x[s].narrow(0, per, per), b_on_1), data.y[s].narrow(0, per, per))) / 2.0;
        loss_ref.backward();
        opt_ref.step();
        opt.zero_grad();
        Tensor xs = data.x[s].narrow(0, rank * per, per), ys = data.y[s].narrow(0, rank * per, per);
        mse_loss(ddp(xs, rank == 1 && b_on_1), ys).backward();
        opt.step();
      }
      test::require_same_params(*model, *ref, 1e-12, "find_unused_parameters on rank " + std::to_string(rank), /*relative=*/true);
    }
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP: a parameter marked ready twice in one iteration is an error naming it") {
  // Two outputs: `a` reaches trunk and head a, `y` also head b.
  struct TwoOutImpl : nn::Module {
    TwoOutImpl()
        : trunk(register_module("trunk", nn::Linear(6, 8))),
          a(register_module("a", nn::Linear(8, 3))),
          b(register_module("b", nn::Linear(8, 3))) {}
    std::tuple<Tensor, Tensor> forward(const Tensor& x) {
      Tensor h = relu(trunk(x)), ya = a(h);
      return {ya, ya + b(h)};
    }
    nn::Linear trunk, a, b;
  };
  spawn(2, [](int rank) {
    init_process_group("gloo");
    auto model = std::make_shared<TwoOutImpl>();
    model->to(kFloat64);
    DistributedDataParallel ddp(model, default_group(), DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9));
    auto [ya, y] = ddp(randn({3, 6}, kFloat64));
    // The first backward leaves head b without gradients (its bucket, the first, never
    // launches); the second fires trunk's and a's hooks again in the same iteration.
    ya.sum().backward({}, /*retain_graph=*/true);
    bool threw = false;
    try {
      y.sum().backward();
    } catch (const gr::Error& e) {
      const std::string m = e.what();
      threw = m.find("marked ready twice") != std::string::npos && m.find("parameter a.") != std::string::npos;
    }
    GR_CHECK(threw, "rank ", rank, ": expected the marked-ready-twice error naming a parameter of head a");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP: ranks with different models fail together, naming the parameter") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    std::shared_ptr<nn::Module> m;
    struct WideImpl : nn::Module {
      explicit WideImpl(int64_t w) : fc(register_module("fc", nn::Linear(4, w))) {}
      Tensor forward(const Tensor& x) { return fc(x); }
      nn::Linear fc;
    };
    auto model = std::make_shared<WideImpl>(rank == 0 ? 3 : 5);
    bool threw = false;
    try {
      DistributedDataParallel ddp(model, default_group());
    } catch (const gr::Error& e) {
      const std::string msg = e.what();
      threw = msg.find("models differ") != std::string::npos &&
              (rank == 0 || (msg.find("fc.weight") != std::string::npos && msg.find("[5, 4]") != std::string::npos &&
                             msg.find("[3, 4]") != std::string::npos));
    }
    GR_CHECK(threw, "rank ", rank, ": expected the model-mismatch error");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP join: uneven inputs finish without hanging and match one process") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    const int world = 2;
    const int64_t per = 2;
    const int batches[2] = {2, 5};  // rank 0 runs out after 2 steps
    Data data = make_data(5, per * world, kFloat64);
    auto [ref, model] = twin_models<Net>(rank, kFloat64);
    DistributedDataParallel ddp(model, default_group());
    optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.1));
    optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1));
    for (int s = 0; s < 5; ++s) {
      // Ranks out of data add zeros; the sum is still divided by the world size.
      opt_ref.zero_grad();
      Tensor loss = zeros({}, kFloat64);
      for (int r = 0; r < world; ++r)
        if (s < batches[r])
          loss = loss + mse_loss(ref(data.x[s].narrow(0, r * per, per)), data.y[s].narrow(0, r * per, per)) / 2.0;
      loss.backward();
      opt_ref.step();
    }
    ddp.join([&] {
      for (int s = 0; s < batches[rank]; ++s) {
        opt.zero_grad();
        mse_loss(ddp(data.x[s].narrow(0, rank * per, per)), data.y[s].narrow(0, rank * per, per)).backward();
        opt.step();
      }
    });
    test::require_same_params(*model, *ref, 1e-12, "join on rank " + std::to_string(rank), /*relative=*/true);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP with SyncBatchNorm on 2 ranks equals BatchNorm on the whole batch in one process") {
  struct ConvNetImpl : nn::Module {
    ConvNetImpl()
        : conv(register_module("conv", nn::Conv2d(2, 4, 3))),
          bn(register_module("bn", nn::BatchNorm2d(4))),
          fc(register_module("fc", nn::Linear(4 * 4 * 4, 3))) {}
    Tensor forward(const Tensor& x) { return fc(relu(bn(conv(x))).flatten(1)); }
    nn::Conv2d conv;
    nn::BatchNorm2d bn;
    nn::Linear fc;
  };
  spawn(2, [](int rank) {
    init_process_group("gloo");
    auto ref = std::make_shared<ConvNetImpl>(), model = std::make_shared<ConvNetImpl>();
    ref->to(kFloat64);
    model->to(kFloat64);
    if (rank == 0) model->load_state_dict(ref->state_dict());
    convert_sync_batchnorm(*model, default_group());
    DistributedDataParallel ddp(model, default_group());
    optim::SGD opt_ref(ref->parameters(), optim::SGDOptions(0.1).momentum(0.5));
    optim::SGD opt(ddp.parameters(), optim::SGDOptions(0.1).momentum(0.5));
    Generator g(5);
    for (int s = 0; s < 3; ++s) {
      Tensor x = randn({6, 2, 6, 6}, TensorOptions(kFloat64), &g), y = randn({6, 3}, TensorOptions(kFloat64), &g);
      opt_ref.zero_grad();
      mse_loss(ref->forward(x), y).backward();
      opt_ref.step();
      opt.zero_grad();
      mse_loss(ddp(x.narrow(0, rank * 3, 3)), y.narrow(0, rank * 3, 3)).backward();
      opt.step();
    }
    test::require_same_params(*model, *ref, 1e-11, "SyncBatchNorm + DDP on rank " + std::to_string(rank), /*relative=*/true);
    const double d = max_rel_diff(model->bn->running_var, ref->bn->running_var);
    GR_CHECK(d < 1e-12, "rank ", rank, ": running_var differs by ", d);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP state_dict has the wrapped model's keys (no module. prefix) and loads into the bare model") {
  spawn(1, [](int) {
    init_process_group("gloo");
    Net model;
    DistributedDataParallel ddp(model, default_group());
    auto want = model->state_dict().keys(), got = ddp.state_dict().keys();
    GR_CHECK(got == want, "state_dict keys differ");
    Net other;
    other->load_state_dict(ddp.state_dict());
    test::require_same_params(*other, *model, 0, "state_dict round trip", /*relative=*/true);
    GR_CHECK(&ddp.module() == model.ptr().get(), "module() is not the wrapped model");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("DDP writes a per-rank Chrome trace with bucket all-reduces and logs timings at INFO") {
  spawn(2, [](int rank) {
    const std::string dir = "/tmp/gradring_ddp_trace_test_" + std::to_string(::getppid());
    const std::string log = dir + "_rank" + std::to_string(rank) + ".log";
    ::setenv("GRADRING_DISTRIBUTED_DEBUG", "INFO", 1);
    GR_CHECK(std::freopen(log.c_str(), "w", stderr) != nullptr, "cannot redirect stderr");
    init_process_group("gloo");
    auto [ref, model] = twin_models<Net>(rank, kFloat32);
    DistributedDataParallel ddp(model, default_group(), DistributedDataParallelOptions().bucket_cap_mb(1e-9).first_bucket_cap_mb(1e-9));
    profiler::reset();
    profiler::enable();
    for (int s = 0; s < 2; ++s) mse_loss(ddp(randn({4, 6})), randn({4, 3})).backward();
    profiler::enable(false);
    const std::string path = ddp.write_chrome_trace(dir);
    std::fflush(stderr);
    std::ifstream in(path);
    nlohmann::json trace = nlohmann::json::parse(in);
    int allreduces = 0, waits = 0, forwards = 0;
    bool named = false;
    for (const auto& e : trace.at("traceEvents")) {
      GR_CHECK(e.at("pid") == rank, "trace event with pid ", e.at("pid").dump());
      if (e.at("ph") == "M") {
        named = named || (e.at("name") == "process_name" && e.at("args").at("name") == "rank " + std::to_string(rank));
        continue;
      }
      const std::string name = e.at("name");
      allreduces += name.rfind("allreduce bucket ", 0) == 0 && e.at("cat") == "comm";
      waits += name == "DDP wait";
      forwards += name == "DDP forward";
    }
    GR_CHECK(named && allreduces == 2 * 6 && waits == 2 && forwards == 2, "rank ", rank, ": trace has ", allreduces,
             " all-reduce spans, ", waits, " waits, ", forwards, " forwards");
    std::ifstream logged(log);
    const std::string text((std::istreambuf_iterator<char>(logged)), std::istreambuf_iterator<char>());
    GR_CHECK(text.find("DDP buckets: 6 bucket(s)") != std::string::npos &&
                 text.find("DDP iteration 1: forward") != std::string::npos && text.find("wait after backward") != std::string::npos,
             "rank ", rank, ": INFO log lacks the layout or timings:\n", text);
    destroy_process_group();
  }, {.timeout = 60s});
}
