// gr::save / gr::load for modules (with one error listing every mismatch), tensors,
// tensor lists, OrderedDicts and optimizers, on top of the safetensors reader and writer.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/factory.h"
#include "nn/module.h"
#include "nn/optim/optimizer.h"
#include "nn/serialize.h"

namespace gr {

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
  return out;
}

}  // namespace

void load(nn::Module& module, const std::string& path, bool strict) {
  OrderedDict<Tensor> file = load(path);
  OrderedDict<Tensor> own = module.state_dict();
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [key, dst] : own) {
    const Tensor* src = file.find(key);
    if (src == nullptr) {
      if (strict) missing.push_back(key);
      continue;
    }
    std::ostringstream m;
    if (src->sizes() != dst.sizes())
      m << "size mismatch for " << key << ": copying a param with shape " << src->sizes()
        << " from checkpoint, the shape in current model is " << dst.sizes() << ".";
    else if (src->scalar_type() != dst.scalar_type())
      m << "dtype mismatch for " << key << ": the checkpoint has " << src->scalar_type() << ", the model has "
        << dst.scalar_type() << ".";
    if (!m.str().empty()) mismatched.push_back(m.str());
  }
  if (strict)
    for (const auto& [key, t] : file)
      if (!own.contains(key)) unexpected.push_back(key);
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
    std::ostringstream msg;
    msg << "load: error(s) in loading '" << path << "' into " << module.name() << ":";
    if (!missing.empty()) msg << "\n  Missing key(s) in state_dict: " << quoted_list(missing) << ".";
    if (!unexpected.empty()) msg << "\n  Unexpected key(s) in state_dict: " << quoted_list(unexpected) << ".";
    for (const std::string& m : mismatched) msg << "\n  " << m;
    GR_ERROR(msg.str());
  }
  module.load_state_dict(file, strict);
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  OrderedDict<Tensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) named.insert(std::to_string(i), tensors[i]);
  save(named, path, {{"gradring.type", "tensor_list"}});
}

void save(const Tensor& tensor, const std::string& path) { save(std::vector<Tensor>{tensor}, path); }

void load(Tensor& tensor, const std::string& path) {
  OrderedDict<Tensor> file = load(path);
  GR_CHECK(file.size() == 1, "load: '", path, "' holds ", file.size(), " tensors, but one Tensor was asked for");
  tensor = file.items()[0].second;
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  OrderedDict<Tensor> file = load(path);
  std::vector<Tensor> out;
  for (size_t i = 0; i < file.size(); ++i) {
    const Tensor* t = file.find(std::to_string(i));
    GR_CHECK(t != nullptr, "load: '", path, "' is not a tensor list: it has ", file.size(),
             " tensors but no tensor named \"", i, "\" (names: ", quoted_list(file.keys()), ")");
    out.push_back(*t);
  }
  tensors = std::move(out);
}

void load(OrderedDict<Tensor>& tensors, const std::string& path) { tensors = load(path); }

// See Note [Optimizer files].
void save(const optim::Optimizer& optimizer, const std::string& path) {
  OrderedDict<Tensor> state;
  for (const auto& [key, t] : optimizer.state_dict())
    if (key.rfind("state.", 0) == 0) state.insert(key, t);
  nlohmann::json groups = nlohmann::json::array();
  int64_t index = 0;
  for (const optim::OptimizerParamGroup& g : optimizer.param_groups()) {
    nlohmann::json group = nlohmann::json::object();
    for (const auto& [name, value] : g.options().values())
      group[name] = std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
    std::vector<int64_t> params;
    for (size_t i = 0; i < g.params().size(); ++i) params.push_back(index++);
    group["params"] = params;
    groups.push_back(group);
  }
  save(state, path,
       {{"gradring.type", "optimizer"}, {"optimizer", optimizer.name()}, {"param_groups", groups.dump()}});
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  Metadata meta;
  OrderedDict<Tensor> file = load(path, &meta);
  const std::string where = "load: '" + path + "' ";
  GR_CHECK(meta["gradring.type"] == "optimizer" && meta.count("param_groups"), where,
           "is not an optimizer file (no optimizer metadata)");
  GR_CHECK(meta["optimizer"] == optimizer.name(), where, "holds the state of a ", meta["optimizer"], " optimizer, not ",
           optimizer.name());
  nlohmann::json groups;
  try {
    groups = nlohmann::json::parse(meta["param_groups"]);
  } catch (const nlohmann::json::exception& e) {
    GR_ERROR(where, "has param_groups metadata that does not parse: ", e.what());
  }
  GR_CHECK(groups.is_array(), where, "has param_groups metadata that is not a list");
  const auto& own = optimizer.param_groups();
  std::vector<std::string> problems;
  if (groups.size() != own.size())
    problems.push_back("the file has " + std::to_string(groups.size()) + " parameter groups, the optimizer " +
                       std::to_string(own.size()));
  OrderedDict<Tensor> state;
  for (size_t gi = 0; gi < groups.size() && gi < own.size(); ++gi) {
    const nlohmann::json& g = groups[gi];
    GR_CHECK(g.is_object() && g.contains("params") && g["params"].is_array(), where, "has a malformed parameter group ",
             gi);
    if (g["params"].size() != own[gi].params().size())
      problems.push_back("group " + std::to_string(gi) + " has " + std::to_string(g["params"].size()) +
                         " parameters in the file, " + std::to_string(own[gi].params().size()) + " in the optimizer");
    for (auto it = g.begin(); it != g.end(); ++it) {
      if (it.key() == "params") continue;
      if (!own[gi].options().has(it.key())) {
        problems.push_back("group " + std::to_string(gi) + " has an unknown option '" + it.key() + "'");
        continue;
      }
      GR_CHECK(it->is_number() || it->is_null(), where, "option '", it.key(), "' of group ", gi, " is not a number");
      double v = it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->get<double>();
      state.insert("param_groups." + std::to_string(gi) + "." + it.key(), scalar_tensor(v, kFloat64));
    }
  }
  if (!problems.empty()) {
    std::string msg;
    for (const std::string& p : problems) msg += "\n  " + p;
    GR_ERROR(where, "does not match the ", optimizer.name(), " optimizer:", msg);
  }
  for (const auto& [key, t] : file) state.insert(key, t);
  optimizer.load_state_dict(state);
}

}  // namespace gr
