// CPU-vs-CUDA parity of the multi-tensor launches (Note [Multi-tensor launches]): the total norm
// of clip_grad_norm_, its clipping, zero_grad's zeroing and the list optimizer steps, over
// lists with odd sizes, empty tensors, tensors longer than a chunk and more tensors and chunks
// than one launch holds (RMSprop, Adagrad, Adamax, NAdam and RAdam through the optimizers
// themselves, whose CUDA steps must not synchronise); and the host synchronisations a
// train_gpt step makes (Note [Host synchronisations]): at most one, its loss.item().
#include <functional>
#include <gradring/core/native/optim/foreach.h>
#include <gradring/core/native/optim/optimizer_steps.h>
#include <memory>

#include "common/gpt.h"
#include "cuda_kernels/multi_tensor.h"
#include "cuda_kernels/runtime.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;

namespace {

// 60 tensors (more than one launch's 48), one of 5 chunks, an empty one, odd sizes.
std::vector<Tensor> list_on(Device d, ScalarType t, uint64_t seed) {
  Generator g(seed);
  std::vector<Tensor> out;
  for (int i = 0; i < 60; ++i) {
    const int64_t n = i == 7 ? 5 * cuda::kChunk + 3 : i == 9 ? 0 : 1 + 37 * i;
    out.push_back(randn({n}, TensorOptions(t), &g).to(d));
  }
  return out;
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("foreach_norm, foreach_clip_ and foreach_zero_ on CUDA agree with the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      const Tol tol = t == kFloat32 ? Tol{1e-6, 0} : Tol{1e-13, 0};
      for (double p : {2.0, 1.0, 3.0, double(INFINITY), 0.0}) {
        const std::vector<Tensor> cpu = list_on(Device(kCPU), t, 11), gpu = list_on(cuda0(), t, 11);
        check_match(native::foreach_norm(gpu, p), native::foreach_norm(cpu, p), tol, "foreach_norm p " + std::to_string(p));
      }
      std::vector<Tensor> cpu = list_on(Device(kCPU), t, 12), gpu = list_on(cuda0(), t, 12);
      const Tensor total_cpu = native::foreach_norm(cpu, 2), total_gpu = native::foreach_norm(gpu, 2);
      native::foreach_clip_(cpu, total_cpu, 0.5);
      native::foreach_clip_(gpu, total_gpu, 0.5);
      for (size_t i = 0; i < cpu.size(); ++i) check_match(gpu[i], cpu[i], tol, "clipped " + std::to_string(i));
      native::foreach_zero_(gpu);
      for (const Tensor& x : gpu) {
        const double largest = x.numel() == 0 ? 0.0 : x.abs().max().item<double>();
        CHECK(largest == 0.0);
      }
    }
  }

  TEST_CASE("list optimizer steps on CUDA agree with the CPU (SGD, Adam(W), Adadelta)") {
    auto operands = [](Device d, int buffers) {
      Generator g(21);
      std::vector<native::StepOperands> ops;
      for (int i = 0; i < 60; ++i) {
        const int64_t n = i == 3 ? 2 * cuda::kChunk + 1 : 1 + 53 * i;
        native::StepOperands o{randn({n}, TensorOptions(kFloat32), &g).to(d), randn({n}, TensorOptions(kFloat32), &g).to(d)};
        for (int b = 0; b < buffers; ++b) o.push_back(randn({n}, TensorOptions(kFloat32), &g).abs().to(d));
        ops.push_back(o);
      }
      return ops;
    };
    auto compare = [](const std::vector<native::StepOperands>& gpu, const std::vector<native::StepOperands>& cpu,
                      const std::string& what) {
      for (size_t i = 0; i < gpu.size(); ++i)
        for (size_t k = 0; k < gpu[i].size(); ++k)
          if (k != 1) check_match(gpu[i][k], cpu[i][k], Tol{1e-5, 1e-6}, what + " parameter " + std::to_string(i));
    };
    {
      auto cpu = operands(Device(kCPU), 1), gpu = operands(cuda0(), 1);
      const functors::SgdStep<double> f{0.1, 0.9, 0, 1e-4, true, false};
      native::sgd_steps(cpu, f);
      native::sgd_steps(gpu, f);
      compare(gpu, cpu, "SGD");
    }
    {
      auto cpu = operands(Device(kCPU), 3), gpu = operands(cuda0(), 3);
      const functors::AdamStep<double> f{1e-3, 0.9, 0.95, 1e-8, 0.1, 0.1, 0.05, true, true};
      native::adam_steps(cpu, f);
      native::adam_steps(gpu, f);
      compare(gpu, cpu, "AdamW amsgrad");
    }
    {
      auto cpu = operands(Device(kCPU), 2), gpu = operands(cuda0(), 2);
      const functors::AdadeltaStep<double> f{1.0, 0.9, 1e-6, 0};
      native::adadelta_steps(cpu, f);
      native::adadelta_steps(gpu, f);
      compare(gpu, cpu, "Adadelta");
    }
  }

  TEST_CASE("RMSprop, Adagrad, Adamax, NAdam and RAdam on CUDA agree with the CPU, with no host synchronisation") {
    using namespace gr::optim;
    // Every option of each: momentum and centered, lr_decay and the initial accumulator,
    // decoupled weight decay; 7 steps, so RAdam's rectified update (rho_t > 5) runs too.
    const std::vector<std::pair<std::string, std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>>> kinds{
        {"RMSprop", [](std::vector<Tensor> p) { return std::make_unique<RMSprop>(p, RMSpropOptions(0.01)); }},
        {"RMSprop momentum centered",
         [](std::vector<Tensor> p) {
           return std::make_unique<RMSprop>(
               p, RMSpropOptions(0.005).alpha(0.9).eps(1e-6).weight_decay(0.01).momentum(0.8).centered(true));
         }},
        {"Adagrad",
         [](std::vector<Tensor> p) {
           return std::make_unique<Adagrad>(
               p, AdagradOptions(0.2).lr_decay(0.1).weight_decay(0.05).initial_accumulator_value(0.5));
         }},
        {"Adamax",
         [](std::vector<Tensor> p) {
           return std::make_unique<Adamax>(p, AdamaxOptions(0.05).betas({0.7, 0.9}).weight_decay(0.1));
         }},
        {"NAdam",
         [](std::vector<Tensor> p) {
           return std::make_unique<NAdam>(p, NAdamOptions(0.02).betas({0.8, 0.95}).weight_decay(0.1).momentum_decay(0.01));
         }},
        {"NAdam decoupled",
         [](std::vector<Tensor> p) {
           return std::make_unique<NAdam>(p, NAdamOptions(0.02).weight_decay(0.1).decoupled_weight_decay(true));
         }},
        {"RAdam", [](std::vector<Tensor> p) { return std::make_unique<RAdam>(p, RAdamOptions(0.01).weight_decay(0.1)); }},
        {"RAdam decoupled",
         [](std::vector<Tensor> p) {
           return std::make_unique<RAdam>(
               p, RAdamOptions(0.02).betas({0.8, 0.99}).weight_decay(0.1).decoupled_weight_decay(true));
         }},
    };
    for (const auto& [name, make] : kinds) {
      Generator g(31);
      std::vector<Tensor> cpu, gpu;
      for (int i = 0; i < 60; ++i) {  // more tensors than a launch holds, one of several chunks
        const int64_t n = i == 3 ? 2 * cuda::kChunk + 1 : 1 + 53 * i;
        const Tensor x = randn({n}, TensorOptions(kFloat32), &g);
        cpu.push_back(x.clone().requires_grad_(true));
        gpu.push_back(x.to(cuda0()).requires_grad_(true));
      }
      std::unique_ptr<Optimizer> on_cpu = make(cpu), on_gpu = make(gpu);
      for (int step = 0; step < 7; ++step) {
        for (size_t i = 0; i < cpu.size(); ++i) {
          const Tensor grad = randn(cpu[i].sizes(), TensorOptions(kFloat32), &g);
          cpu[i].mutable_grad() = grad;
          gpu[i].mutable_grad() = grad.to(cuda0());
        }
        on_cpu->step();
        const uint64_t before = cuda::host_sync_count();
        on_gpu->step();
        INFO(name << " step " << step);
        CHECK(cuda::host_sync_count() == before);  // step counts and coefficients come from the host
      }
      for (size_t i = 0; i < cpu.size(); ++i) {
        check_match(gpu[i].detach(), cpu[i].detach(), Tol{1e-5, 1e-6}, name + " parameter " + std::to_string(i));
        for (const auto& item : on_cpu->state(cpu[i]).items())
          if (item.value().numel() == cpu[i].numel())  // the buffers, not the step count or mu_product
            check_match(on_gpu->state(gpu[i])[item.key()], item.value(), Tol{1e-5, 1e-6}, name + " " + item.key());
      }
    }
  }

  TEST_CASE("a train_gpt step on the GPU makes at most one host synchronisation (its loss.item())") {
    apps::GPTConfig c;
    c.layers = 2, c.heads = 2, c.embd = 64, c.block = 32;
    manual_seed(1);
    apps::GPT model(c);
    model->to(cuda0());
    std::unique_ptr<optim::AdamW> opt = apps::make_gpt_optimizer(model, 1e-3, 0.1);
    const std::vector<Tensor> params = model->parameters();
    Generator g(3);
    auto step = [&] {  // train_gpt's step: batch, forward, backward, loss.item(), clip, AdamW
      opt->zero_grad();
      Tensor x = randint(0, 256, {4, 32}, kInt64, &g), y = randint(0, 256, {4, 32}, kInt64, &g);
      x = pin_memory(x).to(cuda0(), /*non_blocking=*/true);
      y = pin_memory(y).to(cuda0(), /*non_blocking=*/true);
      Tensor loss = model->loss(model(x), y);
      loss.backward();
      const double value = loss.item<double>();
      std::vector<Tensor> grads;
      for (const Tensor& p : params) grads.push_back(p.grad());
      nn::utils::clip_grads_with_norm_(params, 1.0, nn::utils::get_total_norm(grads));
      opt->step();
      return value;
    };
    step();
    step();  // the allocator's blocks, the library handles and the optimizer state exist now
    const uint64_t before = cuda::host_sync_count();
    const double loss = step();
    const uint64_t syncs = cuda::host_sync_count() - before;
    INFO("host synchronisations in one step: " << syncs);
    CHECK(syncs <= 1);
    CHECK(std::isfinite(loss));
    // The counter sees what it counts.
    const uint64_t at = cuda::host_sync_count();
    cuda::synchronize();
    CHECK(cuda::host_sync_count() == at + 1);
    CHECK(std::isfinite(nn::utils::clip_grad_norm_(params, 1.0)));  // reads the norm: one more
    CHECK(cuda::host_sync_count() == at + 2);
  }
}
