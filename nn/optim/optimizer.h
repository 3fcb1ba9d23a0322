// Optimizer: parameter groups with their options, per-parameter state tensors, zero_grad,
// and a state_dict of tensors (so it saves into the same safetensors file as a model).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "nn/ordered_dict.h"

namespace gr::optim {

// Hyper-parameters of one group: lr plus the optimizer's own values by name, so that
// schedulers and checkpoints treat every optimizer alike.
struct ParamGroup {
  std::vector<Tensor> params;
  std::map<std::string, double> options;  // "lr", "momentum", "beta1", ...
  double lr() const { return options.at("lr"); }
  void set_lr(double lr) { options["lr"] = lr; }
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (no-grad mode inside).
  virtual void step() = 0;
  // Clears the parameters' gradients (set_to_none frees them, as torch 2 does).
  void zero_grad(bool set_to_none = true);
  // Adds a group; options it does not set come from the optimizer's defaults.
  void add_param_group(std::vector<Tensor> params, std::map<std::string, double> options = {});
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }

  // "state.<i>.<name>" per parameter i (counted over all groups, in order) and
  // "param_groups.<g>.<option>" as 0-d float64 tensors.
  OrderedDict<Tensor> state_dict() const;
  // Restores state saved by an optimizer of the same kind over the same parameter shapes;
  // mismatches (count, shape, dtype, unknown keys) throw and change nothing.
  void load_state_dict(const OrderedDict<Tensor>& state);

  // The state tensors of parameter `p` (created empty on first use).
  OrderedDict<Tensor>& state(const Tensor& p);
  const std::string& name() const { return name_; }

 protected:
  Optimizer(std::string name, std::vector<Tensor> params, std::map<std::string, double> defaults);

 private:
  std::string name_;
  std::map<std::string, double> defaults_;
  std::vector<ParamGroup> groups_;
  std::map<const TensorImpl*, OrderedDict<Tensor>> state_;
};

}  // namespace gr::optim
