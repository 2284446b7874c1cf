// src/frontend/ops_memory.cpp — layer: frontend. Loads, stores, atomics, device_print and
// device_assert: pointer/mask/value checks and broadcasting.
#include "frontend/trace.hpp"
#include "transforms/lower_descriptor_loads.hpp"

namespace tile::detail {

using frontend::create1;
using frontend::Trace;
using frontend::V;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
Value* mask_value(const operand_data& m, const std::vector<std::int64_t>& shape, const char* op, src_loc loc) {
  Type i1{dtype::i1, false, {}};
  Value* v = frontend::materialize(m, &i1, loc);
  if (v->type.ptr || v->type.elem != dtype::i1)
    Trace::current(loc).fail(std::string(op) + ": the mask must be a boolean (i1) tile, got " + v->type.str() +
                                 " (compare, e.g. offs < n)", loc);
  return frontend::broadcast(v, shape, loc);
}

/// The value stored or combined through `p`: a literal takes the pointee's dtype; a tile must
/// already have it (no silent narrowing), and broadcasts to the pointers' shape.
Value* stored_value(const operand_data& val, Value* p, const char* op, src_loc loc) {
  Type pointee{p->type.elem, false, {}};
  Value* v = frontend::materialize(val, &pointee, loc);
  if (v->type.ptr)
    Trace::current(loc).fail(std::string(op) + ": cannot store pointers (" + v->type.str() + ")", loc);
  if (v->type.elem != p->type.elem)
    Trace::current(loc).fail(std::string(op) + ": value of type " + v->type.str() + " stored through " +
                                 p->type.str() + "; convert it explicitly first (tl::cast<" +
                                 std::string(name(p->type.elem)) + ">(x))", loc);
  if (v->type.shape.size() > p->type.shape.size() && !p->type.shape.empty())
    Trace::current(loc).fail(std::string(op) + ": value " + frontend::shape_str(v->type.shape) +
                                 " has more axes than the pointers " + frontend::shape_str(p->type.shape), loc);
  auto shape = frontend::broadcast_shapes(p->type.shape, v->type.shape, loc, op);
  if (shape != p->type.shape)
    Trace::current(loc).fail(std::string(op) + ": value of shape " + frontend::shape_str(v->type.shape) +
                                 " does not fit pointers of shape " + frontend::shape_str(p->type.shape), loc);
  return frontend::broadcast(v, shape, loc);
}
}  // namespace

node* load(const operand_data& ptr, const operand_data& mask, const operand_data& other,
           cache_mod cache, eviction evict, bool is_volatile, src_loc loc) {
  Value* p = frontend::require_pointer(ptr, "tl::load", loc);
  if (other.present() && !mask.present())
    Trace::current(loc).fail("tl::load: `other` needs a `mask` (it is the value of masked-off lanes)", loc);
  std::vector<Value*> ops{p};
  if (mask.present()) {
    Type i1{dtype::i1, false, {}};
    Value* m = frontend::materialize(mask, &i1, loc);
    auto shape = frontend::broadcast_shapes(p->type.shape, m->type.shape, loc, "tl::load (pointers and mask)");
    p = frontend::broadcast(p, shape, loc);
    ops = {p, mask_value(mask, shape, "tl::load", loc)};
    if (other.present()) {
      Type pointee{p->type.elem, false, {}};
      Value* o = frontend::materialize(other, &pointee, loc);
      if (o->type.ptr) Trace::current(loc).fail("tl::load: `other` cannot be a pointer", loc);
      o = frontend::convert(o, p->type.elem, loc);
      auto s2 = frontend::broadcast_shapes(shape, o->type.shape, loc, "tl::load (other)");
      if (s2 != shape)
        Trace::current(loc).fail("tl::load: `other` of shape " + frontend::shape_str(o->type.shape) +
                                     " does not fit pointers of shape " + frontend::shape_str(shape), loc);
      ops.push_back(frontend::broadcast(o, shape, loc));
    }
  }
  ir::Attrs a;
  a.ints = {mask.present(), other.present(), static_cast<std::int64_t>(cache),
            static_cast<std::int64_t>(evict), is_volatile};
  return create1(OpKind::load, ops, Type{p->type.elem, false, p->type.shape}, loc, a);
}

void store(const operand_data& ptr, const operand_data& value, const operand_data& mask,
           cache_mod cache, eviction evict, src_loc loc) {
  Value* p = frontend::require_pointer(ptr, "tl::store", loc);
  Value* v = stored_value(value, p, "tl::store", loc);
  std::vector<Value*> ops{p, v};
  if (mask.present()) {
    Type i1{dtype::i1, false, {}};
    Value* m = frontend::materialize(mask, &i1, loc);
    auto shape = frontend::broadcast_shapes(p->type.shape, m->type.shape, loc, "tl::store (pointers and mask)");
    if (shape != p->type.shape) {
      p = frontend::broadcast(p, shape, loc);
      v = frontend::broadcast(v, shape, loc);
    }
    ops = {p, v, mask_value(mask, shape, "tl::store", loc)};
  }
  ir::Attrs a;
  a.ints = {mask.present(), static_cast<std::int64_t>(cache), static_cast<std::int64_t>(evict)};
  Trace::current(loc).builder().create(OpKind::store, ops, {}, a, loc);
}

node* atomic_rmw(atomic_kind k, const operand_data& ptr, const operand_data& value,
                 const operand_data& mask, src_loc loc) {
  static const char* names[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_xchg",
                                "atomic_and", "atomic_or", "atomic_xor"};
  const char* op = names[static_cast<int>(k)];
  Value* p = frontend::require_pointer(ptr, op, loc);
  dtype t = p->type.elem;
  bool bitwise = k == atomic_kind::bit_and || k == atomic_kind::bit_or || k == atomic_kind::bit_xor;
  bool ok = t == dtype::i32 || t == dtype::u32 || t == dtype::i64 || t == dtype::u64 ||
            (!bitwise && (t == dtype::f32 || t == dtype::f64)) || (k == atomic_kind::add && t == dtype::f16);
  if (!ok)
    Trace::current(loc).fail(std::string(op) + " is not supported on " + p->type.str() +
                                 " (32/64-bit integers" + (bitwise ? "" : ", f32, f64") +
                                 (k == atomic_kind::add ? ", f16" : "") + ")", loc);
  Value* v = stored_value(value, p, op, loc);
  std::vector<Value*> ops{p, v};
  if (mask.present()) ops.push_back(mask_value(mask, p->type.shape, op, loc));
  ir::Attrs a;
  a.ints = {static_cast<std::int64_t>(k), mask.present()};
  return create1(OpKind::atomic_rmw, ops, Type{t, false, p->type.shape}, loc, a);
}

node* atomic_cas(const operand_data& ptr, const operand_data& cmp, const operand_data& value, src_loc loc) {
  Value* p = frontend::require_pointer(ptr, "atomic_cas", loc);
  dtype t = p->type.elem;
  if (!(t == dtype::i32 || t == dtype::u32 || t == dtype::i64 || t == dtype::u64 || t == dtype::f32 ||
        t == dtype::f64))
    Trace::current(loc).fail("atomic_cas is not supported on " + p->type.str(), loc);
  Value* c = stored_value(cmp, p, "atomic_cas", loc);
  Value* v = stored_value(value, p, "atomic_cas", loc);
  return create1(OpKind::atomic_cas, {p, c, v}, Type{t, false, p->type.shape}, loc);
}

void device_print(const std::string& prefix, std::span<node* const> values, bool hex, src_loc loc) {
  std::vector<Value*> ops;
  for (node* n : values) {
    if (!n) Trace::current(loc).fail("device_print: print tensors, not literals (put literals in the prefix)", loc);
    ops.push_back(V(n));
  }
  ir::Attrs a;
  a.str = prefix;
  a.ints = {hex};
  Trace::current(loc).builder().create(OpKind::print, ops, {}, a, loc);
}

void device_assert(const operand_data& cond, const std::string& message, src_loc loc) {
  Value* c = frontend::to_bool(frontend::materialize(cond, nullptr, loc), loc);
  ir::Attrs a;
  a.str = message.empty() ? std::string("assertion failed") : message;
  Trace::current(loc).builder().create(OpKind::assert_, {c}, {}, a, loc);
}

}  // namespace tile::detail

// ---- tensor descriptors ---------------------------------------------------------------------

namespace tile::detail {
namespace {
struct DescParts {
  Value* base = nullptr;
  std::vector<Value*> shape, strides;
};

Value* desc_int(const operand_data& o, const char* what, std::size_t axis, src_loc loc) {
  Type i32{dtype::i32, false, {}};
  Value* v = frontend::materialize(o, &i32, loc);
  if (v->type.ptr || !v->type.is_scalar() || !v->type.is_int() || v->type.elem == dtype::i1)
    Trace::current(loc).fail(std::string("tensor descriptor: ") + what + " of axis " + std::to_string(axis) +
                                 " must be an integer scalar, got " + v->type.str(), loc);
  return v;
}

DescParts desc_parts(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                     std::span<const std::int64_t> block, src_loc loc) {
  const std::size_t r = block.size();
  if (r < 1 || r > 5)
    Trace::current(loc).fail("tensor descriptor: the block must have 1 to 5 axes, got " + std::to_string(r), loc);
  if (shape.size() != r || strides.size() != r)
    Trace::current(loc).fail("tensor descriptor: " + std::to_string(shape.size()) + " extents and " + std::to_string(strides.size()) +
                                 " strides for a block of " + std::to_string(r) + " axes (one of each per axis)", loc);
  frontend::check_shape({block.begin(), block.end()}, loc, "tensor descriptor block");
  DescParts p;
  p.base = frontend::require_pointer(base, "tl::make_tensor_descriptor", loc);
  if (!p.base->type.is_scalar())
    Trace::current(loc).fail("tl::make_tensor_descriptor: the base must be one pointer, got " + p.base->type.str(), loc);
  for (std::size_t d = 0; d < r; ++d) {
    p.shape.push_back(desc_int(shape[d], "the extent", d, loc));
    p.strides.push_back(desc_int(strides[d], "the stride", d, loc));
  }
  return p;
}

std::vector<Value*> desc_offsets(std::span<const operand_data> offsets, std::size_t r, const char* op, src_loc loc) {
  if (offsets.size() != r)
    Trace::current(loc).fail(std::string(op) + ": " + std::to_string(offsets.size()) + " offsets for a descriptor of " +
                                 std::to_string(r) + " axes", loc);
  std::vector<Value*> out;
  for (std::size_t d = 0; d < r; ++d) out.push_back(desc_int(offsets[d], "the offset", d, loc));
  return out;
}
}  // namespace

void desc_check(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const std::int64_t> block, src_loc loc) {
  (void)desc_parts(base, shape, strides, block, loc);
}

node* desc_load(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const operand_data> offsets, std::span<const std::int64_t> block, src_loc loc) {
  DescParts p = desc_parts(base, shape, strides, block, loc);
  std::vector<Value*> ops{p.base};
  ops.insert(ops.end(), p.shape.begin(), p.shape.end());
  ops.insert(ops.end(), p.strides.begin(), p.strides.end());
  for (Value* o : desc_offsets(offsets, block.size(), "tensor_descriptor::load", loc)) ops.push_back(o);
  ir::Attrs a;
  a.ints.assign(block.begin(), block.end());
  return create1(OpKind::desc_load, ops, Type{p.base->type.elem, false, a.ints}, loc, a);
}

void desc_store(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const operand_data> offsets, std::span<const std::int64_t> block, const operand_data& value,
                src_loc loc) {
  DescParts p = desc_parts(base, shape, strides, block, loc);
  std::vector<Value*> offs = desc_offsets(offsets, block.size(), "tensor_descriptor::store", loc);
  auto& b = Trace::current(loc).builder();
  const transforms::DescriptorAccess acc = transforms::descriptor_access(b, p.base, p.shape, p.strides, offs, block, loc);
  Value* v = stored_value(value, acc.pointers, "tensor_descriptor::store", loc);
  ir::Attrs a;
  a.ints = {1, 0, 0};
  b.create(OpKind::store, {acc.pointers, v, acc.mask}, {}, a, loc);
}

}  // namespace tile::detail
