// Statements and control flow: bindings and patterns, `var` and assignment,
// `if`, `match` on optionals and enums, `static for` over ranges, `while`
// with carried variables, `for` loops and scans.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("let with tuple patterns and annotations", "[control]") {
  auto program = load_source(R"(
fn pair(x: Tensor[2; f32]) -> (Tensor[2; f32], f32) {
    return (x * 2.0, 1.5)
}
pub fn use_pair(x: Tensor[2; f32]) -> Tensor[2; f32] {
    let (doubled, offset) = pair(x)
    let half: f32 = 0.5
    let one: i64 = 1
    let shifted = doubled + offset * half + cast<f32>(one)
    return shifted
}
pub fn nested(x: Tensor[2; f32]) -> f32 {
    let ((a, b), c) = ((x[0], x[1]), 10.0)
    return a * b + c
}
pub fn unwrap(x: Tensor[2; f32]?) -> Tensor[2; f32] {
    let some(inner) = x
    return inner
}
)");
  CHECK(values(call_tensor(program, "use_pair", {v(f32({1, 2}, {2}))})) == std::vector<double>{3.75, 5.75});
  CHECK(call_tensor(program, "nested", {v(f32({3, 4}, {2}))}).item().to<double>() == 22.0);
  CHECK(values(call_tensor(program, "unwrap", {Value::some(v(f32({5, 6}, {2})))})) == std::vector<double>{5, 6});
  expect_error([&] { call(program, "unwrap", {Value::none()}); }, "E2117");
}

TEST_CASE("var and assignment keep their type", "[control]") {
  auto program = load_source(R"(
pub fn accumulate(x: Tensor[3; f32]) -> Tensor[3; f32] {
    var total = x
    total = total + x
    total = total * 2.0
    return total
}
pub fn counter() -> i64 {
    var n = 0
    n = n + 5
    return n
}
pub fn retype(x: Tensor[3; f32]) -> Tensor[3; f32] {
    var y = x
    y = cast<f64>(x)
    return x
}
pub fn reshape_var(x: Tensor[4; f32]) -> Tensor[4; f32] {
    var y = x
    y = reshape(x, [2, 2])
    return x
}
pub fn immutable(x: Tensor[3; f32]) -> Tensor[3; f32] {
    let y = x
    y = x
    return y
}
)");
  CHECK(values(call_tensor(program, "accumulate", {v(f32({1, 2, 3}, {3}))})) == std::vector<double>{4, 8, 12});
  Tensor n = call_tensor(program, "counter", {});
  CHECK(n.dtype() == DType::I64);
  CHECK(n.item().to<int64_t>() == 5);
  expect_error([&] { call(program, "retype", {v(f32({1, 2, 3}, {3}))}); }, "E2109");
  expect_error([&] { call(program, "reshape_var", {v(f32({1, 2, 3, 4}, {4}))}); }, "E2109");
  expect_error([&] { call(program, "immutable", {v(f32({1, 2, 3}, {3}))}); }, "E2108");
}

TEST_CASE("if chooses one branch; its condition is a scalar bool", "[control]") {
  auto program = load_source(R"(
pub fn pick(flag: bool, x: Tensor[2; f32]) -> Tensor[2; f32] {
    let y = if flag { x * 2.0 } else { x - 1.0 }
    return y
}
pub fn lazy(flag: bool) -> i64 {
    let never = iota<i64>(2)
    return if flag { 1 } else { never[9] }
}
pub fn tensor_condition(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return if x > 0.0 { x } else { x }
}
)");
  CHECK(values(call_tensor(program, "pick", {Value::scalar(DType::Bool, true), v(f32({1, 2}, {2}))})) ==
        std::vector<double>{2, 4});
  CHECK(values(call_tensor(program, "pick", {Value::scalar(DType::Bool, false), v(f32({1, 2}, {2}))})) ==
        std::vector<double>{0, 1});
  CHECK(call_tensor(program, "lazy", {Value::scalar(DType::Bool, true)}).item().to<int64_t>() == 1);
  expect_error([&] { call(program, "tensor_condition", {v(f32({1, -1}, {2}))}); }, "E2114");
}

TEST_CASE("match on optionals and enums; a constant scrutinee", "[control]") {
  auto program = load_source(R"(
pub enum Pooling {
    Mean,
    First,
}
const POOLING: Pooling = Pooling.First
pub fn biased(x: Tensor[2; f32], bias: Tensor[2; f32]? = none) -> Tensor[2; f32] {
    return match bias {
        some(b) => x + b
        none => x
    }
}
pub fn pool(x: Tensor[3; f32], kind: Pooling) -> f32 {
    return match kind {
        Mean => (sum[i] x[i]) / 3.0
        First => x[0]
    }
}
pub fn pool_constant(x: Tensor[3; f32]) -> f32 {
    return match POOLING {
        Mean => (sum[i] x[i]) / 3.0
        First => x[0]
    }
}
)");
  Tensor x = f32({1, 2}, {2});
  CHECK(values(call_tensor(program, "biased", {v(x)})) == std::vector<double>{1, 2});
  CHECK(values(call_tensor(program, "biased", {v(x), Value::some(v(f32({10, 20}, {2})))})) ==
        std::vector<double>{11, 22});
  // A bare tensor where an optional is expected must be wrapped.
  expect_error([&] { call(program, "biased", {v(x), v(f32({10, 20}, {2}))}); }, "E2101");
  Tensor three = f32({3, 6, 9}, {3});
  const auto& module = *program.loaded->program->modules().front();
  const auto* pooling = module.items.at("Pooling")->as<linnet::syntax::ast::EnumItem>();
  REQUIRE(pooling != nullptr);
  CHECK(call_tensor(program, "pool", {v(three), Value::enumeration(pooling, 0)}).item().to<double>() == 6.0);
  CHECK(call_tensor(program, "pool", {v(three), Value::enumeration(pooling, 1)}).item().to<double>() == 3.0);
  CHECK(call_tensor(program, "pool_constant", {v(three)}).item().to<double>() == 3.0);
}

TEST_CASE("static for over a range: the variable is an i64 value", "[control]") {
  auto program = load_source(R"(
pub fn unrolled<Steps: Dim>() -> Tensor[Steps; i32] {
    var produced = fill<i32>([Steps], 0)
    let slots = iota<i32>(Steps)
    static for i in 0..Steps {
        let written[s] = select(slots[s] == cast<i32>(i), cast<i32>(i) * 10, produced[s])
        produced = written
    }
    return produced
}
pub fn row_of<Steps: Dim>(keys: Tensor[Steps, 2; i64]) -> Tensor[Steps; i64] {
    var firsts = fill<i64>([Steps], 0)
    let slots = iota<i64>(Steps)
    static for i in 1..Steps {
        let key_i[j] = keys[i, j]
        let updated[s] = select(slots[s] == i, key_i[0], firsts[s])
        firsts = updated
    }
    return firsts
}
)");
  CHECK(values(call_tensor(program, "unrolled", {}, {{"Steps", dim(4)}})) == std::vector<double>{0, 10, 20, 30});
  Tensor keys = i64({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(values(call_tensor(program, "row_of", {v(keys)})) == std::vector<double>{0, 3, 5});
}

TEST_CASE("while carries its variables until the condition fails", "[control]") {
  auto program = load_source(R"(
pub fn until<MaxNew: Dim>(start: i32, stop: i32) -> (Tensor[MaxNew; i32], i32) {
    var produced = fill<i32>([MaxNew], 0)
    var count: i32 = 0
    var value = start
    var running = true
    let slots = iota<i32>(MaxNew)
    while running && count < MaxNew {
        let written[s] = select(slots[s] == count, value, produced[s])
        produced = written
        count = count + 1
        value = value * 2
        running = !(value > stop)
    }
    return (produced, count)
}
pub fn forever() -> i32 {
    var n: i32 = 0
    while true {
        n = n + 1
    }
    return n
}
)");
  Value r = call(program, "until", {scalar_i32(3), scalar_i32(20)}, {{"MaxNew", dim(6)}});
  // 3, 6, 12 are produced; 24 > 20 stops the loop.
  CHECK(values(r.elements()[0].tensor()) == std::vector<double>{3, 6, 12, 0, 0, 0});
  CHECK(r.elements()[1].tensor().item().to<int64_t>() == 3);
  Value capped = call(program, "until", {scalar_i32(1), scalar_i32(1000)}, {{"MaxNew", dim(4)}});
  CHECK(values(capped.elements()[0].tensor()) == std::vector<double>{1, 2, 4, 8});
  CHECK(capped.elements()[1].tensor().item().to<int64_t>() == 4);

  linnet::eval::Options limited;
  limited.max_loop_iterations = 1000;
  auto looping = load_source(R"(
pub fn forever() -> i32 {
    var n: i32 = 0
    while true {
        n = n + 1
    }
    return n
}
)",
                             limited);
  expect_error([&] { call(looping, "forever", {}); }, "E6005");
}

TEST_CASE("for loops and scans", "[control]") {
  auto program = load_source(R"(
pub fn running_sum<T: Dim>(xs: Tensor[T, 2; f32]) -> Tensor[T, 2; f32] {
    var h = fill<f32>([2], 0.0)
    let hs = for t in 0..T {
        let row[j] = xs[t, j]
        h = h + row
        yield h
    }
    return hs
}
pub fn pairs() -> (Tensor[3; i64], Tensor[3; i64]) {
    return for i in 0..3 {
        yield (i, i * i)
    }
}
pub fn plain_loop() -> i64 {
    var total: i64 = 0
    for i in 2..5 {
        total = total + i
    }
    return total
}
)");
  Tensor hs = call_tensor(program, "running_sum", {v(f32({1, 2, 3, 4, 5, 6}, {3, 2}))});
  CHECK(hs.shape() == Shape{3, 2});
  CHECK(values(hs) == std::vector<double>{1, 2, 4, 6, 9, 12});
  Value p = call(program, "pairs", {});
  CHECK(values(p.elements()[0].tensor()) == std::vector<double>{0, 1, 2});
  CHECK(values(p.elements()[1].tensor()) == std::vector<double>{0, 1, 4});
  CHECK(call_tensor(program, "plain_loop", {}).item().to<int64_t>() == 9);
}
