// Fused optimizer updates: argument checks and the CPU loops.
#include "core/native/optim/optimizer_steps.h"

#include "core/native/optim/step_loop.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SgdStepFn, sgd_step_stub);
GR_DEFINE_DISPATCH(AdamStepFn, adam_step_stub);
GR_DEFINE_DISPATCH(AdadeltaStepFn, adadelta_step_stub);
GR_DEFINE_DISPATCH(SgdStepsFn, sgd_steps_stub);
GR_DEFINE_DISPATCH(AdamStepsFn, adam_steps_stub);
GR_DEFINE_DISPATCH(AdadeltaStepsFn, adadelta_steps_stub);

namespace {

using namespace step_loop;

void sgd_cpu(const Tensor& p, const Tensor& g, const Tensor& buf, const functors::SgdStep<double>& s) {
  dispatch_floating(p.scalar_type(), "sgd", [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(buf)); });
}
void adam_cpu(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor& vmax,
              const functors::AdamStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adam", [&]<class T>() {
    run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(m), ptr_or_null<T>(v), ptr_or_null<T>(vmax));
  });
}
void adadelta_cpu(const Tensor& p, const Tensor& g, const Tensor& sq, const Tensor& acc,
                  const functors::AdadeltaStep<double>& s) {
  dispatch_floating(p.scalar_type(), "adadelta",
                    [&]<class T>() { run<T>(p, g, functor_as<T>(s), ptr_or_null<T>(sq), ptr_or_null<T>(acc)); });
}

// The CPU runs a list one parameter at a time (Note [Foreach lists] in foreach.h).
void sgd_steps_cpu(const std::vector<StepOperands>& ops, const functors::SgdStep<double>& s) {
  for (const StepOperands& o : ops) sgd_cpu(o[0], o[1], operand(o, 2), s);
}
void adam_steps_cpu(const std::vector<StepOperands>& ops, const functors::AdamStep<double>& s) {
  for (const StepOperands& o : ops) adam_cpu(o[0], o[1], operand(o, 2), operand(o, 3), operand(o, 4), s);
}
void adadelta_steps_cpu(const std::vector<StepOperands>& ops, const functors::AdadeltaStep<double>& s) {
  for (const StepOperands& o : ops) adadelta_cpu(o[0], o[1], operand(o, 2), operand(o, 3), s);
}

}  // namespace

GR_REGISTER_KERNEL(sgd_step_stub, kCPU, &sgd_cpu);
GR_REGISTER_KERNEL(adam_step_stub, kCPU, &adam_cpu);
GR_REGISTER_KERNEL(adadelta_step_stub, kCPU, &adadelta_cpu);
GR_REGISTER_KERNEL(sgd_steps_stub, kCPU, &sgd_steps_cpu);
GR_REGISTER_KERNEL(adam_steps_stub, kCPU, &adam_steps_cpu);
GR_REGISTER_KERNEL(adadelta_steps_stub, kCPU, &adadelta_steps_cpu);

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

// The list versions: each parameter checked as by the single-tensor function, then one stub
// call for the whole list (or one per parameter when it spreads over devices or dtypes).
void sgd_steps(const std::vector<StepOperands>& ops, const functors::SgdStep<double>& s) {
  for (const StepOperands& o : ops) {
    GR_CHECK(o.size() >= 2 && o.size() <= 3, "SGD: expected param, grad[, momentum_buffer] per parameter");
    check_operands("SGD", o[0], {&o[1], &operand(o, 2)});
    GR_CHECK(o[1].defined(), "SGD: parameter has no gradient");
    GR_CHECK(s.momentum == 0 || operand(o, 2).defined(), "SGD: momentum buffer missing");
  }
  if (one_call(ops)) sgd_steps_stub(ops.front()[0].device(), ops, s);
  else for (const StepOperands& o : ops) sgd_step_stub(o[0].device(), o[0], o[1], operand(o, 2), s);
  for (const StepOperands& o : ops) o[0].unsafe_impl()->storage.bump_version();
}

void adam_steps(const std::vector<StepOperands>& ops, const functors::AdamStep<double>& s) {
  for (const StepOperands& o : ops) {
    GR_CHECK(o.size() >= 4 && o.size() <= 5, "Adam: expected param, grad, exp_avg, exp_avg_sq[, max_exp_avg_sq] per parameter");
    check_operands("Adam", o[0], {&o[1], &o[2], &o[3], &operand(o, 4)});
    GR_CHECK(o[1].defined() && o[2].defined() && o[3].defined() && (!s.amsgrad || operand(o, 4).defined()),
             "Adam: gradient or state missing");
  }
  if (one_call(ops)) adam_steps_stub(ops.front()[0].device(), ops, s);
  else for (const StepOperands& o : ops) adam_step_stub(o[0].device(), o[0], o[1], o[2], o[3], operand(o, 4), s);
  for (const StepOperands& o : ops) o[0].unsafe_impl()->storage.bump_version();
}

void adadelta_steps(const std::vector<StepOperands>& ops, const functors::AdadeltaStep<double>& s) {
  for (const StepOperands& o : ops) {
    GR_CHECK(o.size() == 4, "Adadelta: expected param, grad, square_avg, acc_delta per parameter");
    check_operands("Adadelta", o[0], {&o[1], &o[2], &o[3]});
    GR_CHECK(o[1].defined() && o[2].defined() && o[3].defined(), "Adadelta: gradient or state missing");
  }
  if (one_call(ops)) adadelta_steps_stub(ops.front()[0].device(), ops, s);
  else for (const StepOperands& o : ops) adadelta_step_stub(o[0].device(), o[0], o[1], o[2], o[3], s);
  for (const StepOperands& o : ops) o[0].unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
