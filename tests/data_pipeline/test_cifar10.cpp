// CIFAR-10 binary reader on generated batch files: layout, labels, folder lookup, errors.
#include <filesystem>

#include "data_files.h"
#include "test_util.h"

using namespace gr;
namespace ds = gr::data::datasets;

namespace {

// Record i of file f: label (3f + i) % 10, pixel byte j = (7i + 13f + j) % 256.
test::Bytes cifar_file(int f, int records) {
  test::Bytes b;
  for (int i = 0; i < records; ++i) {
    b.push_back(static_cast<uint8_t>((3 * f + i) % 10));
    for (int j = 0; j < 3072; ++j) b.push_back(static_cast<uint8_t>(7 * i + 13 * f + j));
  }
  return b;
}

void write_cifar(const std::string& folder) {
  std::filesystem::create_directories(folder);
  for (int f = 1; f <= 5; ++f) test::write_file(folder + "/data_batch_" + std::to_string(f) + ".bin", cifar_file(f, f));
  test::write_file(folder + "/test_batch.bin", cifar_file(0, 4));
}

}  // namespace

TEST_CASE("CIFAR10 reads records as CHW images in [0, 1] with int64 labels") {
  test::TempDir dir;
  write_cifar(dir.str());
  ds::CIFAR10 train(dir.str()), test_set(dir.str(), ds::Mode::kTest);
  CHECK(train.size() == std::optional<size_t>(1 + 2 + 3 + 4 + 5));
  CHECK(test_set.size() == std::optional<size_t>(4));
  CHECK(train.is_train());
  CHECK(test::shape(train.images()) == std::vector<int64_t>{15, 3, 32, 32});
  CHECK(train.images().scalar_type() == kFloat32);
  test::check_values(test_set.targets(), {0, 1, 2, 3});
  // Example 4 of train is record 1 of data_batch_3; check channel 2, row 5, column 7.
  CHECK(train.targets().data_ptr<int64_t>()[4] == (9 + 1) % 10);
  const int byte = (7 * 1 + 13 * 3 + 2 * 1024 + 5 * 32 + 7) % 256;
  data::Example<> e = train.get(4);
  CHECK(test::shape(e.data) == std::vector<int64_t>{3, 32, 32});
  CHECK(e.data[2][5][7].item<float>() == doctest::Approx(byte / 255.0));
  CHECK(train.rows().target.is_same(train.targets()));

  data::Example<> raw = data::read_cifar10_batch(dir / "data_batch_2.bin");
  CHECK(raw.data.scalar_type() == kUInt8);
  CHECK(test::shape(raw.data) == std::vector<int64_t>{2, 3, 32, 32});
}

TEST_CASE("CIFAR10 finds the cifar-10-batches-bin folder") {
  test::TempDir dir;
  write_cifar(dir / "cifar-10-batches-bin");
  CHECK(ds::CIFAR10(dir.str(), ds::Mode::kTest).size() == std::optional<size_t>(4));
}

TEST_CASE("CIFAR10 errors name the file and the problem") {
  test::TempDir dir;
  write_cifar(dir.str());
  test::write_file(dir / "data_batch_2.bin", test::concat(cifar_file(2, 2), {1}));
  const std::string size_error = dir / "data_batch_2.bin" + "': size 6147 bytes is not a multiple of";
  CHECK_THROWS_WITH_AS(ds::CIFAR10(dir.str()), doctest::Contains(size_error.c_str()), gr::Error);
  test::Bytes bad_label = cifar_file(0, 3);
  bad_label[2 * 3073] = 10;
  test::write_file(dir / "test_batch.bin", bad_label);
  CHECK_THROWS_WITH_AS(ds::CIFAR10(dir.str(), ds::Mode::kTest), doctest::Contains("record 2 has label 10"),
                       gr::Error);
  std::filesystem::remove(dir / "data_batch_3.bin");
  std::filesystem::remove(dir / "data_batch_5.bin");
  CHECK_THROWS_WITH_AS(ds::CIFAR10(dir.str()), doctest::Contains("has no data_batch_3.bin, data_batch_5.bin"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(data::read_cifar10_batch(dir / "data_batch_3.bin"), doctest::Contains("no such file"),
                       gr::Error);
}
