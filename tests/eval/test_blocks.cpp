// Blocks: generics with defaults and `where` clauses, parameters bound by
// path (optional ones absent when the weights lack them), optional
// sub-blocks, sub-block arrays, the parameter manifest, and `state` kept
// between entry calls.
#include "eval_test_util.hpp"

using namespace eval_test;
using linnet::eval::BlockInstance;
using linnet::eval::MapParameterSource;
using linnet::eval::ParameterInfo;
using linnet::eval::ParameterKind;

namespace {

const char* kModel = R"(
module model
use std.nn.linear::{Linear}

pub block Scale<N: Dim, T: Float = f32> {
    param weight: Tensor[N; T]
    param bias: Tensor[N; T]? = none
    pub fn forward<*S: Shape>(x: Tensor[*S, N; T]) -> Tensor[*S, N; T] {
        let scaled = x * weight
        return match bias {
            some(b) => scaled + b
            none => scaled
        }
    }
}

pub block Stack<N: Dim, Layers: Dim, T: Float = f32>
where Layers > 0 {
    sub layers: [Scale<N, T>; Layers]
    sub head: Linear<N, 2, T>
    sub extra: Scale<N, T>? = none
    state total: Tensor[N; T]
    state calls: Tensor[1; i32]

    pub entry forward<B: Dim>(x: Tensor[B, N; T]) -> Tensor[B, 2; T] {
        var h = x
        static for layer in layers {
            h = layer.forward(h)
        }
        let extended = match extra {
            some(e) => e.forward(h)
            none => h
        }
        return head.forward(extended)
    }

    pub entry accumulate(x: Tensor[N; T]) -> Tensor[N; T] {
        total = total + x
        calls = calls + 1
        return total
    }

    pub entry count() -> Tensor[1; i32] {
        return calls
    }

    pub entry first_weight() -> Tensor[N; T] {
        return layers[0].weight
    }

    pub entry assign_sub(x: Tensor[N; T]) -> Tensor[N; T] {
        head = x
        return x
    }
}
)";

GenericBindings stack_generics() { return {{"N", dim(3)}, {"Layers", dim(2)}}; }

MapParameterSource stack_weights(bool with_extra) {
  MapParameterSource source;
  source.set("layers.0.weight", f32({1, 2, 3}, {3}));
  source.set("layers.1.weight", f32({2, 2, 2}, {3}));
  source.set("layers.1.bias", f32({1, 0, -1}, {3}));
  source.set("head.weight", f32({1, 0, 0, 0, 1, 1}, {2, 3}));
  if (with_extra) source.set("extra.weight", f32({10, 10, 10}, {3}));
  return source;
}

Value run(Interpreter& interpreter, BlockInstance& instance, const std::string& entry, std::vector<Value> inputs) {
  EntryInputs call;
  call.positional = std::move(inputs);
  return interpreter.call(instance, entry, call);
}

}  // namespace

TEST_CASE("the parameter manifest lists paths, kinds, dtypes, shapes and optionality", "[blocks]") {
  auto program = load_source(kModel);
  std::vector<ParameterInfo> manifest = program->parameters("Stack", stack_generics());
  std::vector<std::string> described;
  for (const ParameterInfo& info : manifest) {
    described.push_back(std::string(linnet::eval::parameter_kind_name(info.kind)) + " " + info.path + " " +
                        std::string(linnet::tensor::dtype_name(info.dtype)) +
                        linnet::tensor::shape_to_string(info.shape) + (info.optional ? "?" : ""));
  }
  CHECK(described == std::vector<std::string>{
                         "param layers.0.weight f32[3]", "param layers.0.bias f32[3]?", "param layers.1.weight f32[3]",
                         "param layers.1.bias f32[3]?", "param head.weight f32[2, 3]", "param head.bias f32[2]?",
                         "param extra.weight f32[3]?", "param extra.bias f32[3]?", "state total f32[3]",
                         "state calls i32[1]"});
}

TEST_CASE("parameters bind by path; optional ones and optional sub-blocks follow the weights", "[blocks]") {
  auto program = load_source(kModel);
  Tensor x = f32({1, 1, 1, 2, 0, -1}, {2, 3});
  SECTION("without the optional sub-block") {
    MapParameterSource weights = stack_weights(false);
    auto model = program->instantiate("Stack", stack_generics(), weights);
    // layer 0: x * [1, 2, 3]; layer 1: * 2 + [1, 0, -1]; head rows pick
    // element 0 and the sum of elements 1 and 2.
    // Row [1, 1, 1] -> [1, 2, 3] -> [3, 4, 5] -> [3, 9].
    // Row [2, 0, -1] -> [2, 0, -3] -> [5, 0, -7] -> [5, -7].
    Tensor y = run(*program, *model, "forward", {v(x)}).tensor();
    CHECK(values(y) == std::vector<double>{3, 9, 5, -7});
    CHECK(weights.unused().empty());
  }
  SECTION("with it") {
    MapParameterSource weights = stack_weights(true);
    auto model = program->instantiate("Stack", stack_generics(), weights);
    Tensor y = run(*program, *model, "forward", {v(x)}).tensor();
    CHECK(values(y) == std::vector<double>{30, 90, 50, -70});
  }
  SECTION("a sub-array element's parameter read by path") {
    MapParameterSource weights = stack_weights(false);
    auto model = program->instantiate("Stack", stack_generics(), weights);
    CHECK(values(run(*program, *model, "first_weight", {}).tensor()) == std::vector<double>{1, 2, 3});
  }
}

TEST_CASE("missing or misshapen weights are reported with their path", "[blocks][errors]") {
  auto program = load_source(kModel);
  MapParameterSource missing = stack_weights(false);
  MapParameterSource partial;
  for (const auto& [path, tensor] : missing.tensors()) {
    if (path != "layers.1.weight") partial.set(path, tensor);
  }
  auto absent = expect_error([&] { program->instantiate("Stack", stack_generics(), partial); }, "E6003");
  CHECK(absent.diagnostic().message.find("layers.1.weight") != std::string::npos);

  MapParameterSource wrong = stack_weights(false);
  wrong.set("head.weight", f32({1, 2, 3, 4, 5, 6}, {3, 2}));
  auto shape = expect_error([&] { program->instantiate("Stack", stack_generics(), wrong); }, "E6003");
  CHECK(notes_of(shape).find("Tensor[2, 3; f32]") != std::string::npos);
  CHECK(notes_of(shape).find("f32[3, 2]") != std::string::npos);

  MapParameterSource dtype = stack_weights(false);
  dtype.set("layers.0.weight", bf16({1, 2, 3}, {3}));
  expect_error([&] { program->instantiate("Stack", stack_generics(), dtype); }, "E6003");
}

TEST_CASE("block generics: defaults apply, where clauses hold, unknown ones are refused", "[blocks][errors]") {
  auto program = load_source(kModel);
  MapParameterSource weights = stack_weights(false);
  expect_error([&] { program->instantiate("Stack", {{"N", dim(3)}, {"Layers", dim(0)}}, weights); }, "E2206");
  expect_error([&] { program->instantiate("Stack", {{"N", dim(3)}}, weights); }, "E2110");
  expect_error([&] { program->instantiate("Stack", {{"N", dim(3)}, {"Layers", dim(2)}, {"Q", dim(1)}}, weights); },
               "E2111");
  expect_error([&] { program->instantiate("Stack", {{"N", dim(3)}, {"Layers", dim(2)}, {"T", dtype(DType::I32)}}, weights); },
               "E2112");
  expect_error([&] { program->instantiate("Nothing", stack_generics(), weights); }, "E1201");
}

TEST_CASE("state starts at zero, is kept between entry calls and belongs to its instance", "[blocks]") {
  auto program = load_source(kModel);
  MapParameterSource weights = stack_weights(false);
  auto first = program->instantiate("Stack", stack_generics(), weights);
  auto second = program->instantiate("Stack", stack_generics(), weights);
  CHECK(values(*first->find_state("total")) == std::vector<double>{0, 0, 0});
  CHECK(values(run(*program, *first, "accumulate", {v(f32({1, 2, 3}, {3}))}).tensor()) == std::vector<double>{1, 2, 3});
  CHECK(values(run(*program, *first, "accumulate", {v(f32({1, 1, 1}, {3}))}).tensor()) == std::vector<double>{2, 3, 4});
  CHECK(values(run(*program, *first, "count", {}).tensor()) == std::vector<double>{2});
  CHECK(values(run(*program, *second, "count", {}).tensor()) == std::vector<double>{0});
  first->reset_state();
  CHECK(values(run(*program, *first, "count", {}).tensor()) == std::vector<double>{0});
  // Only `state` members (and `var` locals) are assigned.
  expect_error([&] { run(*program, *first, "assign_sub", {v(f32({1, 1, 1}, {3}))}); }, "E2108");
}

TEST_CASE("entries: generics inferred or given by name; only entries are called", "[blocks]") {
  auto program = load_source(kModel);
  MapParameterSource weights = stack_weights(false);
  auto model = program->instantiate("Stack", stack_generics(), weights);
  EntryInputs inputs;
  inputs.positional = {v(f32({1, 1, 1}, {1, 3}))};
  inputs.generics = {{"B", dim(1)}};
  CHECK(values(program->call(*model, "forward", inputs).tensor()) == std::vector<double>{3, 9});
  // The same input by name, its generic inferred.
  EntryInputs by_name;
  by_name.named = {{"x", v(f32({2, 0, -1}, {1, 3}))}};
  CHECK(values(program->call(*model, "forward", by_name).tensor()) == std::vector<double>{5, -7});
  inputs.generics = {{"B", dim(2)}};
  expect_error([&] { program->call(*model, "forward", inputs); }, "E2202");
  inputs.generics = {{"Z", dim(2)}};
  expect_error([&] { program->call(*model, "forward", inputs); }, "E6004");
  EntryInputs none;
  expect_error([&] { program->call(*model, "missing", none); }, "E2107");
}
