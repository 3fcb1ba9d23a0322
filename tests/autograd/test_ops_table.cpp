// docs/ops.md is generated from the OpInfo registry (op_info.h): one row per op, with the
// kernels its forward and backward dispatch to and whether each has a CPU and a CUDA kernel
// in this build. The test fails when the file and the registry disagree, rewrites the file
// when GR_WRITE_OPS_TABLE=1 is set, and prints the table when it is "-".
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/dispatch.h"
#include "core/profiler.h"
#include "op_info.h"

using namespace gr;
using gr::testing::op_infos;

namespace {

const std::string kOpsTablePath = GRADRING_TEST_DATA "/../../docs/ops.md";

struct OpRow {
  std::set<std::string> forward, backward;  // stub names
  bool differentiable = true, double_backward = true;
};

// The stubs that ran while the profiler was on, in first-seen order made canonical by a set.
std::set<std::string> kernels_run() {
  std::set<std::string> names;
  for (const auto& e : profiler::events()) {
    if (std::string(e.category) == "kernel") names.insert(e.name);
  }
  return names;
}

// Note [Kernels of an op]: an op's kernels are the dispatch stubs its OpInfo entries reach,
// found by running each entry on the CPU with the profiler on (every stub call is a
// "kernel" span). The CUDA column asks the stubs themselves whether a CUDA kernel is
// registered, so it says what the build can run, not what a list claims. An op whose CPU path
// bypassed the stubs would look device-independent here; views legitimately run no kernel.
std::map<std::string, OpRow> collect_rows() {
  std::map<std::string, OpRow> rows;
  const bool was_enabled = profiler::enabled();
  for (const auto& op : op_infos()) {
    auto& row = rows[op.name];
    row.differentiable = row.differentiable && op.differentiable;
    row.double_backward = row.double_backward && op.differentiable && op.double_backward;
    auto inputs = op.inputs();
    profiler::reset();
    profiler::enable(true);
    Tensor out = op.fn(inputs);
    profiler::enable(false);
    auto fwd = kernels_run();
    row.forward.insert(fwd.begin(), fwd.end());
    if (op.differentiable && out.requires_grad()) {
      Tensor seed = ones_like(out);
      profiler::reset();
      profiler::enable(true);
      out.backward(seed);
      profiler::enable(false);
      auto bwd = kernels_run();
      row.backward.insert(bwd.begin(), bwd.end());
    }
  }
  profiler::reset();
  profiler::enable(was_enabled);
  return rows;
}

std::string yes_no(bool b) { return b ? "yes" : "-"; }

bool all_have(const OpRow& row, DeviceType device) {
  for (const auto* set : {&row.forward, &row.backward}) {
    for (const auto& stub : *set) {
      if (!kernel_registered(stub, device)) return false;
    }
  }
  return true;
}

std::string join(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none: a view)" : s;
}

// The whole file. `cuda_known` is false in a build without the CUDA backend, where the CUDA
// column cannot be computed and reads "?".
std::string ops_table(bool cuda_known) {
  std::ostringstream out;
  out << "# Ops\n\n"
      << "<!-- Generated from the OpInfo registry by tests/autograd/test_ops_table.cpp; do not edit.\n"
      << "     Regenerate (in a build with CUDA): GR_WRITE_OPS_TABLE=1 build/tests/test_autograd -tc='docs/ops.md*' -->\n\n"
      << "One row per op in the OpInfo registry (tests/autograd/op_info.h). *CPU* and *CUDA*: every\n"
      << "dispatch stub the op's forward and backward reach has a kernel for that device in this\n"
      << "build (see Note [Kernels of an op] in the generator). *autograd*: the op is gradchecked\n"
      << "in float64. *double backward*: its backward is differentiable and gradgradchecked.\n"
      << "*kernels*: the stubs an entry reaches on the CPU, forward; backward (the forward includes\n"
      << "the entry's set-up, such as the clone before an in-place op).\n\n"
      << "| op | CPU | CUDA | autograd | double backward | kernels (forward; backward) |\n"
      << "|---|---|---|---|---|---|\n";
  for (const auto& [name, row] : collect_rows()) {
    out << "| `" << name << "` | " << yes_no(all_have(row, kCPU)) << " | "
        << (cuda_known ? yes_no(all_have(row, kCUDA)) : std::string("?")) << " | " << yes_no(row.differentiable)
        << " | " << yes_no(row.double_backward) << " | " << join(row.forward);
    if (row.differentiable) out << "; " << join(row.backward);
    out << " |\n";
  }
  return out.str();
}

// The table with its CUDA column blanked, for comparing in a build without CUDA.
std::string without_cuda_column(const std::string& table) {
  std::istringstream in(table);
  std::string line, result;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) == 0) {
      // "| op | CPU | CUDA | ...": the third '|' opens the CUDA cell.
      size_t start = 0;
      for (int bar = 0; bar < 3; ++bar) start = line.find('|', start) + 1;
      size_t end = line.find('|', start);
      line = line.substr(0, start) + " ? " + line.substr(end);
    }
    result += line + "\n";
  }
  return result;
}

}  // namespace

TEST_CASE("docs/ops.md is the table generated from the OpInfo registry") {
  const bool cuda_known = any_kernel_registered(kCUDA);
  const std::string generated = ops_table(cuda_known);
  if (const char* w = std::getenv("GR_WRITE_OPS_TABLE"); w && std::string(w) == "-") {
    std::cout << generated;
    return;
  }
  if (const char* w = std::getenv("GR_WRITE_OPS_TABLE"); w && std::string(w) == "1") {
    REQUIRE_MESSAGE(cuda_known, "write docs/ops.md from a build with the CUDA backend");
    std::ofstream(kOpsTablePath) << generated;
    MESSAGE("wrote ", kOpsTablePath);
    return;
  }
  std::ifstream in(kOpsTablePath);
  REQUIRE_MESSAGE(in.good(), "cannot read ", kOpsTablePath);
  std::stringstream file;
  file << in.rdbuf();
  const std::string expected = cuda_known ? file.str() : without_cuda_column(file.str());
  std::istringstream want_lines(expected), got_lines(generated);
  std::string want_line, got_line;
  for (int line = 1; std::getline(want_lines, want_line) && std::getline(got_lines, got_line); ++line) {
    if (want_line != got_line) {
      MESSAGE("first difference, line ", line, ":\n  docs/ops.md: ", want_line, "\n  generated:   ", got_line);
      break;
    }
  }
  CHECK_MESSAGE(generated == expected,
                "docs/ops.md is out of date with the OpInfo registry: regenerate it with "
                "GR_WRITE_OPS_TABLE=1 build/tests/test_autograd -tc='docs/ops.md*' (in a build with CUDA)");
}

TEST_CASE("the ops table finds kernels and views") {
  auto rows = collect_rows();
  REQUIRE(rows.count("sin"));
  CHECK(!rows["sin"].forward.empty());
  CHECK(all_have(rows["sin"], kCPU));
}
