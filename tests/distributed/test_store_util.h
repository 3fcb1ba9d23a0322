// Helpers of the store tests: the operations every Store must get right, and running a
// function in forked child processes with a time limit (ranks are processes).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/store/store.h"
#include "test_util.h"

namespace gr::test {

inline distributed::Bytes bytes(const std::string& s) { return {s.begin(), s.end()}; }

// Every operation's semantics on a store holding none of the keys used here.
inline void check_store_operations(distributed::Store& s) {
  using distributed::Bytes;
  int64_t before = s.num_keys();
  s.set("a", "1");
  CHECK(s.get_string("a") == "1");
  s.set("a", Bytes{0, 255, 10, 0});  // binary values, overwritten in place
  CHECK(s.get(("a")) == Bytes{0, 255, 10, 0});
  s.set("", Bytes{});  // empty key and value are fine
  CHECK(s.get("").empty());
  CHECK(s.num_keys() == before + 2);

  CHECK(s.add("n", 5) == 5);
  CHECK(s.add("n", -7) == -2);
  CHECK(s.add("n", 0) == -2);
  CHECK(s.get_string("n") == "-2");  // stored as a decimal string, like torch
  s.set("text", "abc");
  CHECK(error_of([&] { s.add("text", 1); }).find("holds 'abc', not a decimal integer") != std::string::npos);
  s.set("big", std::to_string(INT64_MAX));
  CHECK(error_of([&] { s.add("big", 1); }).find("overflows int64") != std::string::npos);

  // compare_set: missing + empty expected creates; missing + other expected leaves it
  // missing; a match swaps; a mismatch returns the current value untouched.
  CHECK(s.compare_set("cs", {}, bytes("x")) == bytes("x"));
  CHECK(s.get_string("cs") == "x");
  CHECK(s.compare_set("cs2", bytes("y"), bytes("z")).empty());
  CHECK_FALSE(s.check({"cs2"}));
  CHECK(s.compare_set("cs", bytes("x"), bytes("w")) == bytes("w"));
  CHECK(s.compare_set("cs", bytes("x"), bytes("v")) == bytes("w"));
  CHECK(s.get_string("cs") == "w");

  CHECK(s.check({"a", "n", "cs"}));
  CHECK_FALSE(s.check({"a", "missing"}));
  CHECK(s.check({}));
  s.wait({"a", "n"});  // present: returns at once
  s.wait({});

  int64_t n = s.num_keys();
  CHECK(n == before + 6);  // a, "", n, text, big, cs
  CHECK(s.delete_key("a"));
  CHECK_FALSE(s.delete_key("a"));
  CHECK_FALSE(s.check({"a"}));
  CHECK(s.num_keys() == n - 1);
  s.set("a", "again");  // a deleted key can come back
  CHECK(s.get_string("a") == "again");
  for (const char* k : {"a", "", "n", "text", "big", "cs"}) CHECK(s.delete_key(k));
  CHECK(s.num_keys() == before);
}

// Starts fn(i) for i in [0, n) in forked children, which exit with fn's return value (2
// when it threw, after printing the error).
inline std::vector<pid_t> spawn_children(int n, const std::function<int(int)>& fn) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 3;
      try {
        code = fn(i);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", i, e.what());
        code = 2;
      }
      std::fflush(stderr);
      ::_exit(code);  // skip the parent's atexit handlers and doctest's reporting
    }
    pids.push_back(pid);
  }
  return pids;
}

// The children's exit codes; a child still running after `limit` is killed (code -1).
inline std::vector<int> wait_children(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  size_t n = pids.size();
  std::vector<int> codes(n, -1);
  std::vector<bool> done(n, false);
  auto deadline = std::chrono::steady_clock::now() + limit;
  size_t left = n;
  while (left > 0 && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < n; ++i) {
      int status = 0;
      if (done[i] || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = true;
      --left;
      codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    ::kill(pids[i], SIGKILL);
    ::waitpid(pids[i], nullptr, 0);
  }
  return codes;
}

inline bool all_zero(const std::vector<int>& codes) {
  for (int c : codes) {
    if (c != 0) return false;
  }
  return true;
}

}  // namespace gr::test
