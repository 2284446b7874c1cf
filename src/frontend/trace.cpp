// src/frontend/trace.cpp — layer: frontend. The per-thread trace state and the registry of live
// tensors.
#include "frontend/trace.hpp"

namespace tile::detail {

namespace {
thread_local tl::tensor* g_live_head = nullptr;
}

// A new object goes first and one that leaves keeps the others' order: the registry is in order
// of construction, which control_flow.cpp relies on to tell a body's objects from older ones.
void track(tl::tensor* t) noexcept {
  tensor_access::prev(*t) = nullptr;
  tensor_access::next(*t) = g_live_head;
  if (g_live_head) tensor_access::prev(*g_live_head) = t;
  g_live_head = t;
}

void untrack(tl::tensor* t) noexcept {
  tl::tensor* p = tensor_access::prev(*t);
  tl::tensor* n = tensor_access::next(*t);
  if (p) tensor_access::next(*p) = n;
  else if (g_live_head == t) g_live_head = n;
  if (n) tensor_access::prev(*n) = p;
}

bool tracing() { return frontend::Trace::current_or_null() != nullptr; }

dtype node_dtype(const node* n, src_loc loc) {
  if (!n) trace_error("query of a tensor that was never assigned", loc);
  return ir::as_value(n)->type.elem;
}
bool node_is_pointer(const node* n, src_loc loc) {
  if (!n) trace_error("query of a tensor that was never assigned", loc);
  return ir::as_value(n)->type.ptr;
}
std::span<const std::int64_t> node_shape(const node* n, src_loc loc) {
  if (!n) trace_error("query of a tensor that was never assigned", loc);
  return ir::as_value(n)->type.shape;
}

node* ptr_value(node* n, dtype pointee, src_loc loc) {
  const std::string target = "tl::ptr<" + std::string(name(pointee)) + ">";
  if (!n) trace_error("value assigned to a " + target + " was never assigned", loc);
  const ir::Value* v = ir::as_value(n);
  if (v->type.ptr && v->type.elem == pointee) return n;
  // Where the value comes from: the op that created it, or the loop or kernel whose argument it is.
  std::string origin;
  src_loc at{};
  if (v->def) {
    at = v->def->loc;
    if (at.known()) origin = ", created at " + frontend::loc_str(at);
  } else if (v->owner && v->owner->parent) {
    const ir::Op* loop = v->owner->parent;
    at = loop->loc;
    const bool index = loop->kind == ir::OpKind::for_ && v->index == 0;
    origin = std::string(index ? ", the index of" : ", a tile carried through") +
             (loop->kind == ir::OpKind::for_ ? " the tl::for_range" : " the tl::while_");
    if (at.known()) origin += " at " + frontend::loc_str(at);
  } else {
    origin = ", a kernel argument";
  }
  trace_error("value assigned to a " + target + " is not a pointer to the same type: it is " + v->type.str() + origin,
              loc.known() ? loc : at);
}

void trace_error(const std::string& message, src_loc loc) {
  if (auto* t = frontend::Trace::current_or_null()) t->fail(message, loc);
  throw tile::error(message, loc);
}

}  // namespace tile::detail

namespace tile::frontend {

namespace {
thread_local Trace* g_current = nullptr;
}

Trace::Trace(ir::Function& fn, std::string kernel_name)
    : fn_(fn), builder_(&fn.body), kernel_(std::move(kernel_name)), outer_(g_current) {
  g_current = this;
}

Trace::~Trace() { g_current = outer_; }

Trace& Trace::current(src_loc loc) {
  if (!g_current)
    throw tile::error("tl:: operations run only inside a kernel being traced (launch it through tile::kernel)", loc);
  return *g_current;
}

Trace* Trace::current_or_null() { return g_current; }

void Trace::fail(const std::string& message, src_loc loc) const {
  throw tile::error(message, loc, kernel_);
}

std::string loc_str(src_loc l) { return ir::base_name(l.file) + ":" + std::to_string(l.line); }

std::vector<tl::tensor*> live_tensors(bool include_undefined) {
  std::vector<tl::tensor*> out;
  for (tl::tensor* t = detail::g_live_head; t; t = detail::tensor_access::next(*t))
    if (include_undefined || t->defined()) out.push_back(t);
  return out;
}

}  // namespace tile::frontend
