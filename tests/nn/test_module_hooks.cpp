// Module's forward pre-hooks, forward hooks and state_dict pre-hooks: when they run (through the holder
// and Sequential, not through ->forward; state_dict and load_state_dict on the module itself, not on an
// ancestor), their order, removal by handle (twice, after the module is gone, from inside
// the hook), clone not copying them, and the empty-hook error.
#include <string>
#include <vector>

#include "test_util.h"

using namespace gr;

namespace {

struct ScaleImpl : nn::Module {
  Tensor weight;
  ScaleImpl() : nn::Module("Scale") { weight = register_parameter("weight", full({2}, 2.0)); }
  Tensor forward(const Tensor& x) { return x * weight; }
};
GR_MODULE(Scale);

struct PairImpl : nn::Module {
  Scale a, b;
  PairImpl() : nn::Module("Pair") {
    register_module("a", a);
    register_module("b", b);
  }
  // a through its holder, b by a direct call: only a's hooks run.
  Tensor forward(const Tensor& x) { return b->forward(a(x)); }
};
GR_MODULE(Pair);

}  // namespace

TEST_CASE("forward pre-hooks run before forward through the holder, in registration order, not for ->forward") {
  Pair pair;
  std::vector<std::string> log;
  pair->a->register_forward_pre_hook([&](nn::Module& m) {
    CHECK(&m == pair->a.get());
    log.push_back("a1");
  });
  pair->a->register_forward_pre_hook([&](nn::Module&) { log.push_back("a2"); });
  pair->b->register_forward_pre_hook([&](nn::Module&) { log.push_back("b"); });
  pair(ones({2}));
  CHECK(log == std::vector<std::string>{"a1", "a2"});  // b was called as b->forward(x)
  log.clear();
  pair->forward(ones({2}));
  CHECK(log == std::vector<std::string>{"a1", "a2"});
  log.clear();
  pair->b(ones({2}));
  CHECK(log == std::vector<std::string>{"b"});
  CHECK(pair->a->has_forward_pre_hooks());
  CHECK_FALSE(pair->has_forward_pre_hooks());
}

TEST_CASE("Sequential runs its children's forward pre-hooks, as their holders would") {
  Scale a, b;
  nn::Sequential seq(a, b);
  std::vector<std::string> log;
  a->register_forward_pre_hook([&](nn::Module&) { log.push_back("a"); });
  b->register_forward_pre_hook([&](nn::Module&) { log.push_back("b"); });
  seq->register_forward_pre_hook([&](nn::Module&) { log.push_back("seq"); });
  test::check_values(seq(ones({2})), {4, 4});
  CHECK(log == std::vector<std::string>{"seq", "a", "b"});
}

TEST_CASE("a forward pre-hook sees the module before forward reads it: it may change a parameter") {
  Scale s;
  auto handle = s->register_forward_pre_hook([](nn::Module& m) {
    NoGradGuard g;
    m.as<Scale>()->weight.fill_(5.0);
  });
  test::check_values(s(ones({2})), {5, 5});
  handle.remove();
  {
    NoGradGuard g;
    s->weight.fill_(3.0);
  }
  test::check_values(s(ones({2})), {3, 3});
}

TEST_CASE("removing hooks: by handle, twice, from inside the hook, after the module is gone") {
  Scale s;
  int first = 0, second = 0, once = 0;
  nn::RemovableHandle h1 = s->register_forward_pre_hook([&](nn::Module&) { ++first; });
  s->register_forward_pre_hook([&](nn::Module&) { ++second; });
  nn::RemovableHandle self;
  self = s->register_forward_pre_hook([&](nn::Module&) {
    ++once;
    self.remove();  // a hook that removes itself still lets the others run this time
  });
  s(ones({2}));
  s(ones({2}));
  CHECK(first == 2);
  CHECK(second == 2);
  CHECK(once == 1);
  h1.remove();
  h1.remove();  // a no-op
  s(ones({2}));
  CHECK(first == 2);
  CHECK(second == 3);
  nn::RemovableHandle dangling;
  {
    Scale gone;
    dangling = gone->register_forward_pre_hook([](nn::Module&) {});
  }
  dangling.remove();  // the module is gone: nothing to do
  nn::RemovableHandle empty;
  empty.remove();
}

TEST_CASE("state_dict pre-hooks run for state_dict and load_state_dict on the module itself, not on an ancestor") {
  Pair pair;
  int on_pair = 0, on_child = 0;
  nn::RemovableHandle h = pair->register_state_dict_pre_hook([&](const nn::Module& m) {
    CHECK(&m == pair.get());
    ++on_pair;
  });
  pair->a->register_state_dict_pre_hook([&](const nn::Module&) { ++on_child; });
  auto state = pair->state_dict();
  CHECK(on_pair == 1);
  CHECK(on_child == 0);
  pair->load_state_dict(state);
  CHECK(on_pair == 2);
  pair->a->state_dict();
  CHECK(on_child == 1);
  // A state_dict pre-hook is not a forward pre-hook, and removal takes out only its own hook.
  CHECK_FALSE(pair->has_forward_pre_hooks());
  h.remove();
  pair->state_dict();
  CHECK(on_pair == 2);
}

TEST_CASE("clone() does not copy hooks; an empty hook is refused") {
  Scale s;
  int calls = 0;
  s->register_forward_pre_hook([&](nn::Module&) { ++calls; });
  auto copy = std::dynamic_pointer_cast<ScaleImpl>(s->clone());
  REQUIRE(copy != nullptr);
  CHECK_FALSE(copy->has_forward_pre_hooks());
  Scale copied(copy);
  copied(ones({2}));
  CHECK(calls == 0);
  CHECK_THROWS_WITH_AS(s->register_forward_pre_hook(nullptr), doctest::Contains("register_forward_pre_hook: the hook is empty"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(s->register_state_dict_pre_hook(nullptr),
                       doctest::Contains("register_state_dict_pre_hook: the hook is empty"), gr::Error);
}

TEST_CASE("forward hooks run after forward through the holder and Sequential, with the result's tensors") {
  Pair pair;
  std::vector<std::string> log;
  Tensor seen;
  auto h = pair->a->register_forward_hook([&](nn::Module& m, const TensorList& outs) {
    CHECK(&m == pair->a.get());
    REQUIRE(outs.size() == 1);
    seen = outs[0];
    log.push_back("a");
  });
  pair->b->register_forward_hook([&](nn::Module&, const TensorList&) { log.push_back("b"); });
  Tensor y = pair(ones({2}));
  CHECK(log == std::vector<std::string>{"a"});  // b was called as b->forward(x)
  test::check_values(seen, {2, 2});
  // In a Sequential, after each child; the hook may remove itself.
  Scale c;
  nn::Sequential seq(c);
  nn::RemovableHandle self;
  self = c->register_forward_hook([&](nn::Module&, const TensorList& outs) {
    log.push_back("c" + std::to_string(outs.size()));
    self.remove();
  });
  seq(ones({2}));
  seq(ones({2}));
  CHECK(log == std::vector<std::string>{"a", "c1"});
  h.remove();
  pair(ones({2}));
  CHECK(log.size() == 2);
  CHECK_FALSE(pair->a->has_forward_hooks());
  CHECK(pair->b->has_forward_hooks());
}

TEST_CASE("forward hooks see the tensors of tuple and list results, and none of other results") {
  struct SplitImpl : nn::Module {
    std::tuple<Tensor, int, Tensor> forward(const Tensor& x) { return {x + 1, 7, x + 2}; }
  };
  struct CountImpl : nn::Module {
    int forward(int k) { return k + 1; }
  };
  struct ListImpl : nn::Module {
    TensorList forward(const Tensor& x) { return {x, x, x}; }
  };
  nn::ModuleHolder<SplitImpl> split(std::make_shared<SplitImpl>());
  nn::ModuleHolder<CountImpl> count(std::make_shared<CountImpl>());
  nn::ModuleHolder<ListImpl> list(std::make_shared<ListImpl>());
  std::vector<size_t> sizes;
  for (nn::Module* m : {static_cast<nn::Module*>(split.get()), static_cast<nn::Module*>(count.get()),
                        static_cast<nn::Module*>(list.get())})
    m->register_forward_hook([&](nn::Module&, const TensorList& outs) { sizes.push_back(outs.size()); });
  auto [a, k, b] = split(zeros({1}));
  CHECK(k == 7);
  test::check_values(b, {2});
  CHECK(count(1) == 2);
  CHECK(list(zeros({1})).size() == 3);
  CHECK(sizes == std::vector<size_t>{2, 0, 3});
  CHECK_THROWS_WITH_AS(split->register_forward_hook(nullptr), doctest::Contains("the hook is empty"), gr::Error);
}

