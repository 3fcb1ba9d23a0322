// Optimizer base: options by name, groups, state, zero_grad, state_dict.
#include "nn/optim/optimizer.h"

#include <cmath>
#include <limits>
#include <typeinfo>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/foreach.h"

namespace gr::optim {

// See Note [Options by name].
void OptimizerOptions::field(const Visitor& f, const std::string& name, bool& v) {
  double d = v ? 1.0 : 0.0;
  f(name, d);
  v = d != 0;
}

void OptimizerOptions::field(const Visitor& f, const std::string& name, int64_t& v) {
  double d = static_cast<double>(v);
  f(name, d);
  v = static_cast<int64_t>(d);
}

void OptimizerOptions::field(const Visitor& f, const std::string& name, std::optional<int64_t>& v) {
  double d = v ? static_cast<double>(*v) : std::numeric_limits<double>::quiet_NaN();
  f(name, d);
  v = std::isnan(d) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(d));
}

void OptimizerOptions::field(const Visitor& f, const std::string& name, Betas& v) {
  f(name + ".0", std::get<0>(v));
  f(name + ".1", std::get<1>(v));
}

double OptimizerOptions::get_lr() const { return get("lr"); }
void OptimizerOptions::set_lr(double lr) { set("lr", lr); }

std::vector<std::pair<std::string, double>> OptimizerOptions::values() const {
  std::vector<std::pair<std::string, double>> out;
  // visit() is non-const only because it can write; this visitor only reads.
  const_cast<OptimizerOptions*>(this)->visit([&](const std::string& n, double& v) { out.emplace_back(n, v); });
  return out;
}

bool OptimizerOptions::has(const std::string& name) const {
  for (const auto& [n, v] : values())
    if (n == name) return true;
  return false;
}

double OptimizerOptions::get(const std::string& name) const {
  for (const auto& [n, v] : values())
    if (n == name) return v;
  GR_ERROR("OptimizerOptions: no option '", name, "'");
}

void OptimizerOptions::set(const std::string& name, double value) {
  bool found = false;
  visit([&](const std::string& n, double& v) {
    if (n == name) {
      v = value;
      found = true;
    }
  });
  GR_CHECK(found, "OptimizerOptions: no option '", name, "'");
}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : initial_lr(other.initial_lr),
      params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    initial_lr = other.initial_lr;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  GR_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options (add it to an optimizer first)");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  GR_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options (add it to an optimizer first)");
  return *options_;
}

Optimizer::Optimizer(std::string name, std::vector<OptimizerParamGroup> groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {
  GR_CHECK(!groups.empty(), name_, ": got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  GR_CHECK(!param_group.params().empty(), name_, ": got an empty parameter list");
  for (const Tensor& p : param_group.params()) {
    GR_CHECK(p.defined() && p.is_leaf() && p.requires_grad(), name_,
             ": can only optimize leaf tensors that require grad");
    for (const OptimizerParamGroup& g : groups_)
      for (const Tensor& q : g.params())
        GR_CHECK(!q.is_same(p), name_, ": some parameters appear in more than one parameter group");
  }
  OptimizerParamGroup g(param_group.params());
  if (param_group.has_options()) {
    const OptimizerOptions& o = param_group.options();
    GR_CHECK(typeid(o) == typeid(*defaults_), name_, ".add_param_group: the group's options are not ", name_,
             "'s Options type");
    g.set_options(o.clone());
  } else {
    g.set_options(defaults_->clone());
  }
  groups_.push_back(std::move(g));
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const OptimizerParamGroup& g : groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

double Optimizer::next_step(OrderedDict<Tensor>& state, const Tensor& p, std::initializer_list<const char*> buffers) {
  if (!state.contains("step")) {
    state.insert("step", zeros({}, kFloat64));
    for (const char* name : buffers) state.insert(name, zeros_like(p));
  }
  const double step = state["step"].item<double>() + 1;
  state["step"].fill_(step);
  return step;
}

Tensor Optimizer::grad_with_weight_decay(const Tensor& p, double weight_decay) {
  return weight_decay != 0 ? p.grad() + p * weight_decay : p.grad();
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  AutoGradMode grad(true);
  return closure();
}

void Optimizer::zero_grad(bool set_to_none) {
  std::vector<Tensor> zero;  // filled together: a few multi-tensor launches on a GPU, not one per parameter
  for (OptimizerParamGroup& g : groups_)
    for (Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) grad = Tensor();
      else zero.push_back(grad);
    }
  NoGradGuard no_grad;
  native::foreach_zero_(zero);
}

OrderedDict<Tensor>& Optimizer::state(const Tensor& p) { return state_[p.unsafe_impl()]; }

OrderedDict<Tensor> Optimizer::state_dict() const {
  OrderedDict<Tensor> out;
  int64_t index = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (const auto& [k, v] : groups_[gi].options().values())
      out.insert("param_groups." + std::to_string(gi) + "." + k, scalar_tensor(v, kFloat64));
    for (const Tensor& p : groups_[gi].params()) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end())
        for (const auto& [name, t] : it->second) out.insert("state." + std::to_string(index) + "." + name, t);
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<Tensor>& state) {
  std::vector<Tensor> params = parameters();
  std::vector<std::vector<std::pair<std::string, double>>> options(groups_.size());
  std::map<const TensorImpl*, OrderedDict<Tensor>> new_state;
  for (const auto& [key, t] : state) {
    size_t dot1 = key.find('.'), dot2 = dot1 == std::string::npos ? dot1 : key.find('.', dot1 + 1);
    GR_CHECK(dot2 != std::string::npos, name_, ".load_state_dict: malformed key '", key, "'");
    std::string kind = key.substr(0, dot1), rest = key.substr(dot2 + 1);
    size_t index = 0;
    try {
      index = std::stoul(key.substr(dot1 + 1, dot2 - dot1 - 1));
    } catch (const std::exception&) {
      GR_ERROR(name_, ".load_state_dict: malformed index in key '", key, "'");
    }
    if (kind == "param_groups") {
      GR_CHECK(index < groups_.size(), name_, ".load_state_dict: the state has more parameter groups than the ",
               groups_.size(), " of this optimizer");
      GR_CHECK(groups_[index].options().has(rest), name_, ".load_state_dict: unknown option '", rest,
               "' (saved by another optimizer?)");
      GR_CHECK(t.numel() == 1, name_, ".load_state_dict: option '", key, "' must hold one value");
      options[index].emplace_back(rest, t.item<double>());
    } else if (kind == "state") {
      GR_CHECK(index < params.size(), name_, ".load_state_dict: state for parameter ", index, " but the optimizer has ",
               params.size(), " parameters");
      const Tensor& p = params[index];
      bool scalar = t.dim() == 0;  // e.g. the step count
      bool flat = state_is_flat(rest) && t.scalar_type() == p.scalar_type();
      GR_CHECK(scalar || flat || (t.sizes() == p.sizes() && t.scalar_type() == p.scalar_type()), name_,
               ".load_state_dict: '", key, "' has shape ", t.sizes(), " and dtype ", t.scalar_type(),
               " but parameter ", index, " has shape ", p.sizes(), " and dtype ", p.scalar_type());
      new_state[p.unsafe_impl()].insert(rest, native::clone(native::to_device(t, p.device())));
    } else {
      GR_ERROR(name_, ".load_state_dict: unexpected key '", key, "'");
    }
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi)
    for (const auto& [k, v] : options[gi]) groups_[gi].options().set(k, v);
  state_ = std::move(new_state);
}

}  // namespace gr::optim
