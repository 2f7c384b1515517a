// Locals let go after their last use (src/eval/liveness.cpp): the same
// results as keeping every local until its body ends, and less tensor
// memory alive at the peak. Each test runs one program under both
// configurations (Options::release_dead_locals) and compares them.
#include <cstring>

#include "card_test_util.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/tensor/allocator.hpp"

using namespace eval_test;

namespace {

linnet::eval::Options keeping_locals() {
  linnet::eval::Options options;
  options.release_dead_locals = false;
  return options;
}

// The result of `call` and the most owned tensor memory alive during it
// above what was alive before.
template <class F>
std::pair<Value, size_t> with_peak(F&& call) {
  const size_t before = linnet::tensor::current_bytes();
  linnet::tensor::reset_peak_bytes();
  Value result = call();
  return {result, linnet::tensor::peak_bytes() - before};
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.numel() * x.element_size())) == 0;
}

// A chain of 4 MB temporaries, in a function body, a loop body and a block
// method, with shadowing, a `var`, a value aliased and a dead parameter.
const char* kChain = R"(
pub fn chain<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let a = x * 2.0
    let b = a + 1.0
    let c = b * 3.0
    let d = c - 1.0
    let e = d * 0.5
    return e
}
pub fn shadowed<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let a = x * 2.0
    let a = a + 1.0
    let kept = a
    let a = a * 3.0
    let b = a - 1.0
    return b + kept
}
pub fn looped<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    var total = x
    for i in 0..4 {
        let a = total * 2.0
        let b = a + 1.0
        let c = b * 0.25
        total = c
    }
    return total
}
pub fn dead_parameter<N: Dim>(x: Tensor[N; f32], y: Tensor[N; f32]) -> Tensor[N; f32] {
    let a = x + y
    let b = a * 2.0
    let c = b + 1.0
    return c
}
)";

// The same chain twice: `worded` also writes `a` after its last use, but
// only inside a comment and a string, which read nothing.
const char* kWorded = R"(
pub fn plain<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let a = x * 2.0
    let b = a + 1.0
    let c = b * (3.0 // `z` is dead here
        + 0.0)
    let note = "z"
    let d = c - 1.0
    return d
}
pub fn worded<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let a = x * 2.0
    let b = a + 1.0
    let c = b * (3.0 // `a` is dead here
        + 0.0)
    let note = "a"
    let d = c - 1.0
    return d
}
)";

// Gives the statements of module function `name` no source text, as a
// statement a tool synthesized would have.
void forget_statement_sources(TestProgram& program, const std::string& name) {
  bool found = false;
  for (const auto& module : program.loaded->program->modules()) {
    if (module->is_std) continue;
    for (auto& item : module->ast->items) {
      auto* function = item->as<linnet::syntax::ast::FunctionItem>();
      if (function == nullptr || function->name.text != name) continue;
      for (auto& statement : function->body.statements) statement->span = linnet::syntax::Span{};
      found = true;
    }
  }
  REQUIRE(found);
}

}  // namespace

TEST_CASE("locals are let go after their last use: same results, less memory", "[eval][liveness]") {
  auto releasing = load_source(kChain);
  auto keeping = load_source(kChain, keeping_locals());
  const int64_t n = int64_t{1} << 20;  // 4 MB per f32 tensor
  std::mt19937 rng(5);
  const Tensor x = random_tensor(rng, {n}, DType::F32);
  for (const char* function : {"chain", "shadowed", "looped"}) {
    INFO(function);
    auto [released, released_peak] = with_peak([&] { return call(releasing, function, {v(x)}, {{"N", dim(n)}}); });
    auto [kept, kept_peak] = with_peak([&] { return call(keeping, function, {v(x)}, {{"N", dim(n)}}); });
    CHECK(same_bits(released.tensor(), kept.tensor()));
    CHECK(released_peak < kept_peak);
  }
  // The caller's references stay: a parameter let go in the callee is not
  // freed while the caller holds it, and the caller's tensors are intact.
  const Tensor y = random_tensor(rng, {n}, DType::F32);
  const Tensor x_copy = x.contiguous().clone();
  const Value released = call(releasing, "dead_parameter", {v(x), v(y)}, {{"N", dim(n)}});
  const Value kept = call(keeping, "dead_parameter", {v(x), v(y)}, {{"N", dim(n)}});
  CHECK(same_bits(released.tensor(), kept.tensor()));
  CHECK(same_bits(x, x_copy));
}

TEST_CASE("a card's forward gives the same logits with less memory when locals are let go", "[eval][liveness][cards]") {
  GenericBindings generics{{"Vocab", dim(64)},   {"H", dim(64)},      {"Heads", dim(4)},   {"KvHeads", dim(2)},
                           {"HeadDim", dim(16)}, {"Inner", dim(64)},  {"Experts", dim(4)}, {"TopK", dim(2)},
                           {"Layers", dim(2)},   {"Window", dim(3)},  {"Batch", dim(1)},   {"MaxSeq", dim(32)},
                           {"T", dtype(DType::F32)}};
  auto releasing = load_inputs({card("gpt-oss-20b")});
  auto keeping = load_inputs({card("gpt-oss-20b")}, keeping_locals());
  auto released_model = random_model(*releasing, generics, true, random_mxfp4);
  auto kept_model = random_model(*keeping, generics, true, random_mxfp4);
  REQUIRE(released_model != nullptr);
  REQUIRE(kept_model != nullptr);
  const int64_t steps = 24;
  std::mt19937 rng(3);
  const Tensor tokens = random_integers(rng, {1, steps}, DType::I32, 0, 63);
  const GenericBindings shape{{"B", dim(1)}, {"S", dim(steps)}};
  auto [released, released_peak] =
      with_peak([&] { return entry(*releasing, *released_model, "forward", {v(tokens)}, shape); });
  auto [kept, kept_peak] = with_peak([&] { return entry(*keeping, *kept_model, "forward", {v(tokens)}, shape); });
  CHECK(same_bits(released.tensor(), kept.tensor()));
  CHECK(released_peak < kept_peak);
}

TEST_CASE("a name in a comment or a string keeps no local alive", "[eval][liveness]") {
  auto program = load_source(kWorded);
  const int64_t n = int64_t{1} << 20;
  std::mt19937 rng(7);
  const Tensor x = random_tensor(rng, {n}, DType::F32);
  auto [plain, plain_peak] = with_peak([&] { return call(program, "plain", {v(x)}, {{"N", dim(n)}}); });
  auto [worded, worded_peak] = with_peak([&] { return call(program, "worded", {v(x)}, {{"N", dim(n)}}); });
  CHECK(same_bits(plain.tensor(), worded.tensor()));
  // Reading `a` in the comment would keep its 4 MB alive through `c`.
  CHECK(worded_peak == plain_peak);
}

TEST_CASE("statements without source text still let go of their locals", "[eval][liveness]") {
  auto releasing = load_source(kChain);
  auto keeping = load_source(kChain, keeping_locals());
  for (TestProgram* program : {&releasing, &keeping}) {
    forget_statement_sources(*program, "chain");
    forget_statement_sources(*program, "looped");
  }
  const int64_t n = int64_t{1} << 20;
  std::mt19937 rng(9);
  const Tensor x = random_tensor(rng, {n}, DType::F32);
  for (const char* function : {"chain", "looped"}) {
    INFO(function);
    auto [released, released_peak] = with_peak([&] { return call(releasing, function, {v(x)}, {{"N", dim(n)}}); });
    auto [kept, kept_peak] = with_peak([&] { return call(keeping, function, {v(x)}, {{"N", dim(n)}}); });
    CHECK(same_bits(released.tensor(), kept.tensor()));
    CHECK(released_peak < kept_peak);
  }
}
