// Distributed checkpoints of fully_shard models (distributed/fsdp/fsdp_checkpoint.h): full and
// sharded state dicts; a checkpoint saved on N ranks resumes bitwise on N ranks and reshards
// to M != N (4 -> 2 and 1) to 1e-12 of the uninterrupted run; the consolidated file is the
// plain model's, and training resumed from it continues with the uninterrupted run's losses;
// an index that does not match its files is a clear error.
#include <chrono>
#include <filesystem>
#include <fstream>

#include "distributed/backends/init.h"
#include "distributed/fsdp/fsdp_checkpoint.h"
#include "distributed/launch/launcher.h"
#include "fsdp_checks.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;

namespace {

// Steps [from, to) of fully_shard training of `model` on rank's slices of the global batches
// (8 samples each), AdamW with weight decay.
void train(Uneven& model, fsdp::FSDPModule& root, optim::Optimizer& opt, const Data& data, int from, int to, int rank,
           int world) {
  const int64_t per = 8 / world;
  for (int s = from; s < to; ++s) {
    mse_loss(model(data.x[s].narrow(0, rank * per, per)), data.y[s].narrow(0, rank * per, per)).backward();
    opt.step();
    opt.zero_grad();
  }
}

// Steps [from, to) with plain SGD (no state: the model is the whole training state, so a
// consolidated checkpoint resumes it); returns each step's loss on the global batch (the mean
// of the ranks' equal slices). world 0: one process on the whole batch, no process group.
Tensor train_sgd(Uneven& model, optim::Optimizer& opt, const Data& data, int from, int to, int rank, int world) {
  const int64_t per = world ? 8 / world : 8;
  TensorList losses;
  for (int s = from; s < to; ++s) {
    Tensor loss = mse_loss(model(data.x[s].narrow(0, rank * per, per)), data.y[s].narrow(0, rank * per, per));
    Tensor global = loss.detach().clone().reshape({1});
    if (world > 1) {
      default_group()->allreduce(global, ReduceOp::Sum)->wait();
      global = global / static_cast<double>(world);
    }
    losses.push_back(global);
    loss.backward();
    opt.step();
    opt.zero_grad();
  }
  return cat(losses, 0);
}

std::unique_ptr<optim::AdamW> make_adamw(const fsdp::FSDPModule& root) {
  return std::make_unique<optim::AdamW>(root.parameters(), optim::AdamWOptions(1e-2).weight_decay(0.1));
}

}  // namespace

TEST_CASE("fully_shard state dicts: sharded rows, the full model gathered, a full state loaded into the shards") {
  spawn(2, [](int rank) {
    init_process_group("gloo");
    Uneven plain, model;
    plain->to(kFloat64);
    model->to(kFloat64);
    model->load_state_dict(plain->state_dict());
    auto root = shard_children_then_root(model);
    const auto full = fsdp::full_state_dict(root);
    for (const auto& [name, t] : plain->state_dict())
      GR_CHECK(full.contains(name) && max_abs_diff(*full.find(name), t) == 0, "rank ", rank, ": full ", name);
    // fc2.weight [7, 20] on 2 ranks: rows 0..4 and 4..7.
    const auto sharded = fsdp::sharded_state_dict(root);
    GR_CHECK(sharded.find("fc2.weight")->sizes() == IntArrayRef({rank == 0 ? 4 : 3, 20}), "rank ", rank, ": rows held");
    // Another model's full state, loaded into the shards, gathers back as it was.
    Uneven other;
    other->to(kFloat64);
    fsdp::load_full_state_dict(root, other->state_dict());
    for (const auto& [name, t] : fsdp::full_state_dict(root))
      GR_CHECK(max_abs_diff(t, *other->state_dict().find(name)) == 0, "rank ", rank, ": reloaded ", name);
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("fully_shard checkpoints resume bitwise on the same ranks and reshard 4 -> 2 and 1 ranks; the consolidated file is the plain model's") {
  const std::string dir = test::temp_path("gradring_fsdp_ckpt", "");
  const int steps = 6, cut = 3;
  // 4 ranks: the uninterrupted run (its final model on disk), and the checkpoint at `cut`.
  spawn(4, [&](int rank) {
    init_process_group("gloo");
    Data data = make_data(steps, 8);
    Uneven model;
    model->to(kFloat64);
    auto root = shard_children_then_root(model);
    auto opt = make_adamw(root);
    train(model, root, *opt, data, 0, cut, rank, 4);
    Snapshot position;
    position.global_step = cut;
    position.user["note"] = "cut";
    fsdp::save_checkpoint(dir + "/ckpt4", root, opt.get(), position);
    const auto at_cut = fsdp::full_state_dict(root);
    train(model, root, *opt, data, cut, steps, rank, 4);
    const auto final_state = fsdp::full_state_dict(root);
    if (rank == 0) {
      save(at_cut, dir + "/at_cut.st");
      save(final_state, dir + "/final4.st");
    }
    // Resumed on the same 4 ranks by a fresh model (other weights) and optimizer: bitwise.
    Uneven again;
    again->to(kFloat64);
    auto root2 = shard_children_then_root(again);
    auto opt2 = make_adamw(root2);
    const Snapshot got = fsdp::load_checkpoint(dir + "/ckpt4", root2, opt2.get());
    GR_CHECK(got.global_step == cut && got.user.at("note") == "cut" && got.world_size == 4, "rank ", rank, ": position");
    train(again, root2, *opt2, data, cut, steps, rank, 4);
    for (const auto& [name, t] : fsdp::full_state_dict(root2))
      GR_CHECK(max_abs_diff(t, *final_state.find(name)) == 0, "rank ", rank, ": resumed ", name, " differs");
    destroy_process_group();
  }, {.timeout = 120s});
  // The consolidated checkpoint is the plain model at the cut, under the plain model's names.
  fsdp::consolidate_checkpoint(dir + "/ckpt4", dir + "/consolidated.st");
  {
    Uneven plain;
    plain->to(kFloat64);
    load(plain, dir + "/consolidated.st");  // strict: exactly the plain model's names and shapes
    OrderedDict<Tensor> want;
    load(want, dir + "/at_cut.st");
    for (const auto& [name, t] : plain->state_dict())
      REQUIRE(max_abs_diff(t, *want.find(name)) == 0);
  }
  // 2 ranks and 1 rank continue the 4-rank run from its checkpoint (the same global batches).
  for (int world : {2, 1}) {
    CAPTURE(world);
    spawn(world, [&, world](int rank) {
      init_process_group("shm");
      Data data = make_data(steps, 8);
      Uneven model;
      model->to(kFloat64);
      auto root = shard_children_then_root(model);
      auto opt = make_adamw(root);
      fsdp::load_checkpoint(dir + "/ckpt4", root, opt.get());
      train(model, root, *opt, data, cut, steps, rank, world);
      OrderedDict<Tensor> want;
      load(want, dir + "/final4.st");
      for (const auto& [name, t] : fsdp::full_state_dict(root)) {
        const double d = max_abs_diff(t, *want.find(name));
        GR_CHECK(d <= 1e-12, "rank ", rank, " of ", world, ": resharded ", name, " differs by ", d);
      }
      destroy_process_group();
    }, {.timeout = 120s});
  }
}

TEST_CASE("fully_shard checkpoints: an index that does not match its files is a clear error") {
  const std::string dir = test::temp_path("gradring_fsdp_ckpt_bad", "");
  spawn(2, [&](int rank) {
    init_process_group("gloo");
    Uneven model;
    model->to(kFloat64);
    auto root = shard_children_then_root(model);
    fsdp::save_checkpoint(dir + "/a", root, nullptr, Snapshot());
    fsdp::save_checkpoint(dir + "/b", root, nullptr, Snapshot());
    destroy_process_group();
  }, {.timeout = 60s});
  namespace fs = std::filesystem;
  spawn(1, [&](int) {
    init_process_group("gloo");
    Uneven model;
    model->to(kFloat64);
    auto root = shard_children_then_root(model);
    auto attempt = [&](const std::string& d) { fsdp::load_checkpoint(d, root, nullptr); };
    require_error([&] { attempt(dir + "/none"); }, "has no index.json", "no checkpoint");
    // A file of another save.
    fs::copy(dir + "/a", dir + "/mixed", fs::copy_options::recursive);
    fs::copy_file(dir + "/b/rank1.safetensors", dir + "/mixed/rank1.safetensors", fs::copy_options::overwrite_existing);
    require_error([&] { attempt(dir + "/mixed"); }, "files from two saves mixed?", "mixed saves");
    // A missing file.
    fs::remove(dir + "/mixed/rank1.safetensors");
    require_error([&] { attempt(dir + "/mixed"); }, "lists 2 ranks but", "missing file");
    // An index whose shapes are not the files'.
    fs::copy(dir + "/a", dir + "/shape", fs::copy_options::recursive);
    nlohmann::json index = nlohmann::json::parse(std::ifstream(dir + "/shape/index.json"));
    for (auto& t : index["tensors"])
      if (t["name"] == "model.fc1.weight") t["shape"][0] = 22;  // [20, 6] -> [22, 6]
    std::ofstream(dir + "/shape/index.json") << index.dump();
    require_error([&] { attempt(dir + "/shape"); }, "does not match", "shapes");
    destroy_process_group();
  }, {.timeout = 60s});
}

TEST_CASE("fully_shard: training resumed from a consolidated checkpoint (a plain model; load_full_state_dict on 2 ranks) continues with the uninterrupted 4-rank run's losses") {
  const std::string dir = test::temp_path("gradring_fsdp_consolidated", "");
  const int steps = 6, cut = 3;
  spawn(4, [&](int rank) {
    init_process_group("gloo");
    Data data = make_data(steps, 8);
    Uneven model;
    model->to(kFloat64);
    auto root = shard_children_then_root(model);
    optim::SGD opt(root.parameters(), optim::SGDOptions(0.1));
    train_sgd(model, opt, data, 0, cut, rank, 4);
    fsdp::save_checkpoint(dir + "/ckpt", root, &opt, Snapshot());
    const Tensor losses = train_sgd(model, opt, data, cut, steps, rank, 4);
    if (rank == 0) {
      OrderedDict<Tensor> out;
      out.insert("losses", losses);
      save(out, dir + "/losses.st");
    }
    destroy_process_group();
  }, {.timeout = 120s});
  fsdp::consolidate_checkpoint(dir + "/ckpt", dir + "/consolidated.st");
  OrderedDict<Tensor> saved;
  load(saved, dir + "/losses.st");
  const Tensor want = *saved.find("losses");
  // One process, a plain model loaded from the file, the whole batch.
  {
    Data data = make_data(steps, 8);
    Uneven plain;
    plain->to(kFloat64);
    load(plain, dir + "/consolidated.st");
    optim::SGD opt(plain->parameters(), optim::SGDOptions(0.1));
    const double d = max_abs_diff(train_sgd(plain, opt, data, cut, steps, 0, 0), want);
    CHECK(d <= 1e-12);  // fails on NaN (the comparison is false)
  }
  // Two ranks, fully_shard, the file's state loaded into the shards.
  spawn(2, [&](int rank) {
    init_process_group("shm");
    Data data = make_data(steps, 8);
    Uneven model;
    model->to(kFloat64);
    auto root = shard_children_then_root(model);
    OrderedDict<Tensor> state;
    load(state, dir + "/consolidated.st");
    fsdp::load_full_state_dict(root, state);
    optim::SGD opt(root.parameters(), optim::SGDOptions(0.1));
    const double d = max_abs_diff(train_sgd(model, opt, data, cut, steps, rank, 2), want);
    GR_CHECK(d <= 1e-12, "rank ", rank, ": losses after resuming differ from the uninterrupted run's by ", d);
    destroy_process_group();
  }, {.timeout = 120s});
}
