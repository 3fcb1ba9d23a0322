// CPU-vs-CUDA parity of the fused optimizer updates (SGD with momentum / Nesterov / weight
// decay, Adam and AdamW with and without amsgrad, Adadelta): several steps of the native
// kernels on the same gradients, parameters and every state buffer compared; odd sizes.
#include <gradring/core/native/optim/optimizer_steps.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;
namespace F = gr::functors;

namespace {
// nvcc may fuse a multiply-add the CPU rounds twice; a few steps keep that at rounding level.
Tol step_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-5, 2e-6} : Tol{1e-12, 1e-13}; }

constexpr int kSteps = 4;

// Runs `step(param, grad, buffers, i)` kSteps times on copies of `state` on `dev`, with
// gradient i from a fixed seed, and returns the parameter followed by the buffers.
template <class Step>
TensorList run_steps(Device dev, const TensorList& state, ScalarType t, const Step& step) {
  TensorList s;
  for (const Tensor& x : state) s.push_back(N::clone(x).to(dev));
  for (int i = 0; i < kSteps; ++i) step(s, random_tensor(state[0].sizes().vec(), t, 1200 + i).to(dev), i);
  return s;
}

template <class Step>
void check_steps(const std::string& what, const TensorList& state, ScalarType t, const Step& step) {
  TensorList want = run_steps(Device(kCPU), state, t, step), got = run_steps(cuda0(), state, t, step);
  for (size_t k = 0; k < want.size(); ++k) check_match(got[k], want[k], step_tol(t), what + " tensor " + std::to_string(k));
}
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("fused optimizer steps match the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      for (int64_t n : {1, 1000, 65537}) {
        const std::string dt = std::string(dtype_name(t)) + " n " + std::to_string(n);
        Tensor p = random_tensor({n}, t, 1100), zero = zeros({n}, t);
        for (double momentum : {0.0, 0.9}) {
          for (bool nesterov : {false, true}) {
            if (nesterov && momentum == 0) continue;
            for (double wd : {0.0, 1e-2}) {
              std::ostringstream what;
              what << "SGD " << dt << " momentum " << momentum << (nesterov ? " nesterov" : "") << " wd " << wd;
              check_steps(what.str(), {p, zero}, t, [&](TensorList& s, const Tensor& g, int i) {
                const double dampening = nesterov ? 0.0 : 0.1;
                N::sgd_step(s[0], g, momentum != 0 ? s[1] : Tensor(),
                            F::SgdStep<double>{0.05, momentum, dampening, wd, nesterov, i == 0});
              });
            }
          }
        }
        for (bool decoupled : {false, true}) {
          for (bool amsgrad : {false, true}) {
            std::ostringstream what;
            what << (decoupled ? "AdamW " : "Adam ") << dt << (amsgrad ? " amsgrad" : "");
            check_steps(what.str(), {p, zero, zero, zero}, t, [&](TensorList& s, const Tensor& g, int i) {
              const double b1 = 0.9, b2 = 0.999, step = i + 1;
              F::AdamStep<double> a{1e-2, b1, b2, 1e-8, 1e-2, 1 - std::pow(b1, step), std::sqrt(1 - std::pow(b2, step)),
                                    amsgrad, decoupled};
              N::adam_step(s[0], g, s[1], s[2], amsgrad ? s[3] : Tensor(), a);
            });
          }
        }
        for (double wd : {0.0, 1e-2}) {
          check_steps("Adadelta " + dt + " wd " + std::to_string(wd), {p, zero, zero}, t,
                      [&](TensorList& s, const Tensor& g, int) {
                        N::adadelta_step(s[0], g, s[1], s[2], F::AdadeltaStep<double>{1.0, 0.9, 1e-6, wd});
                      });
        }
      }
    }
  }
}
