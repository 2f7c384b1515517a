// Packages, modules and imports (spec chapter 2), on small trees written to a
// temporary directory: module lookup through crate, std and dependencies,
// E1201, E1202, E1203, E1204, E1206 and E5001.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "linnet/syntax/package.hpp"

namespace fs = std::filesystem;
using namespace linnet::syntax;

namespace {

// A directory tree under the system's temporary directory, removed at the end.
class TempTree {
 public:
  TempTree() {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("linnet-package-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  void write(const std::string& relative, const std::string& text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string path(const std::string& relative = "") const { return (root_ / relative).string(); }

 private:
  fs::path root_;
};

const char* kManifest = "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\nlanguage = \"0.1\"\n";

struct Loaded {
  SourceManager sources;
  Diagnostics diagnostics;
  std::unique_ptr<Program> program;

  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diagnostics.all()) out.push_back(d.code);
    return out;
  }
  std::string text() const { return render_text(diagnostics, sources); }
  std::string spelled(const Diagnostic& d) const {
    return sources.file(d.span.file).text().substr(d.span.begin, d.span.end - d.span.begin);
  }
  const Module* module_named(const std::string& name) const {
    for (const auto& m : program->modules()) {
      if (m->name == name) return m.get();
    }
    return nullptr;
  }
};

std::unique_ptr<Loaded> load(std::vector<std::string> inputs, std::string std_dir = "") {
  auto loaded = std::make_unique<Loaded>();
  LoadOptions options;
  options.inputs = std::move(inputs);
  options.std_dir = std::move(std_dir);
  loaded->program = load_program(loaded->sources, options, loaded->diagnostics);
  return loaded;
}

}  // namespace

TEST_CASE("a package loads its modules and resolves crate and std imports", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/lib.linnet",
             "module pkg\nuse crate.layers.scale::{Scale, twice as double}\nuse std.nn.id\n"
             "pub fn run(x: f32) -> f32 {\n    return double(x)\n}\n");
  tree.write("pkg/src/layers/scale.linnet",
             "module pkg.layers.scale\npub block Scale {}\npub fn twice(x: f32) -> f32 {\n    return x * 2.0\n}\n");
  tree.write("std/nn/id.linnet", "module std.nn.id\npub fn id(x: f32) -> f32 {\n    return x\n}\n");

  const auto loaded = load({tree.path("pkg")}, tree.path("std"));
  INFO(loaded->text());
  CHECK(loaded->diagnostics.all().empty());
  REQUIRE(loaded->program->modules().size() == 3);
  REQUIRE(loaded->program->packages().size() == 1);
  CHECK(loaded->program->packages()[0].name == "pkg");
  CHECK(loaded->program->packages()[0].manifest_ok);

  const Module* lib = loaded->module_named("pkg");
  REQUIRE(lib);
  CHECK(lib->requested);
  CHECK(lib->package == 0);
  const Module* scale = loaded->module_named("pkg.layers.scale");
  const Module* id = loaded->module_named("std.nn.id");
  REQUIRE(scale);
  REQUIRE(id);
  CHECK(scale->requested);  // under src/, so named by the input
  CHECK_FALSE(id->requested);
  CHECK(id->is_std);
  CHECK(id->package == -1);
  // The names the imports bind.
  REQUIRE(lib->imports.count("Scale"));
  CHECK(lib->imports.at("Scale").item == scale->items.at("Scale"));
  REQUIRE(lib->imports.count("double"));
  CHECK(lib->imports.at("double").item->name.text == "twice");
  CHECK_FALSE(lib->imports.count("twice"));
  REQUIRE(lib->imports.count("id"));
  CHECK(lib->imports.at("id").item == nullptr);  // the module itself
  CHECK(loaded->program->modules()[static_cast<size_t>(lib->imports.at("id").module)].get() == id);
  CHECK(lib->use_targets.size() == 2);
  CHECK(loaded->program->module_of_file(lib->file_id) == lib);
  CHECK(loaded->program->module_at(lib->canonical_path) == lib);
}

TEST_CASE("a module that does not exist is E1202", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/lib.linnet",
             "module pkg\nuse crate.missing::{x}\nuse std.quant::{dequantize}\nuse other.ops\nuse std\n");
  tree.write("std/nn/id.linnet", "module std.nn.id\n");

  const auto loaded = load({tree.path("pkg")}, tree.path("std"));
  CHECK(loaded->codes() == std::vector<std::string>{"E1202", "E1202", "E1202", "E1202"});
  const auto& all = loaded->diagnostics.all();
  CHECK(loaded->spelled(all[0]) == "crate.missing");
  CHECK(all[0].message == "cannot find module `crate.missing`");
  CHECK(all[0].notes.at(0).find("missing.linnet") != std::string::npos);
  CHECK(loaded->spelled(all[1]) == "std.quant");
  CHECK(loaded->spelled(all[2]) == "other.ops");
  CHECK(all[2].notes.at(0).find("dependency") != std::string::npos);
  CHECK(loaded->spelled(all[3]) == "std");

  // No standard library directory at all.
  const auto without_std = load({tree.path("pkg/src/lib.linnet")});
  const auto codes = without_std->codes();
  CHECK(std::count(codes.begin(), codes.end(), "E1202") == 4);

  // A folder of modules named as if it were one.
  tree.write("std/nn/linear.linnet", "module std.nn.linear\n");
  tree.write("folder/linnet.toml", kManifest);
  tree.write("folder/src/lib.linnet", "module pkg\nuse std.nn::{linear}\n");
  const auto folder = load({tree.path("folder")}, tree.path("std"));
  REQUIRE(folder->codes() == std::vector<std::string>{"E1202"});
  REQUIRE(folder->diagnostics.all()[0].help.size() == 1);
  CHECK(folder->diagnostics.all()[0].help[0].find("std.nn.id") != std::string::npos);

  // `crate` outside any package.
  tree.write("loose/a.linnet", "module a\nuse crate.b\n");
  const auto loose = load({tree.path("loose/a.linnet")});
  CHECK(loose->codes() == std::vector<std::string>{"E1202"});
}

TEST_CASE("importing a private item is E1203; an unknown item is E1201", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/lib.linnet", "module pkg\nuse crate.helpers::{hidden, shown, absent}\n");
  tree.write("pkg/src/helpers.linnet",
             "module pkg.helpers\nfn hidden() {}\npub fn shown() {}\n");
  const auto loaded = load({tree.path("pkg/src/lib.linnet")});
  REQUIRE(loaded->codes() == std::vector<std::string>{"E1203", "E1201"});
  const Diagnostic& hidden = loaded->diagnostics.all()[0];
  CHECK(loaded->spelled(hidden) == "hidden");
  REQUIRE(hidden.related.size() == 1);
  CHECK(loaded->sources.file(hidden.related[0].span.file).path().find("helpers.linnet") != std::string::npos);
  const Diagnostic& absent = loaded->diagnostics.all()[1];
  CHECK(loaded->spelled(absent) == "absent");
  CHECK(absent.message == "module `crate.helpers` has no item `absent`");
  // The good import is bound.
  CHECK(loaded->module_named("pkg")->imports.count("shown") == 1);
}

TEST_CASE("a name declared twice at a module's top level is E1204", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/a.linnet", "module pkg.a\npub fn x() {}\npub fn y() {}\n");
  tree.write("pkg/src/b.linnet", "module pkg.b\npub fn x() {}\n");
  tree.write("pkg/src/lib.linnet",
             "module pkg\nuse crate.a::{x, y}\nuse crate.b::{x}\nuse crate.a::{x}\nfn y() {}\nconst C = 1\nconst C = 2\n");
  const auto loaded = load({tree.path("pkg/src/lib.linnet")});
  // `const C` twice; `y` both imported and declared; `x` imported from two
  // modules. Importing the same item twice is harmless.
  REQUIRE(loaded->codes() == std::vector<std::string>{"E1204", "E1204", "E1204"});
  std::vector<std::string> names;
  for (const Diagnostic& d : loaded->diagnostics.all()) names.push_back(loaded->spelled(d));
  CHECK(names == std::vector<std::string>{"C", "y", "x"});
  for (const Diagnostic& d : loaded->diagnostics.all()) CHECK(d.related.size() == 1);
}

TEST_CASE("an import cycle is E1206, reported once", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/lib.linnet", "module pkg\nuse crate.a\n");
  tree.write("pkg/src/a.linnet", "module pkg.a\nuse crate.b::{g}\npub fn f() {}\n");
  tree.write("pkg/src/b.linnet", "module pkg.b\nuse crate.c\npub fn g() {}\n");
  tree.write("pkg/src/c.linnet", "module pkg.c\nuse crate.a::{f}\n");
  const auto loaded = load({tree.path("pkg/src/lib.linnet")});
  REQUIRE(loaded->codes() == std::vector<std::string>{"E1206"});
  const Diagnostic& d = loaded->diagnostics.all()[0];
  CHECK(d.message == "import cycle: `pkg.a` -> `pkg.b` -> `pkg.c` -> `pkg.a`");
  CHECK(loaded->spelled(d) == "crate.b");
  CHECK(d.related.size() == 2);

  // A module importing itself.
  tree.write("self/linnet.toml", kManifest);
  tree.write("self/src/lib.linnet", "module pkg\nuse crate\n");
  const auto itself = load({tree.path("self")});
  CHECK(itself->codes() == std::vector<std::string>{"E1206"});
}

TEST_CASE("a malformed linnet.toml is E5001", "[syntax][package]") {
  const std::vector<std::pair<std::string, std::string>> manifests = {
      {"[package\nname = 1", "not valid TOML"},
      {"[other]\nx = 1\n", "no [package] table"},
      {"[package]\nversion = \"0.1.0\"\nlanguage = \"0.1\"\n", "no `name`"},
      {"[package]\nname = \"p\"\nversion = \"0.1.0\"\nlanguage = \"0.2\"\n", "language `0.2`"},
      {"[package]\nname = 3\nversion = \"0.1.0\"\nlanguage = \"0.1\"\n", "must be a string"},
      {std::string(kManifest) + "[dependencies]\nfoo = { git = \"x\" }\n", "has no `path`"},
      {std::string(kManifest) + "[dependencies]\nfoo = { path = \"../nowhere\" }\n", "not a package directory"},
      {std::string(kManifest) + "[dependencies]\nstd = { path = \"../dep\" }\n", "not usable"},
  };
  for (const auto& [manifest, expected] : manifests) {
    INFO(manifest);
    TempTree tree;
    tree.write("pkg/linnet.toml", manifest);
    tree.write("pkg/src/lib.linnet", "module pkg\n");
    tree.write("dep/linnet.toml", kManifest);
    const auto loaded = load({tree.path("pkg")});
    REQUIRE(loaded->codes() == std::vector<std::string>{"E5001"});
    const Diagnostic& d = loaded->diagnostics.all()[0];
    CHECK(d.message.find(expected) != std::string::npos);
    // The diagnostic points into the manifest.
    REQUIRE(d.span.valid());
    CHECK(loaded->sources.file(d.span.file).path().find("linnet.toml") != std::string::npos);
    CHECK_FALSE(loaded->program->packages().at(0).manifest_ok);
  }
}

TEST_CASE("path dependencies resolve through their own src/", "[syntax][package]") {
  TempTree tree;
  tree.write("app/linnet.toml", std::string(kManifest) + "[dependencies]\nshared = { path = \"../shared\" }\n");
  tree.write("app/src/lib.linnet", "module app\nuse shared.ops::{custom}\nuse shared\n");
  tree.write("shared/linnet.toml", "[package]\nname = \"shared\"\nversion = \"1.0.0\"\nlanguage = \"0.1\"\n");
  tree.write("shared/src/lib.linnet", "module shared\n");
  tree.write("shared/src/ops.linnet", "module shared.ops\npub op custom(x: f32) -> f32 {\n    return x\n}\n");
  const auto loaded = load({tree.path("app")});
  INFO(loaded->text());
  CHECK(loaded->diagnostics.all().empty());
  CHECK(loaded->program->packages().size() == 2);
  const Module* app = loaded->module_named("app");
  REQUIRE(app);
  CHECK(app->imports.count("custom") == 1);
  CHECK(app->imports.count("shared") == 1);
  const Module* ops = loaded->module_named("shared.ops");
  REQUIRE(ops);
  CHECK(loaded->program->packages()[static_cast<size_t>(ops->package)].name == "shared");
}

TEST_CASE("inputs: files, card directories and folders searched recursively", "[syntax][package]") {
  TempTree tree;
  tree.write("card/linnet.toml", kManifest);
  tree.write("card/nest.toml", "[model]\nname = \"card\"\n[source]\npath = \"model/root.linnet\"\n");
  tree.write("card/model/root.linnet", "module pkg.root\nuse crate.part::{p}\n");
  tree.write("card/src/lib.linnet", "module pkg\n");
  tree.write("card/src/part.linnet", "module pkg.part\npub fn p() {}\n");
  tree.write("folder/one.linnet", "module one\n");
  tree.write("folder/deep/two.linnet", "module two\n");
  tree.write("folder/.hidden/three.linnet", "module three\n");
  tree.write("folder/notes.txt", "not source");

  const auto loaded = load({tree.path("card"), tree.path("folder"), tree.path("folder/one.linnet")});
  INFO(loaded->text());
  CHECK(loaded->diagnostics.all().empty());
  std::vector<std::string> names;
  for (const auto& m : loaded->program->modules()) names.push_back(m->name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"one", "pkg", "pkg.part", "pkg.root", "two"});

  const auto missing = load({tree.path("nothing-here")});
  CHECK(missing->diagnostics.error_count() == 1);
  fs::create_directories(tree.path("empty"));
  const auto empty_dir = load({tree.path("empty")});
  CHECK(empty_dir->diagnostics.error_count() == 1);
}

TEST_CASE("the standard library folder itself can be checked", "[syntax][package]") {
  TempTree tree;
  tree.write("std/nn/linear.linnet", "module std.nn.linear\nuse std.nn.act::{relu}\npub fn lin() {}\n");
  tree.write("std/nn/act.linnet", "module std.nn.act\npub fn relu() {}\n");
  tree.write("std/random.linnet", "module std.random\nuse crate.x\n");
  const auto loaded = load({tree.path("std")}, tree.path("std"));
  // Each file is loaded once although it is both requested and imported, and
  // a standard library module cannot import `crate`.
  CHECK(loaded->program->modules().size() == 3);
  REQUIRE(loaded->codes() == std::vector<std::string>{"E1202"});
  for (const auto& m : loaded->program->modules()) {
    CHECK(m->is_std);
    CHECK(m->requested);
  }
}

TEST_CASE("syntax errors in loaded files are reported with the rest", "[syntax][package]") {
  TempTree tree;
  tree.write("pkg/linnet.toml", kManifest);
  tree.write("pkg/src/lib.linnet", "module pkg\nuse crate.bad::{f}\n");
  tree.write("pkg/src/bad.linnet", "module pkg.bad\npub fn f( {}\n");
  const auto loaded = load({tree.path("pkg/src/lib.linnet")});
  CHECK(loaded->codes() == std::vector<std::string>{"E1101"});
  // The partial tree still declares `f`, so the import resolves.
  CHECK(loaded->module_named("pkg")->imports.count("f") == 1);
}
