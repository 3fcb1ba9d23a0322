// Recording element-wise ops whose backward is written with the differentiable gr:: ops
// (Note [Double backward]): out of place, and in place on self. Shared by the math files of
// autograd/functions (math_unary.cpp, binary_math.cpp, modulo.cpp, clamp.cpp, ...), with the
// formula macros the op lists' element-wise forms are generated from (math_ops.def).
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

// What a one-input op's backward reads: its input, its result, or nothing (the formula gets
// an undefined tensor).
enum class UnarySaves { input, output, nothing };
Tensor record_unary(const char* name, const Tensor& self, const Tensor& out, UnarySaves saves, const UnaryGradFn& grad);
Tensor& record_unary_(const char* name, const char* op, const Tensor& self, const std::function<void()>& kernel,
                      UnarySaves saves, const UnaryGradFn& grad);

// A two-input op's backward: the gradients of self and other (undefined where !needs[i]) from
// the result's gradient g, the inputs and the result (undefined where not saved).
using BinaryGradFn = TensorList (*)(const Tensor& g, const Tensor& self, const Tensor& other, const Tensor& result,
                                    const std::vector<bool>& needs);
Tensor record_binary(const char* name, const Tensor& self, const Tensor& other, const Tensor& out, const Saves& saves,
                     BinaryGradFn grad);
Tensor& record_binary_(const char* name, const char* op, const Tensor& self, const Tensor& other,
                       const std::function<void()>& kernel, const Saves& saves, BinaryGradFn grad);

}  // namespace gr::autograd

// Note [Element-wise formulas]
// The backward of an element-wise op of an op list (core/native/elementwise/math_ops.def) is written next
// to its family's others with one of these, and the file then reads the list, which defines the
// op's gr:: function and Tensor method from the formula:
//   GR_UNARY_GRAD(sin, input, g * cos(s))   s: the saved input, output, or nothing
//   GR_BINARY_GRAD(hypot, (true, true), true) { Tensor scale = g / result; return ...; }
//     (saves self, other, result; the body sees g, self, other, result and needs)
// A formula is written with the differentiable gr:: ops (Note [Double backward]).
#define GR_UNARY_GRAD(name, saves, formula)                                               \
  static constexpr ::gr::autograd::UnarySaves name##_saves = ::gr::autograd::UnarySaves::saves; \
  static Tensor name##_grad(const Tensor& g, const Tensor& s) { return formula; }
#define GR_BINARY_GRAD(name, saves_inputs, saves_result)                                                  \
  static const ::gr::autograd::Saves name##_saves{std::vector<bool> GR_BRACED saves_inputs, saves_result};  \
  static TensorList name##_grad(const Tensor& g, const Tensor& self, const Tensor& other, const Tensor& result, \
                                const std::vector<bool>& needs)
#define GR_BRACED(...) {__VA_ARGS__}
