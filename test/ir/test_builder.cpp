// test/ir/test_builder.cpp — the IR core: types, the op table, the builder's links and insertion
// points, and the structural utilities (replace uses, erase, clone, walk).
#include "ir_test.hpp"

using namespace irt;

TEST_CASE("types print as dtype, pointer and shape") {
  CHECK(T(dtype::f32).str() == "f32");
  CHECK(P(dtype::f16).str() == "ptr<f16>");
  CHECK(T(dtype::i32, {16, 32}).str() == "i32[16,32]");
  CHECK(P(dtype::f32, {128}).str() == "ptr<f32>[128]");
  CHECK(T(dtype::i64, {2, 3, 4}).numel() == 24);
  CHECK(T(dtype::i64).numel() == 1);
  CHECK(P(dtype::f32, {8}).scalar() == P(dtype::f32));
  CHECK(P(dtype::f32, {8}).with_elem(dtype::i1) == T(dtype::i1, {8}));
  CHECK(T(dtype::i1).is_int());
  CHECK_FALSE(P(dtype::i32).is_int());
  CHECK(T(dtype::bf16).is_float());
}

TEST_CASE("the op table: names and flags") {
  CHECK(op_name(OpKind::for_) == "for");
  CHECK(op_name(OpKind::bit_and) == "and");
  CHECK(op_name(OpKind::ret) == "return");
  CHECK(is_pure(OpKind::add));
  CHECK(is_elementwise(OpKind::add));
  CHECK_FALSE(is_pure(OpKind::load));
  CHECK((op_flags(OpKind::load) & opflag::M) != 0);
  CHECK(is_terminator(OpKind::yield));
  CHECK(is_terminator(OpKind::condition));
  CHECK_FALSE(is_terminator(OpKind::store));
  CHECK((op_flags(OpKind::reduce) & opflag::R) != 0);
  CHECK(pred_name(CmpPred::le) == "le");
  CHECK(pred_name(CmpPred::ge) == "ge");
}

TEST_CASE("the builder links ops, results, blocks and regions") {
  K k("b", {T(dtype::i32)});
  Value* c = k.ci(T(dtype::i32), 7, L(3));
  Op* add = k.op(OpKind::add, {k.arg(0), c}, {T(dtype::i32)}, {}, L(4));
  CHECK(c->def->kind == OpKind::constant);
  CHECK(c->def->attrs.ints == std::vector<std::int64_t>{7});
  CHECK(add->parent == &k.f().body);
  CHECK(add->result()->def == add);
  CHECK(add->result()->index == 0);
  CHECK(add->result()->owner == nullptr);
  CHECK(k.arg(0)->owner == &k.f().body);
  CHECK(k.arg(0)->def == nullptr);
  CHECK(add->loc.line == 4);

  Op* loop = k.op(OpKind::for_, {c, c, c}, {}, {}, L(5), 1);
  REQUIRE(loop->regions.size() == 1);
  CHECK(loop->region(0)->parent == loop);
  Value* iv = loop->region(0)->add_arg(T(dtype::i32));
  CHECK(iv->owner == loop->region(0));
  CHECK(iv->index == 0);

  Value* f = k.cf(T(dtype::f64), 2.5);
  CHECK(f->def->attrs.f == 2.5);
  CHECK(k.f().body.ops.size() == 4);
  CHECK(k.f().body.terminator() == f->def);
}

TEST_CASE("insertion before an op and at the end of another block") {
  K k;
  Value* a = k.ci(T(dtype::i32), 1);
  Op* r = k.ret();
  k.b.set_insertion_before(r);
  Value* b = k.ci(T(dtype::i32), 2);
  CHECK(k.f().body.terminator() == r);
  auto it = k.f().body.ops.begin();
  CHECK(it->get() == a->def);
  CHECK((++it)->get() == b->def);
  CHECK(b->def->parent == &k.f().body);

  k.b.set_insertion_before(a->def);
  Value* first = k.ci(T(dtype::i32), 0);
  CHECK(k.f().body.ops.front().get() == first->def);
  CHECK(k.b.block() == &k.f().body);
}

TEST_CASE("replace_all_uses reaches nested regions; erase removes one op") {
  K k;
  Value* a = k.ci(T(dtype::i32), 1);
  Value* b = k.ci(T(dtype::i32), 2);
  Value* cond = k.ci(T(dtype::i1), 1);
  Op* branch = k.op(OpKind::if_, {cond}, {T(dtype::i32)}, {}, {}, 2);
  Builder inner(branch->region(0));
  Value* sum = inner.create(OpKind::add, {a, a}, {T(dtype::i32)})->result();
  inner.create(OpKind::yield, {sum}, {});
  Builder other(branch->region(1));
  other.create(OpKind::yield, {a}, {});
  k.sink({a});
  k.ret();
  verify(k.f());

  replace_all_uses(k.f().body, a, b);
  CHECK(sum->def->operands == std::vector<Value*>{b, b});
  CHECK(branch->region(1)->terminator()->operands[0] == b);
  CHECK(count_ops(k.f(), OpKind::constant) == 3);
  erase(a->def);
  CHECK(count_ops(k.f(), OpKind::constant) == 2);
  verify(k.f());
}

TEST_CASE("clone is deep and prints identically") {
  K k("c", {P(dtype::f32), T(dtype::i32)}, {16, 1});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}), L(10));
  Op* loop = k.op(OpKind::for_, {pid, k.arg(1), pid, pid}, {T(dtype::i32)}, {}, L(11), 1);
  Block* body = loop->region(0);
  Value* iv = body->add_arg(T(dtype::i32));
  Value* acc = body->add_arg(T(dtype::i32));
  Builder in(body);
  Value* nxt = in.create(OpKind::add, {acc, iv}, {T(dtype::i32)}, {}, L(12))->result();
  in.create(OpKind::yield, {nxt}, {}, {}, L(12));
  k.sink({loop->result()});
  k.ret();
  verify(k.f());

  auto c = clone(k.f());
  CHECK(print(*c) == print(k.f()));
  CHECK(c->arg_info.size() == 2);
  CHECK(c->arg_info[0].divisibility == 16);
  // no pointer of the copy leads back into the original
  walk(c->body, [&](Op& op) {
    for (Value* o : op.operands) {
      bool in_original = false;
      walk(k.f().body, [&](Op& orig) {
        for (auto& r : orig.results) in_original |= r.get() == o;
        for (auto& rg : orig.regions)
          for (auto& a : rg->args) in_original |= a.get() == o;
      });
      for (auto& a : k.f().body.args) in_original |= a.get() == o;
      CHECK_FALSE(in_original);
    }
  });
  verify(*c);
}

TEST_CASE("walk visits ops in pre-order, regions right after their op") {
  K k;
  Value* c = k.ci(T(dtype::i32), 0);
  Op* loop = k.op(OpKind::for_, {c, c, c}, {}, {}, {}, 1);
  loop->region(0)->add_arg(T(dtype::i32));
  Builder in(loop->region(0));
  in.create(OpKind::yield, {}, {});
  k.ret();
  std::vector<OpKind> seen;
  walk(k.f().body, [&](Op& op) { seen.push_back(op.kind); });
  CHECK(seen == std::vector<OpKind>{OpKind::constant, OpKind::for_, OpKind::yield, OpKind::ret});
}
