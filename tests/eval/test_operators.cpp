// Operators and contextual literals: a literal takes the dtype of what it
// meets, typed operands must share a dtype, integer arithmetic wraps and
// truncates, compile-time integers fold exactly, and bf16 results round to
// bf16 after every operation. Expected values are worked out by hand.
#include "eval_test_util.hpp"

using namespace eval_test;

TEST_CASE("float literals take the dtype of the tensor they meet", "[operators]") {
  auto program = load_source(R"(
pub fn affine<N: Dim, T: Float>(x: Tensor[N; T]) -> Tensor[N; T] {
    return x * 2.0 + 0.5
}
pub fn triple_less<N: Dim, T: Float>(x: Tensor[N; T]) -> Tensor[N; T] {
    return x * 3.0 - 0.0078125
}
pub fn halve_dim<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x * N
}
)");
  SECTION("f32") {
    Tensor r = call_tensor(program, "affine", {v(f32({1, -2, 0.25f}, {3}))});
    CHECK(r.dtype() == DType::F32);
    CHECK(values(r) == std::vector<double>{2.5, -3.5, 1.0});
  }
  SECTION("f64") {
    Tensor r = call_tensor(program, "affine", {v(f64({0.1}, {1}))});
    CHECK(r.dtype() == DType::F64);
    CHECK(values(r)[0] == 0.1 * 2.0 + 0.5);
  }
  SECTION("bf16 rounds each operation") {
    // x = 1 + 2^-7 is a bf16 value. x * 3 = 3.0234375 lies halfway between
    // the bf16 neighbours 3.015625 and 3.03125 and rounds to the even one,
    // 3.03125; minus 2^-7 gives 3.0234375 again, which rounds to 3.03125.
    // Rounding once at the end would give 3.015625 instead.
    Tensor r = call_tensor(program, "triple_less", {v(bf16({1.0078125f}, {1}))});
    CHECK(r.dtype() == DType::BF16);
    CHECK(values(r)[0] == 3.03125);
    Tensor wide = call_tensor(program, "triple_less", {v(f32({1.0078125f}, {1}))});
    CHECK(values(wide)[0] == 3.015625);
  }
  SECTION("a dimension is a contextual integer") {
    Tensor r = call_tensor(program, "halve_dim", {v(f32({1, 2, 3, 4}, {4}))});
    CHECK(values(r) == std::vector<double>{4, 8, 12, 16});
  }
}

TEST_CASE("integer literals adopt integer and float dtypes; float literals only float ones", "[operators]") {
  auto program = load_source(R"(
pub fn bump(x: Tensor[3; i32]) -> Tensor[3; i32] {
    return x + 1
}
pub fn scale(x: Tensor[3; f32]) -> Tensor[3; f32] {
    return x * 3
}
pub fn wrong(x: Tensor[3; i32]) -> Tensor[3; i32] {
    return x * 0.5
}
pub fn too_big(x: Tensor[2; u8]) -> Tensor[2; u8] {
    return x + 256
}
)");
  CHECK(values(call_tensor(program, "bump", {v(i32({1, 2, 3}, {3}))})) == std::vector<double>{2, 3, 4});
  CHECK(values(call_tensor(program, "scale", {v(f32({1, 2, 3}, {3}))})) == std::vector<double>{3, 6, 9});
  expect_error([&] { call(program, "wrong", {v(i32({1, 2, 3}, {3}))}); }, "E2103");
  expect_error([&] { call(program, "too_big", {v(u8({1, 2}, {2}))}); }, "E2105");
}

TEST_CASE("typed operands never promote", "[operators]") {
  auto program = load_source(R"(
pub fn mixed(a: Tensor[2; f32], b: Tensor[2; bf16]) -> Tensor[2; f32] {
    return a + b
}
pub fn scalar_variable(a: Tensor[2; bf16], k: f32) -> Tensor[2; bf16] {
    return a * k
}
)");
  auto error = expect_error([&] { call(program, "mixed", {v(f32({1, 2}, {2})), v(bf16({1, 2}, {2}))}); }, "E2103");
  CHECK(notes_of(error).find("f32") != std::string::npos);
  CHECK(notes_of(error).find("bf16") != std::string::npos);
  expect_error([&] { call(program, "scalar_variable", {v(bf16({1, 2}, {2})), scalar_f32(2)}); }, "E2103");
}

TEST_CASE("integer arithmetic wraps and truncates toward zero", "[operators]") {
  auto program = load_source(R"(
pub fn ops(a: Tensor[4; i32], b: Tensor[4; i32]) -> (Tensor[4; i32], Tensor[4; i32], Tensor[4; i32]) {
    return (a / b, a % b, a * b)
}
pub fn grow(a: Tensor[2; i8]) -> Tensor[2; i8] {
    return a + 100
}
pub fn unsigned_sub(a: Tensor[1; u32]) -> Tensor[1; u32] {
    return a - 1
}
)");
  Value result = call(program, "ops", {v(i32({7, -7, 7, -7}, {4})), v(i32({2, 2, -2, -2}, {4}))});
  REQUIRE(result.kind() == Value::Kind::Tuple);
  CHECK(values(result.elements()[0].tensor()) == std::vector<double>{3, -3, -3, 3});
  CHECK(values(result.elements()[1].tensor()) == std::vector<double>{1, -1, 1, -1});
  CHECK(values(result.elements()[2].tensor()) == std::vector<double>{14, -14, -14, 14});
  // 100 + 100 = 200 wraps to 200 - 256 = -56 in i8.
  CHECK(values(call_tensor(program, "grow", {v(Tensor::from_vector(std::vector<int8_t>{100, -100}, {2}))})) ==
        std::vector<double>{-56, 0});
  // 0 - 1 wraps to 2^32 - 1 in u32.
  CHECK(values(call_tensor(program, "unsigned_sub", {v(Tensor::from_vector(std::vector<uint32_t>{0}, {1}))})) ==
        std::vector<double>{4294967295.0});
}

TEST_CASE("integer division by zero is a runtime error", "[operators][errors]") {
  auto program = load_source(R"(
pub fn divide(a: Tensor[3; i32], b: Tensor[3; i32]) -> Tensor[3; i32] {
    let q = a / b
    return q
}
)");
  auto error = expect_error([&] { call(program, "divide", {v(i32({1, 2, 3}, {3})), v(i32({1, 0, 1}, {3}))}); },
                            "E6002");
  CHECK(error.diagnostic().span.valid());
  CHECK(program->render(error).find("a / b") != std::string::npos);
}

TEST_CASE("compile-time integers fold exactly", "[operators]") {
  auto program = load_source(R"(
const PATCH = 16
pub fn sizes<A: Dim, B: Dim>() -> Tensor[(A + B) * 2 - A / B, 2; i64] {
    let n = (A + B) * 2 - A / B
    let rows = iota<i64>(n)
    let pairs[r, c] = rows[r] + iota<i64>(2)[c] * 0
    return pairs
}
pub fn constants() -> (i64, i32, bool) {
    let mixed: i64 = PATCH * 3 % 7 - (0 - 9) / 2
    let shifted: i32 = shl(1, 10) | 5 ^ 1
    let compare = PATCH / 3 == 5 && min(3, PATCH) < max(2, 1)
    return (mixed, shifted, compare)
}
)");
  Tensor t = call_tensor(program, "sizes", {}, {{"A", dim(7)}, {"B", dim(2)}});
  // (7 + 2) * 2 - 7 / 2 = 18 - 3 = 15.
  CHECK(t.shape() == Shape{15, 2});
  Value c = call(program, "constants", {});
  // 16 * 3 % 7 = 48 % 7 = 6; (0 - 9) / 2 = -4 (truncated); 6 - (-4) = 10.
  CHECK(c.elements()[0].tensor().item().to<int64_t>() == 10);
  CHECK(c.elements()[0].tensor().dtype() == DType::I64);
  // `|` binds looser than `^`: (1 << 10) | (5 ^ 1) = 1024 | 4 = 1028.
  CHECK(c.elements()[1].tensor().item().to<int64_t>() == 1028);
  // 16 / 3 == 5 and min(3, 16) = 3 < max(2, 1) = 2 is false.
  CHECK(c.elements()[2].tensor().item().to<bool>() == false);
}

TEST_CASE("comparisons, logical and bitwise operators", "[operators]") {
  auto program = load_source(R"(
pub fn masks(a: Tensor[4; i32], b: Tensor[4; i32]) -> (Tensor[4; bool], Tensor[4; bool], Tensor[4; bool]) {
    let lt = a < b
    let eq = a == b
    return (lt & !eq, lt | eq, (a >= b) ^ true)
}
pub fn bits(a: Tensor[3; u8]) -> (Tensor[3; u8], Tensor[3; u8], Tensor[3; u8]) {
    return (a & 15, shr(a, 4), shl(a, 1))
}
pub fn signed_shift(a: Tensor[2; i32]) -> Tensor[2; i32] {
    return shr(a, 1)
}
pub fn short_circuit(flag: bool) -> bool {
    let never = iota<i64>(2)
    return flag || never[5] > 0
}
)");
  Value m = call(program, "masks", {v(i32({1, 2, 3, 4}, {4})), v(i32({2, 2, 1, 9}, {4}))});
  CHECK(values(m.elements()[0].tensor()) == std::vector<double>{1, 0, 0, 1});
  CHECK(values(m.elements()[1].tensor()) == std::vector<double>{1, 1, 0, 1});
  CHECK(values(m.elements()[2].tensor()) == std::vector<double>{1, 0, 0, 1});
  Value b = call(program, "bits", {v(u8({0xAB, 0x10, 0xFF}, {3}))});
  CHECK(values(b.elements()[0].tensor()) == std::vector<double>{0xB, 0x0, 0xF});
  CHECK(values(b.elements()[1].tensor()) == std::vector<double>{0xA, 0x1, 0xF});
  // u8 shifts wrap at 8 bits: 0xAB << 1 = 0x156 -> 0x56.
  CHECK(values(b.elements()[2].tensor()) == std::vector<double>{0x56, 0x20, 0xFE});
  // Arithmetic shift keeps the sign.
  CHECK(values(call_tensor(program, "signed_shift", {v(i32({-7, 7}, {2}))})) == std::vector<double>{-4, 3});
  // `||` does not evaluate its right side when the left decides.
  CHECK(call(program, "short_circuit", {Value::scalar(DType::Bool, true)}).tensor().item().to<bool>());
  expect_error([&] { call(program, "short_circuit", {Value::scalar(DType::Bool, false)}); }, "E2209");
}

TEST_CASE("broadcasting is right-aligned", "[operators]") {
  auto program = load_source(R"(
pub fn add_rows(x: Tensor[2, 3; f32], b: Tensor[3; f32]) -> Tensor[2, 3; f32] {
    return x + b
}
pub fn bad(x: Tensor[2, 3; f32], b: Tensor[2; f32]) -> Tensor[2, 3; f32] {
    return x + b
}
)");
  Tensor r = call_tensor(program, "add_rows", {v(f32({1, 2, 3, 4, 5, 6}, {2, 3})), v(f32({10, 20, 30}, {3}))});
  CHECK(values(r) == std::vector<double>{11, 22, 33, 14, 25, 36});
  expect_error([&] { call(program, "bad", {v(f32({1, 2, 3, 4, 5, 6}, {2, 3})), v(f32({1, 2}, {2}))}); }, "E2207");
}
