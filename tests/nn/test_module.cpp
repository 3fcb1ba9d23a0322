// nn::Module: registration order, qualified names, shared parameters, modes, zero_grad,
// apply, to(), state_dict round trips and their errors, printing, ModuleHolder.
#include <sstream>

#include "test_util.h"

using namespace gr;
using gr::test::check_values;

namespace {

struct LeafImpl : nn::Module {
  Tensor weight, bias, count;
  explicit LeafImpl(int64_t n) : nn::Module("Leaf") {
    weight = register_parameter("weight", ones({n}));
    bias = register_parameter("bias", zeros({n}));
    count = register_buffer("count", zeros({1}, kInt64));
    register_buffer("scratch", zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) { return x * weight + bias; }
};
GR_MODULE(Leaf);

struct NetImpl : nn::Module {
  Leaf first{3}, second{3};
  NetImpl() : nn::Module("Net") {
    register_module("first", first);
    register_module("second", second);
    register_parameter("scale", full({1}, 2.0));
  }
  Tensor forward(const Tensor& x) { return second(first(x)); }
};
GR_MODULE(Net);

}  // namespace

TEST_CASE("parameters and buffers come in registration order with qualified names") {
  Net net;
  std::vector<std::string> names = net->named_parameters().keys();
  CHECK(names == std::vector<std::string>{"scale", "first.weight", "first.bias", "second.weight", "second.bias"});
  CHECK(net->parameters().size() == 5);
  CHECK(net->named_parameters(false).keys() == std::vector<std::string>{"scale"});
  CHECK(net->named_buffers().keys() ==
        std::vector<std::string>{"first.count", "first.scratch", "second.count", "second.scratch"});
  CHECK(net->named_modules().keys() == std::vector<std::string>{"", "first", "second"});
  CHECK(net->children().size() == 2);
  for (const Tensor& p : net->parameters()) CHECK(p.requires_grad());
  check_values(net(ones({3})), {1, 1, 1});
}

TEST_CASE("a parameter shared by two modules appears once") {
  struct SharedImpl : nn::Module {
    SharedImpl(const Tensor& w) : nn::Module("Shared") { register_parameter("w", w); }
  };
  Tensor w = ones({2});
  auto parent = std::make_shared<nn::Module>("Parent");
  parent->register_module("a", std::make_shared<SharedImpl>(w));
  parent->register_module("b", std::make_shared<SharedImpl>(w));
  CHECK(parent->named_parameters().keys() == std::vector<std::string>{"a.w"});
}

TEST_CASE("registration errors") {
  Leaf leaf(2);
  CHECK_THROWS_WITH_AS(leaf->register_parameter("weight", ones({1})), doctest::Contains("already registered"), gr::Error);
  CHECK_THROWS_WITH_AS(leaf->register_buffer("a.b", ones({1})), doctest::Contains("dot"), gr::Error);
  CHECK_THROWS_WITH_AS(leaf->register_parameter("x", ones({2}, kFloat64).requires_grad_() * 2.0),
                       doctest::Contains("leaf"), gr::Error);
  CHECK_THROWS_WITH_AS(leaf->register_module("m", std::shared_ptr<nn::Module>()), doctest::Contains("null"), gr::Error);
  Leaf empty(nullptr);
  CHECK(empty.is_empty());
  CHECK_THROWS_WITH_AS(empty->weight, doctest::Contains("empty module holder"), gr::Error);
}

TEST_CASE("train/eval propagate; zero_grad clears; apply visits every module") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  CHECK_FALSE(net->first->is_training());
  net->train();
  CHECK(net->second->is_training());
  net(ones({3})).sum().backward();
  CHECK(net->first->weight.grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  check_values(net->first->weight.grad(), {0, 0, 0});
  net->zero_grad();
  CHECK_FALSE(net->first->weight.grad().defined());
  int visited = 0;
  net->apply([&](nn::Module&) { ++visited; });
  CHECK(visited == 3);
}

TEST_CASE("to(dtype) converts in place and keeps the same parameter tensors") {
  Net net;
  Tensor w = net->first->weight;
  net->to(kFloat64);
  CHECK(w.scalar_type() == kFloat64);
  CHECK(net->first->weight.is_same(w));
  CHECK(w.requires_grad());
  CHECK(net->first->count.scalar_type() == kInt64);  // integer buffers keep their dtype
}

TEST_CASE("state_dict round trip and load errors") {
  Net a, b;
  {
    NoGradGuard g;
    a->first->weight.fill_(3.0);
    a->first->count.fill_(7);
  }
  auto state = a->state_dict();
  CHECK(state.keys() == std::vector<std::string>{"scale", "first.weight", "first.bias", "second.weight",
                                                 "second.bias", "first.count", "second.count"});
  b->load_state_dict(state);
  check_values(b->first->weight, {3, 3, 3});
  check_values(b->first->count, {7});
  CHECK_FALSE(b->first->weight.is_same(a->first->weight));

  OrderedDict<Tensor> missing = state;
  OrderedDict<Tensor> partial;
  for (const auto& [k, v] : state)
    if (k != "scale") partial.insert(k, v);
  partial.insert("extra", ones({1}));
  CHECK_THROWS_WITH_AS(b->load_state_dict(partial), doctest::Contains("Missing key(s): \"scale\""), gr::Error);
  CHECK_THROWS_WITH_AS(b->load_state_dict(partial), doctest::Contains("Unexpected key(s): \"extra\""), gr::Error);
  b->load_state_dict(partial, /*strict=*/false);

  OrderedDict<Tensor> bad_shape = state;
  bad_shape["first.weight"] = ones({4});
  CHECK_THROWS_WITH_AS(b->load_state_dict(bad_shape), doctest::Contains("size mismatch for first.weight"), gr::Error);
  OrderedDict<Tensor> bad_dtype = state;
  bad_dtype["first.bias"] = zeros({3}, kFloat64);
  CHECK_THROWS_WITH_AS(b->load_state_dict(bad_dtype), doctest::Contains("dtype mismatch for first.bias"), gr::Error);
  // A failed load changes nothing.
  Net c;
  OrderedDict<Tensor> half_bad = state;
  half_bad["second.bias"] = ones({5});
  CHECK_THROWS_AS(c->load_state_dict(half_bad), gr::Error);
  check_values(c->first->weight, {1, 1, 1});
}

TEST_CASE("printing shows the tree") {
  Net net;
  std::ostringstream out;
  out << *net;
  CHECK(out.str() == "Net(\n  (first): Leaf\n  (second): Leaf\n)");
}
