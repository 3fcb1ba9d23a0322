// Streams and events on a device: pools and priorities, the current-stream guard, ordering
// between streams through events, query/synchronize, and timing.
#include <thread>

#include "cuda_kernels/event.h"
#include "cuda_kernels/stream.h"
#include "gate.h"
#include "parity.h"

using namespace gr;
using cuda_test::cuda0;
using cuda_test::Gate;

TEST_SUITE("cuda") {
  TEST_CASE("streams: priorities are clamped, a guard switches and restores the current stream") {
    const auto [least, greatest] = cuda::Stream::priority_range(0);
    CHECK(greatest <= least);
    const cuda::Stream urgent = cuda::Stream::create(0, -1000);
    CHECK(urgent.priority() == greatest);
    CHECK(cuda::Stream::create(0, 1000).priority() == least);

    const cuda::Stream before = cuda::Stream::current(0);
    CHECK(before == cuda::Stream::thread_default(0));
    CHECK(cuda::current_stream() == before.handle());
    {
      cuda::StreamGuard guard(urgent);
      CHECK(cuda::Stream::current(0) == urgent);
      CHECK(cuda::current_stream() == urgent.handle());
      Tensor x = ones({8}, TensorOptions(kFloat32).device(cuda0())) * 3.0;  // queued on `urgent`
      CHECK(x.cpu().sum().item<float>() == 24.0f);
    }
    CHECK(cuda::Stream::current(0) == before);

    // Another thread has its own default stream, and its own current stream.
    cudaStream_t other = nullptr;
    std::thread t([&] { other = cuda::current_stream(); });
    t.join();
    CHECK(other != nullptr);
    CHECK(other != before.handle());  // the next of the pool's 32 thread-default streams
    CHECK(other != urgent.handle());
    CHECK_THROWS_WITH_AS(cuda::Stream::set_current(cuda::Stream(cudaStreamPerThread, 0)),
                         doctest::Contains("per-thread default"), gr::Error);
  }

  TEST_CASE("events: a stream waits for another stream's work through an event") {
    const cuda::Stream producer = cuda::Stream::create(0), consumer = cuda::Stream::create(0);
    REQUIRE(producer != consumer);
    Tensor x = zeros({1 << 16}, TensorOptions(kFloat32).device(cuda0()));
    cuda::Event zeroed;
    zeroed.record();
    Gate gate;
    cuda::Event done;
    {
      cuda::StreamGuard guard(producer);
      producer.wait(zeroed);
      gate.hold(producer.handle());
      x.fill_(2.0);  // runs after the gate opens
      done.record();
    }
    CHECK_FALSE(done.query());
    CHECK_FALSE(producer.query());
    Tensor y;
    {
      cuda::StreamGuard guard(consumer);
      done.block(consumer);
      y = x * 1.0;  // must see the 2s: ordered after `done`
    }
    gate.open();
    consumer.synchronize();
    CHECK(done.query());
    CHECK(producer.query());
    CHECK_FALSE(gate.timed_out());
    {
      cuda::StreamGuard guard(consumer);
      CHECK(y.sum().item<float>() == 2.0f * (1 << 16));
    }
  }

  TEST_CASE("events: timing, synchronize, and the errors of unrecorded or untimed events") {
    cuda::Event never;
    CHECK(never.query());
    never.synchronize();  // nothing recorded: returns at once
    cuda::Stream::current(0).wait(never);

    cuda::Event start(true), stop(true);
    start.record();
    Tensor a = ones({512, 512}, TensorOptions(kFloat32).device(cuda0()));
    Tensor b = a.matmul(a);
    stop.record();
    stop.synchronize();
    CHECK(stop.query());
    CHECK(start.elapsed_ms(stop) >= 0.0f);
    CHECK(start.device() == 0);

    cuda::Event untimed;
    untimed.record();
    CHECK_THROWS_WITH_AS(untimed.elapsed_ms(stop), doctest::Contains("enable_timing"), gr::Error);
    cuda::Event unrecorded(true);
    CHECK_THROWS_WITH_AS(start.elapsed_ms(unrecorded), doctest::Contains("recorded"), gr::Error);
  }
}
