// Work: completion, errors rethrown on wait, timeouts, callbacks before waiters wake.
#include <thread>

#include "distributed/work.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace std::chrono_literals;

TEST_CASE("Work completes, rethrows its error, and times out with its name") {
  Work ok("test op #1");
  CHECK_FALSE(ok.is_completed());
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    ok.finish();
  });
  ok.wait();
  t.join();
  CHECK(ok.is_success());

  Work bad("test op #2");
  bad.finish(std::make_exception_ptr(std::runtime_error("peer went away")));
  CHECK(bad.is_completed());
  CHECK_FALSE(bad.is_success());
  CHECK_THROWS_WITH(bad.wait(), "peer went away");

  Work slow("allreduce #3 on rank 1");
  CHECK_THROWS_WITH_AS(slow.wait(30ms), doctest::Contains("allreduce #3 on rank 1: not completed after 30 ms"),
                       gr::Error);
}

TEST_CASE("then() runs before waiters return, or at once after completion") {
  Work w("op");
  int stage = 0;
  w.then([&] { stage = 1; });
  std::thread t([&] { w.finish(); });
  w.wait();
  CHECK(stage == 1);
  t.join();
  w.then([&] { stage = 2; });
  CHECK(stage == 2);
  Work failing("op2");
  failing.then([] { throw std::runtime_error("hook failed"); });
  failing.finish();
  CHECK_THROWS_WITH(failing.wait(), "hook failed");
}
