// The op table's lookup rules, its registrations against the standard
// library, and the dispatcher's behaviour per numerics policy.
#include "test_differential_support.hpp"

using namespace ops_test;
using linnet::ops::KernelRegistration;
using linnet::ops::RegistryOpTable;

namespace {

std::optional<Value> returns_unit(const linnet::eval::NativeCall&) { return Value::unit(); }

const linnet::syntax::ast::FunctionItem* find_function(const std::string& qualified) {
  const size_t split = qualified.find("::");
  const std::string module_name = qualified.substr(0, split), item = qualified.substr(split + 2);
  for (const auto& module : stdlib_program().program->modules()) {
    if (module->name != module_name) continue;
    const auto found = module->items.find(item);
    if (found == module->items.end()) return nullptr;
    return found->second->as<linnet::syntax::ast::FunctionItem>();
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a table chooses by op, dtype and policy, and says why", "[table]") {
  RegistryOpTable table("test");
  table.register_kernel({"m::op", DType::F32, NumericsPolicy::Equivalent, "plain f32", &returns_unit});
  table.register_kernel({"m::op", DType::BF16, NumericsPolicy::Equivalent, "f32 sums", &returns_unit});
  table.register_kernel({"m::op", DType::BF16, NumericsPolicy::Fast, "bf16 scores", &returns_unit});
  table.register_kernel({"m::fast_only", DType::F32, NumericsPolicy::Fast, "loose", &returns_unit});

  auto choice = table.find("m::op", DType::BF16, NumericsPolicy::Exact);
  CHECK(choice.kernel == nullptr);
  CHECK(choice.reason == "body: exact runs op bodies as written");

  choice = table.find("m::op", DType::BF16, NumericsPolicy::Equivalent);
  REQUIRE(choice.kernel != nullptr);
  CHECK(choice.kernel->summary == "f32 sums");
  CHECK(choice.reason == "native: bf16 kernel, valid under equivalent (f32 sums)");

  choice = table.find("m::op", DType::BF16, NumericsPolicy::Fast);
  REQUIRE(choice.kernel != nullptr);
  CHECK(choice.kernel->summary == "bf16 scores");
  CHECK(choice.reason == "native: bf16 kernel, valid under fast (bf16 scores)");

  // Under fast, an equivalent kernel still serves a dtype without a fast one.
  choice = table.find("m::op", DType::F32, NumericsPolicy::Fast);
  REQUIRE(choice.kernel != nullptr);
  CHECK(choice.kernel->summary == "plain f32");

  choice = table.find("m::op", DType::F16, NumericsPolicy::Equivalent);
  CHECK(choice.kernel == nullptr);
  CHECK(choice.reason == "body: no f16 kernel registered (kernels: f32, bf16)");

  choice = table.find("m::fast_only", DType::F32, NumericsPolicy::Equivalent);
  CHECK(choice.kernel == nullptr);
  CHECK(choice.reason == "body: the f32 kernel is valid only under fast");

  choice = table.find("m::other", DType::F32, NumericsPolicy::Fast);
  CHECK(choice.kernel == nullptr);
  CHECK(choice.reason == "body: no native kernel for this op");

  CHECK(table.has_op("m::op"));
  CHECK_FALSE(table.has_op("m::other"));
  CHECK(table.registrations().size() == 4);
}

TEST_CASE("a table refuses registrations that make no sense", "[table]") {
  RegistryOpTable table("test");
  table.register_kernel({"m::op", DType::F32, NumericsPolicy::Equivalent, "", &returns_unit});
  CHECK_THROWS_AS(table.register_kernel({"m::op", DType::F32, NumericsPolicy::Equivalent, "", &returns_unit}),
                  std::invalid_argument);
  CHECK_THROWS_AS(table.register_kernel({"m::op", DType::F32, NumericsPolicy::Exact, "", &returns_unit}),
                  std::invalid_argument);
  CHECK_THROWS_AS(table.register_kernel({"m::op", DType::BF16, NumericsPolicy::Equivalent, "", nullptr}),
                  std::invalid_argument);
}

TEST_CASE("every CPU kernel names a standard-library op with a dtype generic T", "[table]") {
  const auto registrations = linnet::ops::cpu_op_table()->registrations();
  REQUIRE(registrations.size() > 50);
  for (const KernelRegistration* registration : registrations) {
    INFO(registration->op);
    const linnet::syntax::ast::FunctionItem* function = find_function(registration->op);
    REQUIRE(function != nullptr);
    // rope_rows is a `fn` (see kernels_rope.cpp); everything else an `op`.
    if (registration->op != "std.nn.rope::rope_rows") {
      CHECK(function->function == linnet::syntax::ast::FunctionKind::Op);
    }
    bool has_t = false;
    for (const auto& generic : function->generics) has_t = has_t || generic.name.text == "T";
    CHECK(has_t);
    CHECK((registration->dtype == DType::F32 || registration->dtype == DType::BF16));
    CHECK(!registration->summary.empty());
  }
}

TEST_CASE("the CPU table covers the ops the issue names", "[table]") {
  const auto table = linnet::ops::cpu_op_table();
  for (const char* op : {
           "std.nn.linear::linear", "std.linalg::matmul", "std.linalg::batched_matmul",
           "std.nn.attention::attention", "std.nn.attention::grouped_attention", "std.nn.attention::attention_rows",
           "std.nn.attention::grouped_attention_rows", "std.nn.attention::sink_attention",
           "std.nn.attention::paged_attention", "std.nn.attention::paged_prefill_attention",
           "std.nn.softmax::softmax", "std.nn.norm::rms_norm", "std.nn.norm::layer_norm", "std.nn.rope::rope",
           "std.nn.embedding::embedding", "std.nn.cache::write_at", "std.nn.cache::write_span",
           "std.nn.cache::write_rows", "std.nn.cache::write_slot", "std.nn.cache::write_slots",
           "std.nn.cache::write_tokens", "std.nn.decoding::argmax", "std.nn.loss::cross_entropy",
           "std.nn.loss::log_softmax", "std.nn.loss::token_log_probs", "std.nn.moe::linear_experts",
           "std.nn.moe::linear_experts_shared", "std.nn.moe::combine_experts", "std.quant::dequantize_mxfp4",
           "std.quant::mxfp4_experts", "std.quant::mxfp4_experts_shared", "std.quant::mxfp4_linear_experts_shared",
           "std.quant::mxfp4_combine_experts"}) {
    INFO(op);
    for (DType type : {DType::F32, DType::BF16}) {
      CHECK(table->find(op, type, NumericsPolicy::Equivalent).kernel != nullptr);
      CHECK(table->find(op, type, NumericsPolicy::Exact).kernel == nullptr);
    }
    CHECK(table->find(op, DType::F16, NumericsPolicy::Fast).kernel == nullptr);
  }
  // The attention family has fast-only bf16 kernels; nothing else does.
  for (const auto* registration : table->registrations()) {
    if (registration->policy == NumericsPolicy::Fast) {
      CHECK(registration->op.rfind("std.nn.attention::", 0) == 0);
      CHECK(registration->dtype == DType::BF16);
    }
  }
}

TEST_CASE("the dispatcher runs the table only where the policy allows", "[table]") {
  std::mt19937 rng(501);
  const Tensor x = random_tensor(rng, {3, 8}, DType::F32);
  for (NumericsPolicy policy : {NumericsPolicy::Exact, NumericsPolicy::Equivalent, NumericsPolicy::Fast}) {
    linnet::eval::Options options;
    options.numerics = policy;
    options.dispatcher = linnet::ops::make_cpu_dispatcher();
    Interpreter interpreter(stdlib_program(), options);
    EntryInputs inputs;
    inputs.positional = {v(x)};
    interpreter.call_function("std.nn.softmax::softmax", inputs);
    const auto& counts = interpreter.stats().at("std.nn.softmax::softmax");
    CHECK(counts.native == (policy == NumericsPolicy::Exact ? 0 : 1));
  }
  // f16 has no kernel: the body runs under every policy.
  linnet::eval::Options options;
  options.numerics = NumericsPolicy::Fast;
  options.dispatcher = linnet::ops::make_cpu_dispatcher();
  Interpreter interpreter(stdlib_program(), options);
  EntryInputs inputs;
  inputs.positional = {v(x.to(DType::F16))};
  interpreter.call_function("std.nn.softmax::softmax", inputs);
  CHECK(interpreter.stats().at("std.nn.softmax::softmax").native == 0);
  CHECK(interpreter.stats().at("std.nn.softmax::softmax").body == 1);
}

TEST_CASE("call_dtype reads T, else the first tensor argument", "[table]") {
  const linnet::syntax::ast::FunctionItem* softmax = find_function("std.nn.softmax::softmax");
  REQUIRE(softmax != nullptr);
  const std::vector<Value> arguments{v(Tensor::zeros(DType::BF16, {2}))};
  const GenericBindings with_t{{"T", dtype(DType::F32)}};
  CHECK(linnet::ops::call_dtype({*softmax, "std.nn.softmax::softmax", with_t, arguments, NumericsPolicy::Fast}) ==
        DType::F32);
  const GenericBindings without_t{{"N", dim(2)}};
  CHECK(linnet::ops::call_dtype({*softmax, "std.nn.softmax::softmax", without_t, arguments, NumericsPolicy::Fast}) ==
        DType::BF16);
  const std::vector<Value> none;
  CHECK_FALSE(
      linnet::ops::call_dtype({*softmax, "std.nn.softmax::softmax", without_t, none, NumericsPolicy::Fast}).has_value());
}
