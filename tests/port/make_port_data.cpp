// Writes the small synthetic data sets the port programs train on (plain C++, no gradring):
//   make_port_data mnist <dir> [train test]
//                                MNIST-format IDX files (plain, as Fashion-MNIST's): 512 training
//                                and 128 test images unless given, each a bright 6x6 square whose
//                                place says the class, on noise (also the data of the train_mnist
//                                end-to-end tests, tests/distributed/test_train_mnist_*.sh)
//   make_port_data tokens <dir>  tokens.bin: 20000 little-endian uint16 tokens of a noisy
//                                repeating sequence over a vocabulary of 64
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

uint32_t next(uint64_t& state) {  // a fixed LCG: the same files on every machine
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<uint32_t>(state >> 33);
}

void write(const std::string& path, const std::vector<uint8_t>& header, const std::vector<uint8_t>& body) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  if (!out) {
    std::fprintf(stderr, "make_port_data: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

std::vector<uint8_t> idx_header(std::vector<uint32_t> dims) {
  std::vector<uint8_t> h = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<uint8_t>(d >> shift));
  return h;
}

void mnist_split(const std::string& dir, const std::string& prefix, uint32_t n, uint64_t seed) {
  std::vector<uint8_t> images(size_t{n} * 28 * 28), labels(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t label = next(seed) % 10;
    labels[i] = static_cast<uint8_t>(label);
    const uint32_t top = 2 + (label / 5) * 12, left = 2 + (label % 5) * 5;
    uint8_t* image = &images[size_t{i} * 784];
    for (uint32_t p = 0; p < 784; ++p) image[p] = static_cast<uint8_t>(next(seed) % 64);
    for (uint32_t r = top; r < top + 6; ++r)
      for (uint32_t c = left; c < left + 6 && c < 28; ++c) image[r * 28 + c] = static_cast<uint8_t>(192 + next(seed) % 64);
  }
  write(dir + "/" + prefix + "-images-idx3-ubyte", idx_header({n, 28, 28}), images);
  write(dir + "/" + prefix + "-labels-idx1-ubyte", idx_header({n}), labels);
}

void tokens(const std::string& dir, uint64_t seed) {
  std::vector<uint8_t> bytes;
  for (uint32_t i = 0; i < 20000; ++i) {
    const uint16_t t = next(seed) % 10 == 0 ? static_cast<uint16_t>(next(seed) % 64) : static_cast<uint16_t>((i * 5) % 64);
    bytes.push_back(static_cast<uint8_t>(t & 0xff));
    bytes.push_back(static_cast<uint8_t>(t >> 8));
  }
  write(dir + "/tokens.bin", {}, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc > 1 ? argv[1] : "";
  if (!(argc == 3 || (argc == 5 && kind == "mnist"))) {
    std::fprintf(stderr, "usage: %s mnist <dir> [train test] | tokens <dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[2];
  if (kind == "mnist") {
    const unsigned long train = argc == 5 ? std::strtoul(argv[3], nullptr, 10) : 512;
    const unsigned long test = argc == 5 ? std::strtoul(argv[4], nullptr, 10) : 128;
    if (train == 0 || test == 0 || train > 100000 || test > 100000) {
      std::fprintf(stderr, "make_port_data: image counts must be 1..100000\n");
      return 2;
    }
    mnist_split(dir, "train", static_cast<uint32_t>(train), 1);
    mnist_split(dir, "t10k", static_cast<uint32_t>(test), 2);
  } else if (kind == "tokens") {
    tokens(dir, 3);
  } else {
    std::fprintf(stderr, "make_port_data: unknown data set '%s' (mnist or tokens)\n", kind.c_str());
    return 2;
  }
  return 0;
}
