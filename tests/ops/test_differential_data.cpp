// Differential tests of the kernels that must agree with their bodies bit
// for bit: rope and rope_rows (the body's three roundings, repeated), the
// embedding lookup and the std.nn.cache writes (data movement), including
// the edge cases the bodies define: positions outside the cache, spans
// hanging over its end, repeated places (the later value wins).
#include "test_differential_support.hpp"

using namespace ops_test;

TEST_CASE("rope agrees with its body bit for bit", "[differential][data]") {
  // Head dims whose halves are under a vector, one vector and a part, and
  // several vectors (the AVX-512 rows take 16 lanes at a time).
  for (int64_t head_dim : {16, 40, 64, 130}) {
    for (DType type : {DType::F32, DType::BF16}) {
      std::mt19937 rng(static_cast<uint32_t>(301 + head_dim));
      const Tensor x = random_tensor(rng, {2, 3, 5, head_dim}, type, -4.0, 4.0);
      const Tensor cos_table = random_tensor(rng, {5, head_dim}, type);
      const Tensor sin_table = random_tensor(rng, {5, head_dim}, type);
      OpCall call{"std.nn.rope::rope", {v(x), v(cos_table), v(sin_table)},
                  {{"B", dim(2)}, {"H", dim(3)}, {"S", dim(5)}, {"D", dim(head_dim)}, {"T", dtype(type)}}};
      const Results results = run_both(call);
      require_identical(label(call, type, "D " + std::to_string(head_dim)), results.native, results.body);
    }
  }
}

TEST_CASE("the rope_rows kernel agrees with the function's body bit for bit", "[differential][data]") {
  // rope_rows is a `fn`, so the interpreter never offers it to the table;
  // its kernel is called directly with the call the interpreter would make.
  const auto& program = *stdlib_program().program;
  const linnet::syntax::ast::FunctionItem* function = nullptr;
  for (const auto& module : program.modules()) {
    if (module->name != "std.nn.rope") continue;
    function = module->items.at("rope_rows")->as<linnet::syntax::ast::FunctionItem>();
  }
  REQUIRE(function != nullptr);
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(311);
    const Tensor x = random_tensor(rng, {3, 2, 1, 8}, type, -4.0, 4.0);
    const Tensor cos_rows = random_tensor(rng, {3, 1, 8}, type);
    const Tensor sin_rows = random_tensor(rng, {3, 1, 8}, type);
    OpCall call{"std.nn.rope::rope_rows", {v(x), v(cos_rows), v(sin_rows)},
                {{"B", dim(3)}, {"H", dim(2)}, {"S", dim(1)}, {"D", dim(8)}, {"T", dtype(type)}}};
    Interpreter interpreter(stdlib_program());
    EntryInputs inputs;
    inputs.positional = call.positional;
    inputs.generics = call.generics;
    const Tensor body = interpreter.call_function(call.op, inputs).tensor();

    const auto choice = linnet::ops::cpu_op_table()->find(call.op, type, NumericsPolicy::Equivalent);
    REQUIRE(choice.kernel != nullptr);
    const linnet::eval::NativeCall native{*function, call.op, call.generics, call.positional,
                                          NumericsPolicy::Equivalent};
    const std::optional<Value> result = choice.kernel->run(native);
    REQUIRE(result.has_value());
    require_identical(label(call, type), result->tensor(), body);
  }
}

TEST_CASE("embedding agrees with its body bit for bit", "[differential][data]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(321);
    const Tensor table = random_tensor(rng, {11, 6}, type);
    const Tensor ids = i32_tensor({0, 10, 3, 3, 7, 1}, {2, 3});
    OpCall call{"std.nn.embedding::embedding", {v(ids), v(table)},
                {{"S", shape({2, 3})}, {"Vocab", dim(11)}, {"H", dim(6)}, {"T", dtype(type)}}};
    const Results results = run_both(call);
    require_identical(label(call, type), results.native, results.body);
  }
}

TEST_CASE("embedding leaves an id outside the vocabulary to the body", "[differential][data]") {
  std::mt19937 rng(322);
  linnet::eval::Options options;
  options.numerics = NumericsPolicy::Equivalent;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = {v(i32_tensor({2, 11}, {2})), v(random_tensor(rng, {11, 4}, DType::F32))};
  REQUIRE_THROWS_AS(interpreter.call_function("std.nn.embedding::embedding", inputs), linnet::eval::EvalError);
  CHECK(interpreter.stats().at("std.nn.embedding::embedding").native == 0);
  CHECK(interpreter.stats().at("std.nn.embedding::embedding").body == 1);
}

namespace {

// A cache [B, H, S, D] and the generics every write shares.
struct Cache {
  static constexpr int64_t kRows = 3, kHeads = 2, kPositions = 6, kDim = 4;
  Tensor values;
  GenericBindings generics(DType type) const {
    return {{"B", dim(kRows)}, {"H", dim(kHeads)}, {"S", dim(kPositions)}, {"D", dim(kDim)}, {"T", dtype(type)}};
  }
};

Cache random_cache(std::mt19937& rng, DType type) {
  return {random_tensor(rng, {Cache::kRows, Cache::kHeads, Cache::kPositions, Cache::kDim}, type)};
}

void check_write(const OpCall& call, DType type, const std::string& detail) {
  const Results results = run_both(call);
  require_identical(label(call, type, detail), results.native, results.body);
}

}  // namespace

TEST_CASE("the cache writes agree with their bodies bit for bit", "[differential][data]") {
  for (DType type : {DType::F32, DType::BF16}) {
    std::mt19937 rng(331);
    const Cache cache = random_cache(rng, type);
    const int64_t B = Cache::kRows, H = Cache::kHeads, D = Cache::kDim;

    SECTION(std::string("write_at ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {B, H, 1, D}, type);
      for (int32_t at : {0, 5, 6, -1}) {
        check_write(OpCall{"std.nn.cache::write_at", {v(cache.values), v(value), i32_scalar(at)}, cache.generics(type)},
                    type, "at " + std::to_string(at));
      }
    }
    SECTION(std::string("write_span ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {B, H, 3, D}, type);
      GenericBindings generics = cache.generics(type);
      generics["N"] = dim(3);
      for (int32_t at : {0, 2, 4, -2, 7, std::numeric_limits<int32_t>::min()}) {
        check_write(OpCall{"std.nn.cache::write_span", {v(cache.values), v(value), i32_scalar(at)}, generics}, type,
                    "at " + std::to_string(at));
      }
    }
    SECTION(std::string("write_rows ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {B, H, 1, D}, type);
      check_write(OpCall{"std.nn.cache::write_rows", {v(cache.values), v(value), v(i32_tensor({5, 0, 9}, {B}))},
                         cache.generics(type)},
                  type, "positions 5, 0 and 9 (outside)");
    }
    SECTION(std::string("write_slot ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {1, H, 2, D}, type);
      GenericBindings generics = cache.generics(type);
      generics["N"] = dim(2);
      for (auto [slot, at] : std::vector<std::pair<int32_t, int32_t>>{{1, 0}, {2, 5}, {3, 1}, {0, -1}}) {
        check_write(OpCall{"std.nn.cache::write_slot",
                           {v(cache.values), v(value), i32_scalar(slot), i32_scalar(at)}, generics},
                    type, "slot " + std::to_string(slot) + " at " + std::to_string(at));
      }
    }
    SECTION(std::string("write_slots ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {4, H, 2, D}, type);
      GenericBindings generics = cache.generics(type);
      generics["M"] = dim(4);
      generics["N"] = dim(2);
      // Slot 2 repeats (value row 3 wins); slot 7 is outside the cache.
      check_write(OpCall{"std.nn.cache::write_slots",
                         {v(cache.values), v(value), v(i32_tensor({2, 7, 0, 2}, {4})), i32_scalar(4)}, generics},
                  type, "a repeated and an outside slot, span over the end");
    }
    SECTION(std::string("write_tokens ") + std::string(linnet::tensor::dtype_name(type))) {
      const Tensor value = random_tensor(rng, {1, H, 6, D}, type);
      GenericBindings generics = cache.generics(type);
      generics["P"] = dim(6);
      // (1, 2) repeats (token 4 wins); (3, 0) and (0, 6) are outside.
      const Tensor rows = i32_tensor({1, 0, 3, 2, 1, 0}, {6});
      const Tensor positions = i32_tensor({2, 5, 0, 0, 2, 6}, {6});
      check_write(OpCall{"std.nn.cache::write_tokens", {v(cache.values), v(value), v(rows), v(positions)}, generics},
                  type, "repeated and outside places");
    }
  }
}

TEST_CASE("a cache write takes its value from a view", "[differential][data]") {
  // The cards write keys that are permuted views of a projection.
  std::mt19937 rng(341);
  const Cache cache = random_cache(rng, DType::F32);
  const Tensor projected = random_tensor(rng, {Cache::kRows, 2, Cache::kHeads, Cache::kDim}, DType::F32);
  const Tensor value = projected.permute({0, 2, 1, 3});
  REQUIRE_FALSE(value.is_contiguous());
  GenericBindings generics = cache.generics(DType::F32);
  generics["N"] = dim(2);
  check_write(OpCall{"std.nn.cache::write_span", {v(cache.values), v(value), i32_scalar(3)}, generics}, DType::F32,
              "permuted value");
}
