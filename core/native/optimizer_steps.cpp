// Fused optimizer updates: argument checks and the CPU loops.
#include "core/native/optimizer_steps.h"

#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SgdStepFn, sgd_step_stub);
GR_DEFINE_DISPATCH(AdamStepFn, adam_step_stub);
GR_DEFINE_DISPATCH(AdadeltaStepFn, adadelta_step_stub);

namespace {

void check_operands(const char* op, const Tensor& param, std::initializer_list<const Tensor*> others) {
  GR_CHECK(param.defined() && param.is_contiguous() && param.is_floating_point(), op,
           ": parameter must be a contiguous floating point tensor");
  for (const Tensor* t : others) {
    if (!t->defined()) continue;
    GR_CHECK(t->is_contiguous() && t->sizes() == param.sizes() && t->scalar_type() == param.scalar_type() &&
                 t->device() == param.device(),
             op, ": every state tensor must be contiguous with the parameter's shape ", param.sizes(), ", dtype ",
             param.scalar_type(), " and device ", param.device(), "; got ", t->sizes(), " ", t->scalar_type(), " ",
             t->device());
  }
}

template <class T, class F, class... Buffers>
void run(const Tensor& param, const Tensor& grad, const F& f, Buffers... buffers) {
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  if ((... && (buffers != nullptr))) {
    // Every buffer present (the usual case): a plain loop the compiler vectorises.
    // A local copy of the functor: read through a reference, its fields would be reloaded
    // after every store (they might alias the buffers) and the loop would stay scalar.
    parallel_for(0, param.numel(), kGrainSize, [&, f](int64_t b, int64_t e) {
      const F fn = f;
      for (int64_t i = b; i < e; ++i) fn(p[i], g[i], buffers[i]...);
    });
    return;
  }
  parallel_for(0, param.numel(), kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T dummy = T(0);
      f(p[i], g[i], (buffers ? buffers[i] : dummy)...);
    }
  });
}

void sgd_cpu(const Tensor& p, const Tensor& g, const Tensor& buf, const functors::SgdStep<double>& s) {
  dispatch_floating(p.scalar_type(), "sgd", [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(buf)); });
}
void adam_cpu(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& vmax,
              const functors::AdamStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adam", [&]<class T>() {
    const functors::AdamStep<T> f = functor_as<T>(s);
    if (vmax.defined()) {
      run<T>(p, g, f, m.data_ptr<T>(), v.data_ptr<T>(), vmax.data_ptr<T>());
      return;
    }
    // Without amsgrad the max buffer is a local the functor never touches, so the loop takes
    // run's every-buffer path (its per-element "buffer or dummy" choice stays scalar).
    run<T>(
        p, g,
        [f](T& param, T grad, T& exp_avg, T& exp_avg_sq) {
          T unused = T(0);
          f(param, grad, exp_avg, exp_avg_sq, unused);
        },
        m.data_ptr<T>(), v.data_ptr<T>());
  });
}
void adadelta_cpu(const Tensor& p, const Tensor& g, const Tensor& sq, const Tensor& acc,
                  const functors::AdadeltaStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adadelta",
                    [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(sq), ptr_or_null<T>(acc)); });
}

}  // namespace

GR_REGISTER_KERNEL(sgd_step_stub, kCPU, &sgd_cpu);
GR_REGISTER_KERNEL(adam_step_stub, kCPU, &adam_cpu);
GR_REGISTER_KERNEL(adadelta_step_stub, kCPU, &adadelta_cpu);

void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& buf, const functors::SgdStep<double>& s) {
  check_operands("SGD", param, {&grad, &buf});
  GR_CHECK(grad.defined(), "SGD: parameter has no gradient");
  GR_CHECK(s.momentum == 0 || buf.defined(), "SGD: momentum buffer missing");
  sgd_step_stub(param.device(), param, grad, buf, s);
  param.unsafe_impl()->storage.bump_version();
}

void adam_step(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, const Tensor& vmax,
               const functors::AdamStep<double>& s) {
  check_operands("Adam", param, {&grad, &m, &v, &vmax});
  GR_CHECK(grad.defined() && m.defined() && v.defined() && (!s.amsgrad || vmax.defined()),
           "Adam: gradient or state missing");
  adam_step_stub(param.device(), param, grad, m, v, vmax, s);
  param.unsafe_impl()->storage.bump_version();
}

void adadelta_step(const Tensor& param, const Tensor& grad, const Tensor& sq, const Tensor& acc,
                   const functors::AdadeltaStep<double>& s) {
  check_operands("Adadelta", param, {&grad, &sq, &acc});
  GR_CHECK(grad.defined() && sq.defined() && acc.defined(), "Adadelta: gradient or state missing");
  adadelta_step_stub(param.device(), param, grad, sq, acc, s);
  param.unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
