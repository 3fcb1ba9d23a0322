// fully_shard, the FSDPModule handle, the registry of units by module, and clip_grad_norm_
// over shards.
#include "distributed/fsdp/fully_shard.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "distributed/fsdp/fsdp_unit.h"
#include "nn/optim/sharded_parameters.h"

namespace gr::distributed::fsdp {

namespace {

// Units by module, held weakly: a unit lives as long as its module's hooks (Note [FSDP units]).
struct Registry {
  std::mutex mutex;
  std::unordered_map<const nn::Module*, std::weak_ptr<FSDPUnit>> units;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: units may outlive static destruction
  return *r;
}

void register_unit(const nn::Module* module, const std::shared_ptr<FSDPUnit>& unit) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.units.begin(); it != r.units.end();) it = it->second.expired() ? r.units.erase(it) : std::next(it);
  r.units[module] = unit;
}

// The units of the tree below `module` (itself included when it is one), pre-order.
std::vector<std::shared_ptr<FSDPUnit>> units_below(nn::Module& module, bool include_self) {
  std::vector<std::shared_ptr<FSDPUnit>> out;
  for (const std::shared_ptr<nn::Module>& m : module.modules(include_self))
    if (std::shared_ptr<FSDPUnit> u = find_unit(m.get())) out.push_back(std::move(u));
  return out;
}

std::atomic<int64_t> g_gathered_bytes{0}, g_peak_gathered_bytes{0};

// Note [Sharded parameters] in nn/optim/optimizer.h: names the unit whose flat shard `t` views.
std::string shard_of(const Tensor& t) {
  if (!t.defined()) return "";
  std::vector<std::shared_ptr<FSDPUnit>> units;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& [module, weak] : r.units)
      if (auto u = weak.lock()) units.push_back(std::move(u));
  }
  for (const auto& u : units) {
    if (!u->flat_shard().defined() || !t.storage().is_same(u->flat_shard().storage())) continue;
    std::string what = "a parameter";
    for (const FSDPUnit::Param& p : u->params())
      if (p.local.is_same(t)) what = "'" + p.name + "'";
    return what + " of the fully_shard unit " + (u->name().empty() ? "" : "'" + u->name() + "' ") + "(" +
           u->module().name() + ")";
  }
  return "";
}

}  // namespace

void account_bytes(int64_t delta) {
  const int64_t now = g_gathered_bytes.fetch_add(delta) + delta;
  int64_t peak = g_peak_gathered_bytes.load();
  while (now > peak && !g_peak_gathered_bytes.compare_exchange_weak(peak, now)) {
  }
}

MemoryStats memory_stats() { return {g_gathered_bytes.load(), g_peak_gathered_bytes.load()}; }
void reset_peak_memory_stats() { g_peak_gathered_bytes.store(g_gathered_bytes.load()); }

std::shared_ptr<FSDPUnit> find_unit(const nn::Module* module) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.units.find(module);
  return it == r.units.end() ? nullptr : it->second.lock();
}

FSDPModule fully_shard(const std::shared_ptr<nn::Module>& module, const FullyShardOptions& options) {
  GR_CHECK(module != nullptr, "fully_shard: the module is null");
  static std::once_flag registered;
  std::call_once(registered, [] { optim::register_sharded_parameter_check(shard_of); });
  GR_CHECK(find_unit(module.get()) == nullptr, "fully_shard: ", module->name(), " is already a fully_shard unit");
  const std::vector<std::shared_ptr<FSDPUnit>> below = units_below(*module, /*include_self=*/false);
  std::unordered_set<const TensorImpl*> owned;
  for (const auto& u : below)
    for (const FSDPUnit::Param& p : u->params()) owned.insert(p.param.unsafe_impl());
  std::vector<std::pair<std::string, Tensor>> params;
  for (const auto& [name, t] : module->named_parameters())
    if (!owned.count(t.unsafe_impl())) params.emplace_back(name, t);
  auto unit = std::make_shared<FSDPUnit>(*module, std::move(params), options);
  unit->install_hooks();
  register_unit(module.get(), unit);
  for (const auto& u : below)
    if (u->parent() == nullptr) u->set_parent(unit.get());
  unit->name_tree();  // provisional until the root is known (Note [FSDP iteration])
  return FSDPModule(module, std::move(unit));
}

FSDPModule fsdp_module(const nn::Module& module) {
  std::shared_ptr<FSDPUnit> unit = find_unit(&module);
  GR_CHECK(unit != nullptr, "fsdp_module: ", module.name(), " is not a fully_shard unit");
  return FSDPModule(std::const_pointer_cast<nn::Module>(module.shared_from_this()), std::move(unit));
}

nn::Module& FSDPModule::module() const { return *module_; }
FSDPUnit& FSDPModule::unit() const {
  GR_CHECK(unit_ != nullptr, "FSDPModule: an empty handle (default-constructed)");
  return *unit_;
}
const ProcessGroupPtr& FSDPModule::process_group() const { return unit().group(); }

OrderedDict<Tensor> FSDPModule::named_parameters() const {
  // The module's own order and names (relative to this module), each parameter's shard.
  std::unordered_map<const TensorImpl*, const FSDPUnit::Param*> shard_of;
  for (const auto& u : units_below(module(), /*include_self=*/true))
    for (const FSDPUnit::Param& p : u->params()) shard_of[p.param.unsafe_impl()] = &p;
  OrderedDict<Tensor> out;
  for (const auto& [name, t] : module().named_parameters()) {
    auto it = shard_of.find(t.unsafe_impl());
    GR_CHECK(it != shard_of.end(), "FSDPModule::named_parameters: ", name, " belongs to no unit");
    out.insert(name, it->second->local);
  }
  return out;
}

TensorList FSDPModule::parameters() const { return named_parameters().values(); }

void FSDPModule::set_requires_gradient_sync(bool requires_sync, bool recurse) {
  if (!recurse) return unit().set_requires_gradient_sync(requires_sync);
  for (const auto& u : units_below(module(), true)) u->set_requires_gradient_sync(requires_sync);
}

void FSDPModule::set_reshard_after_forward(bool reshard, bool recurse) {
  if (!recurse) return unit().set_reshard_after_forward(reshard);
  for (const auto& u : units_below(module(), true)) u->set_reshard_after_forward(reshard);
}

namespace {
// torch's lists: empty means the default (the learned one ahead).
std::optional<std::vector<std::weak_ptr<FSDPUnit>>> prefetch_targets(const FSDPUnit& unit,
                                                                     const std::vector<FSDPModule>& modules, const char* what) {
  if (modules.empty()) return std::nullopt;
  std::vector<std::weak_ptr<FSDPUnit>> out;
  for (const FSDPModule& m : modules) {
    GR_CHECK(m.unit().group() == unit.group(), "FSDPModule::", what, ": ", m.module().name(), " is sharded over "
             "another process group than ", unit.module().name());
    out.push_back(m.unit().weak_from_this());
  }
  return out;
}
}  // namespace

void FSDPModule::set_modules_to_forward_prefetch(const std::vector<FSDPModule>& modules) {
  unit().set_prefetch(true, prefetch_targets(unit(), modules, "set_modules_to_forward_prefetch"));
}
void FSDPModule::set_modules_to_backward_prefetch(const std::vector<FSDPModule>& modules) {
  unit().set_prefetch(false, prefetch_targets(unit(), modules, "set_modules_to_backward_prefetch"));
}
void FSDPModule::set_prefetch_enabled(bool enabled, bool recurse) {
  using Targets = std::optional<std::vector<std::weak_ptr<FSDPUnit>>>;
  const Targets targets = enabled ? Targets() : Targets(std::in_place);  // an empty list: no prefetch
  auto apply = [&](FSDPUnit& u) {
    u.set_prefetch(/*forward=*/true, targets);
    u.set_prefetch(/*forward=*/false, targets);
  };
  if (!recurse) return apply(unit());
  for (const auto& u : units_below(module(), true)) apply(*u);
}

void FSDPModule::unshard() const {
  unit().lazy_init();
  unit().unshard();
}
void FSDPModule::reshard() const { unit().reshard(); }
bool FSDPModule::is_unsharded() const { return unit().is_unsharded(); }
std::string FSDPModule::write_chrome_trace(const std::string& dir) const { return unit().write_chrome_trace(dir); }

double clip_grad_norm_(const FSDPModule& root, double max_norm, double norm_type, bool error_if_nonfinite) {
  GR_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive, got ", norm_type);
  NoGradGuard no_grad;
  const bool inf = std::isinf(norm_type);
  std::vector<Tensor> grads;
  for (const Tensor& p : root.parameters())
    if (p.grad().defined()) grads.push_back(p.grad());
  // This rank's part: sum of |g|^p over its shards (max |g| for the infinity norm), in float64;
  // the zero padding adds nothing.
  double local = 0;
  for (const Tensor& g : grads) {
    const double n = linalg::vector_norm(g, norm_type).to(kFloat64).item<double>();
    local = inf ? std::max(local, n) : local + std::pow(n, norm_type);
  }
  const ProcessGroupPtr& group = root.process_group();
  Device device = grads.empty() ? Device(kCPU) : grads[0].device();
  if (group->size() > 1) {
    if (grads.empty()) device = root.unit().flat_shard().device();
    Tensor t = full({1}, local, TensorOptions(kFloat64).device(device));
    wait_for(group->allreduce(t, inf ? ReduceOp::Max : ReduceOp::Sum), *group, "fsdp::clip_grad_norm_",
             "the all-reduce of the gradient norms");
    local = t.to(Device(kCPU)).item<double>();
  }
  const double total = inf ? local : std::pow(local, 1.0 / norm_type);
  GR_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
           " of the sharded gradients is non-finite, so it cannot be clipped. To disable this error and scale the "
           "gradients by the non-finite norm anyway, set `error_if_nonfinite=false`");
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0 || std::isnan(coef))
    for (const Tensor& g : grads) g.mul_(coef);
  return total;
}

}  // namespace gr::distributed::fsdp
