// Optimizer: typed parameter groups (libtorch's OptimizerParamGroup / OptimizerOptions),
// per-parameter state tensors, zero_grad, and a state_dict of tensors (so it saves into the
// same safetensors file as a model).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensor.h"
#include "nn/ordered_dict.h"

namespace gr::optim {

using Betas = std::tuple<double, double>;

// Note [Options by name]
// Every Options type lists its hyper-parameters once, in visit(), as (name, double&) pairs
// (bools as 0/1, tuples as "betas.0"/"betas.1", an absent optional as NaN). state_dict,
// load_state_dict, gr::save and the schedulers that cycle momentum all read and write the
// options through it, so a new optimizer needs no serialization code of its own.
class OptimizerOptions {
 public:
  using Visitor = std::function<void(const std::string& name, double& value)>;
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // Calls `f` for every hyper-parameter; values `f` writes are stored back.
  virtual void visit(const Visitor& f) = 0;

  virtual double get_lr() const;
  virtual void set_lr(double lr);
  // Shortcuts for a group's options seen through the base type (the typed Options hide them).
  double lr() const { return get_lr(); }

  // The hyper-parameters by name, in visit() order.
  std::vector<std::pair<std::string, double>> values() const;
  // Whether a hyper-parameter of this name exists; get/set throw for an unknown name.
  bool has(const std::string& name) const;
  double get(const std::string& name) const;
  void set(const std::string& name, double value);

 protected:
  static void field(const Visitor& f, const std::string& name, double& v) { f(name, v); }
  static void field(const Visitor& f, const std::string& name, bool& v);
  static void field(const Visitor& f, const std::string& name, int64_t& v);
  static void field(const Visitor& f, const std::string& name, std::optional<int64_t>& v);
  static void field(const Visitor& f, const std::string& name, Betas& v);
};

// clone() for an Options type `Derived`.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// Parameters and (optionally) their own options; without options a group takes the
// optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

  // gradring shortcuts for options().get_lr() / set_lr().
  double lr() const { return options().get_lr(); }
  void set_lr(double lr) { options().set_lr(lr); }
  // The lr before any scheduler changed it, set by the first scheduler made on the group
  // (Python's group['initial_lr']), so that chained schedulers share one base.
  std::optional<double> initial_lr;

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// Returns the loss after re-evaluating the model (LBFGS calls it several times per step).
using LossClosure = std::function<Tensor()>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (no-grad mode inside). With a
  // closure, it is called first (with grad mode on) and its loss is returned.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  // Clears the parameters' gradients (set_to_none frees them, as torch 2 does).
  void zero_grad(bool set_to_none = true);
  // Adds a group; a group without options gets a copy of the defaults. The options, if
  // given, must be this optimizer's Options type.
  void add_param_group(const OptimizerParamGroup& param_group);
  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  // Every parameter of every group, in order.
  std::vector<Tensor> parameters() const;

  // "state.<i>.<name>" per parameter i (counted over all groups, in order) and
  // "param_groups.<g>.<option>" as 0-d float64 tensors. Virtual for wrappers that keep the
  // state elsewhere (distributed::ZeroRedundancyOptimizer).
  virtual OrderedDict<Tensor> state_dict() const;
  // Restores state saved by an optimizer of the same kind over the same parameter shapes;
  // mismatches (count, shape, dtype, unknown keys) throw and change nothing.
  virtual void load_state_dict(const OrderedDict<Tensor>& state);

  // The state tensors of parameter `p` (created empty on first use).
  OrderedDict<Tensor>& state(const Tensor& p);
  const std::string& name() const { return name_; }

 protected:
  Optimizer(std::string name, std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  // Runs the closure (if any) with grad mode on; returns its loss or an undefined tensor.
  static Tensor run_closure(const LossClosure& closure);
  // Whether state tensor `name` is not shaped like its parameter (LBFGS's flat history), so
  // load_state_dict checks only its dtype.
  virtual bool state_is_flat(const std::string&) const { return false; }
  // The typed options of group `g`.
  template <class Options>
  static Options& options_of(OptimizerParamGroup& g) {
    return static_cast<Options&>(g.options());
  }
  // Calls f(param, options, state) for every parameter that has a gradient, with its
  // group's typed Options and its state tensors.
  template <class Options, class F>
  void for_each_param(F&& f) {
    for (OptimizerParamGroup& g : groups_) {
      const Options& o = options_of<Options>(g);
      for (Tensor& p : g.params())
        if (p.grad().defined()) f(p, o, state(p));
    }
  }
  // Adds one to the parameter's "step" count (0-d float64, as torch keeps it) and returns
  // the new count; on the first call it also creates `buffers` as zeros like `p`.
  static double next_step(OrderedDict<Tensor>& state, const Tensor& p, std::initializer_list<const char*> buffers);
  // The gradient plus weight_decay * p (L2 penalty), or the gradient itself.
  static Tensor grad_with_weight_decay(const Tensor& p, double weight_decay);

 private:
  std::string name_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> groups_;
  std::map<const TensorImpl*, OrderedDict<Tensor>> state_;
};

}  // namespace gr::optim
