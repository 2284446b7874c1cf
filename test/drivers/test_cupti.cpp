// test/drivers/test_cupti.cpp — the CUPTI activity tracer (src/drivers/cuda/cupti.hpp).
//
// Two halves:
//  - Everywhere: the tracer over a table of fake CUPTI functions. The fake's flush asks the
//    tracer for buffers, writes records into them with the layout CUDA 13's CUPTI uses
//    (CUpti_ActivityKernel10: 216 bytes, the head the tracer reads first; external-correlation
//    records; driver-API records it must skip) and hands them back, on the flushing thread or
//    on a thread of its own as CUPTI does. Checked: the kinds enabled and the fallback to
//    KERNEL, the fields read, the join by correlation id across buffers and flushes in either
//    order, kernels launched outside any push, stale external records, incomplete records,
//    dropped records, push/pop, disable, one recording tracer at a time, and the loader's
//    reasons (missing library, library without CUPTI's symbols, the version window).
//  - With libcupti and a GPU: a tile kernel launched inside a pushed id comes back with that id,
//    end > start and its name. Without them it is reported as skipped, saying why.
// TILE_CUPTI_TEST_NO_TILE builds the first half alone (cupti.cpp and tile::error only).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "drivers/cuda/cupti.hpp"

#ifndef TILE_CUPTI_TEST_NO_TILE
#include <optional>
#include <tile/tile.hpp>

#include "../requires.hpp"
#endif

namespace {

using namespace tile::drivers;
using kernel_record = cupti_tracer::kernel_record;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------------------------
// A fake CUPTI. Records are byte strings laid out as the real ones; each queued buffer is
// written into a buffer the tracer hands out, then completed.
namespace fake {
using namespace tile::drivers::cupti_abi;

using record = std::vector<unsigned char>;
constexpr std::size_t kDriverRecordSize = 40;  // a stand-in for CUpti_ActivityAPI: skipped anyway

// Kept alive here: the tracer copies names while parsing, CUPTI owns them.
const char* const kNames[] = {"tile_add", "tile_matmul", "tile_softmax"};

record kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, const char* name,
              std::uint32_t device = 0, std::uint32_t stream = 7,
              CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
  record r(kKernel10Size, 0xab);  // what follows the head is garbage to the tracer
  kernel_record_head h{};
  h.kind = kind;
  h.start = start;
  h.end = end;
  h.completed = end;
  h.deviceId = device;
  h.contextId = 1;
  h.streamId = stream;
  h.correlationId = correlation;
  h.gridId = 99;
  h.name = name;
  std::memcpy(r.data(), &h, sizeof h);
  return r;
}
record external(std::uint32_t correlation, std::uint64_t id,
                CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  CUpti_ActivityExternalCorrelation e{CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, kind, id, correlation, 0};
  record r(sizeof e);
  std::memcpy(r.data(), &e, sizeof e);
  return r;
}
record driver_call(std::uint32_t correlation) {
  record r(kDriverRecordSize, 0);
  const CUpti_ActivityKind k = CUPTI_ACTIVITY_KIND_DRIVER;
  std::memcpy(r.data(), &k, sizeof k);
  std::memcpy(r.data() + 32, &correlation, sizeof correlation);
  return r;
}
record incomplete() { return record(16, 0); }  // kind INVALID: GetNextRecord says INVALID_KIND

std::size_t record_size(const unsigned char* p) {
  CUpti_ActivityKind k;
  std::memcpy(&k, p, sizeof k);
  switch (k) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return kKernel10Size;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DRIVER: return kDriverRecordSize;
    default: return 16;
  }
}

struct state {
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  std::vector<std::vector<record>> queued;  // buffers the next flush delivers
  std::set<int> enabled;
  std::map<int, CUptiResult> refuse;  // kind -> what cuptiActivityEnable answers
  std::vector<std::uint32_t> flush_flags;
  std::vector<std::uint64_t> stack;  // pushed external ids (one thread)
  std::vector<std::uint64_t> pushed;
  CUptiResult push_result = CUPTI_SUCCESS;
  std::size_t dropped_per_buffer = 0;
  std::size_t buffer_size = 0;  // the last buffer the tracer handed out
  bool buffer_aligned = true;
  int register_calls = 0;
};
state s;

/// Asks the tracer's callback for a buffer, writes `records` into it, hands it back.
void deliver(const std::vector<record>& records) {
  std::uint8_t* buf = nullptr;
  std::size_t size = 0, max_records = 0;
  s.requested(&buf, &size, &max_records);
  REQUIRE(buf != nullptr);
  s.buffer_size = size;
  s.buffer_aligned = s.buffer_aligned && reinterpret_cast<std::uintptr_t>(buf) % 8 == 0;
  std::size_t used = 0;
  for (const record& r : records) {
    REQUIRE(used + r.size() <= size);
    std::memcpy(buf + used, r.data(), r.size());
    used += (r.size() + 7) / 8 * 8;
  }
  s.completed(nullptr, 0, buf, size, used);  // the tracer frees it
}

CUptiResult cuptiGetVersion(std::uint32_t* v) { return *v = 130001, CUPTI_SUCCESS; }
CUptiResult cuptiGetResultString(CUptiResult r, const char** str) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; return CUPTI_SUCCESS;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; return CUPTI_SUCCESS;
    default: *str = nullptr; return CUPTI_ERROR_INVALID_PARAMETER;
  }
}
CUptiResult cuptiGetTimestamp(std::uint64_t* t) { return *t = 123456789, CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) {
  if (auto it = s.refuse.find(k); it != s.refuse.end()) return it->second;
  s.enabled.insert(k);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityDisable(CUpti_ActivityKind k) { return s.enabled.erase(k), CUPTI_SUCCESS; }
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done) {
  ++s.register_calls;
  s.requested = req;
  s.completed = done;
  return req && done ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}
CUptiResult cuptiActivityGetNextRecord(std::uint8_t* buffer, std::size_t valid, CUpti_Activity** rec) {
  std::uint8_t* p = *rec ? reinterpret_cast<std::uint8_t*>(*rec) : buffer;
  if (*rec) p += (record_size(p) + 7) / 8 * 8;
  if (p >= buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  CUpti_ActivityKind k;
  std::memcpy(&k, p, sizeof k);
  if (k == CUPTI_ACTIVITY_KIND_INVALID) return CUPTI_ERROR_INVALID_KIND;
  *rec = reinterpret_cast<CUpti_Activity*>(p);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNumDroppedRecords(tile::drivers::cu::CUcontext, std::uint32_t, std::size_t* dropped) {
  return *dropped = s.dropped_per_buffer, CUPTI_SUCCESS;
}
CUptiResult cuptiActivityFlushAll(std::uint32_t flag) {
  s.flush_flags.push_back(flag);
  auto queued = std::move(s.queued);
  s.queued.clear();
  for (const auto& b : queued) deliver(b);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, std::uint64_t id) {
  if (s.push_result != CUPTI_SUCCESS) return s.push_result;
  if (k != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return CUPTI_ERROR_INVALID_PARAMETER;
  s.stack.push_back(id);
  s.pushed.push_back(id);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind, std::uint64_t* last) {
  if (s.stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last) *last = s.stack.back();
  s.stack.pop_back();
  return CUPTI_SUCCESS;
}

cupti_api table() {
  s = state{};
  cupti_api api;
#define TILE_FAKE_CUPTI(name, params) api.name = &name;
  TILE_CUPTI_API_FUNCTIONS(TILE_FAKE_CUPTI)
#undef TILE_FAKE_CUPTI
  api.path = "fake libcupti";
  api.version = 130001;
  return api;
}
}  // namespace fake

std::unique_ptr<cupti_tracer> fake_tracer(const cupti_api& api) {
  std::string why;
  auto t = cupti_tracer::create(api, &why);
  INFO(why);
  REQUIRE(t);
  return t;
}

}  // namespace

TEST_CASE("cupti: enables concurrent-kernel, external-correlation and driver records, reads a kernel record") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  CHECK(t->enabled());
  CHECK(t->kernel_kind() == cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CHECK(fake::s.enabled == std::set<int>{cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         cupti_abi::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                         cupti_abi::CUPTI_ACTIVITY_KIND_DRIVER});
  CHECK(fake::s.register_calls == 1);

  // One launch as CUPTI reports it: the external record, then the driver call's, the kernel's.
  fake::s.queued = {{fake::external(5, 42), fake::driver_call(5), fake::kernel(5, 1000, 2500, fake::kNames[0], 1, 13)}};
  auto got = t->flush();
  CHECK(fake::s.flush_flags == std::vector<std::uint32_t>{cupti_abi::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED});
  CHECK(fake::s.buffer_size == cupti_tracer::kBufferBytes);
  CHECK(fake::s.buffer_aligned);
  REQUIRE(got.size() == 1);
  CHECK(got[0].external_id == 42);
  CHECK(got[0].start_ns == 1000);
  CHECK(got[0].end_ns == 2500);
  CHECK(got[0].device_id == 1);
  CHECK(got[0].stream_id == 13);
  CHECK(got[0].correlation_id == 5);
  CHECK(got[0].name == "tile_add");
  CHECK(t->flush().empty());  // each record is returned once
  CHECK(t->timestamp() == 123456789);
}

TEST_CASE("cupti: the records of one launch are joined across buffers and flushes, in either order") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);

  SUBCASE("kernel first: it waits one flush for its external record") {
    fake::s.queued = {{fake::kernel(7, 10, 20, fake::kNames[1])}};
    CHECK(t->flush().empty());
    fake::s.queued = {{fake::external(7, 700), fake::driver_call(7)}};
    auto got = t->flush();
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 700);
    CHECK(got[0].name == "tile_matmul");
  }
  SUBCASE("external record first, the kernel some flushes later (a long kernel)") {
    fake::s.queued = {{fake::external(8, 800), fake::driver_call(8)}};
    CHECK(t->flush().empty());
    CHECK(t->flush().empty());
    fake::s.queued = {{fake::kernel(8, 30, 40, fake::kNames[2])}};
    auto got = t->flush();
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 800);
  }
  SUBCASE("two buffers in one flush, kernels returned by start time") {
    fake::s.queued = {{fake::kernel(2, 500, 600, fake::kNames[0]), fake::external(1, 11)},
                      {fake::external(2, 22), fake::kernel(1, 100, 200, fake::kNames[1])}};
    auto got = t->flush();
    REQUIRE(got.size() == 2);
    CHECK(got[0].correlation_id == 1);
    CHECK(got[0].external_id == 11);
    CHECK(got[1].correlation_id == 2);
    CHECK(got[1].external_id == 22);
  }
}

TEST_CASE("cupti: kernels launched outside any push come back with external id 0") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  SUBCASE("one flush later") {
    fake::s.queued = {{fake::driver_call(3), fake::kernel(3, 1, 2, fake::kNames[0])}};
    CHECK(t->flush().empty());
    auto got = t->flush();
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 0);
    CHECK(got[0].correlation_id == 3);
  }
  SUBCASE("at once from the last flush") {
    fake::s.queued = {{fake::driver_call(3), fake::kernel(3, 1, 2, fake::kNames[0]), fake::external(4, 44)}};
    auto got = t->flush(/*last=*/true);
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 0);
    // nothing kept back: the external record of correlation 4 is gone too
    fake::s.queued = {{fake::kernel(4, 5, 6, fake::kNames[1])}};
    CHECK(t->flush().empty());
    got = t->flush();
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 0);
  }
}

TEST_CASE("cupti: other tools' external ids are ignored; unmatched external records are bounded") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  fake::s.queued = {{fake::external(9, 1234, cupti_abi::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1), fake::external(9, 90),
                     fake::kernel(9, 1, 2, fake::kNames[0])}};
  auto got = t->flush();
  REQUIRE(got.size() == 1);
  CHECK(got[0].external_id == 90);

  // Driver calls inside a push that launched nothing (a memcpy) leave external records that no
  // kernel matches: past kMaxPendingExternal of them, the oldest go.
  const auto stray = static_cast<std::uint32_t>(cupti_tracer::kMaxPendingExternal);
  std::vector<fake::record> buf;
  for (std::uint32_t c = 100; c <= 100 + stray; ++c) buf.push_back(fake::external(c, c));  // one too many
  fake::s.queued = {buf};
  for (int i = 0; i < 20; ++i) CHECK(t->flush().empty());  // however many flushes
  fake::s.queued = {{fake::kernel(100, 1, 2, fake::kNames[0]), fake::kernel(101, 3, 4, fake::kNames[1]),
                     fake::kernel(100 + stray, 5, 6, fake::kNames[2])}};
  got = t->flush();
  REQUIRE(got.size() == 2);
  CHECK(got[0].external_id == 101);
  CHECK(got[1].external_id == 100 + stray);
  got = t->flush();
  REQUIRE(got.size() == 1);
  CHECK(got[0].correlation_id == 100);  // the oldest was dropped
  CHECK(got[0].external_id == 0);
}

TEST_CASE("cupti: an incomplete record ends its buffer; records before it are kept; drops are counted") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  fake::s.dropped_per_buffer = 3;
  fake::s.queued = {{fake::external(1, 10), fake::kernel(1, 5, 6, fake::kNames[0]), fake::incomplete(),
                     fake::external(2, 20), fake::kernel(2, 7, 8, fake::kNames[1])},
                    {}};
  auto got = t->flush(true);
  REQUIRE(got.size() == 1);
  CHECK(got[0].external_id == 10);
  CHECK(t->dropped_records() == 6);  // two buffers
}

TEST_CASE("cupti: KERNEL is the fallback where CONCURRENT_KERNEL is refused; refusals give the reason") {
  SUBCASE("fallback") {
    const cupti_api api = fake::table();
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = cupti_abi::CUPTI_ERROR_NOT_SUPPORTED;
    auto t = fake_tracer(api);
    CHECK(t->kernel_kind() == cupti_abi::CUPTI_ACTIVITY_KIND_KERNEL);
    fake::s.queued = {{fake::external(1, 10),
                       fake::kernel(1, 5, 6, fake::kNames[0], 0, 7, cupti_abi::CUPTI_ACTIVITY_KIND_KERNEL)}};
    auto got = t->flush();
    REQUIRE(got.size() == 1);
    CHECK(got[0].external_id == 10);
    t->disable();
    CHECK(fake::s.enabled.empty());
  }
  SUBCASE("insufficient privileges: no fallback, nothing left enabled") {
    const cupti_api api = fake::table();
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = cupti_abi::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    std::string why;
    CHECK_FALSE(cupti_tracer::create(api, &why));
    CHECK(contains(why, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
    CHECK(contains(why, "ERR_NVGPUCTRPERM"));
    CHECK(fake::s.enabled.empty());
  }
  SUBCASE("external correlation refused: the kernel kind is disabled again") {
    const cupti_api api = fake::table();
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION] = cupti_abi::CUPTI_ERROR_NOT_SUPPORTED;
    std::string why;
    CHECK_FALSE(cupti_tracer::create(api, &why));
    CHECK(contains(why, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) failed: CUPTI_ERROR_NOT_SUPPORTED"));
    CHECK(fake::s.enabled.empty());
    // the slot is free again
    fake::s.refuse.clear();
    auto t = fake_tracer(api);
    CHECK(t->enabled());
  }
  SUBCASE("both kernel kinds refused") {
    const cupti_api api = fake::table();
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = cupti_abi::CUPTI_ERROR_NOT_SUPPORTED;
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_KERNEL] = cupti_abi::CUPTI_ERROR_UNKNOWN;
    std::string why;
    CHECK_FALSE(cupti_tracer::create(api, &why));
    CHECK(contains(why, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) failed: CUPTI_ERROR_NOT_SUPPORTED, "
                        "and cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL) failed: CUPTI_ERROR_UNKNOWN (fake libcupti, "
                        "CUPTI API version 130001: no GPU, or an NVIDIA driver older than this CUPTI?"));
    CHECK(fake::s.enabled.empty());
  }
  SUBCASE("an unknown code is named by number") {
    const cupti_api api = fake::table();
    fake::s.refuse[cupti_abi::CUPTI_ACTIVITY_KIND_DRIVER] = 4242;
    std::string why;
    CHECK_FALSE(cupti_tracer::create(api, &why));
    CHECK(contains(why, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) failed: CUptiResult 4242"));
  }
}

TEST_CASE("cupti: one tracer records at a time; disable stops recording and keeps what came in") {
  const cupti_api api = fake::table();
  auto a = fake_tracer(api);
  std::string why;
  CHECK_FALSE(cupti_tracer::create(api, &why));
  CHECK(contains(why, "another CUPTI tracer of this process is recording"));

  fake::s.queued = {{fake::external(1, 10), fake::kernel(1, 5, 6, fake::kNames[0])}};  // still in CUPTI
  a->disable();
  CHECK_FALSE(a->enabled());
  CHECK(fake::s.enabled.empty());
  CHECK(fake::s.flush_flags == std::vector<std::uint32_t>{cupti_abi::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED});
  // a buffer CUPTI completes after disable reaches no tracer (and is freed)
  fake::deliver({fake::external(2, 20), fake::kernel(2, 7, 8, fake::kNames[0])});
  auto got = a->flush();
  REQUIRE(got.size() == 1);
  CHECK(got[0].external_id == 10);

  auto b = fake_tracer(api);  // the slot is free
  b.reset();                  // the destructor disables
  CHECK(fake::s.enabled.empty());
  auto c = fake_tracer(api);
  CHECK(c->enabled());
}

TEST_CASE("cupti: push and pop reach CUPTI as CUSTOM0; an unbalanced pop is ignored; a refused push throws") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  t->push_external_id(1);
  t->push_external_id(2);
  CHECK(fake::s.stack == std::vector<std::uint64_t>{1, 2});
  t->pop_external_id();
  t->pop_external_id();
  CHECK(fake::s.stack.empty());
  t->pop_external_id();  // QUEUE_EMPTY, ignored
  fake::s.push_result = cupti_abi::CUPTI_ERROR_NOT_SUPPORTED;
  CHECK_THROWS_WITH_AS(t->push_external_id(3), doctest::Contains("cuptiActivityPushExternalCorrelationId failed: CUPTI_ERROR_NOT_SUPPORTED"),
                       tile::error);
}

TEST_CASE("cupti: buffers completed on CUPTI's own thread while flushes run") {
  const cupti_api api = fake::table();
  auto t = fake_tracer(api);
  constexpr std::uint32_t kLaunches = 2000;
  std::atomic<bool> done{false};
  // "CUPTI's thread": each buffer holds 8 launches, external and kernel records split between
  // consecutive buffers so that many joins cross a buffer boundary.
  std::thread cupti([&] {
    std::vector<fake::record> buf;
    for (std::uint32_t c = 1; c <= kLaunches; ++c) {
      buf.push_back(fake::external(c, 100000 + c));
      if (c > 1) buf.push_back(fake::kernel(c - 1, c - 1, c, fake::kNames[c % 3]));
      if (buf.size() >= 16) fake::deliver(std::exchange(buf, {}));
    }
    buf.push_back(fake::kernel(kLaunches, kLaunches, kLaunches + 1, fake::kNames[0]));
    fake::deliver(buf);
    done = true;
  });
  std::vector<kernel_record> all;
  while (!done) {
    auto got = t->flush();
    all.insert(all.end(), got.begin(), got.end());
  }
  cupti.join();
  for (int i = 0; i < 2; ++i) {
    auto got = t->flush();
    all.insert(all.end(), got.begin(), got.end());
  }
  REQUIRE(all.size() == kLaunches);
  std::set<std::uint32_t> seen;
  for (const auto& r : all) {
    CHECK(r.external_id == 100000 + r.correlation_id);
    seen.insert(r.correlation_id);
  }
  CHECK(seen.size() == kLaunches);
}

TEST_CASE("cupti: the loader's reasons, the search order, the version window") {
  std::string why;
  CHECK_FALSE(cupti_api::load("libtile_no_such_cupti.so", why));
  CHECK(contains(why, "libtile_no_such_cupti.so"));
  CHECK_FALSE(cupti_api::load("libc.so.6", why));
  CHECK(contains(why, "libc.so.6 is not a usable libcupti: missing cuptiGetVersion"));
  CHECK_FALSE(cupti_api::load("libtile_no_such_cupti.so", why, /*noload=*/true));
  CHECK(contains(why, "is not loaded"));

  const char* old = std::getenv("TILE_CUPTI");
  const std::string saved = old ? old : "";
  ::setenv("TILE_CUPTI", "/nowhere/libcupti.so.13", 1);
  CHECK(cupti_api::candidates() == std::vector<std::string>{"/nowhere/libcupti.so.13"});
  CHECK_FALSE(cupti_api::find(why));
  CHECK(contains(why, "TILE_CUPTI: /nowhere/libcupti.so.13"));
  ::unsetenv("TILE_CUPTI");
  const auto c = cupti_api::candidates();
  REQUIRE(c.size() >= 6);
  CHECK(c[0] == "noload:libcupti.so.13");
  CHECK(c[3] == "libcupti.so");
  CHECK(c[4] == "libcupti.so.13");
  CHECK(c[5] == "libcupti.so.12");
  if (old) ::setenv("TILE_CUPTI", saved.c_str(), 1);

  // Whatever libcupti this machine has is inside the window, or refused with the reason.
  std::string found_why;
  if (auto api = cupti_api::find(found_why)) {
    MESSAGE("libcupti: " << api->path << ", CUPTI API version " << api->version);
    CHECK(api->version >= cupti_abi::kMinCuptiVersion);
    CHECK(api->version <= cupti_abi::kMaxCuptiVersion);
  } else {
    MESSAGE("no libcupti here: " << found_why);
  }
}

#ifndef TILE_CUPTI_TEST_NO_TILE
namespace {
using namespace tile::literals;
auto cupti_probe = tile::kernel("cupti_probe", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(y + offs, tl::load(x + offs, offs < n) + 1.0f, offs < n);
});
}  // namespace

/// A CUDA device and CUPTI tracing on it (the tracer is opened to ask, and stopped again).
constexpr tiletest::needs needs_cupti{"needs a CUDA device and CUPTI", []() -> std::string {
  if (std::string why = tiletest::backend_missing("cuda"); !why.empty()) return why;
  std::string why;
  cupti_tracer* t = cupti_tracer::open(&why);
  if (!t) return "no CUPTI tracing here: " + why;
  t->disable();
  return "";
}};

TEST_CASE("cupti (GPU): a kernel launched inside a pushed id comes back with it" * needs_cupti) {
  std::optional<tile::device> dev = tile::device::get("cuda");
  const int n = 1 << 20;
  std::vector<float> h(n, 1.0f);
  auto x = dev->upload(h);
  auto y = dev->alloc<float>(n);
  cupti_probe[{n / 1024}](x, y, n, "BLOCK"_c = 1024);  // compiled and loaded before tracing
  dev->synchronize();

  std::string why;
  cupti_tracer* t = cupti_tracer::open(&why);
  REQUIRE_MESSAGE(t, "no CUPTI tracing: " << why);
  MESSAGE("libcupti: " << t->api().path << ", CUPTI API version " << t->api().version);
  (void)t->flush(true);  // whatever ran before
  const std::uint64_t before = t->timestamp();
  constexpr std::uint64_t kId = 0x7111e0000042;
  t->push_external_id(kId);
  cupti_probe[{n / 1024}](x, y, n, "BLOCK"_c = 1024);
  t->pop_external_id();
  cupti_probe[{n / 1024}](x, y, n, "BLOCK"_c = 1024);  // outside the push
  dev->synchronize();

  // The pushed launch is matched by the first flush after a synchronize; the other one comes
  // back with id 0, at the latest from the last flush.
  int tagged = 0, untagged = 0;
  for (bool last : {false, true})
    for (const auto& r : t->flush(last)) {
      INFO("kernel " << r.name << " id " << r.external_id << " [" << r.start_ns << ", " << r.end_ns << "]");
      if (!contains(r.name, "cupti_probe")) continue;
      if (r.external_id == kId) {
        CHECK_FALSE(last);
        ++tagged;
        CHECK(r.end_ns > r.start_ns);
        CHECK(r.start_ns >= before);
      } else {
        CHECK(r.external_id == 0);
        ++untagged;
      }
    }
  CHECK(tagged == 1);
  CHECK(untagged == 1);
  t->disable();
  CHECK_FALSE(t->enabled());
  CHECK(cupti_tracer::open(&why) == t);  // enabled again
  CHECK(t->enabled());
  t->disable();
}
#endif
