// src/schedule/insert_barriers.hpp — layer: schedule. The pass insert_barriers (Triton's Membar
// analysis): where a thread may read memory another thread of the CTA wrote, or write memory
// another thread may still be reading, a CTA `barrier` op; where the tensor-core engine or the
// copy engine reads through another path than the threads' stores, the fence before it. After it
// the lowering emits barriers only as the IR names them, and inside the ops that move elements
// between threads through shared memory (shared_scratch.hpp).
//
// It walks the kernel in program order with what was accessed since the last CTA barrier:
//   shared memory  read (a later write waits: a scratch phase's stores, a local_alloc's),
//                  a buffer written by local_alloc (a tensor-core dot reading buffers waits) and
//                  not yet fenced for an engine that reads shared memory directly (shared_fence
//                  {mma = warpgroup} before that dot; before a loop whose body has such a dot,
//                  where the buffer was written before the loop: fenced once, not every iteration);
//   global memory  the stores, atomics and loads by the kernel argument their pointers derive
//                  from (analysis/pointer_origin.hpp): a load, atomic or copy of bytes a store
//                  may have written waits (a copy by the copy engine after copy_fence), and so
//                  does a store of bytes another thread may have read, unless each thread writes
//                  exactly the elements it read itself (the same pointer tile, one layout, no
//                  element held twice).
// A scratch phase's own barrier (inside the op) resets what was accessed; so does a CTA barrier
// already in the IR (the pipelined loops'). Control flow: a loop body starts as if shared memory
// were read (the previous iteration's reads) and with the loop's global accesses pending, and
// the loop exits with the union of what may be pending on entry and after its regions; after an
// `if`, what either branch may leave.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_insert_barriers();
/// The passes that end the GPU level, in order: allocate_shared, then insert_barriers (its
/// barriers need no bytes; what it reads of shared memory is the ops', not their offsets).
void add_shared_memory_passes(transforms::PassManager& pm);

}  // namespace tile::schedule
