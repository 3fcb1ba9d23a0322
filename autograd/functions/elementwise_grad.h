// Recording element-wise ops whose backward is written with the differentiable gr:: ops
// (Note [Double backward]): out of place, and in place on self. Shared by the math files of
// autograd/functions (trig.cpp, special.cpp, rounding.cpp, binary_math.cpp, clamp.cpp, ...).
#pragma once

#include <functional>
#include <vector>

#include "autograd/function.h"
#include "autograd/ops.h"

namespace gr::autograd {

// The inputs' gradients, each in the broadcast result's shape (undefined where !needs[i]),
// from the result's gradient g, the saved inputs (undefined where not saved) and the saved
// result (undefined where not saved).
using ElementwiseGradFn =
    std::function<TensorList(const Tensor& g, const TensorList& in, const Tensor& out, const std::vector<bool>& needs)>;

// What a backward reads: saves[i] for input i, and the result.
struct Saves {
  std::vector<bool> inputs;
  bool output = false;
};

// Records `out` = op(inputs) when any input requires grad; the gradients grad() returns are
// summed back to each input's shape. Returns out.
Tensor record_elementwise(const char* name, const TensorList& inputs, const Tensor& out, const Saves& saves,
                         ElementwiseGradFn grad);

// The in-place form: self = op(self, others...) through `kernel` (a native in-place op),
// after autograd's in-place checks. The backward reads self's old value (a differentiable
// clone taken before the kernel) where saves.inputs[0], its new value where saves.output.
Tensor& record_elementwise_(const char* name, const char* op, const Tensor& self, const TensorList& others,
                           const std::function<void()>& kernel, const Saves& saves, ElementwiseGradFn grad);

// One-input shorthands: grad(g, saved) with saved the input (Saves{{true}}) or the output
// (Saves{{false}, true}).
using UnaryGradFn = std::function<Tensor(const Tensor& g, const Tensor& saved)>;
Tensor record_unary(const char* name, const Tensor& self, const Tensor& out, bool saves_output, UnaryGradFn grad);
Tensor& record_unary_(const char* name, const char* op, const Tensor& self, const std::function<void()>& kernel,
                      bool saves_output, UnaryGradFn grad);

// The gradient of a piecewise-constant op (floor, sign, ...): zeros, as torch's.
Tensor zero_grad_like(const Tensor& g);

// Sums g (of a broadcast result) down to `shape`, differentiably.
Tensor sum_to_shape(const Tensor& g, IntArrayRef shape);

}  // namespace gr::autograd

// Defines gr::name (out of place), Tensor::name_ (in place through native::name_), and the
// Tensor::name and gr::name_ spellings of them, for a one-input op whose input gradient is
// `formula`, an expression of the gradient `g` and of `s`: the saved input, or the saved
// output when saves_output.
#define GR_DEFINE_UNARY_OP(name, node, saves_output, formula)                                            \
  namespace {                                                                                           \
  Tensor name##_grad(const Tensor& g, const Tensor& s) { return formula; }                              \
  }                                                                                                     \
  Tensor name(const Tensor& self) {                                                                     \
    return autograd::record_unary(node, self, native::name(self), saves_output, name##_grad);          \
  }                                                                                                     \
  Tensor& Tensor::name##_() const {                                                                     \
    return autograd::record_unary_(node, #name "_", *this, [this] { native::name##_(*this); }, saves_output, \
                                   name##_grad);                                                        \
  }                                                                                                     \
  Tensor Tensor::name() const { return gr::name(*this); }                                               \
  Tensor& name##_(Tensor& self) { return self.name##_(); }
