// Snapshots: round trip, exact continuation of training, and clear errors for truncated,
// corrupt, mismatched or missing files; a failed write keeps the previous snapshot.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nn/optim/lr_scheduler.h"
#include "nn/snapshot.h"
#include "nn/snapshot_checksum.h"
#include "test_util.h"

using namespace gr;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) { return test::temp_path("gradring_snapshot_test", name); }
using test::read_bytes;
using test::write_bytes;

// A small model, trained by Adadelta on a fixed problem.
struct Run {
  nn::Sequential net{nn::Linear(4, 3), nn::Linear(3, 2)};
  std::unique_ptr<optim::Optimizer> opt;
  Tensor x, y;
  explicit Run(const std::string& kind) {
    std::vector<Tensor> p = net->parameters();
    if (kind == "sgd")
      opt = std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05).momentum(0.9));
    else if (kind == "adam")
      opt = std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2));
    else
      opt = std::make_unique<optim::Adadelta>(p, optim::AdadeltaOptions(1.0));
    Generator g(7);
    x = randn({8, 4}, &g);
    y = randn({8, 2}, &g);
  }
  void step() {
    opt->zero_grad();
    // Noise from the default generator, so that its state matters for exact resume.
    Tensor noise = randn({8, 4});
    mse_loss(net->forward(x + noise * 0.01), y).backward();
    opt->step();
  }
};

bool same_params(nn::Module& a, nn::Module& b) {
  auto sa = a.state_dict(), sb = b.state_dict();
  if (sa.keys() != sb.keys()) return false;
  for (size_t i = 0; i < sa.size(); ++i)
    if (!sa.items()[i].second.equal(sb.items()[i].second)) return false;
  return true;
}

}  // namespace

TEST_CASE("snapshot round trip keeps tensors, position, generators and user values") {
  Run r("adadelta");
  manual_seed(3);
  for (int i = 0; i < 2; ++i) r.step();
  Snapshot s = capture_snapshot(*r.net, r.opt.get());
  s.epoch = 2;
  s.step_in_epoch = 5;
  s.global_step = 17;
  s.world_size = 4;
  s.generators["data"] = {11, 22};
  s.user["note"] = "hello";
  std::string path = temp_path("round.snap");
  save_snapshot(path, s);
  Snapshot t = load_snapshot(path, 4);
  CHECK(t.path == path);
  CHECK(t.epoch == 2);
  CHECK(t.step_in_epoch == 5);
  CHECK(t.global_step == 17);
  CHECK(t.world_size == 4);
  CHECK(t.scheduler_last_epoch == -1);
  CHECK(t.user.at("note") == "hello");
  CHECK(t.generators.at("data").seed == 11);
  CHECK(t.generators.at("data").offset == 22);
  CHECK(t.generators.at("default").offset == default_generator().state().offset);
  REQUIRE(t.model.size() == s.model.size());
  for (const auto& [k, v] : s.model) CHECK(t.model[k].equal(v));
  REQUIRE(t.optimizer.size() == s.optimizer.size());
  for (const auto& [k, v] : s.optimizer) CHECK(t.optimizer[k].equal(v));
}

TEST_CASE("restoring a snapshot continues training bit for bit") {
  for (std::string kind : {"adadelta", "sgd", "adam"}) {
    CAPTURE(kind);
    manual_seed(5);
    Run a(kind);
    optim::StepLR sched(*a.opt, 2, 0.5);
    for (int i = 0; i < 3; ++i) {
      a.step();
      sched.step();
    }
    std::string path = temp_path("cont_" + kind + ".snap");
    save_snapshot(path, capture_snapshot(*a.net, a.opt.get(), &sched));
    for (int i = 0; i < 3; ++i) {
      a.step();
      sched.step();
    }
    // A fresh run (different initial weights and generator state) resumes from the file.
    manual_seed(99);
    Run b(kind);
    optim::StepLR sched_b(*b.opt, 2, 0.5);
    restore_snapshot(load_snapshot(path), *b.net, b.opt.get(), &sched_b);
    CHECK(sched_b.last_epoch() == 3);
    for (int i = 0; i < 3; ++i) {
      b.step();
      sched_b.step();
    }
    CHECK(same_params(*a.net, *b.net));
    CHECK(a.opt->param_groups()[0].lr() == b.opt->param_groups()[0].lr());
  }
}

TEST_CASE("truncated, corrupt, mismatched and missing snapshots give clear errors") {
  Run r("adadelta");
  r.step();
  Snapshot s = capture_snapshot(*r.net, r.opt.get());
  s.world_size = 2;
  std::string good = temp_path("good.snap");
  save_snapshot(good, s);
  std::string bytes = read_bytes(good);

  std::string bad = temp_path("bad.snap");
  // Truncated anywhere: in the data, in the header, to nothing.
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{20}, size_t{0}}) {
    CAPTURE(keep);
    write_bytes(bad, bytes.substr(0, keep));
    CHECK_THROWS_WITH_AS(load_snapshot(bad), doctest::Contains(("'" + bad + "'").c_str()), gr::Error);
  }
  // One flipped bit in the tensor data: the checksum catches it.
  std::string flipped = bytes;
  flipped[flipped.size() - 5] ^= 0x10;
  write_bytes(bad, flipped);
  CHECK_THROWS_WITH_AS(load_snapshot(bad), doctest::Contains("is corrupt: checksum"), gr::Error);
  // A changed digit in the metadata (the header): also caught.
  std::string meta = bytes;
  size_t at = meta.find("\"global_step\":\"0\"");
  if (at == std::string::npos) at = meta.find("\"global_step\": \"0\"");
  REQUIRE(at != std::string::npos);
  meta[meta.find('0', at + 14)] = '7';
  write_bytes(bad, meta);
  CHECK_THROWS_WITH_AS(load_snapshot(bad), doctest::Contains("checksum"), gr::Error);
  // A plain safetensors file is not a snapshot.
  save(*r.net, bad);
  CHECK_THROWS_WITH_AS(load_snapshot(bad), doctest::Contains("not a gradring snapshot"), gr::Error);
  // Missing file.
  CHECK_THROWS_WITH_AS(load_snapshot(temp_path("nope.snap")), doctest::Contains("nope.snap"), gr::Error);
  // Wrong world size.
  CHECK_THROWS_WITH_AS(load_snapshot(good, 3), doctest::Contains("world size 2 but this run has world size 3"),
                       gr::Error);
  // Wrong shapes: a different model; nothing is changed.
  Snapshot ok = load_snapshot(good, 2);
  nn::Sequential other(nn::Linear(4, 5), nn::Linear(5, 2));
  Tensor before = other->state_dict().items()[0].second.clone();
  CHECK_THROWS_WITH_AS(restore_snapshot(ok, *other), doctest::Contains("in the snapshot but shape [5, 4]"), gr::Error);
  CHECK(other->state_dict().items()[0].second.equal(before));
  // A different optimizer kind.
  Run sgd("sgd");
  CHECK_THROWS_WITH_AS(restore_snapshot(ok, *sgd.net, sgd.opt.get()), doctest::Contains(good.c_str()), gr::Error);
}

TEST_CASE("a failed snapshot write leaves the previous snapshot intact") {
  Run r("adadelta");
  r.step();
  Snapshot s = capture_snapshot(*r.net, r.opt.get());
  s.global_step = 1;
  std::string path = temp_path("keep.snap");
  save_snapshot(path, s);
  std::string before = read_bytes(path);
  // The temporary file the writer opens is a link to /dev/full: every write fails (ENOSPC),
  // as on a full disk.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (fs::exists("/dev/full")) {
    fs::create_symlink("/dev/full", tmp);
    s.global_step = 2;
    CHECK_THROWS_WITH_AS(save_snapshot(path, s), doctest::Contains("unchanged"), gr::Error);
    CHECK_FALSE(fs::exists(fs::symlink_status(tmp)));
    CHECK(read_bytes(path) == before);
    CHECK(load_snapshot(path).global_step == 1);
  }
  // A folder that does not exist: nothing is written.
  CHECK_THROWS_WITH_AS(save_snapshot("/nonexistent-dir/x.snap", s), doctest::Contains("cannot create"), gr::Error);
}

namespace {

// A copy of `good` with metadata `key` set to `value` (erased when empty) and the checksum
// made right again: what load_snapshot checks after the checksum.
std::string with_metadata(const std::string& good, const std::string& key, const std::string& value) {
  Metadata m;
  OrderedDict<Tensor> tensors = load_bytes(read_bytes(good), &m);
  if (value.empty())
    m.erase(key);
  else
    m[key] = value;
  m["checksum"] = snapshot_checksum(tensors, m);
  std::string bad = temp_path("meta.snap");
  write_bytes(bad, save_bytes(tensors, m));
  return bad;
}

}  // namespace

TEST_CASE("snapshot metadata that is no number or out of range is refused even with a valid checksum") {
  Run r("adadelta");
  Snapshot s = capture_snapshot(*r.net, r.opt.get());
  std::string good = temp_path("meta_good.snap");
  save_snapshot(good, s);
  CHECK(load_snapshot(with_metadata(good, "global_step", "12")).global_step == 12);  // the helper works
  struct Case {
    const char* key;
    const char* value;
    const char* error;
  };
  for (const Case& c : {Case{"world_size", "0", "metadata 'world_size' is 0, outside [1, "},
                        Case{"epoch", "-1", "metadata 'epoch' is -1, outside [0, "},
                        Case{"step_in_epoch", "-5", "metadata 'step_in_epoch' is -5, outside [0, "},
                        Case{"global_step", "-2", "metadata 'global_step' is -2, outside [0, "},
                        Case{"scheduler_last_epoch", "-2", "metadata 'scheduler_last_epoch' is -2, outside [-1, "},
                        // std::stoull read "-1" as 2^64 - 1, and std::stoll skipped spaces and '+'.
                        Case{"generator.default.seed", "-1", "metadata 'generator.default.seed' is not a number: '-1'"},
                        Case{"epoch", " 3", "metadata 'epoch' is not a number: ' 3'"},
                        Case{"epoch", "+3", "metadata 'epoch' is not a number: '+3'"},
                        Case{"epoch", "99999999999999999999", "metadata 'epoch' is not a number"},
                        Case{"generator.default.offset", "", "has no 'generator.default.offset' in its metadata"}}) {
    CAPTURE(c.key);
    CAPTURE(c.value);
    CHECK_THROWS_WITH_AS(load_snapshot(with_metadata(good, c.key, c.value)), doctest::Contains(c.error), gr::Error);
  }
}

TEST_CASE("a snapshot whose empty tensors share an offset loads (their order is the file's)") {
  // Empty tensors begin where the next tensor does; the reader sorted by offset alone, so
  // their order, which the checksum covers, came out of the JSON header's key order.
  Snapshot s;
  s.model.insert("z", empty({0}, kFloat32));
  s.model.insert("y", empty({0, 3}, kFloat32));
  s.model.insert("x", ones({2}));
  s.optimizer.insert("b", empty({0}, kInt64));
  s.optimizer.insert("a", ones({1}));
  std::string path = temp_path("empties.snap");
  save_snapshot(path, s);
  Snapshot back = load_snapshot(path);
  std::vector<std::string> names;
  for (const auto& [k, t] : back.model) names.push_back(k);
  CHECK(names == std::vector<std::string>{"z", "y", "x"});
  CHECK(back.optimizer.items()[0].first == "b");
}
