// RNN, LSTM, GRU and their cells against torch.nn's (tests/data/rnn_reference.json, made by
// make_rnn_reference.py): PyTorch's parameter names, outputs and the gradients of the input,
// the initial states and every parameter; float64 gradchecks; options, printing and errors.
#include "autograd/gradcheck.h"
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::load_parameters;
using gr::test::load_reference;
using gr::test::tensor_from_json;

namespace {

// The module of a case, float64, with the case's options, and a forward returning its outputs
// (output, h_n[, c_n]; h'[, c'] for cells) from the input and initial states.
struct Case {
  std::shared_ptr<nn::Module> module;
  std::function<std::vector<Tensor>(const Tensor&, const std::vector<Tensor>&)> forward;
};

Case build(const std::string& kind, const nlohmann::json& o) {
  const int64_t in = o.at("input_size"), hidden = o.at("hidden_size");
  const bool bias = o.at("bias"), relu = o.at("nonlinearity") == "relu";
  auto state = [](const std::vector<Tensor>& s, size_t i) { return s.empty() ? Tensor() : s[i]; };
  if (kind == "lstm") {
    nn::LSTM m(nn::LSTMOptions(in, hidden).num_layers(o.at("num_layers")).bias(bias).batch_first(o.at("batch_first"))
                   .bidirectional(o.at("bidirectional")).proj_size(o.at("proj_size")));
    return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
              auto [out, hc] = s.empty() ? m->forward(x) : m->forward(x, std::make_tuple(s[0], s[1]));
              return std::vector<Tensor>{out, std::get<0>(hc), std::get<1>(hc)};
            }};
  }
  if (kind == "gru" || kind == "rnn") {
    auto run = [state](auto m) {
      return [m, state](const Tensor& x, const std::vector<Tensor>& s) mutable {
        auto [out, h] = m->forward(x, state(s, 0));
        return std::vector<Tensor>{out, h};
      };
    };
    if (kind == "gru") {
      nn::GRU m(nn::GRUOptions(in, hidden).num_layers(o.at("num_layers")).bias(bias).batch_first(o.at("batch_first"))
                    .bidirectional(o.at("bidirectional")));
      return {m.ptr(), run(m)};
    }
    auto ro = nn::RNNOptions(in, hidden).num_layers(o.at("num_layers")).bias(bias).batch_first(o.at("batch_first"))
                  .bidirectional(o.at("bidirectional"));
    if (relu) ro.nonlinearity(kReLU);
    nn::RNN m(ro);
    return {m.ptr(), run(m)};
  }
  if (kind == "lstm_cell") {
    nn::LSTMCell m(nn::LSTMCellOptions(in, hidden).bias(bias));
    return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
              auto [h, c] = s.empty() ? m->forward(x) : m->forward(x, std::make_tuple(s[0], s[1]));
              return std::vector<Tensor>{h, c};
            }};
  }
  if (kind == "gru_cell") {
    nn::GRUCell m(nn::GRUCellOptions(in, hidden).bias(bias));
    return {m.ptr(), [m, state](const Tensor& x, const std::vector<Tensor>& s) mutable {
              return std::vector<Tensor>{m->forward(x, state(s, 0))};
            }};
  }
  REQUIRE(kind == "rnn_cell");
  auto co = nn::RNNCellOptions(in, hidden).bias(bias);
  if (relu) co.nonlinearity(kReLU);
  nn::RNNCell m(co);
  return {m.ptr(), [m, state](const Tensor& x, const std::vector<Tensor>& s) mutable {
            return std::vector<Tensor>{m->forward(x, state(s, 0))};
          }};
}

}  // namespace

TEST_CASE("RNN, LSTM, GRU and cells match PyTorch: names, outputs, input/state/parameter gradients") {
  const nlohmann::json ref = load_reference("rnn_reference.json");
  REQUIRE(ref.at("cases").size() >= 20);
  for (const auto& c : ref.at("cases")) {
    INFO("case: ", c.at("name").get<std::string>());
    Case m = build(c.at("kind"), c.at("options"));
    m.module->to(kFloat64);
    m.module->eval();
    load_parameters(*m.module, c.at("state"));
    Tensor x = tensor_from_json(c.at("input")).requires_grad_(true);
    std::vector<Tensor> states;
    for (const auto& s : c.at("states")) states.push_back(tensor_from_json(s).requires_grad_(true));
    std::vector<Tensor> outputs = m.forward(x, states);
    REQUIRE(outputs.size() == c.at("outputs").size());
    Tensor loss = zeros({}, TensorOptions(kFloat64));
    for (size_t i = 0; i < outputs.size(); ++i) {
      check_close(outputs[i], tensor_from_json(c.at("outputs")[i]), 1e-10);
      loss = loss + (outputs[i] * tensor_from_json(c.at("upstream")[i])).sum();
    }
    loss.backward();
    check_close(x.grad(), tensor_from_json(c.at("input_grad")), 1e-10);
    for (size_t i = 0; i < states.size(); ++i) check_close(states[i].grad(), tensor_from_json(c.at("state_grads")[i]), 1e-10);
    for (const auto& [name, p] : m.module->named_parameters()) {
      CAPTURE(name);
      check_close(p.grad(), tensor_from_json(c.at("param_grads").at(name)), 1e-10);
    }
  }
}

TEST_CASE("LSTM and GRU: float64 gradcheck w.r.t. input, initial states and weights") {
  manual_seed(3);
  auto f64 = TensorOptions(kFloat64);
  SUBCASE("LSTM, 2 layers, bidirectional, projections") {
    nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true).proj_size(2));
    lstm->to(kFloat64);
    TensorList inputs = {randn({3, 2, 2}, f64).requires_grad_(true), randn({4, 2, 2}, f64).requires_grad_(true),
                         randn({4, 2, 3}, f64).requires_grad_(true)};
    for (const Tensor& p : lstm->parameters()) inputs.push_back(p);  // perturbed in place by gradcheck
    CHECK(autograd::gradcheck([&](const TensorList& t) {
      auto [out, hc] = lstm->forward(t[0], std::make_tuple(t[1], t[2]));
      return cat({out.reshape({-1}), std::get<0>(hc).reshape({-1}), std::get<1>(hc).reshape({-1})});
    }, inputs));
  }
  SUBCASE("GRU, 2 layers, batch_first") {
    nn::GRU gru(nn::GRUOptions(2, 3).num_layers(2).batch_first(true));
    gru->to(kFloat64);
    TensorList inputs = {randn({2, 3, 2}, f64).requires_grad_(true), randn({2, 2, 3}, f64).requires_grad_(true)};
    for (const Tensor& p : gru->parameters()) inputs.push_back(p);
    CHECK(autograd::gradcheck([&](const TensorList& t) {
      auto [out, h] = gru->forward(t[0], t[1]);
      return cat({out.reshape({-1}), h.reshape({-1})});
    }, inputs));
  }
  SUBCASE("second derivatives: LSTM and GRU cells") {
    nn::LSTMCell lstm(2, 2);
    nn::GRUCell gru(2, 2);
    lstm->to(kFloat64);
    gru->to(kFloat64);
    TensorList inputs = {randn({2, 2}, f64).requires_grad_(true), randn({2, 2}, f64).requires_grad_(true),
                         randn({2, 2}, f64).requires_grad_(true)};
    CHECK(autograd::gradgradcheck([&](const TensorList& t) {
      auto [h, c] = lstm->forward(t[0], std::make_tuple(t[1], t[2]));
      return h + c * gru->forward(t[0], t[1]);
    }, inputs));
  }
}

TEST_CASE("RNN modules: parameter names, order, init bounds and printing as PyTorch/libtorch") {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  CHECK(lstm->named_parameters().keys() ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
                                 "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                 "bias_hh_l0_reverse", "weight_hr_l0_reverse", "weight_ih_l1", "weight_hh_l1",
                                 "bias_ih_l1", "bias_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse",
                                 "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
                                 "weight_hr_l1_reverse"});
  auto p = lstm->named_parameters();
  CHECK(p["weight_ih_l0"].sizes() == IntArrayRef{16, 3});
  CHECK(p["weight_hh_l0"].sizes() == IntArrayRef{16, 2});
  CHECK(p["weight_ih_l1_reverse"].sizes() == IntArrayRef{16, 4});
  CHECK(p["weight_hr_l1"].sizes() == IntArrayRef{2, 4});
  CHECK(lstm->all_weights().size() == 20);
  CHECK(lstm->all_weights()[4].data_ptr() == p["weight_hr_l0"].data_ptr());
  for (const Tensor& t : lstm->parameters()) {
    CHECK(t.abs().max().item<double>() <= 0.5);  // 1 / sqrt(hidden_size = 4)
    CHECK(t.abs().max().item<double>() > 0.3);
  }
  nn::GRU gru(nn::GRUOptions(3, 5).bias(false));
  CHECK(gru->named_parameters().keys() == std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"});
  CHECK(gru->named_parameters()["weight_hh_l0"].sizes() == IntArrayRef{15, 5});
  nn::RNNCell cell(3, 5);
  CHECK(cell->named_parameters().keys() == std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
  CHECK(nn::LSTMCell(3, 5)->weight_ih.sizes() == IntArrayRef{20, 3});

  auto printed = [](const nn::Module& m) {
    std::ostringstream s;
    m.pretty_print(s);
    return s.str();
  };
  CHECK(printed(*nn::LSTM(10, 20)) == "gr::nn::LSTM(input_size=10, hidden_size=20, num_layers=1, bias=true, "
                                      "batch_first=false, dropout=0, bidirectional=false)");
  CHECK(printed(*nn::GRU(nn::GRUOptions(4, 8).num_layers(2).dropout(0.5).batch_first(true).bidirectional(true))) ==
        "gr::nn::GRU(input_size=4, hidden_size=8, num_layers=2, bias=true, batch_first=true, dropout=0.5, "
        "bidirectional=true)");
  CHECK(printed(*lstm) == "gr::nn::LSTM(input_size=3, hidden_size=4, num_layers=2, bias=true, batch_first=false, "
                          "dropout=0, bidirectional=true, proj_size=2)");
  CHECK(printed(*nn::RNN(nn::RNNOptions(2, 3).nonlinearity(kReLU))) ==
        "gr::nn::RNN(input_size=2, hidden_size=3, num_layers=1, bias=true, batch_first=false, dropout=0, "
        "bidirectional=false)");
  CHECK(printed(*nn::LSTMCell(10, 20)) == "gr::nn::LSTMCell(10, 20)");
  CHECK(printed(*nn::GRUCell(nn::GRUCellOptions(10, 20).bias(false))) == "gr::nn::GRUCell(10, 20, bias=false)");
  CHECK(printed(*nn::RNNCell(nn::RNNCellOptions(10, 20).nonlinearity(kReLU))) ==
        "gr::nn::RNNCell(10, 20, nonlinearity=kReLU)");
}

TEST_CASE("LSTM: shapes, the state it returns continues the sequence, and a loop of LSTMCell agrees") {
  manual_seed(5);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).batch_first(true));
  Tensor x = randn({2, 6, 3});
  auto [out, hc] = lstm(x);
  CHECK(out.sizes() == IntArrayRef{2, 6, 4});
  CHECK(std::get<0>(hc).sizes() == IntArrayRef{1, 2, 4});
  check_close(out.select(1, 5), std::get<0>(hc).select(0, 0), 1e-6);
  // Running the two halves with the state handed over gives the same as the whole.
  auto [first, hc1] = lstm(x.narrow(1, 0, 3));
  auto [second, hc2] = lstm(x.narrow(1, 3, 3), hc1);
  check_close(cat({first, second}, 1), out, 1e-6);
  check_close(std::get<1>(hc2), std::get<1>(hc), 1e-6);

  nn::LSTMCell cell(3, 4);
  cell->load_state_dict([&] {
    OrderedDict<Tensor> s;
    for (const auto& [name, t] : lstm->named_parameters()) s.insert(name.substr(0, name.size() - 3), t);  // drop "_l0"
    return s;
  }());
  std::tuple<Tensor, Tensor> state = {zeros({2, 4}), zeros({2, 4})};
  for (int64_t t = 0; t < 6; ++t) {
    state = cell(x.select(1, t), state);
    check_close(std::get<0>(state), out.select(1, t), 1e-6);
  }
}

TEST_CASE("RNN dropout acts between layers, in training only") {
  manual_seed(7);
  Tensor x = randn({5, 2, 3});
  nn::GRU two(nn::GRUOptions(3, 4).num_layers(2).dropout(0.5));
  two->eval();
  Tensor eval_out = std::get<0>(two(x));
  two->train();
  Tensor train_out = std::get<0>(two(x));
  CHECK_FALSE(allclose(eval_out, train_out));
  two->eval();
  CHECK(equal(std::get<0>(two(x)), eval_out));

  nn::LSTM one(nn::LSTMOptions(3, 4).dropout(0.5));  // nothing after the last (only) layer
  one->eval();
  Tensor a = std::get<0>(one(x));
  one->train();
  CHECK(equal(std::get<0>(one(x)), a));
}

TEST_CASE("RNN modules survive gr::save / gr::load with PyTorch's names") {
  manual_seed(9);
  nn::GRU a(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
  nn::GRU b(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
  const std::string path = gr::test::temp_path("rnn", "gru.safetensors");
  gr::save(a, path);
  gr::load(b, path);
  Tensor x = randn({4, 2, 3});
  CHECK(equal(std::get<0>(b(x)), std::get<0>(a(x))));
}

TEST_CASE("RNN modules and cells: errors name the module, the shapes and the expectation") {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  CHECK_THROWS_WITH_AS(lstm(zeros({2, 2, 2, 3})), doctest::Contains("LSTM: Expected input to be 2D or 3D, got 4D"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({5, 2, 7})),
                       doctest::Contains("input.size(-1) must be equal to input_size. Expected 3, got 7"), gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({2, 2, 4}))),
                       doctest::Contains("Expected hidden[0] size [2, 2, 4], got [1, 2, 4]"), gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({5, 2, 3}), std::make_tuple(zeros({2, 2, 4}), zeros({2, 3, 4}))),
                       doctest::Contains("Expected hidden[1] size [2, 2, 4], got [2, 3, 4]"), gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({5, 3}), std::make_tuple(zeros({2, 1, 4}), zeros({2, 1, 4}))),
                       doctest::Contains("For unbatched 2-D input, hidden[0] should also be 2-D but got 3-D"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({5, 2, 3}, TensorOptions(kFloat64))),
                       doctest::Contains("input must have the type of the weights"), gr::Error);
  CHECK_THROWS_WITH_AS(lstm(zeros({0, 2, 3})), doctest::Contains("at least one step"), gr::Error);
  nn::GRU gru(3, 4);
  CHECK_THROWS_WITH_AS(gru(zeros({5, 2, 3}), zeros({1, 3, 4})),
                       doctest::Contains("GRU: Expected hidden size [1, 2, 4], got [1, 3, 4]"), gr::Error);
  CHECK_THROWS_WITH_AS(gru(zeros({5, 2, 3}), zeros({2, 4})),
                       doctest::Contains("For batched 3-D input, hidden should also be 3-D but got 2-D"), gr::Error);
  CHECK_THROWS_WITH_AS(nn::RNN(3, 4)(zeros({3})), doctest::Contains("RNN: Expected input to be 2D or 3D, got 1D"),
                       gr::Error);

  CHECK_THROWS_WITH_AS(nn::LSTMCell(3, 4)(zeros({2, 2, 3})),
                       doctest::Contains("LSTMCell: Expected input to be 1D or 2D, got 3D"), gr::Error);
  CHECK_THROWS_WITH_AS(nn::GRUCell(3, 4)(zeros({2, 5})),
                       doctest::Contains("GRUCell: input has inconsistent input_size: got 5 expected 3"), gr::Error);
  CHECK_THROWS_WITH_AS(nn::RNNCell(3, 4)(zeros({2, 3}), zeros({3, 4})),
                       doctest::Contains("RNNCell: Expected hidden size [2, 4]"), gr::Error);
  CHECK_THROWS_WITH_AS(nn::LSTMCell(3, 4)(zeros({3}), std::make_tuple(zeros({1, 4}), zeros({1, 4}))),
                       doctest::Contains("Expected hx[0] size [4]"), gr::Error);

  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)), doctest::Contains("smaller than hidden_size"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)), doctest::Contains("range [0, 1]"), gr::Error);
  CHECK_THROWS_WITH_AS(nn::RNN(nn::RNNOptions(3, 0)), doctest::Contains("hidden_size must be greater than zero"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(nn::LSTM(nn::LSTMOptions(3, 4).num_layers(0)),
                       doctest::Contains("num_layers must be greater than zero"), gr::Error);
}
