// src/ir/hash.cpp — layer: ir. The structural hash of a kernel: the IR part of every compile
// cache key.
//
// What counts: the function's name, its arguments' types and ArgInfo (name, divisibility, noalias, nonneg), and
// for every op in order its kind, operands (as value numbers, numbered like the printer does),
// result types (at the GPU level with their layouts' bases and buffer arrangements, each
// flagged present or not), attrs (ints, the bits of f, str) and regions (argument types, then
// ops); at the GPU level also num_warps and num_stages. What does
// not: source locations, so one kernel traced from two call sites hashes equal.
// failure_location_hash adds them back for the ops whose location compiled code may embed.
//
// The byte stream is hashed with 64-bit FNV-1a and finished with the murmur3 fmix64 avalanche,
// so that nearby inputs spread over all 64 bits. Every variable-length list is prefixed by its
// length, so distinct structures cannot produce the same stream.
#include <bit>
#include <unordered_map>

#include "ir/ir.hpp"

namespace tile::ir {

namespace {

class Hasher {
 public:
  void bytes(const void* p, std::size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= b[i];
      h_ *= 0x100000001b3ull;
    }
  }
  void u64(std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));  // endian-independent
    bytes(b, 8);
  }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void type(const Type& t) {
    u64(static_cast<std::uint64_t>(t.elem));
    u64(t.ptr);
    u64(t.shape.size());
    for (auto e : t.shape) u64(static_cast<std::uint64_t>(e));
    u64(static_cast<std::uint64_t>(t.mem) | (t.token ? 0x100u : 0u));  // (none: tiles and scalars in registers)
    u64(t.layout ? 1 : 0);
    if (t.layout)  // the GPU level
      for (const auto* bases : {&t.layout->reg, &t.layout->lane, &t.layout->warp}) {
        u64(bases->size());
        for (const auto& b : *bases)
          for (auto c : b) u64(static_cast<std::uint64_t>(c));
      }
  }
  std::uint64_t finish() const {
    std::uint64_t k = h_;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

class StructuralHash {
 public:
  std::uint64_t run(const Function& f) {
    h_.str("kernel");
    h_.str(f.name);
    h_.u64(f.arg_info.size());
    for (auto& a : f.arg_info) {
      h_.str(a.name);
      h_.u64(static_cast<std::uint64_t>(a.divisibility));
      h_.u64(a.noalias ? 1 : 0);
      h_.u64(a.nonneg ? 1 : 0);
      h_.u64(a.positive ? 1 : 0);
    }
    if (f.gpu) {
      h_.str("gpu");
      h_.u64(static_cast<std::uint64_t>(f.num_warps));
      h_.u64(static_cast<std::uint64_t>(f.num_stages));
    }
    block(f.body);
    return h_.finish();
  }

 private:
  Hasher h_;
  std::unordered_map<const Value*, std::uint64_t> ids_;

  void define(const Value* v) { ids_.emplace(v, ids_.size()); }
  void use(const Value* v) {
    auto it = ids_.find(v);
    // An operand defined nowhere in the function (malformed IR) hashes as one marker value.
    h_.u64(it == ids_.end() ? ~std::uint64_t{0} : it->second);
  }

  void block(const Block& b) {
    h_.u64(b.args.size());
    for (auto& a : b.args) {
      define(a.get());
      h_.type(a->type);
    }
    h_.u64(b.ops.size());
    for (auto& op : b.ops) this->op(*op);
  }

  void op(const Op& op) {
    h_.u64(static_cast<std::uint64_t>(op.kind));
    h_.u64(op.operands.size());
    for (auto* o : op.operands) use(o);
    h_.u64(op.results.size());
    for (auto& r : op.results) {
      define(r.get());
      h_.type(r->type);
    }
    h_.u64(op.attrs.ints.size());
    for (auto i : op.attrs.ints) h_.u64(static_cast<std::uint64_t>(i));
    h_.u64(std::bit_cast<std::uint64_t>(op.attrs.f));
    h_.str(op.attrs.str);
    h_.u64(op.regions.size());
    for (auto& r : op.regions) block(*r);
  }
};

void failure_locations(const Block& b, Hasher& h) {
  for (auto& op : b.ops) {
    if (op->kind == OpKind::assert_ || op->kind == OpKind::for_) {
      h.str(op->loc.file ? op->loc.file : "");
      h.u64(op->loc.line);
      h.u64(op->loc.column);
    }
    for (auto& r : op->regions) failure_locations(*r, h);
  }
}

}  // namespace

std::uint64_t structural_hash(const Function& f) { return StructuralHash().run(f); }

std::uint64_t failure_location_hash(const Function& f) {
  Hasher h;
  h.str("failure locations");
  failure_locations(f.body, h);
  return h.finish();
}

}  // namespace tile::ir
