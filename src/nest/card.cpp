// nest.toml: the card manifest.
#include "linnet/nest/card.hpp"

#include <algorithm>
#include <filesystem>
#include <toml++/toml.h>

#include "linnet/syntax/file_reading.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::nest {

namespace fs = std::filesystem;

namespace {

// Turns toml++ positions (1-based lines, columns in code points) into spans
// of the manifest and reports problems as E5001.
class ManifestReader {
 public:
  ManifestReader(uint32_t file_id, const syntax::SourceFile& file, syntax::Diagnostics& diagnostics, bool strict)
      : file_id_(file_id), file_(file), diagnostics_(diagnostics), strict_(strict) {}

  // A key or table nest.toml does not define: a warning (the card still
  // runs), an error under --strict.
  void unknown(const std::string& what, const std::string& name, const std::vector<std::string>& known,
               const toml::source_region& where) {
    // Said one by one up to a limit, then counted (a hostile nest.toml of
    // thousands of keys would otherwise print thousands of warnings).
    if (++unknown_count_ > kUnknownListedAtMost) return;
    const std::string message = what + " `" + name + "`" + " is not a nest.toml " +
                                (what == "the table" ? "table" : "key") + syntax::did_you_mean(name, known);
    std::string list;
    for (const std::string& key : known) list += (list.empty() ? "" : ", ") + key;
    const std::string note = (what.starts_with("[") ? what + "'s keys are " : "nest.toml's tables are ") + list;
    if (strict_) {
      ok_ = false;
      diagnostics_.error(codes::invalid_manifest, message, span_of(where)).note(note);
    } else {
      diagnostics_.add(syntax::warning(codes::invalid_manifest, message, span_of(where))).note(note).note("it is ignored");
    }
  }

  syntax::Diagnostic& error(std::string message, const toml::source_region& where) {
    ok_ = false;
    return diagnostics_.error(codes::invalid_manifest, std::move(message), span_of(where));
  }
  syntax::Diagnostic& error(std::string message) {
    ok_ = false;
    return diagnostics_.error(codes::invalid_manifest, std::move(message), syntax::Span{file_id_, 0, 0});
  }
  bool ok() const { return ok_; }

  // The count of unknown keys past the limit, in one diagnostic.
  void finish_unknown() {
    if (unknown_count_ <= kUnknownListedAtMost) return;
    const std::string message =
        "and " + std::to_string(unknown_count_ - kUnknownListedAtMost) + " more keys nest.toml does not define";
    if (strict_) {
      ok_ = false;
      diagnostics_.error(codes::invalid_manifest, message, syntax::Span{});
    } else {
      diagnostics_.add(syntax::warning(codes::invalid_manifest, message, syntax::Span{}));
    }
  }

  syntax::Span span_of(const toml::source_region& where) const {
    const uint32_t begin = offset_of(where.begin);
    uint32_t end = offset_of(where.end);
    if (end <= begin) {
      const std::string_view line = file_.line_text(file_.line_column(begin).line);
      end = std::min<uint32_t>(begin + static_cast<uint32_t>(std::max<size_t>(1, line.size())),
                               static_cast<uint32_t>(file_.text().size()));
    }
    return syntax::Span{file_id_, begin, std::max(begin, end)};
  }

 private:
  uint32_t offset_of(const toml::source_position& position) const {
    return file_.offset_of({position.line, position.column});
  }

  uint32_t file_id_;
  const syntax::SourceFile& file_;
  syntax::Diagnostics& diagnostics_;
  bool strict_ = false;
  bool ok_ = true;
  static constexpr size_t kUnknownListedAtMost = 20;
  size_t unknown_count_ = 0;
};

// nest.toml's tables and the keys of each, as the nest registry writes
// cards ([generics] and [check] hold the model's own generic names, which
// binding checks against the root block).
const std::vector<std::pair<std::string, std::vector<std::string>>>& manifest_schema() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> schema = {
      {"model", {"name", "title", "summary", "license", "family", "tags", "parameters"}},
      {"links", {"huggingface", "github", "arxiv", "homepage"}},
      {"source", {"path", "root", "entry"}},
      {"generics", {}},
      {"check", {}},
      {"weights", {"repo", "revision", "files", "bindings"}},
  };
  return schema;
}

// Reports every top-level key and table, and every key of a known table,
// that nest.toml does not define. A misspelled `[weigths]` or `entyr` was
// ignored without a word.
void report_unknown_keys(const toml::table& table, ManifestReader& reader) {
  std::vector<std::string> tables;
  for (const auto& [name, keys] : manifest_schema()) tables.push_back("[" + name + "]");
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const auto known = std::find_if(manifest_schema().begin(), manifest_schema().end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (known == manifest_schema().end()) {
      // A table is named and matched as written, in brackets.
      reader.unknown(node.is_table() ? "the table" : "the top-level key", node.is_table() ? "[" + name + "]" : name,
                     tables, key.source());
      continue;
    }
    const toml::table* inner = node.as_table();
    if (inner == nullptr || known->second.empty()) continue;  // a non-table is reported where it is read
    for (const auto& [inner_key, inner_node] : *inner) {
      const std::string inner_name(inner_key.str());
      if (std::find(known->second.begin(), known->second.end(), inner_name) == known->second.end()) {
        reader.unknown("[" + name + "]", inner_name, known->second, inner_key.source());
      }
    }
  }
  reader.finish_unknown();
}

// A string field of `table`, or nothing when absent; reports a value of
// another type.
std::optional<std::string> string_field(const toml::table& table, const char* section, const char* key,
                                        ManifestReader& reader) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (const auto* text = node->as_string()) return text->get();
  reader.error(std::string("[") + section + "] `" + key + "` must be a string", node->source());
  return std::nullopt;
}

// [generics] or [check]: integers are dimensions, strings dtypes, arrays of
// integers shape packs.
std::vector<CardSetting> read_settings(const toml::table& table, const char* section, ManifestReader& reader) {
  std::vector<CardSetting> settings;
  for (const auto& [key, node] : table) {
    CardSetting setting;
    setting.name = std::string(key.str());
    setting.span = reader.span_of(node.source());
    const std::string where = std::string("[") + section + "] `" + setting.name + "`";
    if (const auto* integer = node.as_integer()) {
      if (integer->get() < 0) {
        reader.error(where + " is negative: " + std::to_string(integer->get()), node.source());
        continue;
      }
      setting.value = eval::GenericValue::of_dim(integer->get());
    } else if (const auto* text = node.as_string()) {
      const std::optional<tensor::DType> dtype = tensor::dtype_from_name(text->get());
      if (!dtype) {
        reader.error(where + " names no dtype: \"" + text->get() + "\"", node.source())
            .with_help("dtypes are bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64");
        continue;
      }
      setting.value = eval::GenericValue::of_dtype(*dtype);
    } else if (const auto* array = node.as_array()) {
      tensor::Shape dims;
      bool valid = true;
      for (const toml::node& element : *array) {
        const auto* dim = element.as_integer();
        valid = valid && dim != nullptr && dim->get() >= 0;
        if (valid) dims.push_back(dim->get());
      }
      if (!valid) {
        reader.error(where + " must be a list of non-negative integers (a shape)", node.source());
        continue;
      }
      setting.value = eval::GenericValue::of_shape(std::move(dims));
    } else {
      reader.error(where + " must be an integer (a dimension), a string (a dtype) or a list of integers (a shape)",
                   node.source());
      continue;
    }
    settings.push_back(std::move(setting));
  }
  return settings;
}

std::optional<CardWeights> read_weights(const toml::table& table, ManifestReader& reader) {
  CardWeights weights;
  const std::optional<std::string> repo = string_field(table, "weights", "repo", reader);
  const std::optional<std::string> revision = string_field(table, "weights", "revision", reader);
  if (!repo || repo->find('/') == std::string::npos) {
    reader.error("[weights] needs `repo`, a Hugging Face repository such as \"org/name\"", table.source());
    return std::nullopt;
  }
  weights.repo = *repo;
  weights.revision = revision.value_or("main");
  weights.bindings = string_field(table, "weights", "bindings", reader).value_or("");
  if (const toml::node* files = table.get("files")) {
    const auto* array = files->as_array();
    bool valid = array != nullptr;
    if (array != nullptr) {
      for (const toml::node& element : *array) {
        const auto* name = element.as_string();
        // A file name inside the snapshot: no separators that climb out of it.
        valid = valid && name != nullptr && !name->get().empty() && name->get().find("..") == std::string::npos &&
                name->get().front() != '/';
        if (valid) weights.files.push_back(name->get());
      }
    }
    if (!valid) {
      reader.error("[weights] `files` must be a list of file names inside the repository", files->source());
      return std::nullopt;
    }
  }
  if (weights.files.empty()) weights.files.push_back("model.safetensors");
  return weights;
}

}  // namespace

const CardSetting* Card::generic(const std::string& name) const {
  for (const CardSetting& setting : generics) {
    if (setting.name == name) return &setting;
  }
  return nullptr;
}

std::string Card::path_of(const std::string& relative) const { return (fs::path(directory) / relative).string(); }

std::optional<Card> read_card(const std::string& directory, syntax::SourceManager& sources,
                              syntax::Diagnostics& diagnostics, bool strict) {
  const std::string manifest_path = (fs::path(directory) / "nest.toml").string();
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    diagnostics.error(codes::invalid_manifest, "`" + directory + "` is not a card directory", syntax::Span{})
        .with_help("a card is a directory holding nest.toml, linnet.toml and src/");
    return std::nullopt;
  }
  std::string read_error;
  const uint32_t file_id = sources.load(manifest_path, read_error);
  if (file_id == 0) {
    diagnostics.error(codes::invalid_manifest, "cannot read nest.toml: " + read_error, syntax::Span{})
        .with_help("a card is a directory holding nest.toml, linnet.toml and src/");
    return std::nullopt;
  }
  const syntax::SourceFile& file = sources.file(file_id);
  ManifestReader reader(file_id, file, diagnostics, strict);

  toml::table table;
  try {
    table = toml::parse(file.text(), manifest_path);
  } catch (const toml::parse_error& failure) {
    reader.error("nest.toml is not valid TOML: " + std::string(failure.description()), failure.source());
    return std::nullopt;
  }

  report_unknown_keys(table, reader);

  Card card;
  card.directory = directory;
  card.manifest_file = file_id;
  card.name = fs::path(directory).lexically_normal().filename().string();
  if (card.name.empty()) card.name = fs::path(directory).lexically_normal().parent_path().filename().string();

  if (const toml::table* model = table["model"].as_table()) {
    if (auto name = string_field(*model, "model", "name", reader)) card.name = *name;
    card.title = string_field(*model, "model", "title", reader).value_or("");
  }
  const toml::table* source = table["source"].as_table();
  if (source == nullptr) {
    reader.error("nest.toml has no [source] table")
        .with_help("[source] names the root source file, the root block and the default entry: "
                   "path = \"src/lib.linnet\", root = \"Model\", entry = \"forward\"");
    return std::nullopt;
  }
  card.source_path = string_field(*source, "source", "path", reader).value_or("");
  if (card.source_path.empty()) reader.error("[source] needs `path`, the root source file", source->source());
  // The root source file is checked here, at its position, so that every
  // command reports a wrong path alike (the source loader's own message has
  // no code and called a directory a file that does not exist).
  if (const toml::node* path = source->get("path"); path != nullptr && !card.source_path.empty()) {
    const fs::path relative = fs::path(card.source_path).lexically_normal();
    std::error_code ec;
    const fs::path file = fs::path(directory) / relative;
    if (relative.is_absolute() || (!relative.empty() && *relative.begin() == "..")) {
      reader.error("[source] `path` = \"" + card.source_path + "\" is outside the card's directory", path->source())
          .with_help("name a file under the card, such as \"src/lib.linnet\"");
    } else if (fs::is_directory(file, ec)) {
      reader.error("[source] `path` = \"" + card.source_path + "\" is a directory, not a .linnet file", path->source());
    } else if (const syntax::PathProblem problem = syntax::path_problem(file.string());
               problem.kind == syntax::PathProblemKind::Missing) {
      reader.error("[source] `path` = \"" + card.source_path + "\": the card has no such file", path->source());
    } else if (problem) {
      // A FIFO, a device, an unreadable file: said as what it is, never opened.
      reader.error("[source] `path` = \"" + card.source_path + "\" " + syntax::path_problem_text(problem),
                   path->source());
    }
  }
  card.root = string_field(*source, "source", "root", reader).value_or("Model");
  card.entry = string_field(*source, "source", "entry", reader).value_or("");
  if (const toml::node* entry = source->get("entry"); entry != nullptr && entry->is_string() && card.entry.empty()) {
    reader.error("[source] `entry` is empty", entry->source())
        .with_help("name the default entry, such as \"forward\", or leave the key out");
  }
  if (const toml::node* root = source->get("root")) card.root_span = reader.span_of(root->source());
  if (const toml::node* entry = source->get("entry")) card.entry_span = reader.span_of(entry->source());

  for (const char* section : {"generics", "check"}) {
    const toml::node* node = table.get(section);
    if (node == nullptr) continue;
    const toml::table* settings = node->as_table();
    if (settings == nullptr) {
      reader.error(std::string("[") + section + "] must be a table", node->source());
      continue;
    }
    (std::string(section) == "generics" ? card.generics : card.check) = read_settings(*settings, section, reader);
  }
  if (const toml::node* node = table.get("weights")) {
    if (const toml::table* weights = node->as_table()) {
      card.weights = read_weights(*weights, reader);
      // The bindings file, checked at its position like [source] path (a
      // missing one was an E5001 without position, a directory "not an object").
      const toml::node* named = weights->get("bindings");
      if (card.weights && !card.weights->bindings.empty() && named != nullptr) {
        std::error_code ec;
        const fs::path file = fs::path(directory) / card.weights->bindings;
        if (fs::is_directory(file, ec)) {
          reader.error("[weights] `bindings` = \"" + card.weights->bindings + "\" is a directory, not a JSON file",
                       named->source());
        } else if (const syntax::PathProblem problem = syntax::path_problem(file.string());
                   problem.kind == syntax::PathProblemKind::Missing) {
          reader.error("[weights] `bindings` = \"" + card.weights->bindings + "\": the card has no such file",
                       named->source());
        } else if (problem) {
          reader.error(
              "[weights] `bindings` = \"" + card.weights->bindings + "\" " + syntax::path_problem_text(problem),
              named->source());
        }
      }
    } else {
      reader.error("[weights] must be a table", node->source());
    }
  }
  if (!reader.ok()) return std::nullopt;
  return card;
}

}  // namespace linnet::nest
