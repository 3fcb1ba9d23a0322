// Containers and module API: Sequential with named entries, ModuleList, ModuleDict,
// Module::as<T>(), ModuleHolder::operator[], Module::clone() and OrderedDict items.
#include "test_util.h"

using namespace gr;
using gr::test::error_of;

namespace {

struct NetImpl : nn::Module {
  NetImpl() : Module("Net") {
    fc = register_module("fc", nn::Linear(3, 2));
    bn = register_module("bn", nn::BatchNorm2d(2));
    scale = register_parameter("scale", ones({2}));
    steps = register_buffer("steps", zeros({1}));
  }
  nn::Linear fc{nullptr};
  nn::BatchNorm2d bn{nullptr};
  Tensor scale, steps;
};
GR_MODULE(Net);

// Takes a submodule from outside: a fresh copy would share it, so clone() refuses.
struct WrapperImpl : nn::Module {
  explicit WrapperImpl(nn::Linear inner) : Module("Wrapper"), inner(register_module("inner", inner)) {}
  std::shared_ptr<nn::LinearImpl> inner;
};
GR_MODULE(Wrapper);

// libtorch's idiom for a clonable module.
struct CNetImpl : nn::Cloneable<CNetImpl> {
  CNetImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(2, 2)); }
  nn::Linear fc{nullptr};
};
GR_MODULE(CNet);

}  // namespace

TEST_CASE("Sequential with named entries: names in state_dict, indexing through the holder") {
  nn::Sequential seq({{"conv", nn::Conv2d(1, 2, 3)}, {"relu", nn::ReLU()}, {"flat", nn::Flatten()}});
  CHECK(seq->state_dict().keys() == std::vector<std::string>{"conv.weight", "conv.bias"});
  CHECK(seq->size() == 3);
  Tensor x = randn({2, 1, 5, 5});
  Tensor y = seq->forward(x);
  CHECK(y.sizes() == IntArrayRef({2, 18}));
  CHECK(gr::equal(y, seq->ptr<nn::Conv2dImpl>(0)->forward(x).relu().flatten(1)));
  CHECK(seq[1]->as<nn::ReLU>() != nullptr);  // ModuleHolder::operator[]
  CHECK(seq[0]->as<nn::Linear>() == nullptr);
  seq->push_back("tail", nn::Linear(18, 4));
  CHECK(seq->named_children().keys() == std::vector<std::string>{"conv", "relu", "flat", "tail"});
  CHECK(seq(x).sizes() == IntArrayRef({2, 4}));
  nn::Sequential unnamed(nn::Linear(2, 3), nn::ReLU());
  CHECK(unnamed->state_dict().keys() == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK(error_of([&] { seq[7]; }) == "Sequential: index 7 is out of range (size 4)");
}

TEST_CASE("ModuleList: push_back, iteration, ptr<T>, extend, insert") {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  list->push_back(nn::Linear(3, 1));
  CHECK(list->size() == 3);
  CHECK(list->state_dict().keys() == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  Tensor x = randn({4, 2});
  for (const auto& m : *list) {
    if (auto* l = m->as<nn::Linear>()) x = l->forward(x);
    else x = m->as<nn::ReLUImpl>()->forward(x);
  }
  CHECK(x.sizes() == IntArrayRef({4, 1}));
  CHECK(list->ptr<nn::LinearImpl>(2)->options.out_features() == 1);
  CHECK(list->at<nn::LinearImpl>(0).options.in_features() == 2);
  CHECK(list[1]->name() == "gr::nn::ReLU");
  nn::ModuleList more(nn::Linear(1, 5));
  list->extend(*more);
  CHECK(list->size() == 4);
  CHECK(list->ptr(3) == more->ptr(0));
  list->insert(1, nn::Linear(3, 3));
  CHECK(list->named_children().keys() == std::vector<std::string>{"0", "1", "2", "3", "4"});
  CHECK(list->ptr<nn::LinearImpl>(1)->options.in_features() == 3);
  CHECK(list[2]->as<nn::ReLU>() != nullptr);
  CHECK(list->named_children()["4"] == list->ptr(4));
  CHECK(error_of([&] { list->ptr<nn::Conv2dImpl>(0); }) ==
        "ModuleList: module 0 (gr::nn::Linear) is not of the requested type");
  CHECK(error_of([&] { list[9]; }) == "ModuleList: index 9 is out of range (size 5)");
}

TEST_CASE("ModuleDict: keys in order, lookup, replacement in place, items") {
  nn::ModuleDict dict(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
      {"enc", nn::Linear(4, 2).ptr()}, {"act", nn::ReLU().ptr()}});
  dict->insert("dec", nn::Linear(2, 4));
  CHECK(dict->keys() == std::vector<std::string>{"enc", "act", "dec"});
  CHECK(dict->state_dict().keys() == std::vector<std::string>{"enc.weight", "enc.bias", "dec.weight", "dec.bias"});
  CHECK(dict->contains("act"));
  CHECK(!dict->contains("nope"));
  CHECK(dict["enc"]->as<nn::Linear>()->options.out_features() == 2);
  CHECK(dict->at<nn::LinearImpl>("dec").options.in_features() == 2);
  dict->insert("act", nn::Flatten());  // replaces, keeps its place
  CHECK(dict->keys() == std::vector<std::string>{"enc", "act", "dec"});
  CHECK(dict->ptr<nn::FlattenImpl>("act") != nullptr);
  std::vector<std::string> keys;
  for (const auto& item : *dict) keys.push_back(item.key() + ":" + item.value()->name());
  CHECK(keys == std::vector<std::string>{"enc:gr::nn::Linear", "act:gr::nn::Flatten", "dec:gr::nn::Linear"});
  CHECK(dict->items().size() == 3);
  CHECK(error_of([&] { dict["nope"]; }) == "ModuleDict: no module named 'nope' (keys: 3)");
}

TEST_CASE("OrderedDict items have key() and value(), and index by position") {
  OrderedDict<Tensor> d;
  d.insert("a", ones({1}));
  d.insert("b", zeros({2}));
  CHECK(d[1].key() == "b");
  CHECK(d[1].value().numel() == 2);
  CHECK(d.front().key() == "a");
  CHECK(d.back().key() == "b");
  std::string joined;
  for (const auto& item : d) joined += item.key();
  for (const auto& [k, v] : d) joined += k;  // still a pair
  CHECK(joined == "abab");
  CHECK(error_of([&] { d[5]; }) == "OrderedDict: index 5 is out of range (size 2)");
}

TEST_CASE("Module::clone: a deep copy of parameters, buffers, flags and submodules") {
  nn::Linear lin(3, 2);
  lin->weight.requires_grad_(false);
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(lin->clone());
  REQUIRE(copy != nullptr);
  CHECK(copy->weight.unsafe_impl() != lin->weight.unsafe_impl());
  CHECK(gr::equal(copy->weight, lin->weight));
  CHECK(!copy->weight.requires_grad());
  CHECK(copy->bias.requires_grad());
  { NoGradGuard g; copy->bias.add_(1.0); }
  CHECK(!gr::equal(copy->bias, lin->bias));

  Net net;
  net->to(kFloat64);
  { NoGradGuard g; net->steps.fill_(3.0); net->bn->running_mean.fill_(0.5); }
  net->eval();
  auto net2 = std::dynamic_pointer_cast<NetImpl>(net->clone());
  REQUIRE(net2 != nullptr);
  CHECK(!net2->is_training());
  CHECK(!net2->fc->is_training());
  CHECK(net2->fc->weight.scalar_type() == kFloat64);
  CHECK(net2->fc->weight.unsafe_impl() != net->fc->weight.unsafe_impl());
  for (const auto& [k, v] : net->state_dict()) {
    CAPTURE(k);
    CHECK(gr::equal(net2->state_dict()[k], v));
    CHECK(net2->state_dict()[k].unsafe_impl() != v.unsafe_impl());
  }
  // The members of the copy hold the copied tensors.
  CHECK(net2->steps.item<double>() == 3.0);
  CHECK(net2->fc->weight.unsafe_impl() == net2->named_parameters()["fc.weight"].unsafe_impl());

  nn::Sequential seq({{"fc", nn::Linear(3, 2)}, {"relu", nn::ReLU()}});
  auto seq2 = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  Tensor x = randn({4, 3});
  CHECK(gr::equal(seq2->forward(x), seq->forward(x)));
  CHECK(seq2->state_dict().keys() == seq->state_dict().keys());
  CHECK(seq2->ptr<nn::LinearImpl>(0) != seq->ptr<nn::LinearImpl>(0));

  nn::ModuleList list(nn::Linear(1, 1));
  auto list2 = std::dynamic_pointer_cast<nn::ModuleListImpl>(list->clone());
  CHECK(list2->ptr<nn::LinearImpl>(0)->weight.unsafe_impl() != list->ptr<nn::LinearImpl>(0)->weight.unsafe_impl());

  CNet cnet;
  auto cnet2 = std::dynamic_pointer_cast<CNetImpl>(cnet->clone());
  CHECK(gr::equal(cnet2->fc->weight, cnet->fc->weight));

  auto bare = std::make_shared<nn::LinearImpl>(nn::LinearOptions(2, 2));
  CHECK(error_of([&] { bare->clone(); }) ==
        "clone: gr::nn::Linear cannot be cloned: it was not constructed through its module holder (e.g. Linear(3, 4)) "
        "or its constructor arguments cannot be copied");
  Wrapper w(nn::Linear(2, 2));
  CHECK(error_of([&] { w->clone(); }) ==
        "clone: submodule 'inner' of Wrapper would be shared with the original (a submodule passed to the constructor?)");
}
