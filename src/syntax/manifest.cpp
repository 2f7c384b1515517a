// linnet.toml: the package manifest (spec §2.5, docs/modules-and-packages.md).
#include <filesystem>
#include <toml++/toml.h>

#include "linnet/syntax/package.hpp"

namespace linnet::syntax {

namespace fs = std::filesystem;

namespace {

bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  const auto word_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!word_start(text[0])) return false;
  for (char c : text) {
    if (!word_start(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Reports E5001 problems of one manifest, pointing into its text.
class ManifestReader {
 public:
  ManifestReader(uint32_t file_id, const SourceFile& file, Diagnostics& diagnostics)
      : file_id_(file_id), file_(file), diagnostics_(diagnostics) {}

  Diagnostic& error(std::string message, const toml::source_region& where) {
    ok_ = false;
    return diagnostics_.error("E5001", std::move(message), span_of(where));
  }
  Diagnostic& error(std::string message) {
    ok_ = false;
    return diagnostics_.error("E5001", std::move(message), Span{file_id_, 0, 0});
  }
  bool ok() const { return ok_; }

  // The byte span of a toml++ source region (1-based lines and columns), or the
  // start of the file when toml++ gives no position.
  Span span_of(const toml::source_region& where) const {
    const uint32_t begin = offset_of(where.begin);
    uint32_t end = offset_of(where.end);
    if (end <= begin) {
      const std::string_view line = file_.line_text(file_.line_column(begin).line);
      end = begin + static_cast<uint32_t>(std::max<size_t>(1, line.size()));
      end = std::min<uint32_t>(end, static_cast<uint32_t>(file_.text().size()));
    }
    return Span{file_id_, begin, std::max(begin, end)};
  }

 private:
  uint32_t offset_of(const toml::source_position& position) const {
    return file_.offset_of({position.line, position.column});
  }

  uint32_t file_id_;
  const SourceFile& file_;
  Diagnostics& diagnostics_;
  bool ok_ = true;
};

}  // namespace

Package read_package(const std::string& root, SourceManager& sources, Diagnostics& diagnostics) {
  Package package;
  package.root = root;
  const std::string manifest_path = (fs::path(root) / "linnet.toml").string();
  std::string read_error;
  const uint32_t file_id = sources.load(manifest_path, read_error);
  if (file_id == 0) {
    diagnostics.error("E5001", "cannot read the package manifest: " + read_error, Span{});
    return package;
  }
  ManifestReader reader(file_id, sources.file(file_id), diagnostics);

  toml::table table;
  try {
    table = toml::parse(sources.file(file_id).text(), manifest_path);
  } catch (const toml::parse_error& failure) {
    reader.error("`linnet.toml` is not valid TOML: " + std::string(failure.description()), failure.source())
        .with_help("see https://toml.io for the syntax; the minimum manifest has a [package] table");
    return package;
  }

  const toml::table* section = table["package"].as_table();
  if (!section) {
    reader.error("`linnet.toml` has no [package] table")
        .with_help("add [package] with `name`, `version` and `language = \"0.1\"`");
    return package;
  }
  // A required string field of [package].
  const auto string_field = [&](const char* key, std::string& into) {
    const toml::node* node = section->get(key);
    if (!node) {
      reader.error(std::string("[package] has no `") + key + "`", section->source())
          .with_help(std::string("add `") + key + " = \"...\"`");
      return false;
    }
    if (const auto* value = node->as_string()) {
      into = value->get();
      return true;
    }
    reader.error(std::string("[package] `") + key + "` must be a string", node->source());
    return false;
  };
  if (string_field("name", package.name) && package.name.empty()) {
    reader.error("[package] `name` is empty", section->get("name")->source());
  }
  string_field("version", package.version);
  if (string_field("language", package.language) && package.language != "0.1") {
    reader.error("this toolchain implements Linnet 0.1, but the package targets language `" + package.language + "`",
                 section->get("language")->source())
        .with_help("set `language = \"0.1\"`");
  }

  if (const toml::node* dependencies_node = table.get("dependencies")) {
    const toml::table* dependencies = dependencies_node->as_table();
    if (!dependencies) {
      reader.error("[dependencies] must be a table", dependencies_node->source());
    } else {
      for (const auto& [key, value] : *dependencies) {
        const std::string name(key.str());
        if (!is_identifier(name) || name == "std" || name == "crate") {
          reader.error("dependency key `" + name + "` is not usable as an import's first segment", value.source())
              .note("a dependency key is an identifier (letters, digits, `_`) other than `std` and `crate`");
          continue;
        }
        const toml::table* spec = value.as_table();
        const toml::node* path_node = spec ? spec->get("path") : nullptr;
        const toml::value<std::string>* path = path_node ? path_node->as_string() : nullptr;
        if (!path) {
          reader.error("dependency `" + name + "` has no `path`", value.source())
              .note("only path dependencies exist: `" + name + " = { path = \"../" + name + "\" }`");
          continue;
        }
        std::error_code ec;
        const fs::path target = fs::weakly_canonical(fs::path(root) / path->get(), ec);
        if (ec || !fs::is_regular_file(target / "linnet.toml", ec)) {
          reader.error("dependency `" + name + "`: `" + path->get() + "` is not a package directory", path_node->source())
              .note("a path dependency is relative to this manifest's directory and holds its own linnet.toml");
          continue;
        }
        package.dependencies[name] = target.string();
      }
    }
  }
  package.manifest_ok = reader.ok();
  return package;
}

}  // namespace linnet::syntax
