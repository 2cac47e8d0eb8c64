// The graph IR's interning (ir/node.h): structurally equal nodes are one object, constants only bit
// for bit, a node leaves the table when its last reference goes, and all of it holds while several
// threads build, share and drop the same graphs at once (the table is sharded, its slots are plain
// pointers that a dying node removes: node.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "engine/buffer_table.h"
#include "ir/node.h"
#include "tensor/tensor_impl.h"

namespace {

using namespace ember;
using ir::make_const;
using ir::make_node;
using ir::NodeRef;
using ir::Op;

NodeRef buffer(int64_t n) {
  return engine::make_buffer(std::make_shared<runtime::Storage>(kFloat32, n), {n});
}

// (buf * c + buf) summed: five nodes over one buffer, rebuilt from scratch on every call.
NodeRef expr(const NodeRef& buf, double c) {
  NodeRef k =
      make_node(Op::EXPAND, kFloat32,
                {make_node(Op::RESHAPE, kFloat32, {make_const(c, kFloat32)}, {{1}})}, {buf->shape});
  NodeRef y = make_node(Op::ADD, kFloat32, {make_node(Op::MUL, kFloat32, {buf, k}), buf});
  return make_node(Op::SUM, kFloat32, {y}, {{0}});
}

TEST(Interning, EqualFieldsGiveTheSameNode) {
  NodeRef b = buffer(8);
  NodeRef e1 = expr(b, 2.5), e2 = expr(b, 2.5);
  EXPECT_EQ(e1, e2);
  EXPECT_NE(expr(b, 3.5), e1);
  EXPECT_NE(expr(buffer(8), 2.5), e1);  // another storage
  EXPECT_EQ(make_const(1.0, kFloat32), make_const(1.0, kFloat32));
  EXPECT_NE(make_const(1.0, kFloat32), make_const(1.0, kFloat64));
}

TEST(Interning, ConstantsAreTheSameOnlyBitForBit) {
  EXPECT_NE(make_const(0.0, kFloat32), make_const(-0.0, kFloat32));
  EXPECT_EQ(make_const(-0.0, kFloat32), make_const(-0.0, kFloat32));
  const double nan = std::nan("");
  EXPECT_EQ(make_const(nan, kFloat64), make_const(nan, kFloat64));  // the same bits
}

TEST(Interning, ADroppedNodeLeavesTheTable) {
  NodeRef b = buffer(4);
  const size_t before = ir::interned_node_count();
  {
    NodeRef e = expr(b, 7.25);
    EXPECT_EQ(ir::interned_node_count(), before + 6);  // const, reshape, expand, mul, add, sum
  }
  EXPECT_EQ(ir::interned_node_count(), before);
  NodeRef again = expr(b, 7.25);  // built afresh, with whole fields
  EXPECT_EQ(again->op, Op::SUM);
  EXPECT_EQ(again->src[0]->src[1], b);
}

// Several threads build the same graphs at once, compare what they got while all hold them, then
// drop them, so that lookups race with nodes that are being destroyed. Every thread must get the
// one node of each graph, whole, and the realized values must be right.
TEST(Interning, ConcurrentBuildsShareNodesAndKeepValues) {
  constexpr int kThreads = 4, kRounds = 300;
  std::vector<float> host(16);
  for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(i) - 5.5f;
  Tensor t = from_blob(host.data(), {16}, kFloat32);
  const NodeRef b = t.node();
  std::vector<NodeRef> got(kThreads);
  std::atomic<int> mismatches{0}, broken{0};
  std::barrier sync(kThreads);
  auto work = [&](int id) {
    for (int r = 0; r < kRounds; r++) {
      const double c = 0.5 * (r % 7);  // graphs repeat across rounds: old nodes are dying then
      got[id] = expr(b, c);
      const ir::Node& n = *got[id];
      if (n.op != Op::SUM || n.src.size() != 1 || n.src[0]->src[1] != b ||
          n.src[0]->src[0]->src[1]->src[0]->src[0]->const_value() != c)
        broken++;
      sync.arrive_and_wait();
      if (got[id] != got[0]) mismatches++;
      sync.arrive_and_wait();
      got[id].reset();
      // Churn: build and drop a graph of this thread's own, and one every thread builds.
      for (int j = 0; j < 20; j++) {
        NodeRef own = expr(b, 1000.0 + id * 100 + j);
        NodeRef shared = expr(b, 0.25 * j);
        if (shared->src[0]->src[1] != b || own == shared) broken++;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) threads.emplace_back(work, i);
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(broken.load(), 0);
  // Values: sum(x * c + x) = (c + 1) * sum(x), for graphs the threads built.
  double sum = 0;
  for (float v : host) sum += v;
  for (double c : {0.0, 1.5, 3.0}) {
    Tensor y = (t * static_cast<float>(c) + t).sum().realize();
    EXPECT_FLOAT_EQ(y.item<float>(), static_cast<float>((c + 1) * sum)) << c;
  }
}

// matmul builds its nodes directly (linalg.cpp); they must be the very nodes of the composition it
// stands for, with batch dims, broadcasting and a cast.
TEST(Interning, MatmulIsTheCompositionItStandsFor) {
  struct Case {
    Shape a, b;
    ScalarType ta, tb;
  };
  for (const Case& c :
       {Case{{4, 128}, {128, 16}, kFloat32, kFloat32}, Case{{3, 2, 5}, {5, 7}, kFloat32, kFloat32},
        Case{{2, 1, 3, 4}, {5, 4, 6}, kFloat64, kFloat64},
        Case{{3, 4}, {4, 2}, kInt32, kFloat32}}) {
    Tensor a = ones(c.a, c.ta), b = ones(c.b, c.tb);
    const ScalarType t = result_type(a, b);
    Shape full = detail::broadcast_shapes(Shape(c.a.begin(), c.a.end() - 2),
                                          Shape(c.b.begin(), c.b.end() - 2), "test");
    full.insert(full.end(), {c.a[c.a.size() - 2], c.b.back(), c.a.back()});
    Tensor x = a.to(t).unsqueeze(-2).expand(full);
    Tensor y = b.to(t).transpose(-1, -2).unsqueeze(-3).expand(full);
    Tensor want = (x * y).sum({-1}, false, t);
    Tensor got = a.matmul(b);
    EXPECT_EQ(got.node(), want.node()) << ir::shape_str(c.a) << " @ " << ir::shape_str(c.b);
    EXPECT_EQ(got.sizes(), want.sizes());
  }
}

// A transposed right operand (Linear's x @ w.t()): matmul's own transpose cancels it, and the
// product reads w directly, as the composition written without either transpose.
TEST(Interning, MatmulCancelsATransposedRightOperand) {
  for (const Shape& ws : {Shape{16, 128}, Shape{3, 7, 5}}) {
    Tensor w = ones(ws, kFloat32);
    const int64_t k = ws.back(), m = ws[ws.size() - 2];
    Tensor a = ones({4, k}, kFloat32);
    Shape full(ws.begin(), ws.end() - 2);
    full.insert(full.end(), {4, m, k});
    Tensor want = (a.unsqueeze(-2).expand(full) * w.unsqueeze(-3).expand(full)).sum({-1});
    Tensor got = a.matmul(w.transpose(-1, -2));
    EXPECT_EQ(got.node(), want.node()) << ir::shape_str(ws);
    EXPECT_EQ(got.sizes(), want.sizes());
    if (ws.size() == 2) {  // Linear's product, which makes no transposed view
      EXPECT_EQ(detail::matmul_transposed(a, w).node(), want.node());
    }
  }
}

TEST(Interning, ConcurrentRealizesOfOneGraphAgree) {
  constexpr int kThreads = 4;
  std::vector<float> a(4 * 32), w(32 * 32);
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i % 11) * 0.25f - 1;
  for (size_t i = 0; i < w.size(); i++) w[i] = static_cast<float>(i % 5) * 0.5f - 1;
  Tensor ta = from_blob(a.data(), {4, 32}, kFloat32), tw = from_blob(w.data(), {32, 32}, kFloat32);
  std::vector<float> want(4 * 32, 0);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 32; j++)
      for (int q = 0; q < 32; q++) want[i * 32 + j] += a[i * 32 + q] * w[q * 32 + j];
  (void)ta.matmul(tw).realize();  // compile once, outside the race
  const int64_t launched = runtime_stats().kernels_launched, realizes = runtime_stats().realizes;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; id++)
    threads.emplace_back([&] {
      for (int r = 0; r < 50; r++) {
        auto v = ta.matmul(tw).realize().to_vector<float>();
        for (size_t i = 0; i < v.size(); i++)
          if (v[i] != want[i]) wrong++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  // Every realize and launch is counted (the counters are added to atomically; a plain ++ from
  // several threads loses counts, and a ThreadSanitizer build reports it).
  EXPECT_EQ(runtime_stats().realizes - realizes, kThreads * 50);
  EXPECT_EQ(runtime_stats().kernels_launched - launched, kThreads * 50);
}

// NodeRef counts its references in the node: copies and moves, and the last one dropped takes the
// node out of the table (not the one before).
TEST(Interning, TheLastReferenceDropsTheNode) {
  NodeRef b = buffer(4);
  const size_t before = ir::interned_node_count();
  NodeRef e = expr(b, 11.5);
  EXPECT_EQ(e.use_count(), 1);
  NodeRef copy = e;
  EXPECT_EQ(e.use_count(), 2);
  NodeRef moved = std::move(copy);
  EXPECT_EQ(copy, nullptr);
  EXPECT_EQ(moved.use_count(), 2);
  EXPECT_EQ(expr(b, 11.5), e);  // found while alive: the same node (a third, temporary reference)
  EXPECT_EQ(e.use_count(), 2);
  e.reset();
  EXPECT_EQ(ir::interned_node_count(), before + 6);
  EXPECT_EQ(moved.use_count(), 1);
  EXPECT_EQ(moved->op, Op::SUM);
  EXPECT_EQ(moved->src[0]->src[1], b);
  moved = nullptr;
  EXPECT_EQ(ir::interned_node_count(), before);
  NodeRef again = expr(b, 11.5);  // a new node, the only reference to it
  EXPECT_EQ(again.use_count(), 1);
  EXPECT_EQ(ir::interned_node_count(), before + 6);
}

// A node holds its sources in itself (ir::SrcList, at most three): a ternary node keeps all three
// in order and counts a reference on each, one made from a vector of sources is the same node,
// dropping it drops exactly those references, and a fourth source is refused.
TEST(Interning, ANodeHoldsUpToThreeSourcesInOrder) {
  NodeRef a = buffer(4), b = buffer(4);
  NodeRef c = make_node(Op::CMPLT, kBool, {a, b});
  const long ca = a.use_count(), cb = b.use_count(), cc = c.use_count();
  NodeRef w = make_node(Op::WHERE, kFloat32, {c, a, b});
  ASSERT_EQ(w->src.size(), 3u);
  EXPECT_EQ(w->src[0], c);
  EXPECT_EQ(w->src[1], a);
  EXPECT_EQ(w->src[2], b);
  EXPECT_EQ(w->src.at(2), b);
  EXPECT_THROW((void)w->src.at(3), IndexError);
  EXPECT_EQ(a.use_count(), ca + 1);
  EXPECT_EQ(c.use_count(), cc + 1);
  EXPECT_EQ(make_node(Op::WHERE, kFloat32, std::vector<NodeRef>{c, a, b}), w);
  ir::SrcList copy = w->src, moved = std::move(copy);
  EXPECT_TRUE(copy.empty());
  EXPECT_EQ(moved, w->src);
  EXPECT_EQ(b.use_count(), cb + 2);
  moved.clear();
  w.reset();
  EXPECT_EQ(a.use_count(), ca);
  EXPECT_EQ(b.use_count(), cb);
  EXPECT_EQ(c.use_count(), cc);
  ir::SrcList four{a, b, c};
  EXPECT_THROW(four.push_back(a), Error);
  EXPECT_EQ(four.size(), 3u);
}

// A node's argument holds up to six integers in itself (ir::SmallInts) and longer lists on the
// heap: both kinds compare, hash, copy and move by value, and a PAD of a 4-D tensor (eight
// integers) is interned and computed like a short one.
TEST(Interning, ShortAndLongArgumentsAreValues) {
  ir::SmallInts s{1, 2, 3}, l{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(l.size(), 8u);
  EXPECT_EQ(std::vector<int64_t>(l), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  ir::SmallInts s2 = s, l2 = l;
  EXPECT_EQ(s2, s);
  EXPECT_EQ(l2, l);
  l2[7] = 9;
  EXPECT_FALSE(l2 == l);  // a copy, not a shared block
  ir::SmallInts moved = std::move(l2);
  EXPECT_TRUE(l2.empty());
  EXPECT_EQ(moved.back(), 9);
  moved = s;  // a short list into one that was on the heap
  EXPECT_EQ(moved, s);
  for (int64_t i = 0; i < 20; i++) moved.push_back(i);
  EXPECT_EQ(moved.size(), 23u);
  EXPECT_EQ(moved[22], 19);
  EXPECT_THROW((void)s.at(3), IndexError);
  s2.resize(7, -1);
  EXPECT_EQ(std::vector<int64_t>(s2), (std::vector<int64_t>{1, 2, 3, -1, -1, -1, -1}));

  NodeRef b = buffer(2 * 3 * 2 * 2);
  NodeRef r = make_node(Op::RESHAPE, kFloat32, {b}, {{2, 3, 2, 2}});
  NodeRef p1 = make_node(Op::PAD, kFloat32, {r}, {{0, 1, 1, 0, 0, 2, 1, 1}});
  NodeRef p2 = make_node(Op::PAD, kFloat32, {r}, {std::vector<int64_t>{0, 1, 1, 0, 0, 2, 1, 1}});
  NodeRef p3 = make_node(Op::PAD, kFloat32, {r}, {{0, 1, 1, 0, 0, 2, 1, 2}});
  EXPECT_EQ(p1, p2);
  EXPECT_NE(p1, p3);
  EXPECT_EQ(p1->shape, (ir::Shape{3, 4, 4, 4}));
  EXPECT_EQ(p3->shape, (ir::Shape{3, 4, 4, 5}));

  std::vector<float> host(24);
  for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(i + 1);
  Tensor x = from_blob(host.data(), {2, 3, 2, 2}, kFloat32);
  Tensor padded = pad(x, {1, 1, 0, 2, 1, 0, 0, 1});  // last dim first, as torch's pad
  EXPECT_EQ(padded.sizes(), (Shape{3, 4, 4, 4}));
  EXPECT_FLOAT_EQ(padded.sum().item<float>(), 300.0f);
  const std::vector<float> v = padded.to_vector<float>();
  EXPECT_FLOAT_EQ(v[0], 0.0f);           // [0, 0, 0, 0]: padding
  EXPECT_FLOAT_EQ(v[16 + 1], 1.0f);      // [0, 1, 0, 1] holds x[0, 0, 0, 0]
  EXPECT_FLOAT_EQ(v[16 + 4 + 2], 4.0f);  // [0, 1, 1, 2] holds x[0, 0, 1, 1]
}

// A node's shape is held in the node (ember::DimVector: up to six dims in place, more on the
// heap): an 8-dim view of a 16x16 tensor gets its shapes and values through a permute and a sum,
// and a copy of sizes() outlives the node it was read from.
TEST(Interning, ShapesOfAnyRankAreHeldInTheNode) {
  std::vector<float> host(256);
  for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(i);
  Tensor x = from_blob(host.data(), {16, 16}, kFloat32);
  EXPECT_EQ(x.sizes(), (Shape{16, 16}));
  Tensor y = x.reshape({2, 2, 2, 2, 2, 2, 2, 2});  // y[i0..i7] = x's element sum i_k 2^(7-k)
  EXPECT_EQ(y.dim(), 8);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2, 2, 2, 2, 2, 2}));
  // p[j0..j7] = y[j7..j0]: summing p's dim 0 adds the elements that differ in their lowest bit.
  Tensor s = y.permute({7, 6, 5, 4, 3, 2, 1, 0}).sum({0});
  ASSERT_EQ(s.sizes(), (Shape{2, 2, 2, 2, 2, 2, 2}));
  const std::vector<float> v = s.to_vector<float>();
  ASSERT_EQ(v.size(), 128u);
  for (size_t f = 0; f < 128; f++) {  // f = j1..j7 with j7 the fastest; the element is sum j_k 2^k
    size_t base = 0;
    for (int k = 1; k <= 7; k++) base += ((f >> (7 - k)) & 1) << k;
    EXPECT_EQ(v[f], static_cast<float>(2 * base + 1)) << f;
  }
  const DimVector kept = y.sizes();
  const ir::Node* before = y.node().get();
  y = y * 2.0f;
  y.realize();
  EXPECT_NE(y.node().get(), before);
  EXPECT_EQ(kept, (Shape{2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(y.sizes(), kept);
  EXPECT_FLOAT_EQ(y.sum().item<float>(), 2.0f * 255.0f * 256.0f / 2.0f);
}

// Two tensors built alike share one node; dropping one leaves the other whole, with its value.
TEST(Interning, ANodeSharedByTwoTensorsOutlivesOne) {
  std::vector<float> host{1, -2, 3, 4.5f};
  Tensor x = from_blob(host.data(), {4}, kFloat32);
  Tensor p = x * 3.0f + 1.0f;
  Tensor q = x * 3.0f + 1.0f;
  ASSERT_EQ(p.node(), q.node());
  const long shared = q.node().use_count();
  p = Tensor();
  EXPECT_EQ(q.node().use_count(), shared - 1);
  for (int i = 0; i < 50; i++) (void)(x * static_cast<float>(i) - 2.0f);  // reuse freed blocks
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{4, -5, 10, 14.5f}));
}

// A storage lists the BUFFER nodes that read it while they are alive, and only those: a node that
// an in-place update moved to a kept copy leaves the list of the storage it no longer reads.
TEST(Interning, AStorageListsItsLiveReaders) {
  auto st = std::make_shared<runtime::Storage>(kFloat32, 3);
  NodeRef v0 = engine::make_buffer(st, {3});
  EXPECT_EQ(engine::make_buffer(st, {3}), v0);
  st->bump_version();
  NodeRef v1 = engine::make_buffer(st, {3});
  EXPECT_NE(v1, v0);
  EXPECT_EQ(st->live_nodes().size(), 2u);
  v0.reset();
  auto live = st->live_nodes();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0], v1);
  live.clear();
  v1.reset();
  EXPECT_TRUE(st->live_nodes().empty());

  Tensor x = from_vector(std::vector<float>{1, 2, 3}, IntList{3});
  x.realize();
  const engine::StorageRef xs = engine::storage_of(*x.node());
  Tensor before = x * 2;  // reads x's buffer: the update keeps a copy for it
  {
    const NodeRef reader = before.node()->src[0];
    ASSERT_EQ(reader->op, Op::BUFFER);
    x.add_(ones({3}));
    x.realize();
    EXPECT_NE(engine::storage_of(*reader), xs);  // moved to the copy
  }
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  before = Tensor();           // the moved reader goes
  std::vector<NodeRef> fresh;  // nodes in the blocks just freed
  for (int i = 0; i < 20; i++) fresh.push_back(make_const(500.0 + i, kFloat32));
  for (const NodeRef& n : xs->live_nodes()) {
    EXPECT_EQ(n->op, Op::BUFFER);
    EXPECT_EQ(engine::storage_of(*n), xs);
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 3, 4}));
}

// The engine's buffer table has an entry per live BUFFER node and no other: a node's entry goes
// with it, and with the entry its storage and its autograd origin (a realized value that requires
// grad keeps the graph that computed it, which goes when the buffer node goes).
TEST(Interning, TheBufferTableForgetsABufferNodeAsItGoes) {
  const size_t entries = engine::buffer_table_size(), nodes = ir::interned_node_count();
  {
    Tensor w = ones({3}, TensorOptions().requires_grad(true));
    Tensor h = (w * 3).tanh();
    h.realize();  // a BUFFER node with an origin (tanh(w * 3))
    ASSERT_EQ(h.node()->op, Op::BUFFER);
    EXPECT_TRUE(engine::origin_of(*h.node()));
    std::weak_ptr<runtime::Storage> hs = engine::storage_of(*h.node());
    Tensor y = h * 2;                                     // reads h's buffer
    EXPECT_GE(engine::buffer_table_size(), entries + 1);  // h's (w is a constant)
    h = Tensor();                                         // y still reads the buffer
    EXPECT_FALSE(hs.expired());
    EXPECT_NEAR(y.to_vector<float>()[0], 2 * std::tanh(3.0), 1e-6);
    y = Tensor();  // the last reader
    EXPECT_TRUE(hs.expired());
  }
  EXPECT_EQ(engine::buffer_table_size(), entries);
  EXPECT_EQ(ir::interned_node_count(), nodes);
}

// The first reader of a storage sits in a slot of its own and the rest in a list (storage.h):
// readers leave from either place and the others stay listed, in the order they were made.
TEST(Interning, AStorageKeepsItsReadersInOrderAsAnyOfThemGoes) {
  auto st = std::make_shared<runtime::Storage>(kFloat32, 4);
  std::vector<NodeRef> r;
  for (int v = 0; v < 4; v++) {
    st->set_version(static_cast<uint64_t>(v));
    r.push_back(engine::make_buffer(st, {4}));
  }
  r.push_back(engine::make_buffer(st, {2, 2}));  // another shape: another reader
  EXPECT_EQ(st->live_nodes(), r);
  r[0].reset();  // the first: the second moves up
  EXPECT_EQ(st->live_nodes(), (std::vector<NodeRef>{r[1], r[2], r[3], r[4]}));
  r[3].reset();  // one in the middle of the list
  EXPECT_EQ(st->live_nodes(), (std::vector<NodeRef>{r[1], r[2], r[4]}));
  r[1].reset();
  r[4].reset();
  EXPECT_EQ(st->live_nodes(), (std::vector<NodeRef>{r[2]}));
  NodeRef again = engine::make_buffer(st, {2, 2});  // a reader added after the first slot emptied
  EXPECT_EQ(st->live_nodes(), (std::vector<NodeRef>{r[2], again}));
  r[2].reset();
  EXPECT_EQ(st->live_nodes(), (std::vector<NodeRef>{again}));
  again.reset();
  EXPECT_TRUE(st->live_nodes().empty());
}

// Eager products from 4 threads at once, each on its own inputs and on a shared weight: every
// value right (nodes made and dropped concurrently, counted and destroyed once).
TEST(Interning, ConcurrentEagerCallsGiveTheirOwnValues) {
  constexpr int kThreads = 4, kCalls = 200;
  std::vector<float> w(16 * 8);
  for (size_t i = 0; i < w.size(); i++) w[i] = static_cast<float>(i % 7) - 3;
  Tensor tw = from_blob(w.data(), {16, 8}, kFloat32);
  tw.realize();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; id++)
    threads.emplace_back([&, id] {
      NoGradGuard g;
      for (int r = 0; r < kCalls; r++) {
        const float s = static_cast<float>(id * 1000 + r);
        std::vector<float> a(2 * 16);
        for (size_t i = 0; i < a.size(); i++) a[i] = s + static_cast<float>(i % 3);
        Tensor ta = from_blob(a.data(), {2, 16}, kFloat32);
        auto v = (ta.matmul(tw) + 1.0f).relu().realize().to_vector<float>();
        for (int i = 0; i < 2; i++)
          for (int j = 0; j < 8; j++) {
            double want = 1;
            for (int q = 0; q < 16; q++) want += double(a[i * 16 + q]) * w[q * 8 + j];
            if (v[i * 8 + j] != static_cast<float>(std::max(want, 0.0))) wrong++;
          }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
