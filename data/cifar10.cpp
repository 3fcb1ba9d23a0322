// CIFAR-10 binary reader: validate each file's size and labels, then split records into an
// image tensor and a label tensor.
#include "data/cifar10.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/factory.h"

namespace gr::data {

namespace fs = std::filesystem;

namespace {
constexpr int64_t kImageBytes = 3 * 32 * 32;
constexpr int64_t kRecordBytes = 1 + kImageBytes;
}  // namespace

Example<> read_cifar10_batch(const std::string& path) {
  std::error_code ec;
  GR_CHECK(fs::is_regular_file(path, ec), "read_cifar10_batch: '", path, "': no such file");
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  GR_CHECK(size % kRecordBytes == 0, "read_cifar10_batch: '", path, "': size ", size,
           " bytes is not a multiple of the record size 3073 (1 label byte + 3072 pixel bytes); truncated or not a "
           "CIFAR-10 binary batch?");
  std::vector<uint8_t> bytes(size);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  GR_CHECK(in.gcount() == size, "read_cifar10_batch: '", path, "': read only ", in.gcount(), " of ", size, " bytes");

  const int64_t n = size / kRecordBytes;
  Tensor images = empty({n, 3, 32, 32}, kUInt8), labels = empty({n}, kInt64);
  uint8_t* pixels = images.data_ptr<uint8_t>();
  int64_t* y = labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* record = bytes.data() + i * kRecordBytes;
    GR_CHECK(record[0] <= 9, "read_cifar10_batch: '", path, "': record ", i, " has label ", int(record[0]),
             " (CIFAR-10 labels are 0 to 9)");
    y[i] = record[0];
    std::memcpy(pixels + i * kImageBytes, record + 1, kImageBytes);
  }
  return {images, labels};
}

}  // namespace gr::data
