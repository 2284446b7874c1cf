// src/ir/ir.cpp — layer: ir. Types, the op table's properties, the builder and the small
// structural utilities (replace uses, erase, clone).
#include "ir/ir.hpp"

#include <unordered_map>

namespace tile::ir {

std::string Type::str() const {
  if (token) return "token";
  std::string s = ptr ? "ptr<" + std::string(name(elem)) + ">" : std::string(name(elem));
  if (!shape.empty()) {
    s += '[';
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(shape[i]);
    }
    s += ']';
  }
  if (layout) s += " " + layout->str();
  if (mem != smem::none) s += " #smem<" + std::string(smem_name(mem)) + ">";
  return s;
}

std::string_view smem_name(smem s) {
  constexpr std::string_view n[] = {"none", "swizzled", "padded", "padded_transposed", "barriers", "swizzled_transposed"};
  return n[static_cast<int>(s)];
}

bool Type::operator==(const Type& o) const {
  if (!same_data(o) || mem != o.mem || !layout != !o.layout) return false;
  return !layout || layout == o.layout || *layout == *o.layout;
}

namespace {
struct OpInfo {
  std::string_view name;
  unsigned flags;
};
using namespace opflag;
constexpr OpInfo kOps[] = {
#define TILE_OP(e, text, flags) {text, flags},
#include "ir/ops.def"
#undef TILE_OP
};
}  // namespace

std::string_view op_name(OpKind k) { return kOps[static_cast<int>(k)].name; }
unsigned op_flags(OpKind k) { return kOps[static_cast<int>(k)].flags; }

std::string_view pred_name(CmpPred p) {
  constexpr std::string_view n[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return n[static_cast<int>(p)];
}

Value* Block::add_arg(Type t) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->owner = this;
  v->index = static_cast<unsigned>(args.size());
  args.push_back(std::move(v));
  return args.back().get();
}

Op* Builder::create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
                    Attrs attrs, src_loc loc, unsigned num_regions) {
  auto op = std::make_unique<Op>();
  op->kind = k;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->loc = loc;
  op->parent = block_;
  for (auto& t : result_types) {
    auto v = std::make_unique<Value>();
    v->type = std::move(t);
    v->def = op.get();
    v->index = static_cast<unsigned>(op->results.size());
    op->results.push_back(std::move(v));
  }
  for (unsigned i = 0; i < num_regions; ++i) {
    auto b = std::make_unique<Block>();
    b->parent = op.get();
    op->regions.push_back(std::move(b));
  }
  Op* raw = op.get();
  block_->ops.insert(at_, std::move(op));
  return raw;
}

Value* Builder::constant_int(const Type& t, std::int64_t v, src_loc loc) {
  Attrs a;
  a.ints = {v};
  return create(OpKind::constant, {}, {t}, std::move(a), loc)->result();
}

Value* Builder::constant_float(const Type& t, double v, src_loc loc) {
  Attrs a;
  a.f = v;
  return create(OpKind::constant, {}, {t}, std::move(a), loc)->result();
}

void Builder::set_insertion_before(Op* op) {
  block_ = op->parent;
  for (auto it = block_->ops.begin(); it != block_->ops.end(); ++it)
    if (it->get() == op) {
      at_ = it;
      return;
    }
  at_ = block_->ops.end();
}

bool made_inside(const Value& v, const Op& op) {
  for (const Block* b = v.def ? v.def->parent : v.owner; b && b->parent; b = b->parent->parent)
    if (b->parent == &op) return true;
  return false;
}

void replace_all_uses(Block& b, Value* from, Value* to) {
  walk(b, [&](Op& op) {
    for (auto& o : op.operands)
      if (o == from) o = to;
  });
}

void erase(Op* op) {
  Block* b = op->parent;
  for (auto it = b->ops.begin(); it != b->ops.end(); ++it)
    if (it->get() == op) {
      b->ops.erase(it);
      return;
    }
}

namespace {
void clone_block(const Block& from, Block& to, std::unordered_map<const Value*, Value*>& map) {
  for (auto& a : from.args) map[a.get()] = to.add_arg(a->type);
  Builder bld(&to);
  for (auto& op : from.ops) clone_op(*op, bld, map);
}
}  // namespace

Op* clone_op(const Op& op, Builder& b, std::unordered_map<const Value*, Value*>& map) {
  std::vector<Value*> operands;
  for (auto* o : op.operands) {
    auto it = map.find(o);
    operands.push_back(it == map.end() ? o : it->second);
  }
  std::vector<Type> types;
  for (auto& r : op.results) types.push_back(r->type);
  Op* n = b.create(op.kind, std::move(operands), std::move(types), op.attrs, op.loc,
                   static_cast<unsigned>(op.regions.size()));
  for (std::size_t i = 0; i < op.results.size(); ++i) map[op.results[i].get()] = n->results[i].get();
  for (std::size_t i = 0; i < op.regions.size(); ++i) clone_block(*op.regions[i], *n->regions[i], map);
  return n;
}

std::optional<std::int64_t> int_constant(const Value* v) {
  if (v->def && v->def->kind == OpKind::constant && !v->def->attrs.ints.empty()) return v->def->attrs.ints[0];
  return std::nullopt;
}

std::unique_ptr<Function> clone(const Function& f) {
  auto out = std::make_unique<Function>();
  out->name = f.name;
  out->arg_info = f.arg_info;
  out->loc = f.loc;
  out->num_warps = f.num_warps;
  out->num_stages = f.num_stages;
  out->fp_fusion = f.fp_fusion;
  out->warp_specialize = f.warp_specialize;
  out->gpu = f.gpu;
  out->mma_target = f.mma_target;
  std::unordered_map<const Value*, Value*> map;
  clone_block(f.body, out->body, map);
  return out;
}

}  // namespace tile::ir
