// safetensors: round trips, files written by Python's safetensors, files read by Python,
// module checkpoints, and clear errors for every kind of corrupt file.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "test_util.h"

using namespace gr;
using gr::test::check_values;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) { return test::temp_path("gradring_test", name); }
using test::read_bytes;
using test::write_bytes;

// A file made of an explicit JSON header and data bytes.
std::string forge(const std::string& json, const std::string& data, uint64_t claimed_len = UINT64_MAX) {
  uint64_t len = claimed_len == UINT64_MAX ? json.size() : claimed_len;
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  return bytes + json + data;
}

}  // namespace

TEST_CASE("save then load gives back every dtype, shape and value") {
  OrderedDict<Tensor> in;
  in.insert("a", arange(6, kFloat32).reshape({2, 3}).t());  // non-contiguous is fine
  in.insert("b", tensor({1.5, -2.0}, kFloat64));
  in.insert("c", tensor({1, -2, 3}));
  in.insert("d", tensor({0.0, 1.0}).to(kBool));
  in.insert("e", tensor({0.5, 3.0}).to(kBFloat16));
  in.insert("f", tensor({-1.0}).to(kFloat16));
  in.insert("g", zeros({0, 4}));
  in.insert("h", scalar_tensor(7.0, kFloat64));
  std::string path = temp_path("roundtrip.safetensors");
  save(in, path, {{"epoch", "3"}});
  Metadata meta;
  OrderedDict<Tensor> out = load(path, &meta);
  CHECK(meta.at("epoch") == "3");
  CHECK(out.keys() == in.keys());
  for (const auto& [name, t] : in) {
    CAPTURE(name);
    CHECK(out[name].scalar_type() == t.scalar_type());
    CHECK(out[name].equal(t.contiguous()));
  }
  CHECK(read_bytes(path).size() % 8 == 0);  // header padded to keep data aligned
  CHECK_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST_CASE("a file written by Python's safetensors package loads") {
  Metadata meta;
  OrderedDict<Tensor> t = load(std::string(GRADRING_TEST_DATA) + "/python_written.safetensors", &meta);
  CHECK(meta.at("source") == "python");
  check_values(t["f32"], {0, 0.25, 0.5, 0.75, 1.0, 1.25});
  CHECK(t["f32"].sizes() == IntArrayRef({2, 3}));
  check_values(t["f64"], {-1.5, 0, 2.25});
  CHECK(t["i64"].scalar_type() == kInt64);
  CHECK(t["i64"][1][0].item<int64_t>() == (int64_t{1} << 40));
  check_values(t["u8"], {0, 1, 128, 255});
  check_values(t["flags"], {1, 0, 1});
  check_values(t["f16"], {0.5, -65504});
  CHECK(t["empty"].sizes() == IntArrayRef({0, 3}));
}

TEST_CASE("a file written by gradring reads in Python") {
  OrderedDict<Tensor> t;
  t.insert("weight", tensor({1.0, -2.0, 0.5, 3.0}).reshape({2, 2}));
  t.insert("counts", tensor(std::vector<int64_t>{5, -6, int64_t{1} << 41}));
  t.insert("scale", scalar_tensor(0.25, kFloat64));
  std::string path = temp_path("for_python.safetensors");
  save(t, path, {{"writer", "gradring"}});
  std::string cmd = "python3 " + std::string(GRADRING_TEST_DATA) + "/check_safetensors.py " + path;
  // python3 is a test dependency (scripts/setup installs it; the end-to-end tests need it too).
  REQUIRE_MESSAGE(std::system("python3 -c '' > /dev/null 2>&1") == 0, "python3 is not installed (run scripts/setup)");
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("corrupt files give errors naming the file and the problem") {
  std::string path = temp_path("bad.safetensors");
  auto expect = [&](const std::string& bytes, const std::string& text) {
    write_bytes(path, bytes);
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(load(path), doctest::Contains(text.c_str()), gr::Error);
    CHECK_THROWS_WITH_AS(load(path), doctest::Contains("bad.safetensors"), gr::Error);
  };
  expect("abc", "fewer than the 8-byte header length");
  expect(forge("{}", "", 50), "runs past the end of the file");
  expect(forge("{}", "", uint64_t{1} << 40), "exceeds the 100 MiB limit");
  expect(forge("{\"a\": ", ""), "does not parse");
  expect(forge("[1]", ""), "not a JSON object");
  expect(forge(R"({"a":{"dtype":"F32","shape":[2]}})", ""), "needs dtype, shape and data_offsets");
  expect(forge(R"({"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}})", "xxxx"), "unsupported dtype");
  expect(forge(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "xxxx"), "bad dimension");
  expect(forge(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "xxxx"), "outside the 4 data bytes");
  expect(forge(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "xxxx"), "shape and dtype need 8");
  expect(forge(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
               "xxxxxx"),
         "overlapping or missing data");
  expect(forge(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "xxxxxxxx"), "cover 4 of 8 data bytes");
  expect(forge(R"({"__metadata__":{"k":1}})", ""), "is not a string");
  // From fuzzing the reader (fuzz/fuzz_safetensors): numel * 8 wrapped to 0 bytes (2^61 F64
  // elements on an empty storage), and a 0 dim hid huge others whose strides overflowed int64.
  expect(forge(R"({"a":{"dtype":"F64","shape":[549755813888,4194304],"data_offsets":[0,0]}})", ""), "too large");
  expect(forge(R"({"a":{"dtype":"F32","shape":[0,1099511627775,1099511627775],"data_offsets":[0,0]}})", ""),
         "too large");
  CHECK_THROWS_WITH_AS(load(temp_path("missing.safetensors")), doctest::Contains("cannot open"), gr::Error);
  // A truncated copy of a good file.
  std::string good = temp_path("good.safetensors");
  OrderedDict<Tensor> t;
  t.insert("w", ones({10}));
  save(t, good);
  std::string bytes = read_bytes(good);
  expect(bytes.substr(0, bytes.size() - 3), "outside the");
}

TEST_CASE("save refuses bad names and unwritable places, and keeps the old file") {
  OrderedDict<Tensor> t;
  t.insert("__metadata__", ones({1}));
  CHECK_THROWS_WITH_AS(save(t, temp_path("x.safetensors")), doctest::Contains("reserved"), gr::Error);
  OrderedDict<Tensor> ok;
  ok.insert("w", ones({2}));
  CHECK_THROWS_WITH_AS(save(ok, "/nonexistent-dir/x.safetensors"), doctest::Contains("cannot create"), gr::Error);
  // Renaming onto a directory fails after the data was written: the old target survives.
  std::string dir_target = temp_path("a_directory");
  fs::create_directories(dir_target);
  CHECK_THROWS_WITH_AS(save(ok, dir_target), doctest::Contains("renaming"), gr::Error);
  CHECK(fs::is_directory(dir_target));
  CHECK_FALSE(fs::exists(dir_target + ".tmp." + std::to_string(::getpid())));
}

TEST_CASE("module checkpoints: save, load, strictness") {
  nn::Sequential a(nn::Linear(3, 4), nn::BatchNorm2d(2));
  nn::Sequential b(nn::Linear(3, 4), nn::BatchNorm2d(2));
  std::string path = temp_path("model.safetensors");
  save(*a, path);
  load(*b, path);
  for (const auto& [name, t] : a->state_dict()) CHECK(b->state_dict()[name].equal(t));
  nn::Sequential c(nn::Linear(3, 5));
  CHECK_THROWS_WITH_AS(load(*c, path), doctest::Contains("Unexpected key(s)"), gr::Error);
  nn::Sequential d(nn::Linear(3, 4));
  load(*d, path, /*strict=*/false);
  CHECK(d->state_dict()["0.weight"].equal(a->state_dict()["0.weight"]));
}
