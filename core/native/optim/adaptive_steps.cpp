// RMSprop, Adagrad, Adamax, NAdam and RAdam as fused list steps: argument checks and the CPU
// loops, compiled without FP contraction (Note [Tensor-op rounding of the adaptive steps]).
#include <utility>

#include "core/native/optim/optimizer_steps.h"
#include "core/native/optim/step_loop.h"

namespace gr::native {

GR_DEFINE_DISPATCH(RmspropStepsFn, rmsprop_steps_stub);
GR_DEFINE_DISPATCH(AdagradStepsFn, adagrad_steps_stub);
GR_DEFINE_DISPATCH(AdamaxStepsFn, adamax_steps_stub);
GR_DEFINE_DISPATCH(NadamStepsFn, nadam_steps_stub);
GR_DEFINE_DISPATCH(RadamStepsFn, radam_steps_stub);

namespace {

using namespace step_loop;

// One parameter at a time (Note [Foreach lists] in foreach.h), its Buffers state tensors
// after param and grad.
template <class F, size_t Buffers>
void cpu_steps(const std::vector<StepOperands>& ops, const F& s) {
  for (const StepOperands& o : ops)
    dispatch_floating(o[0].scalar_type(), "optimizer step", [&]<class T>() {
      [&]<size_t... B>(std::index_sequence<B...>) {
        run<T>(o[0], o[1], functor_as<T>(s), ptr_or_null<T>(operand(o, 2 + B))...);
      }(std::make_index_sequence<Buffers>{});
    });
}

// Checks every parameter's operands (size: how many it takes; has_state: whether the functor's
// buffers are there), then one stub call for the list, or one per parameter when it spreads
// over devices or dtypes.
template <class F, class Stub, class HasState>
void checked_steps(const char* name, const std::vector<StepOperands>& ops, const F& s, Stub& stub, size_t size,
                   const HasState& has_state) {
  for (const StepOperands& o : ops) {
    GR_CHECK(o.size() == size, name, ": expected ", size, " tensors per parameter (param, grad, state), got ", o.size());
    check_operands(name, o[0], {&o[1], &operand(o, 2), &operand(o, 3), &operand(o, 4)});
    GR_CHECK(o[1].defined() && has_state(o), name, ": gradient or state missing");
  }
  if (one_call(ops)) stub(ops.front()[0].device(), ops, s);
  else for (const StepOperands& o : ops) stub(o[0].device(), std::vector<StepOperands>{o}, s);
  for (const StepOperands& o : ops) o[0].unsafe_impl()->storage.bump_version();
}

}  // namespace

GR_REGISTER_KERNEL(rmsprop_steps_stub, kCPU, (&cpu_steps<functors::RmspropStep<double>, 3>));
GR_REGISTER_KERNEL(adagrad_steps_stub, kCPU, (&cpu_steps<functors::AdagradStep<double>, 1>));
GR_REGISTER_KERNEL(adamax_steps_stub, kCPU, (&cpu_steps<functors::AdamaxStep<double>, 2>));
GR_REGISTER_KERNEL(nadam_steps_stub, kCPU, (&cpu_steps<functors::NadamStep<double>, 2>));
GR_REGISTER_KERNEL(radam_steps_stub, kCPU, (&cpu_steps<functors::RadamStep<double>, 2>));

void rmsprop_steps(const std::vector<StepOperands>& ops, const functors::RmspropStep<double>& s) {
  checked_steps("RMSprop", ops, s, rmsprop_steps_stub, 5, [&](const StepOperands& o) {
    return o[2].defined() && (!s.with_momentum || o[3].defined()) && (!s.centered || o[4].defined());
  });
}
void adagrad_steps(const std::vector<StepOperands>& ops, const functors::AdagradStep<double>& s) {
  checked_steps("Adagrad", ops, s, adagrad_steps_stub, 3, [](const StepOperands& o) { return o[2].defined(); });
}
void adamax_steps(const std::vector<StepOperands>& ops, const functors::AdamaxStep<double>& s) {
  checked_steps("Adamax", ops, s, adamax_steps_stub, 4,
                [](const StepOperands& o) { return o[2].defined() && o[3].defined(); });
}
void nadam_steps(const std::vector<StepOperands>& ops, const functors::NadamStep<double>& s) {
  checked_steps("NAdam", ops, s, nadam_steps_stub, 4,
                [](const StepOperands& o) { return o[2].defined() && o[3].defined(); });
}
void radam_steps(const std::vector<StepOperands>& ops, const functors::RadamStep<double>& s) {
  checked_steps("RAdam", ops, s, radam_steps_stub, 4,
                [](const StepOperands& o) { return o[2].defined() && o[3].defined(); });
}

}  // namespace gr::native
