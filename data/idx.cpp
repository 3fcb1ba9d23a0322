// IDX reader. Every check names the file; the header is validated before anything large is
// allocated (a plain file's size must match the header exactly; a gzip file's header may
// not promise more than deflate could have compressed into it).
#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "core/factory.h"

namespace gr::data {

namespace {

constexpr int kMaxDims = 16;
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;  // 1 TiB: no real IDX file is near this
constexpr uint64_t kMaxDeflateRatio = 1032;         // deflate's best case is about 1032:1

struct IdxType {
  ScalarType dtype;  // of the returned tensor
  int bytes;         // per value in the file
};

bool idx_type(uint8_t code, IdxType* out) {
  switch (code) {
    case 0x08: *out = {kUInt8, 1}; return true;
    case 0x09: *out = {kInt64, 1}; return true;
    case 0x0B: *out = {kInt64, 2}; return true;
    case 0x0C: *out = {kInt64, 4}; return true;
    case 0x0D: *out = {kFloat32, 4}; return true;
    case 0x0E: *out = {kFloat64, 8}; return true;
    default: return false;
  }
}

std::string hex(uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02X", b);
  return text;
}

// A gzFile (which also reads plain files, transparently) that reports errors with the path.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto status = fs::status(path_, ec);
    GR_CHECK(fs::exists(status), "read_idx: '", path_, "': no such file");
    GR_CHECK(fs::is_regular_file(status), "read_idx: '", path_, "': not a regular file");
    file_size_ = fs::file_size(path_, ec);
    file_ = gzopen(path_.c_str(), "rb");
    GR_CHECK(file_ != nullptr, "read_idx: '", path_, "': cannot open: ", std::strerror(errno));
    gzbuffer(file_, 1 << 20);  // before gzdirect, which fills the buffer
    gzip_ = gzdirect(file_) == 0;
    bool named_gz = path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0;
    if (named_gz && !gzip_) {
      gzclose(file_);  // no destructor runs when a constructor throws
      GR_ERROR("read_idx: '", path_, "': the name ends in .gz but it is not a gzip stream",
               " (no gzip magic bytes 0x1F 0x8B)");
    }
  }
  ~Reader() { gzclose(file_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  bool gzip() const { return gzip_; }
  uint64_t file_size() const { return file_size_; }

  // Reads up to n bytes; returns how many were read (fewer only at the end of the data).
  uint64_t read(void* dst, uint64_t n) {
    uint64_t done = 0;
    while (done < n) {
      unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(n - done, 1u << 30));
      int got = gzread(file_, static_cast<char*>(dst) + done, chunk);
      check_stream();
      if (got <= 0) break;
      done += static_cast<uint64_t>(got);
    }
    return done;
  }

  // Bytes left before the end of the data (reads them).
  uint64_t count_rest() {
    std::vector<char> sink(1 << 16);
    uint64_t total = 0;
    for (uint64_t got; (got = read(sink.data(), sink.size())) > 0;) total += got;
    return total;
  }

 private:
  void check_stream() {
    int code = Z_OK;
    std::string message = gzerror(file_, &code);
    if (code == Z_OK) return;
    if (message.rfind(path_ + ": ", 0) == 0) message.erase(0, path_.size() + 2);  // zlib prefixes the path
    if (code == Z_BUF_ERROR) GR_ERROR("read_idx: '", path_, "': truncated gzip stream (", message, ")");
    if (code == Z_ERRNO) GR_ERROR("read_idx: '", path_, "': read error: ", std::strerror(errno));
    GR_ERROR("read_idx: '", path_, "': unreadable gzip stream (", message, ")");
  }

  std::string path_;
  gzFile file_ = nullptr;
  bool gzip_ = false;
  uint64_t file_size_ = 0;
};

// Converts `count` big-endian values of `bytes` each to the host order, in place.
void from_big_endian(void* data, uint64_t count, int bytes) {
  if (bytes == 4) {
    auto* p = static_cast<uint32_t*>(data);
    for (uint64_t i = 0; i < count; ++i) p[i] = __builtin_bswap32(p[i]);
  } else if (bytes == 8) {
    auto* p = static_cast<uint64_t*>(data);
    for (uint64_t i = 0; i < count; ++i) p[i] = __builtin_bswap64(p[i]);
  }
}

void widen_signed(const uint8_t* in, int64_t* out, uint64_t count, int bytes) {
  for (uint64_t i = 0; i < count; ++i, in += bytes) {
    if (bytes == 1) out[i] = static_cast<int8_t>(in[0]);
    if (bytes == 2) out[i] = static_cast<int16_t>((in[0] << 8) | in[1]);
    if (bytes == 4) {
      out[i] = static_cast<int32_t>((uint32_t{in[0]} << 24) | (uint32_t{in[1]} << 16) | (uint32_t{in[2]} << 8) | in[3]);
    }
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  Reader in(path);
  uint8_t magic[4];
  uint64_t got = in.read(magic, 4);
  GR_CHECK(got == 4, "read_idx: '", path, "': truncated header: ", got, " bytes, an IDX header needs at least 4");
  IdxType type;
  GR_CHECK(magic[0] == 0 && magic[1] == 0, "read_idx: '", path, "': bad magic bytes ", hex(magic[0]), " ",
           hex(magic[1]), " ", hex(magic[2]), " ", hex(magic[3]),
           ": an IDX file starts with 0x00 0x00 <dtype code> <ndims> (is this an IDX file?)");
  GR_CHECK(idx_type(magic[2], &type), "read_idx: '", path, "': unknown dtype code ", hex(magic[2]),
           " (known: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64)");
  const int ndims = magic[3];
  GR_CHECK(ndims >= 1 && ndims <= kMaxDims, "read_idx: '", path, "': absurd number of dimensions ", ndims,
           " (expected 1 to ", kMaxDims, ")");

  uint8_t raw_dims[4 * kMaxDims];
  got = in.read(raw_dims, 4 * ndims);
  GR_CHECK(got == uint64_t(4 * ndims), "read_idx: '", path, "': truncated header: ", ndims,
           " dimension sizes need ", 4 * ndims, " bytes after the magic, the file has ", got);
  std::vector<int64_t> dims(ndims);
  uint64_t values = 1;
  uint64_t extent = 1;  // the dims taken as at least 1, as the strides multiply them: bounded too,
  bool absurd = false;  // so that a 0 dim cannot hide huge others
  for (int d = 0; d < ndims; ++d) {
    uint32_t v;
    std::memcpy(&v, raw_dims + 4 * d, 4);
    dims[d] = __builtin_bswap32(v);
    const uint64_t at_least_1 = std::max<uint64_t>(static_cast<uint64_t>(dims[d]), 1);
    if (dims[d] > std::numeric_limits<int32_t>::max()) absurd = true;
    if (absurd || extent > kMaxBytes / at_least_1) absurd = true;
    if (!absurd) {
      values *= static_cast<uint64_t>(dims[d]);
      extent *= at_least_1;
    }
  }
  const uint64_t bytes = values * type.bytes;
  GR_CHECK(!absurd && bytes <= kMaxBytes, "read_idx: '", path, "': absurd dims ", IntArrayRef(dims),
           " (more than ", kMaxBytes, " bytes of data)");

  // Before allocating: does the file hold what the header promises?
  const uint64_t header = 4 + 4 * static_cast<uint64_t>(ndims);
  if (!in.gzip()) {
    const uint64_t have = in.file_size() - header;
    GR_CHECK(have >= bytes, "read_idx: '", path, "': truncated data: dims ", IntArrayRef(dims), " need ", bytes,
             " bytes of data but the file has only ", have);
    GR_CHECK(have == bytes, "read_idx: '", path, "': trailing garbage: ", have - bytes, " bytes after the ", bytes,
             " bytes of data that dims ", IntArrayRef(dims), " describe");
  } else {
    GR_CHECK(bytes <= kMaxDeflateRatio * in.file_size() + 1024, "read_idx: '", path, "': truncated data: dims ",
             IntArrayRef(dims), " need ", bytes, " bytes, more than a ", in.file_size(), "-byte gzip file can hold");
  }

  Tensor out = empty(dims, type.dtype);
  std::vector<uint8_t> narrow;  // int8/16/32 are read here, then widened into `out`
  void* dst = out.data_ptr();
  if (type.dtype == kInt64) {
    narrow.resize(bytes);
    dst = narrow.data();
  }
  got = in.read(dst, bytes);
  GR_CHECK(got == bytes, "read_idx: '", path, "': truncated data: dims ", IntArrayRef(dims), " need ", bytes,
           " bytes of data but the file has only ", got);
  const uint64_t rest = in.count_rest();
  GR_CHECK(rest == 0, "read_idx: '", path, "': trailing garbage: ", rest, " bytes after the ", bytes,
           " bytes of data that dims ", IntArrayRef(dims), " describe");

  if (type.dtype == kInt64) {
    widen_signed(narrow.data(), out.data_ptr<int64_t>(), values, type.bytes);
  } else {
    from_big_endian(dst, values, type.bytes);
  }
  return out;
}

}  // namespace gr::data
