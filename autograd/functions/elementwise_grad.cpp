// Recording element-wise ops with differentiable backwards (see elementwise_grad.h).
#include "autograd/functions/elementwise_grad.h"

#include "core/factory.h"

namespace gr::autograd {

namespace {

struct SavedState {
  std::vector<SavedTensor> inputs;
  SavedTensor output;
  std::vector<std::vector<int64_t>> shapes;
};

// The node's backward: unpack what was saved, run the formula, sum each gradient back to its
// input's shape.
BackwardFn make_backward(SavedState state, ElementwiseGradFn grad) {
  return [state = std::move(state), grad = std::move(grad)](const TensorList& g, const std::vector<bool>& needs) {
    TensorList in;
    in.reserve(state.inputs.size());
    for (const SavedTensor& s : state.inputs) in.push_back(s.defined() ? s.unpack() : Tensor());
    TensorList grads = grad(g[0], in, state.output.defined() ? state.output.unpack() : Tensor(), needs);
    grads.resize(needs.size());
    for (size_t i = 0; i < grads.size(); ++i)
      grads[i] = needs[i] && grads[i].defined() ? sum_to(grads[i], state.shapes[i]) : Tensor();
    return grads;
  };
}

std::vector<std::vector<int64_t>> shapes_of(const TensorList& ts) {
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(ts.size());
  for (const Tensor& t : ts) shapes.push_back(t.sizes().vec());
  return shapes;
}

bool saves_input(const Saves& saves, size_t i) { return i < saves.inputs.size() && saves.inputs[i]; }

}  // namespace

Tensor record_elementwise(const char* name, const TensorList& inputs, const Tensor& out, const Saves& saves,
                          ElementwiseGradFn grad) {
  if (!needs_grad_list(inputs)) return out;
  SavedState state;
  for (size_t i = 0; i < inputs.size(); ++i)
    state.inputs.push_back(saves_input(saves, i) ? SavedTensor(inputs[i]) : SavedTensor());
  if (saves.output) state.output = SavedTensor(out, /*is_output=*/true);  // Note [Saved outputs]
  state.shapes = shapes_of(inputs);
  record(name, inputs, {out}, make_backward(std::move(state), std::move(grad)));
  return out;
}

Tensor& record_elementwise_(const char* name, const char* op, const Tensor& self, const TensorList& others,
                            const std::function<void()>& kernel, const Saves& saves, ElementwiseGradFn grad) {
  check_inplace(self, op);
  TensorList inputs{self};
  inputs.insert(inputs.end(), others.begin(), others.end());
  if (!needs_grad_list(inputs)) {
    kernel();
    return const_cast<Tensor&>(self);
  }
  // What the backward reads of the inputs must be taken before the kernel overwrites self:
  // self's old value as a clone (differentiable, so its history is self's old one), and any
  // other operand that shares self's memory.
  TensorList before(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!saves_input(saves, i)) continue;
    before[i] = i == 0 || inputs[i].storage().is_same(self.storage()) ? inputs[i].clone() : inputs[i];
  }
  SavedState state;
  state.shapes = shapes_of(inputs);
  kernel();
  for (const Tensor& b : before) state.inputs.push_back(b.defined() ? SavedTensor(b) : SavedTensor());
  if (saves.output) state.output = SavedTensor(self, /*is_output=*/true);  // after the kernel; Note [Saved outputs]
  record(name, inputs, {self}, make_backward(std::move(state), std::move(grad)));
  return const_cast<Tensor&>(self);
}

Tensor record_unary(const char* name, const Tensor& self, const Tensor& out, bool saves_output, UnaryGradFn grad) {
  return record_elementwise(name, {self}, out, Saves{{!saves_output}, saves_output},
                            [grad = std::move(grad), saves_output](const Tensor& g, const TensorList& in,
                                                                   const Tensor& y, const std::vector<bool>&) {
                              return TensorList{grad(g, saves_output ? y : in[0])};
                            });
}

Tensor& record_unary_(const char* name, const char* op, const Tensor& self, const std::function<void()>& kernel,
                      bool saves_output, UnaryGradFn grad) {
  return record_elementwise_(name, op, self, {}, kernel, Saves{{!saves_output}, saves_output},
                             [grad = std::move(grad), saves_output](const Tensor& g, const TensorList& in,
                                                                    const Tensor& y, const std::vector<bool>&) {
                               return TensorList{grad(g, saves_output ? y : in[0])};
                             });
}

namespace {
Saves unary_saves(UnarySaves saves) {
  return Saves{{saves == UnarySaves::input}, saves == UnarySaves::output};
}
ElementwiseGradFn unary_grad(UnarySaves saves, const UnaryGradFn& grad) {
  return [grad, saves](const Tensor& g, const TensorList& in, const Tensor& y, const std::vector<bool>&) {
    return TensorList{grad(g, saves == UnarySaves::output ? y : in[0])};
  };
}
ElementwiseGradFn binary_grad(BinaryGradFn grad) {
  return [grad](const Tensor& g, const TensorList& in, const Tensor& y, const std::vector<bool>& needs) {
    return grad(g, in[0], in[1], y, needs);
  };
}
}  // namespace

Tensor record_unary(const char* name, const Tensor& self, const Tensor& out, UnarySaves saves, const UnaryGradFn& grad) {
  return record_elementwise(name, {self}, out, unary_saves(saves), unary_grad(saves, grad));
}
Tensor& record_unary_(const char* name, const char* op, const Tensor& self, const std::function<void()>& kernel,
                      UnarySaves saves, const UnaryGradFn& grad) {
  return record_elementwise_(name, op, self, {}, kernel, unary_saves(saves), unary_grad(saves, grad));
}

Tensor record_binary(const char* name, const Tensor& self, const Tensor& other, const Tensor& out, const Saves& saves,
                     BinaryGradFn grad) {
  return record_elementwise(name, {self, other}, out, saves, binary_grad(grad));
}
Tensor& record_binary_(const char* name, const char* op, const Tensor& self, const Tensor& other,
                       const std::function<void()>& kernel, const Saves& saves, BinaryGradFn grad) {
  return record_elementwise_(name, op, self, {other}, kernel, saves, binary_grad(grad));
}

Tensor zero_grad_like(const Tensor& g) { return zeros_like(g); }

}  // namespace gr::autograd
