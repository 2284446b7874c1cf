// src/codegen/lower_reduce.cpp — layer: codegen. reduce and scan along an axis: for every
// position of the other axes, a sequential fold in axis order (reverse for reverse scans), the
// combine region lowered on scalars — the interpreter's order exactly, so float results agree
// bit for bit.
#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

void Lowering::lower_reduce(const ir::Op& op) {
  const bool is_scan = op.kind == OpKind::scan;
  const std::size_t n = op.operands.size();
  const auto& shape = op.operand(0)->type.shape;
  const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
  const bool reverse = is_scan && op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  const std::int64_t len = shape.at(axis);
  std::vector<std::int64_t> outer = shape;
  outer.erase(outer.begin() + static_cast<std::ptrdiff_t>(axis));

  std::vector<const TV*> in;
  std::vector<ir::Type> et;  // element types
  for (std::size_t i = 0; i < n; ++i) {
    in.push_back(&get(op.operand(static_cast<unsigned>(i))));
    et.push_back(op.operand(static_cast<unsigned>(i))->type.scalar());
  }
  std::vector<llvm::Value*> acc(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    acc[i] = alloc_slot(et[i], "acc");
    const ir::Type& rt = op.result(static_cast<unsigned>(i))->type;
    if (!rt.is_scalar()) out[i] = alloc_buffer(rt, is_scan ? "scan" : "red");
  }
  const ir::Block& region = *op.region(0);

  loop_nest(outer, [&](const Index& o) {
    auto at = [&](llvm::Value* t) {
      std::vector<llvm::Value*> axes = o.axis;
      axes.insert(axes.begin() + static_cast<std::ptrdiff_t>(axis), t);
      return index_of(std::move(axes), shape);
    };
    auto pos = [&](llvm::Value* step) { return reverse ? b->CreateSub(i64(len - 1), step) : step; };
    {
      Index ix = at(pos(i64(0)));
      for (std::size_t i = 0; i < n; ++i) {
        llvm::Value* v = elem(*in[i], ix);
        store_slot(acc[i], et[i], v);
        if (is_scan) store_elem(out[i], et[i], ix.flat, v);
      }
    }
    counted_loop(i64(1), i64(len), [&](llvm::Value* step) {
      Index ix = at(pos(step));
      std::vector<TV> args;
      for (std::size_t i = 0; i < n; ++i) args.push_back(scalar(load_slot(acc[i], et[i]), et[i]));
      for (std::size_t i = 0; i < n; ++i) args.push_back(scalar(elem(*in[i], ix), et[i]));
      std::vector<TV> r = lower_region(region, args);
      for (std::size_t i = 0; i < n; ++i) {
        store_slot(acc[i], et[i], r.at(i).v);
        if (is_scan) store_elem(out[i], et[i], ix.flat, r[i].v);
      }
    }, "k");
    if (!is_scan)
      for (std::size_t i = 0; i < n; ++i)
        if (out[i]) store_elem(out[i], et[i], o.flat, load_slot(acc[i], et[i]));
  });

  for (std::size_t i = 0; i < n; ++i) {
    const ir::Type& rt = op.result(static_cast<unsigned>(i))->type;
    if (rt.is_scalar())
      set(op.result(static_cast<unsigned>(i)), scalar(load_slot(acc[i], et[i]), rt));
    else
      set(op.result(static_cast<unsigned>(i)), TV{TV::K::buffer, out[i], {}, rt});
  }
}

}  // namespace tile::codegen
