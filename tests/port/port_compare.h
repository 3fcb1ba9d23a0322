// What the port programs need to run the same way under libtorch and gradring when
// PORT_COMPARE=1 (Note [Port comparison]). Written against libtorch's API like the programs,
// and renamed by port.sh with them.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace port_compare {

// Note [Port comparison]
// Each port program is built twice, renamed against gradring (check_port.sh) and as written
// against libtorch (tests/port/libtorch/, where libtorch-dev is installed), and run with
// PORT_COMPARE=1 by both; compare_runs.py then compares the "loss <what> <value>" lines they
// print. The two libraries draw different random numbers (libtorch: mt19937; gradring: Philox),
// so in this mode a program takes nothing random from its library: parameters are overwritten
// by fix_parameters(), noise comes from fixed_values(), samplers are sequential and dropout is
// 0. What still differs is float32 rounding (summation orders, vectorised math), so the losses
// agree to a tolerance, not bitwise (compare_runs.py says which and why). libtorch's MNIST
// reader insists on 60000 training and 10000 test images, so the MNIST programs get a data set
// of that size (check_port.sh) and train on its first kBatchesPerEpoch batches per epoch. The
// programs' own checks (the loss falls) are for their normal runs: in this mode the comparison
// is the check, and they return after printing their losses.

constexpr int64_t kBatchesPerEpoch = 20;

inline bool enabled() {
  const char* v = std::getenv("PORT_COMPARE");
  return v != nullptr && std::string(v) == "1";
}

// Float32 values uniform in [-scale, scale) from an integer generator of `seed`: the same
// numbers in both libraries.
inline torch::Tensor fixed_values(torch::IntArrayRef shape, uint64_t seed, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (float& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(scale * (static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1));
  }
  return torch::tensor(v).reshape(shape);
}

// Overwrites the parameters of `module` that its library initialised at random with
// fixed_values seeded by the parameter's name: matrices and kernels within 1/sqrt(fan in)
// (as the default initialisations), vectors within 0.1. Parameters that start at all zeros or
// all ones (norm layers, attention biases) are the same in both libraries and stay.
inline void fix_parameters(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters()) {
    torch::Tensor p = item.value();
    const double first = p.flatten()[0].item<double>();
    if ((first == 0 || first == 1) && p.eq(first).all().item<bool>()) continue;
    uint64_t seed = 1469598103934665603ull;  // FNV-1a of the name
    for (unsigned char c : item.key()) seed = (seed ^ c) * 1099511628211ull;
    const double scale = p.dim() >= 2 ? 1 / std::sqrt(static_cast<double>(p.numel() / p.size(0))) : 0.1;
    p.copy_(fixed_values(p.sizes(), seed, scale));
  }
}

// Whether this library's StepLR decays one step() later than PyTorch's Python StepLR: libtorch's
// C++ one does (it tests its count before incrementing it), gradring's follows Python's
// (docs/porting-from-libtorch.md). One extra step() on such a scheduler right after it is made
// (where it leaves the lr alone) makes both decay at the same steps.
inline bool step_lr_decays_late() {
  torch::Tensor w = torch::zeros({1}).requires_grad_(true);
  torch::optim::SGD probe_optimizer({w}, torch::optim::SGDOptions(1.0));
  torch::optim::StepLR probe(probe_optimizer, /*step_size=*/1, /*gamma=*/0.5);
  probe.step();
  return probe_optimizer.param_groups()[0].options().get_lr() == 1.0;
}

// The line compare_runs.py reads, "loss <what> <value>" (what: a step number, or a name
// such as "heldout"), printed only when enabled().
inline void print_loss(const std::string& what, double value) {
  if (enabled()) std::printf("loss %s %.9g\n", what.c_str(), value);
}

}  // namespace port_compare
