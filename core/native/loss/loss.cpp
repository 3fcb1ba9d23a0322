// nll_loss forward/backward: argument checks and the CPU kernels (one pass over the
// batch; per-sample work is a single gather, so the loop stays serial and deterministic).
#include "core/native/loss/loss.h"

#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr::native {

GR_DEFINE_DISPATCH(NllLossFn, nll_loss_stub);
GR_DEFINE_DISPATCH(NllLossBackwardFn, nll_loss_backward_stub);

namespace {

inline void check_target(int64_t t, int64_t i, int64_t C) {
  GR_CHECK(t >= 0 && t < C, "nll_loss: target ", t, " at index ", i, " is out of bounds for ", C, " classes");
}

template <class T>
void nll_loss_kernel(const T* x, const int64_t* target, const T* weight, T* out, T* total_weight, int64_t N, int64_t C,
                     Reduction reduction, int64_t ignore_index) {
  acc_t<T> total = 0, total_w = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t t = target[i];
    if (t == ignore_index) {
      if (reduction == Reduction::None) out[i] = T(0);
      continue;
    }
    check_target(t, i, C);
    const T w = weight ? weight[t] : T(1);
    const T loss = nll_term(x[i * C + t], w);
    if (reduction == Reduction::None) out[i] = loss;
    total += loss;
    total_w += w;
  }
  *total_weight = static_cast<T>(total_w);
  if (reduction != Reduction::None) *out = static_cast<T>(nll_reduce(total, total_w, reduction));
}

template <class T>
void nll_loss_backward_kernel(const T* grad_out, const int64_t* target, const T* weight, const T* total_weight,
                              T* grad_in, int64_t N, int64_t C, Reduction reduction, int64_t ignore_index) {
  std::fill(grad_in, grad_in + N * C, T(0));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t t = target[i];
    if (t == ignore_index) continue;
    check_target(t, i, C);
    const T w = weight ? weight[t] : T(1);
    grad_in[i * C + t] = nll_grad(grad_out, i, w, total_weight, reduction);
  }
}

void nll_loss_cpu(const void* input, const int64_t* target, const void* weight, void* out, void* total_weight, int64_t N,
                  int64_t C, Reduction reduction, int64_t ignore_index, ScalarType t) {
  dispatch_floating(t, "nll_loss", [&]<class T>() {
    nll_loss_kernel(static_cast<const T*>(input), target, static_cast<const T*>(weight), static_cast<T*>(out),
                    static_cast<T*>(total_weight), N, C, reduction, ignore_index);
  });
}

void nll_loss_backward_cpu(const void* grad_out, const int64_t* target, const void* weight, const void* total_weight,
                           void* grad_in, int64_t N, int64_t C, Reduction reduction, int64_t ignore_index,
                           ScalarType t) {
  dispatch_floating(t, "nll_loss_backward", [&]<class T>() {
    nll_loss_backward_kernel(static_cast<const T*>(grad_out), target, static_cast<const T*>(weight),
                             static_cast<const T*>(total_weight), static_cast<T*>(grad_in), N, C, reduction,
                             ignore_index);
  });
}

// Checks the operands against an input of shape `sizes` (dtype `dtype` on `device`) and
// returns (N, C).
std::pair<int64_t, int64_t> check_nll_args(IntArrayRef sizes, ScalarType dtype, Device device, const Tensor& target,
                                           const Tensor& weight) {
  GR_CHECK(target.defined(), "nll_loss: target must be defined");
  GR_CHECK(sizes.size() == 1 || sizes.size() == 2, "nll_loss: expected input of shape [N, C] or [C], got ", sizes);
  GR_CHECK(dtype == kFloat32 || dtype == kFloat64, "nll_loss: expected a float32 or float64 input, got ", dtype);
  GR_CHECK(target.scalar_type() == kInt64, "nll_loss: expected an int64 target of class indices, got ",
           target.scalar_type());
  GR_CHECK(target.device() == device, "nll_loss: target is on ", target.device().str(), " but input is on ",
           device.str());
  const int64_t N = sizes.size() == 2 ? sizes[0] : 1, C = sizes.back();
  if (sizes.size() == 2) {
    GR_CHECK(target.dim() == 1 && target.size(0) == N, "nll_loss: expected target of shape [", N,
             "] for input of shape ", sizes, ", got ", target.sizes());
  } else {
    GR_CHECK(target.dim() == 0, "nll_loss: expected a 0-d target for input of shape ", sizes, ", got ",
             target.sizes());
  }
  if (weight.defined()) {
    GR_CHECK(weight.dim() == 1 && weight.size(0) == C, "nll_loss: expected weight of shape [", C,
             "] for input of shape ", sizes, ", got ", weight.sizes());
    GR_CHECK(weight.scalar_type() == dtype && weight.device() == device, "nll_loss: expected a ", dtype,
             " weight on ", device.str(), ", got ", weight.toString());
  }
  return {N, C};
}

}  // namespace

GR_REGISTER_KERNEL(nll_loss_stub, kCPU, &nll_loss_cpu);
GR_REGISTER_KERNEL(nll_loss_backward_stub, kCPU, &nll_loss_backward_cpu);

std::pair<Tensor, Tensor> nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction, int64_t ignore_index) {
  GR_CHECK(input.defined(), "nll_loss: input must be defined");
  auto [N, C] = check_nll_args(input.sizes(), input.scalar_type(), input.device(), target, weight);
  Tensor x = contiguous(input), t = contiguous(target), w = weight.defined() ? contiguous(weight) : Tensor();
  const bool per_sample = reduction == Reduction::None && input.dim() == 2;
  Tensor out = empty(per_sample ? std::vector<int64_t>{N} : std::vector<int64_t>{}, input.options());
  Tensor total_weight = empty({}, input.options());
  nll_loss_stub(input.device(), x.data_ptr(), t.data_ptr<int64_t>(), w.defined() ? w.data_ptr() : nullptr,
                out.data_ptr(), total_weight.data_ptr(), N, C, reduction, ignore_index, input.scalar_type());
  return {out, total_weight};
}

Tensor nll_loss_backward(const Tensor& grad_out, IntArrayRef input_sizes, const Tensor& target, const Tensor& weight,
                         Reduction reduction, int64_t ignore_index, const Tensor& total_weight) {
  auto [N, C] = check_nll_args(input_sizes, grad_out.scalar_type(), grad_out.device(), target, weight);
  Tensor g = contiguous(grad_out), t = contiguous(target), w = weight.defined() ? contiguous(weight) : Tensor();
  Tensor tw = contiguous(total_weight);
  Tensor grad_in = empty(input_sizes, grad_out.options());
  nll_loss_backward_stub(grad_out.device(), g.data_ptr(), t.data_ptr<int64_t>(), w.defined() ? w.data_ptr() : nullptr,
                         tw.data_ptr(), grad_in.data_ptr(), N, C, reduction, ignore_index, grad_out.scalar_type());
  return grad_in;
}

}  // namespace gr::native
