// The three cards in nest/ and the standard library check clean, generically
// and at the cards' own and the golden cases' bindings; bad bindings are
// caught at the `where` clause they break.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <simdjson.h>

#include "checker_test_util.hpp"

namespace {

using linnet::check::DriverOptions;
using linnet::check::testing::run_checker;
using linnet::check::testing::source_dir;

std::string card(const std::string& name) { return source_dir() + "/nest/" + name; }

const linnet::check::EntrySignature* entry(const linnet::check::Instance& instance, const std::string& name) {
  for (const auto& e : instance.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the standard library checks clean", "[check][cards]") {
  const auto run = run_checker({source_dir() + "/stdlib"});
  INFO(run.text);
  CHECK(run.errors.empty());
  CHECK(run.warnings.empty());
}

TEST_CASE("each card checks clean and prints its entries at its nest.toml bindings", "[check][cards]") {
  SECTION("gpt-oss-20b") {
    const auto run = run_checker({card("gpt-oss-20b")});
    INFO(run.text);
    REQUIRE(run.errors.empty());
    CHECK(run.warnings.empty());
    REQUIRE(run.instances.size() == 1);
    const auto& model = run.instances.front();
    CHECK(model.root.rfind("gpt_oss::Model<Vocab = 201088, H = 2880,", 0) == 0);
    REQUIRE(entry(model, "forward"));
    CHECK(entry(model, "forward")->text == "entry forward(tokens: Tensor[1, 8; i32]) -> Tensor[1, 8, 201088; bf16]");
    REQUIRE(entry(model, "step_packed"));
    CHECK(entry(model, "step_packed")->text.find("-> Tensor[2, 201088; bf16]") != std::string::npos);
    CHECK_FALSE(entry(model, "step_packed")->concrete);  // `P` stays a generic
  }
  SECTION("mistral-7b-instruct-v0.3") {
    const auto run = run_checker({card("mistral-7b-instruct-v0.3")});
    INFO(run.text);
    REQUIRE(run.errors.empty());
    CHECK(run.warnings.empty());
    REQUIRE(run.instances.size() == 1);
    REQUIRE(entry(run.instances.front(), "next_token"));
    CHECK(entry(run.instances.front(), "next_token")->text ==
          "entry next_token(tokens: Tensor[1, 8; i32]) -> Tensor[1, 32768; bf16]");
    REQUIRE(entry(run.instances.front(), "generate_until"));
    CHECK(entry(run.instances.front(), "generate_until")->text ==
          "entry generate_until<MaxNew>(token: Tensor[1, 1; i32], pos: i32, eos: i32) -> (Tensor[1, MaxNew; i32], i32)");
  }
  SECTION("qwen3-8b") {
    const auto run = run_checker({card("qwen3-8b")});
    INFO(run.text);
    REQUIRE(run.errors.empty());
    CHECK(run.warnings.empty());
    REQUIRE(run.instances.size() == 1);
    REQUIRE(entry(run.instances.front(), "hidden_packed"));
    CHECK(entry(run.instances.front(), "hidden_packed")->text.find("-> Tensor[P, 4096; bf16]") != std::string::npos);
  }
}

TEST_CASE("the cards check at every golden case's linnet_generics", "[check][cards]") {
  const std::pair<const char*, const char*> cases[] = {
      {"gptoss-a", "gpt-oss-20b"},
      {"mistral-a", "mistral-7b-instruct-v0.3"},
      {"mistral-trunc", "mistral-7b-instruct-v0.3"},
      {"qwen3-a", "qwen3-8b"},
  };
  for (const auto& [golden, card_name] : cases) {
    DYNAMIC_SECTION(golden) {
      simdjson::dom::parser parser;
      simdjson::dom::element meta = parser.load(source_dir() + "/golden/" + golden + "/meta.json");
      DriverOptions options;
      for (auto [key, value] : meta["linnet_generics"].get_object()) {
        std::string text;
        if (value.is_string()) {
          text = std::string(value.get_string().value());
        } else {
          text = std::to_string(value.get_int64().value());
        }
        options.bindings.push_back(std::string(key) + "=" + text);
      }
      options.bindings.push_back("B=" + std::to_string(meta["B"].get_int64().value()));
      options.bindings.push_back("S=" + std::to_string(meta["S"].get_int64().value()));
      const auto run = run_checker({card(card_name)}, options);
      INFO(run.text);
      REQUIRE(run.errors.empty());
      REQUIRE(run.instances.size() == 1);
      const auto* forward = entry(run.instances.front(), "forward");
      REQUIRE(forward);
      const std::string tokens = "Tensor[" + std::to_string(meta["B"].get_int64().value()) + ", " +
                                 std::to_string(meta["S"].get_int64().value()) + "; i32]";
      CHECK(forward->text.find(tokens) != std::string::npos);
      CHECK(forward->text.find(", 512; f32]") != std::string::npos);
    }
  }
}

TEST_CASE("bindings that break a `where` clause are reported at the clause", "[check][cards]") {
  DriverOptions options;
  options.bindings = {"Heads=3"};  // 4096 is not a multiple of 3
  const auto run = run_checker({card("mistral-7b-instruct-v0.3")}, options);
  CHECK(run.has_error("E2206"));
  CHECK(run.text.find("the bindings break `H % Heads == 0`, which `Model` requires") != std::string::npos);
  CHECK(run.instances.empty());

  DriverOptions bad_dtype;
  bad_dtype.bindings = {"T=i32"};
  CHECK(run_checker({card("qwen3-8b")}, bad_dtype).has_error("E2112"));

  DriverOptions entry_where;
  entry_where.bindings = {"S=0"};  // `next_token` needs `S > 0`
  const auto empty = run_checker({card("gpt-oss-20b")}, entry_where);
  CHECK(empty.has_error("E2206"));
  CHECK(empty.text.find("`S > 0`, which `Model.next_token` requires") != std::string::npos);
}

TEST_CASE("--root, --entry and --bind instantiate a plain file", "[check][cards]") {
  linnet::check::testing::TempDir dir;
  const std::string file = dir.write("heads.linnet", R"(module heads

pub block Heads<H: Dim, N: Dim>
where
    N > 0,
    H % N == 0
{
    param gain: Tensor[N, H / N; f32]

    pub entry split<B: Dim>(x: Tensor[B, H; f32]) -> Tensor[B, N, H / N; f32] {
        return reshape(x, [B, N, H / N]) * gain
    }
}
)");
  DriverOptions options;
  options.root = "Heads";
  options.entry = "split";
  options.bindings = {"H=12", "N=4", "B=2"};
  const auto run = run_checker({file}, options);
  INFO(run.text);
  REQUIRE(run.errors.empty());
  REQUIRE(run.instances.size() == 1);
  CHECK(run.instances.front().root == "heads::Heads<H = 12, N = 4>");
  REQUIRE(run.instances.front().entries.size() == 1);
  CHECK(run.instances.front().entries.front().text ==
        "entry split(x: Tensor[2, 12; f32]) -> Tensor[2, 4, 3; f32]");

  options.bindings = {"H=10", "N=4", "B=2"};
  const auto broken = run_checker({file}, options);
  CHECK(broken.has_error("E2206"));
}
