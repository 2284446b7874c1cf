// tile/tile.hpp — the umbrella header: every public facility. `tl::` is what runs inside a
// kernel; `tile::` is the host side: kernels (launched positionally or from a parameter struct
// adapted with Boost.Hana: tile/runtime/params.hpp), devices and buffers, the autotuner
// (tile::autotune), the profiler (tile::prof) and benchmarking (tile::testing: do_bench and
// perf_report-style sweeps). Each header under tile/ also compiles on its own, for a translation
// unit that wants less.
#pragma once

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"
#include "tile/runtime/aot.hpp"
#include "tile/runtime/autotune.hpp"
#include "tile/runtime/device.hpp"
#include "tile/runtime/kernel.hpp"
#include "tile/runtime/params.hpp"
#include "tile/runtime/prof.hpp"
#include "tile/runtime/testing.hpp"
#include "tile/tl/control.hpp"
#include "tile/tl/creation.hpp"
#include "tile/tl/debug.hpp"
#include "tile/tl/descriptor.hpp"
#include "tile/tl/dot.hpp"
#include "tile/tl/math.hpp"
#include "tile/tl/memory.hpp"
#include "tile/tl/random.hpp"
#include "tile/tl/reduce.hpp"
#include "tile/tl/shape.hpp"
#include "tile/tl/tensor.hpp"
#include "tile/tl/types.hpp"
