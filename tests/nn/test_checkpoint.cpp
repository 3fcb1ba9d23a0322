// gr::save / gr::load of module holders, tensors, tensor lists, OrderedDicts and optimizers:
// round trips, a checkpoint written by PyTorch, and the errors that list every mismatch.
// Also the API glue (gr::cuda queries and seeding).
#include <filesystem>
#include <functional>

#include "core/cuda.h"
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::error_of;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gr_checkpoint_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

nn::Sequential make_model() {
  return nn::Sequential(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::ReLU(), nn::Flatten(), nn::Linear(18, 3));
}

void has_all(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    CAPTURE(p);
    CHECK(message.find(p) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("a checkpoint written by PyTorch loads into the same architecture and computes the same") {
  nn::Sequential model = make_model();
  load(model, std::string(GRADRING_TEST_DATA) + "/pytorch_model.safetensors");
  OrderedDict<Tensor> io = load(std::string(GRADRING_TEST_DATA) + "/pytorch_model_io.safetensors");
  CHECK(model->state_dict()["1.num_batches_tracked"].item<int64_t>() == 1);
  model->eval();
  NoGradGuard no_grad;
  check_close(model(io["input"]), io["output"], 1e-5);
}

TEST_CASE("save/load round trips: module holders, tensors, tensor lists, OrderedDicts") {
  nn::Linear a(4, 3), b(4, 3);
  std::string path = temp_path("linear.safetensors");
  save(a, path);
  load(b, path);
  CHECK(b->weight.equal(a->weight));
  CHECK(b->bias.equal(a->bias));

  Tensor t = arange(6, kFloat64).reshape({2, 3}), u;
  save(t, path);
  load(u, path);
  CHECK(u.equal(t));

  std::vector<Tensor> list = {ones({2}), arange(3, kInt64), zeros({0, 2})}, back;
  for (int i = 0; i < 12; ++i) list.push_back(full({1}, i));  // names "10" and "2" sort apart
  save(list, path);
  load(back, path);
  REQUIRE(back.size() == list.size());
  for (size_t i = 0; i < list.size(); ++i) CHECK(back[i].equal(list[i]));

  OrderedDict<Tensor> dict, loaded;
  dict.insert("z", ones({1}));
  dict.insert("a", zeros({2}, kFloat64));
  save(dict, path);
  load(loaded, path);
  CHECK(loaded.keys() == dict.keys());
  CHECK(loaded["a"].equal(dict["a"]));
  std::filesystem::remove(path);
}

// The optim_reference.json problem with an optimizer over W and B.
struct Run {
  Tensor X, Y, W, B;
  std::unique_ptr<optim::Optimizer> opt;
  Run(const nlohmann::json& ref, const std::function<std::unique_ptr<optim::Optimizer>(Tensor, Tensor)>& make)
      : X(gr::test::tensor_from_json(ref.at("X"))),
        Y(gr::test::tensor_from_json(ref.at("Y"))),
        W(gr::test::tensor_from_json(ref.at("W0")).requires_grad_(true)),
        B(gr::test::tensor_from_json(ref.at("B0")).requires_grad_(true)),
        opt(make(W, B)) {}
  void step() {
    opt->step([this] {
      opt->zero_grad();
      Tensor loss = (linear(X, W, B) - Y).pow(2.0).mean() + W.pow(4.0).sum() * 0.1;
      loss.backward();
      return loss;
    });
  }
};

TEST_CASE("optimizer save/load continues identically, with groups and per-group options") {
  nlohmann::json ref = gr::test::load_reference("optim_reference.json");
  auto adam = [](Tensor W, Tensor B) -> std::unique_ptr<optim::Optimizer> {
    std::vector<optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<Tensor>{W});
    groups.emplace_back(std::vector<Tensor>{B}, optim::AdamOptions(0.05).betas({0.5, 0.9}).amsgrad(true).clone());
    return std::make_unique<optim::Adam>(std::move(groups), optim::AdamOptions(0.01));
  };
  auto lbfgs = [](Tensor W, Tensor B) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<optim::LBFGS>(std::vector<Tensor>{W, B},
                                          optim::LBFGSOptions(0.5).max_iter(3).history_size(2));
  };
  for (auto make : {std::function<std::unique_ptr<optim::Optimizer>(Tensor, Tensor)>(adam),
                    std::function<std::unique_ptr<optim::Optimizer>(Tensor, Tensor)>(lbfgs)}) {
    Run a(ref, make), b(ref, make);
    CAPTURE(a.opt->name());
    for (int i = 0; i < 3; ++i) a.step();
    std::string path = temp_path("optimizer.safetensors");
    save(*a.opt, path);
    b.opt->param_groups().back().options().set_lr(123.0);  // the file restores it
    load(*b.opt, path);
    CHECK(b.opt->param_groups().back().options().lr() == a.opt->param_groups().back().options().lr());
    {
      NoGradGuard g;
      b.W.copy_(a.W);
      b.B.copy_(a.B);
    }
    for (int i = 0; i < 3; ++i) {
      a.step();
      b.step();
    }
    CHECK(a.W.equal(b.W));
    CHECK(a.B.equal(b.B));
    std::filesystem::remove(path);
  }
}

TEST_CASE("load refuses mismatched names and shapes, listing every one, and changes nothing") {
  nn::Sequential model = make_model();
  std::string path = temp_path("mismatch.safetensors");
  OrderedDict<Tensor> file = load(std::string(GRADRING_TEST_DATA) + "/pytorch_model.safetensors");
  OrderedDict<Tensor> edited;
  for (const auto& [k, v] : file) {
    if (k == "0.bias" || k == "1.running_var") continue;  // missing
    edited.insert(k == "4.bias" ? "4.biass" : k, k == "4.weight" ? zeros({3, 17}) : v);
  }
  edited.insert("5.weight", ones({1}));
  save(edited, path);
  Tensor before = model->state_dict()["0.weight"].clone();
  std::string message = error_of([&] { load(model, path); });
  has_all(message, {"Missing key(s) in state_dict: \"0.bias\", \"4.bias\", \"1.running_var\".",
                    "Unexpected key(s) in state_dict: \"4.biass\", \"5.weight\".",
                    "size mismatch for 4.weight: copying a param with shape [3, 17] from checkpoint, the shape in "
                    "current model is [3, 18]."});
  CHECK(model->state_dict()["0.weight"].equal(before));
  // Not strict: missing and unexpected names are allowed, a wrong shape is not.
  message = error_of([&] { load(model, path, /*strict=*/false); });
  CHECK(message.find("Unexpected") == std::string::npos);
  CHECK(message.find("Missing") == std::string::npos);
  has_all(message, {"size mismatch for 4.weight"});

  Tensor t;
  has_all(error_of([&] { load(t, path); }), {"holds 8 tensors, but one Tensor was asked for"});
  std::vector<Tensor> list;
  has_all(error_of([&] { load(list, path); }), {"is not a tensor list", "no tensor named \"0\""});

  // Optimizer files: the kind, the groups and the options must match.
  Tensor w = zeros({2}).requires_grad_(true), v = zeros({3}).requires_grad_(true);
  optim::SGD sgd({w, v}, optim::SGDOptions(0.1).momentum(0.9));
  w.mutable_grad() = ones({2});
  v.mutable_grad() = ones({3});
  sgd.step();
  save(sgd, path);
  optim::Adam adam({w, v});
  has_all(error_of([&] { load(adam, path); }), {"holds the state of a SGD optimizer, not Adam"});
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{w});
  groups.emplace_back(std::vector<Tensor>{v});
  optim::SGD two_groups(std::move(groups), optim::SGDOptions(0.1).momentum(0.9));
  has_all(error_of([&] { load(two_groups, path); }),
          {"the file has 1 parameter groups, the optimizer 2"});
  Tensor v4 = zeros({4}).requires_grad_(true);
  optim::SGD other_shapes({w, v4}, optim::SGDOptions(0.1).momentum(0.9));
  has_all(error_of([&] { load(other_shapes, path); }), {"'state.1.momentum_buffer' has shape [3]", "shape [4]"});
  has_all(error_of([&] { load(model, path); }), {"Unexpected key(s) in state_dict: \"state.0.momentum_buffer\""});
  save(model, path);
  has_all(error_of([&] { load(sgd, path); }), {"is not an optimizer file"});
  std::filesystem::remove(path);
}

TEST_CASE("API glue: gr::cuda queries and seeding") {
  CHECK(cuda::is_available() == (cuda::device_count() > 0));
  CHECK(cuda::device_count() == static_cast<size_t>(cuda_device_count()));
  cuda::manual_seed_all(42);
  Tensor a = randn({4});
  cuda::manual_seed(42);
  CHECK(randn({4}).equal(a));
  manual_seed(43);
  CHECK_FALSE(randn({4}).equal(a));

}
