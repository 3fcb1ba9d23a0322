// SyncBatchNorm on 2 and 3 spawned ranks equals BatchNorm2d on the whole batch in one
// process: outputs, input gradients, summed weight/bias gradients and running statistics,
// with uneven per-rank batches; and the group-of-one and error cases.
#include <chrono>

#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"
#include "distributed/ddp/sync_batch_norm.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

namespace {

void require_close(const Tensor& got, const Tensor& want, const std::string& what, int rank) {
  GR_CHECK(got.sizes() == want.sizes(), what, " on rank ", rank, ": shape ", got.sizes(), " != ", want.sizes());
  if (got.numel() == 0) return;
  const double err = test::max_abs_diff(got, want);
  GR_CHECK(err <= 1e-10 * (1 + want.abs().max().item<double>()), what, " on rank ", rank, ": max error ", err);
}

// Rank r's slice of the global batch: the images [offsets[r], offsets[r + 1]).
struct Slices {
  std::vector<int64_t> offsets;
  int64_t begin(int r) const { return offsets[r]; }
  int64_t size(int r) const { return offsets[r + 1] - offsets[r]; }
};

}  // namespace

TEST_CASE("SyncBatchNorm on N ranks equals BatchNorm on the whole batch (float64, uneven and empty batches)") {
  // Rank 1 of the last layout has an empty batch.
  for (const Slices& sl : {Slices{{0, 3, 8}}, Slices{{0, 2, 4, 9}}, Slices{{0, 4, 4, 7}}}) {
    const int n = static_cast<int>(sl.offsets.size()) - 1;
    CAPTURE(n);
    spawn(n, [sl](int rank) {
      ProcessGroupPtr pg = init_process_group("gloo");
      const int64_t N = sl.offsets.back(), C = 3;
      Generator gen(11);  // the same data on every rank
      Tensor x = randn({N, C, 4, 5}, TensorOptions(kFloat64), &gen) * 2.0 + 0.5;
      Tensor g = randn({N, C, 4, 5}, TensorOptions(kFloat64), &gen);

      // Reference: one BatchNorm2d on the whole batch, two training steps.
      nn::BatchNorm2d ref(nn::BatchNorm2dOptions(C).momentum(0.3));
      ref->to(kFloat64);
      nn::BatchNorm2d sync(nn::BatchNorm2dOptions(C).momentum(0.3));
      sync->to(kFloat64);
      {
        NoGradGuard no_grad;
        Tensor w = randn({C}, TensorOptions(kFloat64), &gen), b = randn({C}, TensorOptions(kFloat64), &gen);
        ref->weight.copy_(w), ref->bias.copy_(b), sync->weight.copy_(w), sync->bias.copy_(b);
      }
      convert_sync_batchnorm(*sync, pg);
      for (int step = 0; step < 2; ++step) {
        Tensor xr = x.detach().requires_grad_(true);
        Tensor yr = ref(xr);
        (yr * g).sum().backward();

        Tensor xs = x.narrow(0, sl.begin(rank), sl.size(rank)).detach().requires_grad_(true);
        Tensor ys = sync(xs);
        (ys * g.narrow(0, sl.begin(rank), sl.size(rank))).sum().backward();

        require_close(ys, yr.detach().narrow(0, sl.begin(rank), sl.size(rank)), "output", rank);
        require_close(xs.grad(), xr.grad().narrow(0, sl.begin(rank), sl.size(rank)), "input gradient", rank);
        // Weight and bias gradients are per-rank shares (DDP sums and averages them).
        Tensor gw = sync->weight.grad().clone(), gb = sync->bias.grad().clone();
        pg->allreduce(gw)->wait();
        pg->allreduce(gb)->wait();
        require_close(gw, ref->weight.grad(), "summed weight gradient", rank);
        require_close(gb, ref->bias.grad(), "summed bias gradient", rank);
        require_close(sync->running_mean, ref->running_mean, "running_mean", rank);
        require_close(sync->running_var, ref->running_var, "running_var", rank);
        for (auto* m : {&ref, &sync}) (*m)->weight.mutable_grad() = Tensor(), (*m)->bias.mutable_grad() = Tensor();
        x = x * 0.5 + 1.0;  // a different batch for the second step
      }
      // Evaluation mode uses the (identical) running statistics, without any exchange.
      ref->eval();
      sync->eval();
      require_close(sync(x), ref(x), "eval output", rank);
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

TEST_CASE("SyncBatchNorm: a group of one is plain BatchNorm; too few values fail on every rank") {
  spawn(2, [](int rank) {
    ProcessGroupPtr pg = init_process_group("gloo");
    // One value per channel over both ranks together is an error on both, naming the count.
    nn::BatchNorm2d bn = make_sync_batch_norm(nn::BatchNorm2dOptions(2), pg);
    Tensor x = rank == 0 ? randn({1, 2, 1, 1}) : randn({0, 2, 1, 1});
    bool threw = false;
    try {
      bn(x);
    } catch (const gr::Error& e) {
      threw = std::string(e.what()).find("more than 1 value per channel") != std::string::npos;
    }
    GR_CHECK(threw, "rank ", rank, ": expected the too-few-values error");
    destroy_process_group();
  }, {.timeout = 60s});
  spawn(1, [](int) {
    ProcessGroupPtr pg = init_process_group("gloo");
    nn::BatchNorm2d plain(4), sync = make_sync_batch_norm(nn::BatchNorm2dOptions(4), pg);
    Tensor x = randn({3, 4, 2, 2});
    require_close(sync(x), plain(x), "group of one", 0);
    require_close(sync->running_var, plain->running_var, "group of one running_var", 0);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("SyncBatchNorm needs a group, and prints as SyncBatchNorm") {
  CHECK_THROWS_WITH_AS(convert_sync_batchnorm(*nn::BatchNorm2d(3), nullptr), doctest::Contains("null"), gr::Error);
  CHECK_THROWS_AS(make_sync_batch_norm(nn::BatchNorm2dOptions(3), nullptr), gr::Error);
}
