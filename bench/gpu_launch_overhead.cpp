// bench/gpu_launch_overhead.cpp — what a launch costs the host on the cuda backend: an already
// compiled tiny kernel (grid 1, a 128-element tile), launched many times in a row with no
// synchronization inside a batch, timed with the host's steady clock; µs per launch, for
//   tile              k[{1}](args…, "BLOCK"_c = 128), the same arguments each time (a loop, an
//                     engine's frame): the typed launch finds them equal to the last launch's and
//                     reuses its specialization (the driver's packing, cuLaunchKernel)
//   tile, args change the same launch alternating between two sets of buffers of the same
//                     specialization: every launch goes the whole way (argument checks, the
//                     specialization key and its lookup)
//   driver            cuda_driver::launch of the same module with prepared arguments (the
//                     driver's share: packing, cuCtxSetCurrent, cuLaunchKernel)
//   cuLaunchKernel    the raw driver API call on the very CUfunction tile launches (read from
//                     the compiled module: src/runtime/kernel_access.hpp), parameters prepared once
// for kernels of 1, 4 and 12 runtime arguments (and one meta-parameter). Each provider runs 100
// batches of 256 launches (25,600 launches), interleaved with the others batch by batch, the
// device synchronized before each batch (untimed; a batch is too short to fill the launch
// queue); the value is the median over batches of batch time / 256. The target: tile <= 1.1x the
// raw cuLaunchKernel, as the median over rounds of tile's batch / the raw batch of the same round.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "gpu.hpp"

using namespace tile::literals;

auto k1 = tile::kernel("launch1", [](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  tl::store(out + offs, tl::cast<float>(offs));
});
auto k4 = tile::kernel("launch4", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                     tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});
auto k12 = tile::kernel("launch12", [](tl::ptr<float> out, tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> c,
                                       tl::ptr<float> d, tl::ptr<float> e, tl::ptr<float> f, tl::ptr<float> g,
                                       tl::i32 n, tl::i32 i, tl::i32 j, tl::i32 k, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto mask = offs < n;
  auto s = tl::load(a + offs, mask) + tl::load(b + offs, mask) + tl::load(c + offs, mask) + tl::load(d + offs, mask) +
           tl::load(e + offs, mask) + tl::load(f + offs, mask) + tl::load(g + offs, mask);
  tl::store(out + offs, s + tl::cast<float>(i + j + k), mask);
});

namespace {

constexpr int kBatch = 256, kBatches = 100, kBlock = 128;
using clock_type = std::chrono::steady_clock;

/// One way of launching one kernel: `launch` issues a launch; the batches' µs per launch.
struct provider {
  std::string name;
  std::function<void()> launch;
  std::vector<double> us_per_launch;
};

/// The three ways for one kernel: tile's launch, and the driver and the raw call on its module.
struct kernel_case {
  int args = 0;
  std::function<void()> tile_launch;
  std::function<void()> tile_changing;  // alternating between two argument sets
  std::shared_ptr<const tile::drivers::module> mod;       // what tile launches
  std::vector<tile::drivers::kernel_arg> driver_args;     // the same arguments, for the driver
  std::vector<std::uint64_t> slots;                       // and packed for cuLaunchKernel
  std::vector<void*> params;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

tile::drivers::kernel_arg ptr_arg(const tile::buffer<float>& b) {
  tile::drivers::kernel_arg a;
  a.k = tile::drivers::kernel_arg::kind::pointer;
  a.t = tile::dtype::f32;
  a.addr = b.address();
  a.extent_bytes = b.bytes();
  return a;
}
tile::drivers::kernel_arg int_arg(std::int32_t v) {
  tile::drivers::kernel_arg a;
  a.k = tile::drivers::kernel_arg::kind::integer;
  a.t = tile::dtype::i32;
  a.i = v;
  return a;
}

}  // namespace

int main() {
  auto dev = bench::gpu::cuda_device("gpu_launch_overhead");
  if (!dev) return 0;
  auto& drv = bench::gpu::driver(*dev);
  std::vector<tile::buffer<float>> bufs, alt;
  for (int i = 0; i < 8; ++i) bufs.push_back(dev->alloc<float>(kBlock)), alt.push_back(dev->alloc<float>(kBlock));
  const auto& o = bufs[0];
  bool flip = false;
  auto set = [&]() -> const std::vector<tile::buffer<float>>& { return (flip = !flip) ? alt : bufs; };
  const int n = kBlock;

  // Each kernel: its typed launch, and the module that launch compiled (the same specialization:
  // the checks below make sure no second one was traced).
  std::vector<kernel_case> cases(3);
  cases[0].args = 1;
  cases[0].tile_launch = [&] { k1[{1}](o, "BLOCK"_c = kBlock); };
  cases[1].args = 4;
  cases[1].tile_launch = [&] { k4[{1}](bufs[1], bufs[2], o, n, "BLOCK"_c = kBlock); };
  cases[2].args = 12;
  cases[2].tile_launch = [&] {
    k12[{1}](o, bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7], n, 1, 2, 3, "BLOCK"_c = kBlock);
  };
  cases[0].tile_changing = [&] { k1[{1}](set()[0], "BLOCK"_c = kBlock); };
  cases[1].tile_changing = [&] {
    const auto& b = set();
    k4[{1}](b[1], b[2], b[0], n, "BLOCK"_c = kBlock);
  };
  cases[2].tile_changing = [&] {
    const auto& b = set();
    k12[{1}](b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], n, 1, 2, 3, "BLOCK"_c = kBlock);
  };
  const std::vector<tile::named> metas = {{"BLOCK", kBlock}};
  cases[0].mod = tile::detail::compiled_module(k1, {o}, metas);
  cases[0].driver_args = {ptr_arg(o)};
  cases[1].mod = tile::detail::compiled_module(k4, {bufs[1], bufs[2], o, n}, metas);
  cases[1].driver_args = {ptr_arg(bufs[1]), ptr_arg(bufs[2]), ptr_arg(o), int_arg(n)};
  cases[2].mod = tile::detail::compiled_module(
      k12, {o, bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7], n, 1, 2, 3}, metas);
  cases[2].driver_args = {ptr_arg(o)};
  for (int i = 1; i < 8; ++i) cases[2].driver_args.push_back(ptr_arg(bufs[i]));
  for (int v : {n, 1, 2, 3}) cases[2].driver_args.push_back(int_arg(v));
  for (auto& c : cases) {  // cuLaunchKernel's parameters: one 8-byte slot per argument
    for (auto& a : c.driver_args)
      c.slots.push_back(a.k == tile::drivers::kernel_arg::kind::pointer ? a.addr : std::uint64_t(std::uint32_t(a.i)));
    for (auto& s : c.slots) c.params.push_back(&s);
  }
  const std::size_t traces_before = k1.core().traces() + k4.core().traces() + k12.core().traces();

  tile::drivers::launch_config cfg;  // grid 1, no name (the driver's messages use the module's)
  const auto& api = drv.api();
  auto results = std::map<int, std::vector<provider>>{};
  for (auto& c : cases) {
    const auto* cm = dynamic_cast<const tile::drivers::cuda_module*>(c.mod.get());
    if (!cm) {
      std::fprintf(stderr, "gpu_launch_overhead: the compiled kernel is not a cuda_module\n");
      return 1;
    }
    const unsigned threads = 32u * unsigned(cm->num_warps);
    auto raw = [&c, cm, threads, &api, &drv] {
      api.cuLaunchKernel(cm->fn, 1, 1, 1, threads, 1, 1, cm->shared_bytes,
                         static_cast<tile::drivers::cu::CUstream>(drv.stream()), c.params.data(), nullptr);
    };
    {  // the raw call must work before it is timed
      const auto rc = api.cuLaunchKernel(cm->fn, 1, 1, 1, threads, 1, 1, cm->shared_bytes,
                                         static_cast<tile::drivers::cu::CUstream>(drv.stream()), c.params.data(), nullptr);
      if (rc != tile::drivers::cu::CUDA_SUCCESS) {
        std::fprintf(stderr, "gpu_launch_overhead: cuLaunchKernel: %s\n",
                     tile::drivers::describe_cuda_result(api, rc).c_str());
        return 1;
      }
      drv.synchronize();
    }
    auto via_driver = [&c, &drv, &cfg] { drv.launch(*c.mod, cfg, c.driver_args); };
    std::vector<provider> ps = {{"tile", c.tile_launch, {}},
                                {"tile, args change", c.tile_changing, {}},
                                {"driver", via_driver, {}},
                                {"cuLaunchKernel", raw, {}}};
    for (auto& p : ps)  // warm-up: 4 batches each
      for (int i = 0; i < 4 * kBatch; ++i) p.launch();
    drv.synchronize();
    for (int b = 0; b < kBatches; ++b)
      for (auto& p : ps) {
        drv.synchronize();
        const auto t0 = clock_type::now();
        for (int i = 0; i < kBatch; ++i) p.launch();
        const auto t1 = clock_type::now();
        p.us_per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kBatch);
      }
    drv.synchronize();
    results[c.args] = std::move(ps);
  }
  const std::size_t traces_after = k1.core().traces() + k4.core().traces() + k12.core().traces();

  auto b = bench::sweep("gpu-launch-overhead", "runtime args", {1, 4, 12},
                        {"tile", "tile, args change", "driver", "cuLaunchKernel"},
                        {"tile", "cuLaunchKernel", "driver"}, "us per launch", false);
  auto r = tile::testing::run(b, [&](double x, const std::string& name) {
    for (auto& p : results[int(x)])
      if (p.name == name) return median(p.us_per_launch);
    return double(NAN);
  });
  std::printf("µs per launch: medians over %d batches of %d launches (grid 1, BLOCK = %d, num_warps 4), the host's "
              "steady clock, no synchronization inside a batch\n", kBatches, kBatch, kBlock);
  if (traces_after != traces_before)
    std::printf("warning: tile traced %zu more specializations while timing: its launches did not use the module "
                "the raw launch used\n", traces_after - traces_before);
  // The target compares paired batches: each tile batch with the raw batch of the same round
  // (the host's speed drifts within a run by more than the difference measured), the median of
  // those ratios, with its interquartile range.
  auto paired = [&](int args, const std::string& name) {
    const auto& ps = results[args];
    const provider* mine = nullptr;
    const provider* raw = nullptr;
    for (auto& p : ps) {
      if (p.name == name) mine = &p;
      if (p.name == "cuLaunchKernel") raw = &p;
    }
    std::vector<double> q;
    for (std::size_t i = 0; i < mine->us_per_launch.size() && i < raw->us_per_launch.size(); ++i)
      q.push_back(mine->us_per_launch[i] / raw->us_per_launch[i]);
    std::sort(q.begin(), q.end());
    return std::array<double, 3>{median(q), q[q.size() / 4], q[(3 * q.size()) / 4]};
  };
  double worst = 0, worst_changing = 0;
  std::printf("paired (each batch / the raw batch of its round; median, interquartile range):\n");
  for (int args : {1, 4, 12}) {
    const auto t = paired(args, "tile"), c = paired(args, "tile, args change");
    std::printf("  %2d args: tile %.3f (%.3f-%.3f), args change %.3f (%.3f-%.3f)\n", args, t[0], t[1], t[2], c[0], c[1],
                c[2]);
    worst = std::max(worst, t[0]);
    worst_changing = std::max(worst_changing, c[0]);
  }
  std::printf("target: tile <= 1.1x the raw cuLaunchKernel of the same function (paired): worst %.3fx, %s (arguments "
              "changing at every launch: worst %.3fx)\n",
              worst, worst <= 1.1 ? "met" : "MISSED", worst_changing);
  return 0;
}
