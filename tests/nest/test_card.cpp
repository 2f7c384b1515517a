// nest.toml, --bind values, and how a card's generics are bound and checked.
#include <catch2/catch.hpp>

#include <optional>

#include "linnet/nest/card.hpp"
#include "linnet/nest/generics.hpp"
#include "linnet/nest/session.hpp"
#include "safetensors_builder.hpp"
#include "test_run_golden.hpp"

using namespace linnet;
using linnet::nest::testing::TempDir;
using nest_test::card_path;
using nest_test::source_path;

namespace {

std::optional<nest::Card> read(const std::string& directory, syntax::Diagnostics& diagnostics) {
  syntax::SourceManager sources;
  return nest::read_card(directory, sources, diagnostics);
}

std::vector<std::string> codes_of(const syntax::Diagnostics& diagnostics) {
  std::vector<std::string> codes;
  for (const syntax::Diagnostic& diagnostic : diagnostics.all()) codes.push_back(diagnostic.code);
  return codes;
}

bool mentions(const syntax::Diagnostics& diagnostics, const std::string& text) {
  for (const syntax::Diagnostic& diagnostic : diagnostics.all()) {
    if (diagnostic.message.find(text) != std::string::npos) return true;
    for (const std::string& note : diagnostic.notes) {
      if (note.find(text) != std::string::npos) return true;
    }
  }
  return false;
}

syntax::ast::GenericParam generic(const std::string& name, syntax::ast::GenericKind kind, bool pack = false) {
  syntax::ast::GenericParam param;
  param.name.text = name;
  param.constraint = kind;
  param.is_pack = pack;
  param.constraint_name.text = kind == syntax::ast::GenericKind::Float ? "Float" : "";
  return param;
}

// A session that stops after the parameter manifest (no weights).
std::unique_ptr<nest::Session> manifest_session(const std::string& card, std::vector<std::string> binds) {
  nest::SessionOptions options;
  options.card = card;
  options.binds = std::move(binds);
  options.std_dir = source_path("stdlib");
  options.load_weights = false;
  return std::make_unique<nest::Session>(options);
}

}  // namespace

TEST_CASE("the three cards' nest.toml files read completely", "[nest][card]") {
  syntax::Diagnostics diagnostics;
  const std::optional<nest::Card> mistral = read(card_path("mistral-7b-instruct-v0.3"), diagnostics);
  REQUIRE(mistral);
  CHECK(diagnostics.all().empty());
  CHECK(mistral->name == "mistral-7b-instruct-v0.3");
  CHECK(mistral->title == "Mistral 7B Instruct v0.3");
  CHECK(mistral->source_path == "src/lib.linnet");
  CHECK(mistral->root == "Model");
  CHECK(mistral->entry == "forward");
  REQUIRE(mistral->generic("H"));
  CHECK(mistral->generic("H")->value == eval::GenericValue::of_dim(4096));
  CHECK(mistral->generic("T")->value == eval::GenericValue::of_dtype(tensor::DType::BF16));
  CHECK(mistral->generics.size() == 9);
  REQUIRE(mistral->check.size() == 2);
  REQUIRE(mistral->weights);
  CHECK(mistral->weights->repo == "mistralai/Mistral-7B-Instruct-v0.3");
  CHECK(mistral->weights->revision == "c170c708c41dac9275d15a8fff4eca08d52bab71");
  CHECK(mistral->weights->files.size() == 3);
  CHECK(mistral->weights->bindings == "bindings.json");

  const std::optional<nest::Card> gpt_oss = read(card_path("gpt-oss-20b"), diagnostics);
  REQUIRE(gpt_oss);
  CHECK(gpt_oss->generic("Experts")->value == eval::GenericValue::of_dim(32));
  CHECK(gpt_oss->weights->files.front() == "model-00000-of-00002.safetensors");
  REQUIRE(read(card_path("qwen3-8b"), diagnostics));
  CHECK(diagnostics.all().empty());
}

TEST_CASE("a malformed nest.toml is reported, every problem at once, with positions", "[nest][card]") {
  TempDir dir;
  SECTION("not TOML") {
    dir.write_text("nest.toml", "[source\npath = 1\n");
    syntax::Diagnostics diagnostics;
    CHECK_FALSE(read(dir.path(), diagnostics));
    REQUIRE(diagnostics.all().size() == 1);
    CHECK(diagnostics.all()[0].code == "E5001");
    CHECK(diagnostics.all()[0].span.valid());
  }
  SECTION("no [source]") {
    dir.write_text("nest.toml", "[generics]\nH = 4\n");
    syntax::Diagnostics diagnostics;
    CHECK_FALSE(read(dir.path(), diagnostics));
    CHECK(mentions(diagnostics, "no [source]"));
  }
  SECTION("values of the wrong kinds") {
    dir.write_text("nest.toml",
                   "[source]\npath = \"src/lib.linnet\"\nroot = 3\n"
                   "[generics]\nH = 1.5\nLayers = -2\nT = \"bfloat\"\nS = [1, \"x\"]\n"
                   "[weights]\nrepo = \"org/name\"\nfiles = \"model.safetensors\"\n");
    syntax::Diagnostics diagnostics;
    CHECK_FALSE(read(dir.path(), diagnostics));
    CHECK(diagnostics.error_count() == 7);  // and src/lib.linnet is not there
    for (const std::string& code : codes_of(diagnostics)) CHECK(code == "E5001");
    CHECK(mentions(diagnostics, "[source] `path` = \"src/lib.linnet\": the card has no such file"));
    for (const syntax::Diagnostic& diagnostic : diagnostics.all()) CHECK(diagnostic.span.valid());
    CHECK(mentions(diagnostics, "`root` must be a string"));
    CHECK(mentions(diagnostics, "[generics] `H` must be an integer"));
    CHECK(mentions(diagnostics, "[generics] `Layers` is negative"));
    CHECK(mentions(diagnostics, "names no dtype: \"bfloat\""));
    CHECK(mentions(diagnostics, "[generics] `S` must be a list of non-negative integers"));
    CHECK(mentions(diagnostics, "`files` must be a list"));
  }
  SECTION("not a directory") {
    syntax::Diagnostics diagnostics;
    CHECK_FALSE(read(dir.file("missing"), diagnostics));
    CHECK(mentions(diagnostics, "is not a card directory"));
  }
}

TEST_CASE("--bind arguments and generic values", "[nest][card]") {
  using syntax::ast::GenericKind;
  const auto bind = nest::parse_bind_argument(" Layers = 2 ");
  REQUIRE(bind);
  CHECK(bind->name == "Layers");
  CHECK(bind->value == "2");
  CHECK_FALSE(nest::parse_bind_argument("Layers"));
  CHECK_FALSE(nest::parse_bind_argument("=2"));
  CHECK(nest::parse_bind_argument("S=")->value.empty());

  std::string why;
  const auto dim = generic("H", GenericKind::Dim);
  CHECK(nest::parse_generic_value("4096", dim, why) == eval::GenericValue::of_dim(4096));
  CHECK_FALSE(nest::parse_generic_value("-1", dim, why));
  CHECK_FALSE(nest::parse_generic_value("4k", dim, why));
  CHECK_FALSE(nest::parse_generic_value("bf16", dim, why));
  CHECK(why.find("non-negative integer") != std::string::npos);

  const auto dtype = generic("T", GenericKind::Float);
  CHECK(nest::parse_generic_value("bf16", dtype, why) == eval::GenericValue::of_dtype(tensor::DType::BF16));
  CHECK_FALSE(nest::parse_generic_value("i32", dtype, why));  // not a Float
  CHECK(why.find("Float") != std::string::npos);
  CHECK_FALSE(nest::parse_generic_value("4", dtype, why));

  const auto pack = generic("S", GenericKind::Shape, true);
  CHECK(nest::parse_generic_value("2,3", pack, why) == eval::GenericValue::of_shape({2, 3}));
  CHECK(nest::parse_generic_value("[2, 3]", pack, why) == eval::GenericValue::of_shape({2, 3}));
  CHECK(nest::parse_generic_value("", pack, why) == eval::GenericValue::of_shape({}));
  CHECK(nest::parse_generic_value("7", pack, why) == eval::GenericValue::of_shape({7}));
  CHECK_FALSE(nest::parse_generic_value("2,,3", pack, why));
  CHECK_FALSE(nest::parse_generic_value("[2, 3", pack, why));
}

TEST_CASE("a card's generics: nest.toml, overridden by --bind, entry generics passed on", "[nest][card]") {
  auto session = manifest_session(card_path("mistral-7b-instruct-v0.3"),
                                  {"Layers=2", "T=f32", "MaxSeq=16", "S=8", "Steps=3"});
  REQUIRE(session->load());
  const eval::GenericBindings& model = session->generics();
  CHECK(model.at("Layers") == eval::GenericValue::of_dim(2));
  CHECK(model.at("T") == eval::GenericValue::of_dtype(tensor::DType::F32));
  CHECK(model.at("H") == eval::GenericValue::of_dim(4096));  // from nest.toml
  CHECK(model.count("S") == 0);
  CHECK(session->entry_generics().at("S") == eval::GenericValue::of_dim(8));
  CHECK(session->entry_generics().at("Steps") == eval::GenericValue::of_dim(3));
  // Two layers of nine required tensors, the embedding, the norm and the
  // head; every Linear's bias is optional.
  size_t required = 0, optional = 0;
  for (const eval::ParameterInfo& info : session->manifest()) {
    if (info.kind == eval::ParameterKind::State) continue;
    (info.optional ? optional : required) += 1;
  }
  CHECK(required == 2 * 9 + 3);
  CHECK(optional == 2 * 7 + 1);
}

TEST_CASE("bad generics are diagnostics, all reported at once", "[nest][card]") {
  const std::string mistral = card_path("mistral-7b-instruct-v0.3");
  SECTION("unknown names and bad values") {
    auto session = manifest_session(mistral, {"Foo=1", "H=big", "T=i32", "Layers"});
    CHECK_FALSE(session->load());
    const syntax::Diagnostics& diagnostics = session->diagnostics();
    CHECK(diagnostics.error_count() == 4);
    for (const std::string& code : codes_of(diagnostics)) CHECK(code == "E2111");
    CHECK(mentions(diagnostics, "has no generic `Foo`"));
    CHECK(mentions(diagnostics, "its entries have generics"));
    CHECK(mentions(diagnostics, "`big` is not a dimension for `H`"));
    CHECK(mentions(diagnostics, "`i32` is not a dtype for `T`"));
    CHECK(mentions(diagnostics, "`--bind Layers` is not of the form NAME=VALUE"));
  }
  SECTION("a where clause that does not hold") {
    // H % Heads == 0 fails: the static checker's diagnostic, as `check`
    // gives it at these generics, before anything is listed; not a crash.
    auto session = manifest_session(mistral, {"H=4100", "Layers=1"});
    CHECK_FALSE(session->load());
    REQUIRE(session->diagnostics().error_count() == 1);
    const syntax::Diagnostic& error = session->diagnostics().all().front();
    CHECK(error.code == "E2206");
    CHECK(error.message.find("the bindings break `H % Heads == 0`") != std::string::npos);
    const std::string rendered = session->render_diagnostics();
    CHECK(rendered.find("H % Heads == 0") != std::string::npos);
  }
  SECTION("a generic nobody gives a value") {
    TempDir dir;
    const std::string copy = dir.file("card");
    nest_test::copy_card(mistral, copy);
    dir.write_text("card/nest.toml",
                   "[source]\npath = \"src/lib.linnet\"\nroot = \"Model\"\nentry = \"forward\"\n"
                   "[generics]\nVocab = 64\nH = 32\nHeads = 4\nKvHeads = 2\nInner = 64\nUnused = 3\n");
    auto session = manifest_session(copy, {});
    CHECK_FALSE(session->load());
    CHECK(mentions(session->diagnostics(), "nest.toml binds `Unused`, which is not a generic of `llama::Model`"));
    CHECK(mentions(session->diagnostics(), "needs a value for generics `Layers, Batch, MaxSeq`"));
    for (const syntax::Diagnostic& diagnostic : session->diagnostics().all()) CHECK(diagnostic.code == "E2111");
  }
}

TEST_CASE("config.json in both transformers spellings, compared with the bound generics", "[nest][card][config]") {
  std::string why;
  // transformers 4: torch_dtype, rope_theta at the top, rope_scaling.
  const auto old_style = nest::parse_model_config(
      R"({"torch_dtype": "bfloat16", "rope_theta": 500000.0, "rope_scaling": {"type": "llama3", "factor": 8.0},
          "hidden_size": 64, "vocab_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
          "intermediate_size": 176, "sliding_window": null, "max_position_embeddings": 32})",
      "old.json", why);
  REQUIRE(old_style);
  CHECK(old_style->dtype == "bfloat16");
  CHECK(old_style->rope_theta == 500000.0);
  CHECK(old_style->rope_type == "llama3");
  CHECK(old_style->rope_factor == 8.0);
  CHECK(old_style->sizes.at("hidden_size") == 64);
  CHECK(old_style->sizes.count("sliding_window") == 0);

  // transformers 5: dtype, rope_parameters.
  const auto new_style = nest::parse_model_config(
      R"({"dtype": "float32", "rope_parameters": {"rope_theta": 150000.0, "rope_type": "yarn", "factor": 32.0}})",
      "new.json", why);
  REQUIRE(new_style);
  CHECK(new_style->dtype == "float32");
  CHECK(new_style->rope_theta == 150000.0);
  CHECK(new_style->rope_type == "yarn");

  CHECK_FALSE(nest::parse_model_config("[1, 2]", "list.json", why));
  CHECK(why.find("not a JSON object") != std::string::npos);
  CHECK_FALSE(nest::parse_model_config("{", "broken.json", why));

  const eval::GenericBindings generics{{"H", eval::GenericValue::of_dim(64)},
                                       {"Vocab", eval::GenericValue::of_dim(500)},
                                       {"Heads", eval::GenericValue::of_dim(4)},
                                       {"Layers", eval::GenericValue::of_dim(2)},
                                       {"MaxSeq", eval::GenericValue::of_dim(64)},
                                       {"T", eval::GenericValue::of_dtype(tensor::DType::F32)}};
  const nest::ConfigComparison comparison = nest::compare_config(*old_style, generics);
  REQUIRE(comparison.warnings.size() == 2);
  CHECK(comparison.warnings[0] == "the checkpoint's config.json has vocab_size = 512, but Vocab is bound to 500");
  CHECK(comparison.warnings[1] == "MaxSeq is bound to 64, past the config's max_position_embeddings = 32");
  REQUIRE(comparison.notes.size() == 1);
  CHECK(comparison.notes[0] == "running 2 of the checkpoint's 4 layers");
}
