// `linnet explain`: the static walk on a small program written here (sites,
// dtypes, decisions, trip counts), and the built `linnet` on each card's
// `forward` and `decode`.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "linnet/eval/interpreter.hpp"
#include "linnet/ops/explain.hpp"
#include "linnet/ops/op_table.hpp"
#include "temp_dir.hpp"

namespace {

using linnet::eval::DType;
using linnet::eval::GenericValue;
using linnet::eval::NumericsPolicy;
using linnet::ops::ExplainedSite;
using linnet::ops::SiteDecision;

// A block with a sub array, a norm, a linear layer and a softmax, and an
// op whose body holds another op.
const char* kProgram = R"(module explained
use std.nn.linear::{Linear}
use std.nn.norm::{RmsNorm}
use std.nn.softmax::{softmax}
use std.nn.attention::{attention}

pub block Layer<H: Dim, T: Float> {
    sub norm: RmsNorm<H, T>
    sub proj: Linear<H, H, T>

    pub fn forward<S: Dim>(x: Tensor[S, H; T]) -> Tensor[S, H; T] {
        return proj.forward(norm.forward(x))
    }
}

pub block Model<H: Dim, Layers: Dim, T: Float = f32> {
    sub layers: [Layer<H, T>; Layers]

    pub entry forward<S: Dim>(x: Tensor[S, H; T]) -> Tensor[S, H; T] {
        var y = x
        static for layer in layers {
            y = layer.forward(y)
        }
        return softmax(y)
    }

    pub entry mixed(q: Tensor[1, 1, 4, H; T]) -> Tensor[1, 1, 4, H; T] {
        return attention(q, q, q, 0.5)
    }
}
)";

struct Loaded {
  std::unique_ptr<linnet::eval::LoadedProgram> program;
  const linnet::syntax::Module* module = nullptr;
  const linnet::syntax::ast::BlockItem* model = nullptr;
};

const Loaded& loaded_program() {
  static const Loaded loaded = [] {
    // The loader keeps the text it read, so the folder goes once it is loaded.
    const linnet_test::TempDir dir("linnet-explain-test");
    const std::string file = dir.write("explained.linnet", kProgram);
    linnet::syntax::Diagnostics diagnostics;
    Loaded result;
    result.program = linnet::eval::load_program({file},
                                                std::string(LINNET_SOURCE_DIR) + "/stdlib", diagnostics);
    REQUIRE(result.program);
    for (const auto& module : result.program->program->modules()) {
      if (module->name == "explained") result.module = module.get();
    }
    REQUIRE(result.module);
    result.model = result.module->items.at("Model")->as<linnet::syntax::ast::BlockItem>();
    REQUIRE(result.model);
    return result;
  }();
  return loaded;
}

linnet::ops::Explanation explain(const std::string& entry_name, NumericsPolicy policy, std::optional<DType> type) {
  const Loaded& loaded = loaded_program();
  linnet::ops::ExplainRequest request;
  request.program = loaded.program->program.get();
  request.sources = loaded.program->sources.get();
  request.module = loaded.module;
  request.block = loaded.model;
  for (const auto& member : loaded.model->members) {
    if (member->name.text == entry_name) request.entry = member->as<linnet::syntax::ast::FunctionItem>();
  }
  REQUIRE(request.entry);
  request.generics = {{"H", GenericValue::of_dim(8)}, {"Layers", GenericValue::of_dim(3)}, {"S", GenericValue::of_dim(2)}};
  if (type) request.generics["T"] = GenericValue::of_dtype(*type);
  request.policy = policy;
  const auto table = linnet::ops::cpu_op_table();
  request.table = table.get();
  return linnet::ops::explain_entry(request);
}

const ExplainedSite* site_of(const linnet::ops::Explanation& explanation, const std::string& op,
                             const std::string& within_prefix = "") {
  for (const ExplainedSite& site : explanation.sites) {
    if (site.op == op && site.within.rfind(within_prefix, 0) == 0) return &site;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("explain follows sub blocks, sub arrays and imports", "[explain]") {
  const auto explanation = explain("forward", NumericsPolicy::Equivalent, std::nullopt);  // T defaults to f32
  CHECK(explanation.entry == "explained::Model.forward");
  REQUIRE(explanation.sites.size() == 3);

  const ExplainedSite* norm = site_of(explanation, "std.nn.norm::rms_norm");
  REQUIRE(norm);
  CHECK(norm->dtype == DType::F32);
  CHECK(norm->decision == SiteDecision::Native);
  CHECK(norm->reached == 3);  // once per layer
  CHECK(norm->within == "std.nn.norm::RmsNorm.forward");
  CHECK(norm->location.find("stdlib/nn/norm.linnet:") != std::string::npos);

  const ExplainedSite* linear = site_of(explanation, "std.nn.linear::linear");
  REQUIRE(linear);
  CHECK(linear->reached == 3);
  CHECK(linear->reason == "native: f32 kernel, valid under equivalent (vector product (tensor::gemm), f32 accumulation, then the bias; a bf16 weight widened as it is loaded)");

  const ExplainedSite* softmax = site_of(explanation, "std.nn.softmax::softmax");
  REQUIRE(softmax);
  CHECK(softmax->reached == 1);
  CHECK(softmax->within == "explained::Model.forward");
  // `return softmax(y)` is line 24 of the program, the call at column 16.
  CHECK(softmax->location.size() > 8);
  CHECK(softmax->location.substr(softmax->location.size() - 6) == ":24:16");
}

TEST_CASE("explain reports the body under exact, and for f16", "[explain]") {
  for (const auto& [policy, type] : {std::pair{NumericsPolicy::Exact, DType::BF16}, std::pair{NumericsPolicy::Fast, DType::F16}}) {
    const auto explanation = explain("forward", policy, type);
    REQUIRE(explanation.sites.size() == 3);
    for (const ExplainedSite& site : explanation.sites) {
      INFO(site.op);
      CHECK(site.dtype == type);
      CHECK(site.decision == SiteDecision::Body);
      if (policy == NumericsPolicy::Exact) {
        CHECK(site.reason == "body: exact runs op bodies as written");
      } else {
        CHECK(site.reason.rfind("body: no f16 kernel registered", 0) == 0);
      }
    }
  }
}

TEST_CASE("explain walks into an op's body only where the body runs", "[explain]") {
  // attention's body calls softmax: listed under exact, absent when the
  // attention kernel runs.
  const auto exact = explain("mixed", NumericsPolicy::Exact, DType::BF16);
  const ExplainedSite* outer = site_of(exact, "std.nn.attention::attention");
  REQUIRE(outer);
  CHECK(outer->decision == SiteDecision::Body);
  const ExplainedSite* inner = site_of(exact, "std.nn.softmax::softmax", "std.nn.attention::attention (body)");
  REQUIRE(inner);
  CHECK(inner->dtype == DType::F32);  // the body's scores are f32

  const auto fast = explain("mixed", NumericsPolicy::Fast, DType::BF16);
  REQUIRE(fast.sites.size() == 1);
  CHECK(fast.sites[0].decision == SiteDecision::Native);
  CHECK(fast.sites[0].reason.find("valid under fast") != std::string::npos);
}

TEST_CASE("the rendered report has a line per site and a summary", "[explain]") {
  const std::string text = linnet::ops::render_explanation(explain("forward", NumericsPolicy::Equivalent, DType::BF16));
  CHECK(text.find("explain explained::Model.forward<") == 0);
  CHECK(text.find("numerics equivalent, op table cpu") != std::string::npos);
  CHECK(text.find("std.nn.linear::linear") != std::string::npos);
  CHECK(text.find("3 op call sites: 3 native, 0 body; per entry call 7 native and 0 body op calls") !=
        std::string::npos);
}

// --- The command on the cards ----------------------------------------------------------

namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run_linnet(const std::string& arguments) {
  const std::string command = std::string(LINNET_BINARY) + " " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), read);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string card(const std::string& name) { return std::string(LINNET_SOURCE_DIR) + "/nest/" + name; }

// The lines of `text` that mention `op`.
std::vector<std::string> lines_with(const std::string& text, const std::string& op) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find(op) != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// Whether a site line runs natively: its decision column reads `native`,
// followed by the reach count (the reasons may say "no native kernel").
bool runs_native(const std::string& line) { return line.find(" native  x") != std::string::npos; }

}  // namespace

TEST_CASE("linnet explain runs on every card's forward and decode", "[explain][cli]") {
  struct Expectation {
    std::string card;
    std::vector<std::string> forward_ops;  // ops forward must reach, natively under equivalent
    std::vector<std::string> decode_ops;
  };
  const std::vector<Expectation> cards{
      {"gpt-oss-20b",
       {"std.nn.embedding::embedding", "std.nn.norm::rms_norm", "std.nn.linear::linear", "std.nn.rope::rope",
        "std.nn.attention::sink_attention", "std.quant::dequantize_mxfp4", "std.nn.softmax::softmax"},
       {"std.nn.cache::write_at", "std.nn.attention::sink_attention", "std.quant::mxfp4_experts_shared",
        "std.quant::mxfp4_experts"}},
      {"mistral-7b-instruct-v0.3",
       {"std.nn.embedding::embedding", "std.nn.norm::rms_norm", "std.nn.linear::linear", "std.nn.rope::rope",
        "std.nn.attention::grouped_attention"},
       {"std.nn.cache::write_at", "std.nn.linear::linear", "std.nn.attention::grouped_attention"}},
      {"qwen3-8b",
       {"std.nn.embedding::embedding", "std.nn.norm::rms_norm", "std.nn.linear::linear", "std.nn.rope::rope",
        "std.nn.attention::grouped_attention"},
       {"std.nn.cache::write_at", "std.nn.linear::linear", "std.nn.attention::grouped_attention"}},
  };
  for (const Expectation& expected : cards) {
    for (const std::string& entry : {std::string("forward"), std::string("decode")}) {
      INFO(expected.card << " " << entry);
      const CommandResult equivalent =
          run_linnet("explain " + card(expected.card) + " --entry " + entry + " --numerics equivalent");
      INFO(equivalent.output);
      REQUIRE(equivalent.status == 0);
      CHECK(equivalent.output.find("numerics equivalent, op table cpu") != std::string::npos);
      for (const std::string& op : entry == "forward" ? expected.forward_ops : expected.decode_ops) {
        const std::vector<std::string> lines = lines_with(equivalent.output, op + " ");
        INFO(op);
        REQUIRE_FALSE(lines.empty());
        CHECK(lines[0].find(" bf16 ") != std::string::npos);  // the cards' T
        CHECK(runs_native(lines[0]));
      }

      const CommandResult exact = run_linnet("explain " + card(expected.card) + " --entry " + entry);
      REQUIRE(exact.status == 0);
      for (const std::string& line : lines_with(exact.output, "::")) CHECK_FALSE(runs_native(line));
      CHECK(exact.output.find("body: exact runs op bodies as written") != std::string::npos);
    }
  }
}

TEST_CASE("linnet explain takes a file with Block.method or a function", "[explain][cli]") {
  const linnet_test::TempDir dir("linnet-explain-cli");
  const std::string file = dir.write("explained.linnet", kProgram);

  const CommandResult method = run_linnet("explain " + file +
                                          " --entry Model.forward --bind H=8 --bind Layers=2 --bind T=bf16 "
                                          "--numerics equivalent");
  INFO(method.output);
  REQUIRE(method.status == 0);
  CHECK(method.output.find("explain explained::Model.forward<H = 8, Layers = 2, T = bf16>") == 0);
  const std::vector<std::string> linear = lines_with(method.output, "std.nn.linear::linear ");
  REQUIRE(linear.size() == 1);
  CHECK(linear[0].find(" bf16 native  x2  ") != std::string::npos);
  CHECK(method.output.find("3 op call sites: 3 native, 0 body; per entry call 5 native and 0 body op calls") !=
        std::string::npos);

  // An unknown generic is an input problem (E2111, exit 1), as for every command (docs/commands.md).
  const CommandResult unknown_generic = run_linnet("explain " + file + " --entry Model.forward --bind Q=3");
  CHECK(unknown_generic.status == 1);
  CHECK(unknown_generic.output.find("E2111") != std::string::npos);
  const CommandResult no_entry = run_linnet("explain " + file);
  CHECK(no_entry.status == 2);
}

TEST_CASE("linnet explain reads --bind and reports what has no kernel", "[explain][cli]") {
  const CommandResult f16 =
      run_linnet("explain " + card("qwen3-8b") + " --entry forward --numerics fast --bind T=f16 --bind Layers=2");
  INFO(f16.output);
  REQUIRE(f16.status == 0);
  CHECK(f16.output.find("body: no f16 kernel registered") != std::string::npos);
  // Every f16 op runs its body (an f32 softmax inside an attention body may
  // still run natively).
  for (const std::string& line : lines_with(f16.output, " f16 ")) CHECK_FALSE(runs_native(line));
  CHECK(lines_with(f16.output, " f16 ").size() > 5);

  const CommandResult bad = run_linnet("explain " + card("qwen3-8b") + " --entry no_such_entry");
  CHECK(bad.status == 2);
  const CommandResult missing = run_linnet("explain /no/such/card");
  CHECK(missing.status == 2);
}
