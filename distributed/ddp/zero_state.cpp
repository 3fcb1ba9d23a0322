// ZeroRedundancyOptimizer's state: consolidation on one rank (point to point), the per-rank
// shard a sharded snapshot saves, and loading either (a full state re-shards to any world size).
#include <cstring>
#include <map>
#include <sstream>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "distributed/backends/flat_buffer.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"

namespace gr::distributed {

namespace {

constexpr const char* kZero = "ZeroRedundancyOptimizer";
constexpr int kLengthTag = 7001, kHeaderTag = 7002, kPayloadTag = 7003;

struct Entry {
  size_t index;  // the parameter's global index
  std::string name;
  Tensor value;
};

// "state.<i>.<name>" -> (i, name); false for other keys.
bool parse_state_key(const std::string& key, size_t& index, std::string& name) {
  if (key.rfind("state.", 0) != 0) return false;
  const size_t dot = key.find('.', 6);
  GR_CHECK(dot != std::string::npos, kZero, ": malformed state key '", key, "'");
  try {
    index = std::stoul(key.substr(6, dot - 6));
  } catch (const std::exception&) {
    GR_ERROR(kZero, ": malformed index in state key '", key, "'");
  }
  name = key.substr(dot + 1);
  return true;
}

// One line per entry: "<index> <name> <dtype> <dim> <sizes...>".
std::string header_of(const std::vector<Entry>& entries) {
  std::ostringstream out;
  for (const Entry& e : entries) {
    out << e.index << " " << e.name << " " << static_cast<int>(e.value.scalar_type()) << " " << e.value.dim();
    for (int64_t s : e.value.sizes()) out << " " << s;
    out << "\n";
  }
  return out.str();
}

std::vector<Entry> entries_of_header(const std::string& header, Device device) {
  std::vector<Entry> out;
  std::istringstream in(header);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    Entry e;
    int dtype = 0;
    int64_t dim = 0;
    l >> e.index >> e.name >> dtype >> dim;
    std::vector<int64_t> sizes(static_cast<size_t>(dim));
    for (int64_t& s : sizes) l >> s;
    GR_CHECK(!l.fail(), kZero, ".consolidate_state_dict: malformed state header line '", line, "'");
    e.value = empty(sizes, TensorOptions(static_cast<ScalarType>(dtype)).device(device));
    out.push_back(std::move(e));
  }
  return out;
}

Tensor bytes_tensor(const std::string& s, Device device) {
  Tensor t = empty({static_cast<int64_t>(s.size())}, TensorOptions(kUInt8));
  std::memcpy(t.data_ptr(), s.data(), s.size());
  return t.to(device);
}

std::string string_of(const Tensor& t) {
  const Tensor c = t.to(Device(kCPU)).contiguous();
  return {static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel())};
}

}  // namespace

// This rank's state entries under global parameter indices.
static std::vector<Entry> local_entries(optim::Optimizer* local, const std::vector<size_t>& global) {
  std::vector<Entry> out;
  if (!local) return out;
  for (const auto& [key, t] : local->state_dict()) {
    size_t li = 0;
    std::string name;
    if (!parse_state_key(key, li, name)) continue;
    GR_CHECK(li < global.size(), kZero, ": the local optimizer has state for parameter ", li, " of ", global.size());
    out.push_back({global[li], name, t});
  }
  return out;
}

// On the consolidating rank: its own entries and every other rank's, in the plain
// optimizer's layout (the groups' options, then each parameter's state in order).
static OrderedDict<Tensor> receive_states(ProcessGroup& group, const std::vector<Entry>& mine, Device device,
                                          const std::vector<optim::OptimizerParamGroup>& groups) {
  std::map<size_t, std::vector<std::pair<std::string, Tensor>>> by_param;
  for (const Entry& e : mine) by_param[e.index].emplace_back(e.name, native::clone(e.value));
  for (int r = 0; r < group.size(); ++r) {
    if (r == group.rank()) continue;
    Tensor length = control_tensor({0}, device);
    wait_for(group.recv(length, r, kLengthTag), group, kZero, "receiving rank " + std::to_string(r) + "'s state size");
    const int64_t n = host_values(length)[0];
    if (n == 0) continue;
    Tensor h = empty({n}, TensorOptions(kUInt8).device(device));
    wait_for(group.recv(h, r, kHeaderTag), group, kZero, "receiving rank " + std::to_string(r) + "'s state header");
    std::vector<Entry> theirs = entries_of_header(string_of(h), device);
    std::vector<Tensor> like;
    for (const Entry& e : theirs) like.push_back(e.value);
    FlatBuffer payload(like);
    Tensor flat = payload.flat();
    wait_for(group.recv(flat, r, kPayloadTag), group, kZero, "receiving rank " + std::to_string(r) + "'s state");
    for (size_t k = 0; k < theirs.size(); ++k)
      by_param[theirs[k].index].emplace_back(theirs[k].name, native::clone(payload.views()[k]));
  }
  OrderedDict<Tensor> full;
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& [k, v] : groups[g].options().values())
      full.insert("param_groups." + std::to_string(g) + "." + k, scalar_tensor(v, kFloat64));
  for (const auto& [index, named] : by_param)
    for (const auto& [name, t] : named) full.insert("state." + std::to_string(index) + "." + name, t);
  return full;
}

void ZeroRedundancyOptimizer::consolidate_state_dict(int to) {
  GR_CHECK(to >= 0 && to < group_->size(), kZero, ".consolidate_state_dict: rank ", to, " is not in a group of ",
           group_->size());
  const Device device = params_[0].device();
  const std::vector<Entry> mine = local_entries(local_.get(), local_parameter_indices());
  if (group_->rank() == to) {
    consolidated_ = receive_states(*group_, mine, device, param_groups());
  } else {
    // Its size (0: nothing follows), a header naming every entry, the entries' bytes.
    const std::string header = header_of(mine);
    Tensor length = control_tensor({static_cast<int64_t>(header.size())}, device);
    wait_for(group_->send(length, to, kLengthTag), *group_, kZero, "sending the state's size");
    if (!header.empty()) {
      Tensor h = bytes_tensor(header, device);
      std::vector<Tensor> values;
      for (const Entry& e : mine) values.push_back(native::to_device(e.value, device));
      const FlatBuffer payload = FlatBuffer::of(values);
      wait_for(group_->send(h, to, kHeaderTag), *group_, kZero, "sending the state's header");
      wait_for(group_->send(payload.flat(), to, kPayloadTag), *group_, kZero, "sending the state");
    }
  }
  // Every rank returns once `to` holds it all (a rank that moved on and exited would break
  // the transfers still running on some backends).
  wait_for(group_->barrier(), *group_, kZero, "the barrier after consolidate_state_dict");
}


OrderedDict<Tensor> ZeroRedundancyOptimizer::state_dict() const {
  GR_CHECK(consolidated_.has_value(), who(),
           ": state_dict() needs the state consolidated on this rank first: call consolidate_state_dict(",
           group_->rank(), ") on every rank (or save each rank's local_state_dict() for a sharded snapshot)");
  return *consolidated_;
}

OrderedDict<Tensor> ZeroRedundancyOptimizer::local_state_dict() const {
  OrderedDict<Tensor> out;
  for (size_t g = 0; g < param_groups().size(); ++g)
    for (const auto& [k, v] : param_groups()[g].options().values())
      out.insert("param_groups." + std::to_string(g) + "." + k, scalar_tensor(v, kFloat64));
  for (const Entry& e : local_entries(local_.get(), local_parameter_indices()))
    out.insert("state." + std::to_string(e.index) + "." + e.name, e.value);
  out.insert("zero.world_size", scalar_tensor(static_cast<double>(group_->size()), kInt64));
  out.insert("zero.rank", scalar_tensor(static_cast<double>(group_->rank()), kInt64));
  return out;
}

void ZeroRedundancyOptimizer::load_state_dict(const OrderedDict<Tensor>& state) {
  const std::string what = who() + ".load_state_dict";
  if (const Tensor* w = state.find("zero.world_size")) {
    const Tensor* r = state.find("zero.rank");
    GR_CHECK(r != nullptr, what, ": a shard without 'zero.rank'");
    const int64_t saved_world = w->item<int64_t>(), saved_rank = r->item<int64_t>();
    GR_CHECK(saved_world == group_->size() && saved_rank == group_->rank(), what, ": this is the optimizer state shard of rank ",
             saved_rank, " of a world of ", saved_world, " ranks, but this is rank ", group_->rank(), " of ",
             group_->size(),
             ". A sharded state resumes only on the same world size and rank; to change the world size, save "
             "a consolidated state (consolidate_state_dict, then state_dict) and load that on every rank: it is "
             "re-sharded.");
  }
  // Global -> local parameter index (this rank's parameters only).
  std::map<size_t, size_t> local_of;
  const std::vector<size_t> mine = local_parameter_indices();
  for (size_t li = 0; li < mine.size(); ++li) local_of[mine[li]] = li;
  OrderedDict<Tensor> local;
  std::vector<std::pair<size_t, std::pair<std::string, double>>> options;
  for (const auto& [key, t] : state) {
    size_t index = 0;
    std::string name;
    if (parse_state_key(key, index, name)) {
      GR_CHECK(index < params_.size(), what, ": state for parameter ", index, " but the optimizer has ", params_.size(),
               " parameters");
      auto it = local_of.find(index);
      if (it != local_of.end()) local.insert("state." + std::to_string(it->second) + "." + name, t);
      else GR_CHECK(!state.contains("zero.world_size"), what, ": the shard holds parameter ", index, ", owned by rank ",
                    owner_[index], " (another parameter list?)");
    } else if (key.rfind("param_groups.", 0) == 0) {
      const size_t dot = key.find('.', 13);
      GR_CHECK(dot != std::string::npos, what, ": malformed key '", key, "'");
      const size_t g = std::stoul(key.substr(13, dot - 13));
      const std::string option = key.substr(dot + 1);
      GR_CHECK(g < param_groups().size(), what, ": the state has more parameter groups than the ", param_groups().size(),
               " of this optimizer");
      GR_CHECK(param_groups()[g].options().has(option), what, ": unknown option '", option, "' (saved by another optimizer?)");
      options.push_back({g, {option, t.item<double>()}});
    } else {
      GR_CHECK(key == "zero.world_size" || key == "zero.rank", what, ": unexpected key '", key, "'");
    }
  }
  if (local_) {
    for (size_t lg = 0; lg < local_group_of_.size(); ++lg)
      for (const auto& [g, kv] : options)
        if (g == local_group_of_[lg]) local.insert("param_groups." + std::to_string(lg) + "." + kv.first, scalar_tensor(kv.second, kFloat64));
    local_->load_state_dict(local);  // checks shapes and dtypes before it changes anything
  }
  for (const auto& [g, kv] : options) param_groups()[g].options().set(kv.first, kv.second);
}

}  // namespace gr::distributed
