// State dicts of fully_shard models and distributed checkpoints that reshard: Note [FSDP
// checkpoints].
#include "distributed/fsdp/fsdp_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/fsdp/fsdp_unit.h"
#include "nn/optim/optimizer.h"
#include "nn/serialize.h"

namespace gr::distributed::fsdp {

// Note [FSDP checkpoints]
// A checkpoint is a folder holding rank<r>.safetensors for every rank r of the N that saved
// it, and index.json. A rank file is a snapshot (nn/snapshot.h: written atomically, with a
// checksum) holding, for every tensor split by rows, the rows [r * c, min((r + 1) * c, d0))
// that rank owns (c = ceil(d0 / N), the shards' layout, Note [FSDP units]; the padding never
// reaches a file): every parameter ("model.<name>") and every optimizer state tensor shaped
// like its parameter's shard ("optimizer.state.<parameter name>.<state name>": keyed by name,
// so the loading optimizer may group or order its parameters otherwise). Tensors that are not
// split are written whole by every rank and read from rank 0's file: the optimizer's other
// state (Adam's step), its param groups, the module's persistent buffers. The metadata holds
// the position (epoch, steps), this rank's generators, the world size, the rank and the id of
// the save. index.json lists the world size, the id and every tensor with its whole shape,
// dtype and whether it is split; rank 0 deletes it before a save starts and writes it (also
// atomically) after a barrier that every rank reaches once its file is complete, so a folder
// whose index exists holds one whole save. Loading on M ranks (M = N or not): rank r needs the
// rows [r * c', min((r + 1) * c', d0)) of each split tensor, c' = ceil(d0 / M); it reads the N
// files one at a time, checks each against the index (its rank, the save's id, every tensor's
// rows, shape and dtype; a gr::Error names the file and the tensor otherwise), and copies the
// rows it needs into its shards and into the optimizer state it then loads. consolidate_checkpoint
// stitches all the rows of every parameter into one plain safetensors file.

namespace {

constexpr const char* kIndexFormat = "gradring.fsdp_checkpoint";

// A parameter of the tree: its name (relative to the root's module) and its unit's entry.
struct Entry {
  std::string name;
  const FSDPUnit::Param* param;
};

std::vector<Entry> entries_of(const FSDPModule& root) {
  std::unordered_map<const TensorImpl*, const FSDPUnit::Param*> by_local;
  for (const auto& m : root.module().modules())
    if (auto unit = find_unit(m.get()))
      for (const FSDPUnit::Param& p : unit->params()) by_local[p.local.unsafe_impl()] = &p;
  std::vector<Entry> out;
  for (const auto& [name, local] : root.named_parameters()) out.push_back({name, by_local.at(local.unsafe_impl())});
  return out;
}

// Every unit of the tree under `root`, resharded (a load must not be overwritten by a gather
// still in flight, and what is gathered is stale after it).
void reshard_tree(const FSDPModule& root) {
  for (const auto& m : root.module().modules())
    if (auto unit = find_unit(m.get())) unit->reshard();
}

// The rows [lo, lo + count) of a tensor of d0 rows split over `world` ranks that `rank` owns.
struct Rows {
  int64_t lo = 0, count = 0;
};
Rows rows_of(int64_t d0, int64_t world, int64_t rank) {
  const int64_t c = (d0 + world - 1) / world;
  return {std::min(rank * c, d0), std::clamp<int64_t>(d0 - rank * c, 0, c)};
}

int64_t dim0(const std::vector<int64_t>& shape) { return shape.empty() ? 1 : shape[0]; }
int64_t row_elems(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (size_t d = 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}
// A tensor of `rows` rows of a tensor shaped `shape` (0-dim: one row of one element).
std::vector<int64_t> rows_shape(const std::vector<int64_t>& shape, int64_t rows) {
  std::vector<int64_t> s = shape;
  if (s.empty()) s.push_back(1);
  s[0] = rows;
  return s;
}

// `t` (a tensor of rows shaped like `shape`'s, e.g. a shard) as [rows, row elements].
Tensor as_rows(const Tensor& t, const std::vector<int64_t>& shape) {
  const int64_t re = row_elems(shape);
  return t.contiguous().view({re > 0 ? t.numel() / re : 0, re});
}
// The rows [lo, lo + count) of `t`, shaped rows_shape(shape, count): a view when t is contiguous.
Tensor rows_of_tensor(const Tensor& t, const std::vector<int64_t>& shape, int64_t lo, int64_t count) {
  return as_rows(t, shape).narrow(0, lo, count).view(rows_shape(shape, count));
}

struct IndexTensor {
  std::string name;  // "model.<param>", "optimizer.state.<param>.<state>", "optimizer.param_groups.<g>.<option>"
  std::vector<int64_t> shape;
  std::string dtype;
  bool split = false;
};

struct Index {
  int64_t world_size = 0;
  std::string id;
  std::vector<IndexTensor> tensors;
};

std::string index_path(const std::string& dir) { return (std::filesystem::path(dir) / "index.json").string(); }
std::string rank_path(const std::string& dir, int64_t r) {
  return (std::filesystem::path(dir) / ("rank" + std::to_string(r) + ".safetensors")).string();
}

Index read_index(const std::string& dir) {
  const std::string path = index_path(dir);
  std::ifstream in(path);
  GR_CHECK(in.good(), "load_checkpoint: '", dir, "' has no index.json: it is not a fully_shard checkpoint, or its save did "
           "not finish (the index is written last)");
  Index index;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    GR_CHECK(j.at("format") == kIndexFormat, "not a ", kIndexFormat, " index");
    index.world_size = j.at("world_size").get<int64_t>();
    index.id = j.at("id").get<std::string>();
    for (const auto& t : j.at("tensors"))
      index.tensors.push_back({t.at("name").get<std::string>(), t.at("shape").get<std::vector<int64_t>>(),
                               t.at("dtype").get<std::string>(), t.at("split").get<bool>()});
  } catch (const std::exception& e) {
    GR_ERROR("load_checkpoint: '", path, "' is not a valid checkpoint index: ", e.what());
  }
  GR_CHECK(index.world_size >= 1, "load_checkpoint: '", path, "' says world size ", index.world_size);
  return index;
}

// The tensor `name` of a rank file's snapshot ("model.*" or "optimizer.*"), or null.
const Tensor* find_in(const Snapshot& s, const std::string& name) {
  if (name.rfind("model.", 0) == 0) return s.model.find(name.substr(6));
  if (name.rfind("optimizer.", 0) == 0) return s.optimizer.find(name.substr(10));
  return nullptr;
}

// Reads rank file r and checks it against the index: the file is this save's, of this rank,
// and holds exactly the index's tensors with that rank's rows.
Snapshot read_rank_file(const std::string& dir, const Index& index, int64_t r) {
  const std::string path = rank_path(dir, r);
  GR_CHECK(std::filesystem::exists(path), "load_checkpoint: '", dir, "' does not match its index: the index lists ",
           index.world_size, " ranks but ", path, " is missing");
  Snapshot s = load_snapshot(path, index.world_size);
  auto rank = s.user.find("fsdp.rank"), id = s.user.find("fsdp.checkpoint");
  GR_CHECK(rank != s.user.end() && id != s.user.end(), "load_checkpoint: ", path, " is a snapshot but not a rank file of "
           "a fully_shard checkpoint");
  GR_CHECK(rank->second == std::to_string(r) && id->second == index.id, "load_checkpoint: ", path, " does not match ",
           index_path(dir), ": it is the file of rank ", rank->second, " of save ", id->second, ", the index expects rank ",
           r, " of save ", index.id, " (files from two saves mixed?)");
  GR_CHECK(s.model.size() + s.optimizer.size() == index.tensors.size(), "load_checkpoint: ", path, " holds ",
           s.model.size() + s.optimizer.size(), " tensors but ", index_path(dir), " lists ", index.tensors.size());
  for (const IndexTensor& t : index.tensors) {
    const Tensor* got = find_in(s, t.name);
    GR_CHECK(got != nullptr, "load_checkpoint: ", path, " does not match ", index_path(dir), ": it lacks ", t.name);
    const Rows rows = rows_of(dim0(t.shape), index.world_size, r);
    const std::vector<int64_t> want = t.split ? rows_shape(t.shape, rows.count) : t.shape;
    GR_CHECK(got->sizes().vec() == want && std::string(dtype_name(got->scalar_type())) == t.dtype, "load_checkpoint: ", path,
             " does not match ", index_path(dir), ": ", t.name, " is ", dtype_name(got->scalar_type()), " ", got->sizes(),
             " but the index says ", t.dtype, " ", IntArrayRef(want),
             t.split ? " (rows " + std::to_string(rows.lo) + ".." + std::to_string(rows.lo + rows.count) + " of " +
                           std::to_string(dim0(t.shape)) + ")"
                     : std::string());
  }
  return s;
}

// Copies the rows of file r's piece of split tensor t that overlap `mine` into `dst`
// (rows_shape(t.shape, c') for this rank).
void copy_overlap(const Tensor& dst, const Rows& mine, const Tensor& piece, const IndexTensor& t, const Rows& theirs) {
  const int64_t from = std::max(mine.lo, theirs.lo), to = std::min(mine.lo + mine.count, theirs.lo + theirs.count);
  if (from >= to) return;
  native::copy_(as_rows(dst, t.shape).narrow(0, from - mine.lo, to - from),
                as_rows(piece, t.shape).narrow(0, from - theirs.lo, to - from));
}

}  // namespace

OrderedDict<Tensor> sharded_state_dict(const FSDPModule& root) {
  OrderedDict<Tensor> out;
  const ProcessGroupPtr& g = root.process_group();
  for (const Entry& e : entries_of(root)) {
    const Rows rows = rows_of(e.param->rows, g->size(), g->rank());
    out.insert(e.name, rows_of_tensor(e.param->local, e.param->shape, 0, rows.count));
  }
  return out;
}

OrderedDict<Tensor> full_state_dict(const FSDPModule& root) {
  NoGradGuard no_grad;
  std::unordered_map<const TensorImpl*, Tensor> gathered;
  for (const auto& m : root.module().modules()) {
    auto unit = find_unit(m.get());
    if (!unit) continue;
    const bool was = unit->is_unsharded();
    unit->unshard();
    for (const FSDPUnit::Param& p : unit->params()) gathered[p.param.unsafe_impl()] = native::to_device(native::clone(p.param), Device(kCPU));
    if (!was) unit->reshard();
  }
  OrderedDict<Tensor> out;
  for (const auto& [name, t] : root.module().state_dict()) {
    auto it = gathered.find(t.unsafe_impl());
    out.insert(name, it != gathered.end() ? it->second : native::to_device(native::clone(t), Device(kCPU)));
  }
  return out;
}

void load_full_state_dict(const FSDPModule& root, const OrderedDict<Tensor>& state) {
  NoGradGuard no_grad;
  reshard_tree(root);
  const ProcessGroupPtr& g = root.process_group();
  const std::vector<Entry> entries = entries_of(root);
  for (const Entry& e : entries) {  // check everything before changing anything
    const Tensor* t = state.find(e.name);
    GR_CHECK(t != nullptr, "load_full_state_dict: the state has no parameter ", e.name);
    GR_CHECK(t->sizes().vec() == e.param->shape, "load_full_state_dict: ", e.name, " is ", t->sizes(),
             " in the state but ", IntArrayRef(e.param->shape), " in the model");
  }
  for (const Entry& e : entries) {
    const Rows rows = rows_of(e.param->rows, g->size(), g->rank());
    native::fill_(e.param->local, 0);
    if (rows.count > 0 && e.param->numel() > 0)
      native::copy_(rows_of_tensor(e.param->local, e.param->shape, 0, rows.count),
                    rows_of_tensor(*state.find(e.name), e.param->shape, rows.lo, rows.count));
  }
  const OrderedDict<Tensor> params = root.module().named_parameters();
  for (const auto& [name, b] : root.module().state_dict())
    if (!params.contains(name))
      if (const Tensor* t = state.find(name)) native::copy_(b, *t);
}

namespace {

// What a rank writes: its rows of every parameter and of every optimizer state tensor shaped
// like its shard, the rest whole, with the index entries that describe them (the same on
// every rank).
struct Payload {
  OrderedDict<Tensor> model, optimizer;
  std::vector<IndexTensor> index;
};

Payload payload_of(const FSDPModule& root, const optim::Optimizer* optimizer) {
  Payload out;
  const ProcessGroupPtr& g = root.process_group();
  const std::vector<Entry> entries = entries_of(root);
  std::unordered_map<const TensorImpl*, const Entry*> by_local;
  for (const Entry& e : entries) {
    by_local[e.param->local.unsafe_impl()] = &e;
    const Rows rows = rows_of(e.param->rows, g->size(), g->rank());
    out.model.insert(e.name, rows_of_tensor(e.param->local, e.param->shape, 0, rows.count));
    out.index.push_back({"model." + e.name, e.param->shape, std::string(dtype_name(e.param->local.scalar_type())), true});
  }
  const OrderedDict<Tensor> params = root.module().named_parameters();
  for (const auto& [name, b] : root.module().state_dict()) {
    if (params.contains(name)) continue;
    out.model.insert(name, b);
    out.index.push_back({"model." + name, b.sizes().vec(), std::string(dtype_name(b.scalar_type())), false});
  }
  if (optimizer == nullptr) return out;
  const std::vector<Tensor> opt_params = optimizer->parameters();
  std::vector<const Entry*> entry_of;
  for (const Tensor& p : opt_params) {
    auto it = by_local.find(p.unsafe_impl());
    GR_CHECK(it != by_local.end(), "save_checkpoint: the optimizer steps a tensor that is not a shard of this model "
             "(build it on FSDPModule::parameters())");
    entry_of.push_back(it->second);
  }
  for (const auto& [key, t] : optimizer->state_dict()) {
    std::string name = key;
    bool split = false;
    if (key.rfind("state.", 0) == 0) {  // "state.<i>.<state name>" -> "state.<parameter name>.<state name>"
      const size_t dot = key.find('.', 6);
      const Entry& e = *entry_of.at(std::stoul(key.substr(6, dot - 6)));
      name = "state." + e.name + key.substr(dot);
      split = t.sizes() == e.param->local.sizes();
      if (split) {
        const Rows rows = rows_of(e.param->rows, g->size(), g->rank());
        out.optimizer.insert(name, rows_of_tensor(t, e.param->shape, 0, rows.count));
        out.index.push_back({"optimizer." + name, e.param->shape, std::string(dtype_name(t.scalar_type())), true});
        continue;
      }
    }
    out.optimizer.insert(name, t);
    out.index.push_back({"optimizer." + name, t.sizes().vec(), std::string(dtype_name(t.scalar_type())), false});
  }
  return out;
}

// One id per save, the same on every rank (rank 0's random number, broadcast).
std::string save_id(const ProcessGroupPtr& g, Device device) {
  std::random_device rd;
  const int64_t mine = static_cast<int64_t>((static_cast<uint64_t>(rd()) << 31) ^ rd()) & 0x7fffffffffffffffLL;
  Tensor t = control_tensor({mine}, device);
  if (g->size() > 1) wait_for(g->broadcast(t, 0), *g, "save_checkpoint", "the broadcast of the save's id");
  std::ostringstream hex;
  hex << std::hex << host_values(t)[0];
  return hex.str();
}

}  // namespace

void save_checkpoint(const std::string& dir, const FSDPModule& root, const optim::Optimizer* optimizer,
                     const Snapshot& position) {
  const ProcessGroupPtr& g = root.process_group();
  reshard_tree(root);
  const Payload payload = payload_of(root, optimizer);
  if (g->rank() == 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    GR_CHECK(!ec, "save_checkpoint: cannot create '", dir, "': ", ec.message());
    std::filesystem::remove(index_path(dir), ec);  // Note [FSDP checkpoints]: no index while the files change
  }
  const std::vector<Entry> entries = entries_of(root);
  const Device device = entries.empty() ? Device(kCPU) : entries[0].param->local.device();
  const std::string id = save_id(g, device);  // also: rank 0 has made the folder
  Snapshot s;
  s.model = payload.model;
  s.optimizer = payload.optimizer;
  s.epoch = position.epoch;
  s.step_in_epoch = position.step_in_epoch;
  s.global_step = position.global_step;
  s.scheduler_last_epoch = position.scheduler_last_epoch;
  s.user = position.user;
  s.world_size = g->size();
  s.generators["default"] = default_generator().state();
  s.user["fsdp.rank"] = std::to_string(g->rank());
  s.user["fsdp.checkpoint"] = id;
  save_snapshot(rank_path(dir, g->rank()), s);
  wait_for(g->barrier(), *g, "save_checkpoint", "the barrier after every rank's file");
  if (g->rank() == 0) {
    nlohmann::json j = {{"format", kIndexFormat}, {"version", 1}, {"world_size", g->size()}, {"id", id},
                        {"global_step", position.global_step}, {"tensors", nlohmann::json::array()}};
    for (const IndexTensor& t : payload.index)
      j["tensors"].push_back({{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}, {"split", t.split}});
    write_file_atomic(index_path(dir), j.dump(1) + "\n");
  }
  wait_for(g->barrier(), *g, "save_checkpoint", "the barrier after the index");
}

Snapshot load_checkpoint(const std::string& dir, const FSDPModule& root, optim::Optimizer* optimizer) {
  NoGradGuard no_grad;
  const Index index = read_index(dir);
  const ProcessGroupPtr& g = root.process_group();
  const int64_t world = g->size(), rank = g->rank();
  reshard_tree(root);
  // What this rank assembles: its rows of every split tensor (zero padding to its shard's
  // rows), every whole tensor from rank 0's file.
  std::map<std::string, Tensor> mine;
  Snapshot first;
  std::optional<GeneratorState> generator;
  for (int64_t f = 0; f < index.world_size; ++f) {
    Snapshot s = read_rank_file(dir, index, f);
    for (const IndexTensor& t : index.tensors) {
      if (!t.split) continue;
      const Tensor& piece = *find_in(s, t.name);
      Tensor& dst = mine[t.name];
      if (!dst.defined())  // this rank's shard rows, the padding zero
        dst = zeros(rows_shape(t.shape, (dim0(t.shape) + world - 1) / world), TensorOptions(piece.scalar_type()));
      copy_overlap(dst, rows_of(dim0(t.shape), world, rank), piece, t, rows_of(dim0(t.shape), index.world_size, f));
    }
    if (f == std::min<int64_t>(rank, index.world_size - 1) && s.generators.count("default"))
      generator = s.generators.at("default");
    if (f == 0) first = std::move(s);
  }
  // The model: every parameter of the module from the checkpoint, shaped as the model's.
  for (const Entry& e : entries_of(root)) {
    const std::string key = "model." + e.name;
    auto it = std::find_if(index.tensors.begin(), index.tensors.end(), [&](const IndexTensor& t) { return t.name == key; });
    GR_CHECK(it != index.tensors.end(), "load_checkpoint: the checkpoint '", dir, "' has no parameter ", e.name);
    GR_CHECK(it->shape == e.param->shape, "load_checkpoint: ", e.name, " is ", IntArrayRef(e.param->shape),
             " in the model but ", IntArrayRef(it->shape), " in the checkpoint '", dir, "'");
    native::copy_(e.param->local, mine.at(key));
  }
  const OrderedDict<Tensor> params = root.module().named_parameters();
  for (const auto& [name, b] : root.module().state_dict())
    if (!params.contains(name))
      if (const Tensor* t = first.model.find(name)) native::copy_(b, *t);
  if (optimizer != nullptr) {
    // Back to the loading optimizer's own numbering: "state.<i>.<state name>".
    std::unordered_map<std::string, size_t> index_of;
    const std::vector<Tensor> opt_params = optimizer->parameters();
    std::unordered_map<const TensorImpl*, std::string> name_of;
    for (const Entry& e : entries_of(root)) name_of[e.param->local.unsafe_impl()] = e.name;
    for (size_t i = 0; i < opt_params.size(); ++i) {
      auto it = name_of.find(opt_params[i].unsafe_impl());
      GR_CHECK(it != name_of.end(), "load_checkpoint: the optimizer steps a tensor that is not a shard of this model");
      index_of[it->second] = i;
    }
    OrderedDict<Tensor> state;
    for (const auto& [key, t] : first.optimizer) {
      if (key.rfind("state.", 0) != 0) {
        state.insert(key, t);
        continue;
      }
      const size_t dot = key.rfind('.');
      const std::string param = key.substr(6, dot - 6);
      auto it = index_of.find(param);
      GR_CHECK(it != index_of.end(), "load_checkpoint: the checkpoint has optimizer state for ", param,
               ", which the optimizer does not step");
      auto split = mine.find("optimizer." + key);
      state.insert("state." + std::to_string(it->second) + key.substr(dot), split != mine.end() ? split->second : t);
    }
    optimizer->load_state_dict(state);
  }
  if (generator) default_generator().set_state(*generator);
  Snapshot out;
  out.epoch = first.epoch;
  out.step_in_epoch = first.step_in_epoch;
  out.global_step = first.global_step;
  out.world_size = index.world_size;
  out.scheduler_last_epoch = first.scheduler_last_epoch;
  out.user = first.user;
  out.path = dir;
  return out;
}

void consolidate_checkpoint(const std::string& dir, const std::string& path) {
  const Index index = read_index(dir);
  std::vector<Snapshot> files;
  for (int64_t f = 0; f < index.world_size; ++f) files.push_back(read_rank_file(dir, index, f));
  OrderedDict<Tensor> out;
  for (const IndexTensor& t : index.tensors) {
    if (t.name.rfind("model.", 0) != 0) continue;
    if (!t.split) {
      out.insert(t.name.substr(6), *find_in(files[0], t.name));
      continue;
    }
    const int64_t d0 = dim0(t.shape);
    Tensor whole = empty(rows_shape(t.shape, d0), TensorOptions(find_in(files[0], t.name)->scalar_type()));
    for (int64_t f = 0; f < index.world_size; ++f)
      copy_overlap(whole, {0, d0}, *find_in(files[static_cast<size_t>(f)], t.name), t, rows_of(d0, index.world_size, f));
    out.insert(t.name.substr(6), whole.view(t.shape));
  }
  save(out, path, {{"format", "pt"}});
}

}  // namespace gr::distributed::fsdp
