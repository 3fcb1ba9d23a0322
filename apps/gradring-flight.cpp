// gradring-flight: reads every rank's flight recorder dump (GRADRING_FLIGHT_RECORDER_DIR,
// distributed/backends/flight_recorder.h) and says which rank diverged and in which call.
//   gradring-flight [--json] DIR|FILE...
// Per group: the last collective each rank completed, the first call where the ranks differ
// (another op, dtype, shape or root, or a call some ranks never issued), calls issued but
// never started, ranks that left no dump; then one summary line. See docs/reliability.md.
// Reading and analysis are in flight/ (where tests and fuzz/fuzz_flight.cpp reach them).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flight/flight_dumps.h"
#include "core/error.h"

namespace {

// Reads DIR/rank*.json or the files given.
std::vector<std::filesystem::path> dump_files(const std::vector<std::string>& args) {
  std::vector<std::filesystem::path> files;
  for (const std::string& a : args) {
    if (!std::filesystem::is_directory(a)) {
      files.emplace_back(a);
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(a)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("rank", 0) == 0 && entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  bool as_json = false;
  CLI::App app{"Read every rank's flight recorder dump and name the rank that diverged.\n"
               "usage: gradring-flight [--json] DIR|FILE..."};
  app.add_option("dumps", inputs, "the folder of the dumps (GRADRING_FLIGHT_RECORDER_DIR) or rank*.json files")
      ->required();
  app.add_flag("--json", as_json, "one JSON object instead of text");
  CLI11_PARSE(app, argc, argv);

  gr::flight::Dumps dumps;
  try {
    const auto files = dump_files(inputs);
    if (files.empty()) throw std::runtime_error("no rank*.json dumps in " + inputs.front());
    for (const auto& path : files) {
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot read " + path.string());
      std::stringstream text;
      text << in.rdbuf();
      gr::flight::read_dump(text.str(), path.string(), dumps);
    }
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "gradring-flight: error: %s\n", e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gradring-flight: error: %s\n", e.what());
    return 2;
  }

  const gr::flight::Analysis a = gr::flight::analyze(dumps, gr::flight::addr2line_resolver);
  if (as_json) {
    std::printf("%s\n", a.report.dump().c_str());
  } else {
    for (const std::string& line : a.lines) std::printf("%s\n", line.c_str());
    std::printf("summary: %s\n", a.summary.c_str());
  }
  return 0;
}
