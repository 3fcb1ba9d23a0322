// MNIST / Fashion-MNIST loading: find the files, read them as IDX, check they fit together.
#include "data/datasets/mnist.h"

#include <filesystem>
#include <vector>

#include "core/native/copy.h"
#include "core/native/shape.h"
#include "data/datasets/tensor.h"
#include "data/idx.h"
#include "data/transforms/image.h"

namespace gr::data::datasets {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFileList =
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, "
    "each plain or .gz";

// root/name or root/name.gz (plain first); empty when there is neither.
std::string find_file(const fs::path& root, const std::string& name) {
  for (const std::string& candidate : {name, name + ".gz"}) {
    std::error_code ec;
    if (fs::is_regular_file(root / candidate, ec)) return (root / candidate).string();
  }
  return "";
}

std::string fashion_mnist_hint() {
  return std::string("install them with `sudo apt-get install dataset-fashion-mnist` (into ") +
         FashionMNIST::kDefaultRoot + "), or pass --data DIR with the four IDX files (" + kFileList + ")";
}

}  // namespace

// Plain MNIST pointed at the Debian package's folder gets the Fashion-MNIST hint too.
MNIST::MNIST(const std::string& root, Mode mode)
    : MNIST(root, mode, "MNIST",
            fs::path(root) == fs::path(FashionMNIST::kDefaultRoot)
                ? fashion_mnist_hint()
                : std::string("put the four MNIST IDX files (") + kFileList + ") in a folder DIR and pass --data DIR") {}

FashionMNIST::FashionMNIST(const std::string& root, Mode mode)
    : MNIST(root, mode, "FashionMNIST", fashion_mnist_hint()) {}

MNIST::MNIST(const std::string& root, Mode mode, std::string_view name, std::string_view how_to_get)
    : is_train_(mode == Mode::kTrain) {
  std::error_code ec;
  GR_CHECK(fs::is_directory(root, ec), name, ": data folder '", root, "' does not exist. To get the data, ",
           how_to_get, ".");
  const std::string prefix = is_train_ ? "train" : "t10k";
  const std::string images_name = prefix + "-images-idx3-ubyte", labels_name = prefix + "-labels-idx1-ubyte";
  const std::string images_path = find_file(root, images_name), labels_path = find_file(root, labels_name);
  std::string missing;
  if (images_path.empty()) missing += images_name + "(.gz)";
  if (labels_path.empty()) missing += (missing.empty() ? "" : " and ") + labels_name + "(.gz)";
  GR_CHECK(missing.empty(), name, ": folder '", root, "' has no ", missing, ". To get the data, ", how_to_get, ".");

  Tensor images = read_idx(images_path), labels = read_idx(labels_path);
  const std::string both = "(images '" + images_path + "', labels '" + labels_path + "')";
  GR_CHECK(images.scalar_type() == kUInt8 && images.dim() == 3 && images.size(1) == 28 && images.size(2) == 28, name,
           ": the images file holds ", images.toString(), " but uint8 [N, 28, 28] was expected ", both);
  GR_CHECK(labels.scalar_type() == kUInt8 && labels.dim() == 1, name, ": the labels file holds ", labels.toString(),
           " but uint8 [N] was expected ", both);
  GR_CHECK(images.size(0) == labels.size(0), name, ": ", images.size(0), " images but ", labels.size(0), " labels ",
           both);
  images_ = native::view(to_unit_float(images), {images.size(0), 1, 28, 28});
  targets_ = native::to_dtype(labels, kInt64);
}

Example<> MNIST::get(size_t index) { return detail::row(images_, targets_, index, "MNIST"); }

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace gr::data::datasets
