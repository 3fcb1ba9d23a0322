// Optimizer base: groups, state, zero_grad, state_dict.
#include "nn/optim/optimizer.h"

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy.h"

namespace gr::optim {

Optimizer::Optimizer(std::string name, std::vector<Tensor> params, std::map<std::string, double> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {
  add_param_group(std::move(params));
}

void Optimizer::add_param_group(std::vector<Tensor> params, std::map<std::string, double> options) {
  GR_CHECK(!params.empty(), name_, ": got an empty parameter list");
  for (const Tensor& p : params) {
    GR_CHECK(p.defined() && p.is_leaf() && p.requires_grad(), name_,
             ": can only optimize leaf tensors that require grad");
    for (const ParamGroup& g : groups_)
      for (const Tensor& q : g.params)
        GR_CHECK(!q.is_same(p), name_, ": some parameters appear in more than one parameter group");
  }
  for (const auto& [k, v] : options)
    GR_CHECK(defaults_.count(k), name_, ": unknown option '", k, "'");
  ParamGroup g{std::move(params), defaults_};
  for (const auto& [k, v] : options) g.options[k] = v;
  groups_.push_back(std::move(g));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (ParamGroup& g : groups_)
    for (Tensor& p : g.params) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        NoGradGuard no_grad;
        native::fill_(grad, 0);
      }
    }
}

OrderedDict<Tensor>& Optimizer::state(const Tensor& p) { return state_[p.unsafe_impl()]; }

OrderedDict<Tensor> Optimizer::state_dict() const {
  OrderedDict<Tensor> out;
  int64_t index = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (const auto& [k, v] : groups_[gi].options)
      out.insert("param_groups." + std::to_string(gi) + "." + k, scalar_tensor(v, kFloat64));
    for (const Tensor& p : groups_[gi].params) {
      auto it = state_.find(p.unsafe_impl());
      if (it != state_.end())
        for (const auto& [name, t] : it->second) out.insert("state." + std::to_string(index) + "." + name, t);
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state_dict(const OrderedDict<Tensor>& state) {
  // Parameters by their flat index.
  std::vector<Tensor> params;
  for (const ParamGroup& g : groups_) params.insert(params.end(), g.params.begin(), g.params.end());
  std::vector<std::map<std::string, double>> options(groups_.size());
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
      GR_CHECK(defaults_.count(rest), name_, ".load_state_dict: unknown option '", rest, "' (saved by another optimizer?)");
      GR_CHECK(t.numel() == 1, name_, ".load_state_dict: option '", key, "' must hold one value");
      options[index][rest] = t.item<double>();
    } else if (kind == "state") {
      GR_CHECK(index < params.size(), name_, ".load_state_dict: state for parameter ", index, " but the optimizer has ",
               params.size(), " parameters");
      const Tensor& p = params[index];
      bool scalar = t.dim() == 0;  // e.g. the step count
      GR_CHECK(scalar || (t.sizes() == p.sizes() && t.scalar_type() == p.scalar_type()), name_,
               ".load_state_dict: '", key, "' has shape ", t.sizes(), " and dtype ", t.scalar_type(),
               " but parameter ", index, " has shape ", p.sizes(), " and dtype ", p.scalar_type());
      new_state[p.unsafe_impl()].insert(rest, native::clone(native::to_device(t, p.device())));
    } else {
      GR_ERROR(name_, ".load_state_dict: unexpected key '", key, "'");
    }
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi)
    for (const auto& [k, v] : options[gi]) groups_[gi].options[k] = v;
  state_ = std::move(new_state);
}

}  // namespace gr::optim
