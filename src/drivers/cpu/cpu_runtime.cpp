// src/drivers/cpu/cpu_runtime.cpp — layer: drivers (cpu). The run-time services compiled CPU
// code calls: device_print (formatted exactly as the interpreter formats it — the same
// functions) and failures (device_assert, a bad loop step), recorded on the launch so it stops
// and throws on the launching thread.
#include <cstring>
#include <iostream>
#include <mutex>

#include "drivers/cpu/cpu_module.hpp"
#include "drivers/interpreter/interp_values.hpp"

namespace tile::drivers {

std::vector<cpu_site> collect_cpu_sites(const ir::Function& f) {
  std::vector<cpu_site> sites;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
    cpu_site s;
    s.loc = op.loc;
    switch (op.kind) {
      case ir::OpKind::print:
        s.k = cpu_site::kind::print;
        s.text = op.attrs.str;
        s.hex = !op.attrs.ints.empty() && op.attrs.ints[0] != 0;
        for (const ir::Value* v : op.operands) s.operands.push_back(v->type);
        break;
      case ir::OpKind::assert_:
        s.k = cpu_site::kind::assert_fail;
        s.text = op.attrs.str;
        s.operands.push_back(op.operand(0)->type);
        break;
      case ir::OpKind::for_: s.k = cpu_site::kind::bad_step; break;
      default: return;
    }
    sites.push_back(std::move(s));
  });
  return sites;
}

namespace {

std::mutex& print_mutex() {
  static std::mutex m;
  return m;
}

std::string pid_text(const cpu_program* p) {
  return std::to_string(p->pid[0]) + ", " + std::to_string(p->pid[1]) + ", " + std::to_string(p->pid[2]);
}

/// Elements in storage form at `data` as an interpreter value (to share its formatting).
interp::Val as_val(const ir::Type& t, const void* data) {
  const auto n = static_cast<std::size_t>(t.numel());
  return interp::with_storage(t.elem, t.ptr, [&](auto tag) {
    using S = typename decltype(tag)::type;
    std::vector<S> v(n);
    std::memcpy(v.data(), data, n * sizeof(S));
    return interp::make_val(t.elem, t.ptr, std::move(v));
  });
}

}  // namespace

}  // namespace tile::drivers

using tile::drivers::cpu_launch;
using tile::drivers::cpu_program;
using tile::drivers::cpu_site;

namespace {
/// Records the exception being handled as the launch's failure (compiled code has no unwind
/// tables: nothing may be thrown through it).
void record_failure(cpu_launch* l) {
  std::lock_guard lock(l->mu);
  if (!l->error) l->error = std::current_exception();
  l->failed.store(true);
}
}  // namespace

extern "C" void tile_cpu_print(void* launch, std::int32_t site, const cpu_program* program, void* const* data) {
  auto* l = static_cast<cpu_launch*>(launch);
  try {
    const cpu_site& s = l->mod->sites.at(static_cast<std::size_t>(site));
    const std::string pid = "pid (" + tile::drivers::pid_text(program) + ")";
    std::string text;
    if (s.operands.empty()) text = pid + " " + s.text + "\n";
    for (std::size_t o = 0; o < s.operands.size(); ++o) {
      const tile::ir::Type& t = s.operands[o];
      const tile::interp::Val v = tile::drivers::as_val(t, data[o]);
      for (std::size_t k = 0; k < v.n; ++k) {
        text += pid + " idx (" + tile::interp::index_text(k, t.shape) + ") " + s.text;
        if (s.operands.size() > 1) text += "(operand " + std::to_string(o) + ") ";
        text += tile::interp::format_element(v, k, s.hex);
        text += '\n';
      }
    }
    std::lock_guard lock(tile::drivers::print_mutex());
    std::cout << text << std::flush;
  } catch (...) {
    record_failure(l);
  }
}

extern "C" void tile_cpu_fail(void* launch, std::int32_t site, const cpu_program* program, std::int64_t value) {
  auto* l = static_cast<cpu_launch*>(launch);
  try {
    const cpu_site& s = l->mod->sites.at(static_cast<std::size_t>(site));
    std::string m;
    if (s.k == cpu_site::kind::assert_fail) {
      std::string where = "program (" + tile::drivers::pid_text(program) + ")";
      if (!s.operands.at(0).shape.empty())
        where += ", element [" + tile::interp::index_text(static_cast<std::size_t>(value), s.operands[0].shape) + "]";
      m = "device_assert failed: " + s.text + " (" + where + ")";
    } else {
      m = "for_range step must be positive, got " + std::to_string(value);
    }
    std::lock_guard lock(l->mu);
    if (!l->error) l->error = std::make_exception_ptr(tile::error(m, s.loc, l->mod->kernel));
    l->failed.store(true);
  } catch (...) {
    record_failure(l);
  }
}
