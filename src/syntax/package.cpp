// Loading a program: inputs to files, files to parsed modules, `use`
// declarations to the modules and items they name, and import cycles.
#include "linnet/syntax/file_reading.hpp"
#include "linnet/syntax/package.hpp"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <set>
#include <toml++/toml.h>

#include "linnet/syntax/parser.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::syntax {

namespace fs = std::filesystem;

const Module* Program::module_of_file(uint32_t file_id) const {
  for (const auto& module : modules_) {
    if (module->file_id == file_id) return module.get();
  }
  return nullptr;
}

const Module* Program::module_at(const std::string& canonical_path) const {
  const auto found = by_path_.find(canonical_path);
  return found == by_path_.end() ? nullptr : modules_[static_cast<size_t>(found->second)].get();
}

namespace {

std::string canonical_string(const fs::path& path) {
  std::error_code ec;
  const fs::path result = fs::weakly_canonical(path, ec);
  return (ec ? path.lexically_normal() : result).string();
}

bool is_linnet_file(const fs::path& path) {
  std::error_code ec;
  return path.extension() == ".linnet" && fs::is_regular_file(path, ec);
}

// Every .linnet file under `dir`, sorted, skipping hidden directories.
std::vector<fs::path> linnet_files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (is_linnet_file(path)) files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The name of the first module file in `folder` (alphabetically), for a hint.
std::string first_module_in(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".linnet") files.push_back(it->path().stem());
  }
  std::sort(files.begin(), files.end());
  return files.empty() ? std::string("module") : files.front().string();
}

// For a module file that does not exist: the same `use` path with its first
// segment that names nothing on disk replaced by the nearest name that does
// (a folder for an inner segment, a module file for the last), or "".
// `path_offset` is the index of the `use` segment that the first component of
// `file` below `base` stands for.
std::string nearest_module_path(const fs::path& base, const fs::path& file, const std::vector<ast::Ident>& path,
                                size_t path_offset) {
  std::error_code ec;
  fs::path at = base;
  const fs::path relative = file.lexically_relative(base);
  size_t segment = path_offset;
  for (auto part = relative.begin(); part != relative.end() && segment < path.size(); ++part, ++segment) {
    const bool last = std::next(part) == relative.end();
    const fs::path next = at / *part;
    if (last ? fs::is_regular_file(next, ec) : fs::is_directory(next, ec)) {
      at = next;
      continue;
    }
    std::vector<std::string> names;
    for (fs::directory_iterator it(at, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (last && it->is_regular_file(ec) && it->path().extension() == ".linnet") names.push_back(it->path().stem());
      if (!last && it->is_directory(ec)) names.push_back(it->path().filename());
    }
    std::sort(names.begin(), names.end());
    const std::optional<std::string> found = closest_name(path[segment].text, names);
    if (!found) return "";
    std::vector<std::string> spelled;
    for (const ast::Ident& ident : path) spelled.push_back(ident.text);
    spelled[segment] = *found;
    std::string joined;
    for (const std::string& name : spelled) joined += (joined.empty() ? "" : ".") + name;
    return joined;
  }
  return "";
}

// `crate.a.b` / `dep.a.b` -> `<root>/src/a/b.linnet`; the bare namespace is lib.linnet.
fs::path package_module_file(const std::string& root, const std::vector<ast::Ident>& path) {
  fs::path file = fs::path(root) / "src";
  if (path.size() == 1) return file / "lib.linnet";
  for (size_t i = 1; i < path.size(); ++i) file /= path[i].text;
  file += ".linnet";
  return file;
}

}  // namespace

class ProgramLoader {
 public:
  ProgramLoader(SourceManager& sources, const LoadOptions& options, Diagnostics& diagnostics)
      : sources_(sources), options_(options), diagnostics_(diagnostics), program_(std::make_unique<Program>()) {
    std::error_code ec;
    if (!options.std_dir.empty() && fs::is_directory(options.std_dir, ec)) std_root_ = canonical_string(options.std_dir);
    program_->std_root_ = std_root_;
  }

  std::unique_ptr<Program> run() {
    for (const std::string& input : options_.inputs) {
      for (const fs::path& file : expand_input(input)) load(file, true);
    }
    // Imports: `load` appends to the module list while it is walked.
    for (size_t index = 0; index < program_->modules_.size(); ++index) load_imports(static_cast<int>(index));
    for (auto& module : program_->modules_) collect_items(*module);
    for (size_t index = 0; index < program_->modules_.size(); ++index) bind_imports(static_cast<int>(index));
    report_cycles();
    return std::move(program_);
  }

 private:
  Module& module(int index) { return *program_->modules_[static_cast<size_t>(index)]; }

  // ------------------------------------------------------------ inputs

  std::vector<fs::path> expand_input(const std::string& input) {
    std::error_code ec;
    const fs::path path(input);
    if (fs::is_regular_file(path, ec)) return {path};
    if (!fs::is_directory(path, ec)) {
      // `/dev/null` exists: say what it is rather than "no such file".
      const std::string problem = path_problem_text(path_problem(input, PathUse::FileOrDirectory));
      diagnostics_.error("", "`" + input + "` " + (problem.empty() ? "is not a file or directory" : problem), Span{});
      return {};
    }
    std::vector<fs::path> files;
    if (fs::is_regular_file(path / "linnet.toml", ec)) {
      // A package; a card names its source file in nest.toml.
      if (fs::exists(path / "nest.toml", ec)) {
        if (std::optional<fs::path> source = card_source(path)) files.push_back(*source);
      }
      for (const fs::path& file : linnet_files_under(path / "src")) files.push_back(file);
      if (files.empty()) {
        diagnostics_.error("", "package `" + input + "` has no .linnet files under src/", Span{})
            .with_help("a package keeps its modules in src/, starting with src/lib.linnet");
      }
      return files;
    }
    files = linnet_files_under(path);
    if (files.empty()) diagnostics_.error("", "no .linnet files under `" + input + "`", Span{});
    return files;
  }

  // The `[source] path` of a card's nest.toml.
  std::optional<fs::path> card_source(const fs::path& dir) {
    const std::string manifest = (dir / "nest.toml").string();
    // Read without blocking (a FIFO named nest.toml) before TOML parses it.
    std::string text, problem;
    if (!read_whole_file(manifest, text, problem)) {
      diagnostics_.error("", "cannot read `" + manifest + "`: it " + problem, Span{});
      return std::nullopt;
    }
    try {
      const toml::table table = toml::parse(text, manifest);
      const std::optional<std::string> source = table["source"]["path"].value<std::string>();
      if (!source) {
        diagnostics_.error("", "`" + manifest + "` has no [source] `path`", Span{})
            .with_help("a card names its root source file: [source] path = \"src/lib.linnet\"");
        return std::nullopt;
      }
      const fs::path file = dir / *source;
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) {
        diagnostics_.error("", "`" + manifest + "` names the source file `" + *source + "`, which does not exist", Span{});
        return std::nullopt;
      }
      return file;
    } catch (const toml::parse_error& failure) {
      diagnostics_.error("", "cannot read `" + manifest + "`: " + std::string(failure.description()), Span{});
      return std::nullopt;
    }
  }

  // ------------------------------------------------------------ files

  bool under_std(const std::string& canonical_path) const {
    return !std_root_.empty() && canonical_path.size() > std_root_.size() &&
           canonical_path.compare(0, std_root_.size(), std_root_) == 0 && canonical_path[std_root_.size()] == '/';
  }

  int load(const fs::path& file, bool requested) {
    const std::string identity = canonical_string(file);
    if (const auto found = program_->by_path_.find(identity); found != program_->by_path_.end()) {
      if (requested) module(found->second).requested = true;
      return found->second;
    }
    std::string error;
    const std::string display = file.lexically_normal().string();
    const uint32_t file_id = sources_.load(display, error);
    if (file_id == 0) {
      diagnostics_.error("", error, Span{});
      return -1;
    }
    auto loaded = std::make_unique<Module>();
    loaded->file_id = file_id;
    loaded->path = display;
    loaded->canonical_path = identity;
    loaded->ast = parse_file(sources_, file_id, diagnostics_);
    loaded->name = ast::join_path(loaded->ast->module_path);
    loaded->is_std = under_std(identity);
    loaded->package = loaded->is_std ? -1 : package_of(fs::path(identity).parent_path());
    loaded->requested = requested;
    loaded->use_targets.assign(loaded->ast->uses.size(), -1);
    const int index = static_cast<int>(program_->modules_.size());
    program_->modules_.push_back(std::move(loaded));
    program_->by_path_[identity] = index;
    return index;
  }

  // The package of the nearest directory at or above `dir` with a linnet.toml,
  // reading each manifest once.
  int package_of(fs::path dir) {
    std::error_code ec;
    while (!dir.empty()) {
      const std::string key = dir.string();
      if (const auto found = package_by_root_.find(key); found != package_by_root_.end()) return found->second;
      if (fs::is_regular_file(dir / "linnet.toml", ec)) {
        const int index = static_cast<int>(program_->packages_.size());
        program_->packages_.push_back(read_package(key, sources_, diagnostics_));
        package_by_root_[key] = index;
        return index;
      }
      if (dir == dir.root_path()) break;
      dir = dir.parent_path();
    }
    return -1;
  }

  // ------------------------------------------------------------ imports

  void load_imports(int index) {
    for (size_t use_index = 0; use_index < module(index).ast->uses.size(); ++use_index) {
      const ast::UseDecl& use = module(index).ast->uses[use_index];
      if (use.path.empty() || use.path.front().empty() || use.path.back().empty()) continue;  // a parse error
      if (std::optional<fs::path> file = locate(index, use)) {
        const int target = load(*file, false);
        module(index).use_targets[use_index] = target;
      }
    }
  }

  Diagnostic& not_found(const ast::UseDecl& use) {
    return diagnostics_.error("E1202", "cannot find module `" + ast::join_path(use.path) + "`", use.path_span);
  }

  // The file a `use` names, or nullopt after reporting E1202.
  std::optional<fs::path> locate(int index, const ast::UseDecl& use) {
    const Module& from = module(index);
    const std::string& head = use.path.front().text;
    std::error_code ec;
    fs::path file;
    fs::path base;  // the folder the path's second segment is looked up in
    if (head == "std") {
      if (use.path.size() == 1) {
        not_found(use).with_help("`std` is the standard library's namespace; import one of its modules, such as "
                                 "`use std.nn.linear::{Linear}`");
        return std::nullopt;
      }
      if (std_root_.empty()) {
        not_found(use).note(options_.std_dir.empty()
                                ? "no standard library directory is set: pass `--std <dir>` or set LINNET_STD"
                                : "the standard library directory `" + options_.std_dir + "` does not exist");
        return std::nullopt;
      }
      file = fs::path(std_root_);
      base = file;
      for (size_t i = 1; i < use.path.size(); ++i) file /= use.path[i].text;
      file += ".linnet";
    } else if (from.is_std) {
      not_found(use).note("standard library modules import only other `std` modules");
      return std::nullopt;
    } else if (from.package < 0) {
      not_found(use).note("`" + from.path + "` is in no package (no linnet.toml in its directory or above), so only `std` "
                          "modules can be imported");
      return std::nullopt;
    } else {
      const Package& package = program_->packages_[static_cast<size_t>(from.package)];
      if (head == "crate") {
        file = package_module_file(package.root, use.path);
        base = fs::path(package.root) / "src";
      } else if (const auto dependency = package.dependencies.find(head); dependency != package.dependencies.end()) {
        file = package_module_file(dependency->second, use.path);
        base = fs::path(dependency->second) / "src";
      } else {
        not_found(use)
            .note("`" + head + "` is not `std`, `crate`, or a dependency declared in " +
                  (fs::path(package.root) / "linnet.toml").string())
            .with_help("declare it under [dependencies]: `" + head + " = { path = \"...\" }`");
        return std::nullopt;
      }
    }
    if (!fs::is_regular_file(file, ec)) {
      Diagnostic& d = not_found(use);
      d.with_label("no such module").note("looked for `" + file.lexically_normal().string() + "`");
      // `std.nn.nrom`: the nearest module that exists, segment by segment.
      const std::string nearest = nearest_module_path(base.lexically_normal(), file.lexically_normal(), use.path, 1);
      if (!nearest.empty()) d.with_help("did you mean `" + nearest + "`?");
      fs::path folder = file;
      folder.replace_extension();
      if (fs::is_directory(folder, ec)) {
        d.with_help("`" + ast::join_path(use.path) + "` is a folder of modules; import from one of them, such as `" +
                    ast::join_path(use.path) + "." + first_module_in(folder) + "`");
      }
      return std::nullopt;
    }
    return file;
  }

  // ------------------------------------------------------------ names

  static void declared_twice(Diagnostics& diagnostics, const std::string& name, Span again, Span first,
                             std::string again_label, std::string first_label) {
    diagnostics.error("E1204", "`" + name + "` is defined more than once in this module", again)
        .with_label(std::move(again_label))
        .also(first, std::move(first_label))
        .note("a module's items and imported names share one namespace");
  }

  void collect_items(Module& m) {
    for (const ast::ItemPtr& item : m.ast->items) {
      if (item->kind == ast::ItemKind::Error || item->name.empty()) continue;
      const auto [existing, inserted] = m.items.emplace(item->name.text, item.get());
      if (!inserted) {
        declared_twice(diagnostics_, item->name.text, item->name.span, existing->second->name.span, "redefined here",
                       "first defined here");
      }
    }
  }

  void bind(Module& m, const ast::Ident& local, ImportedName imported) {
    if (const auto item = m.items.find(local.text); item != m.items.end()) {
      declared_twice(diagnostics_, local.text, local.span, item->second->name.span, "imported here",
                     "declared here");
      return;
    }
    const auto [existing, inserted] = m.imports.emplace(local.text, imported);
    if (!inserted && (existing->second.module != imported.module || existing->second.item != imported.item)) {
      declared_twice(diagnostics_, local.text, local.span, existing->second.span, "imported again here",
                     "first imported here");
    }
  }

  void bind_imports(int index) {
    Module& m = module(index);
    for (size_t use_index = 0; use_index < m.ast->uses.size(); ++use_index) {
      const int target = m.use_targets[use_index];
      if (target < 0) continue;
      const ast::UseDecl& use = m.ast->uses[use_index];
      const Module& imported = module(target);
      if (use.imports_module) {
        bind(m, use.path.back(), ImportedName{target, nullptr, &use, use.path.back().span});
        continue;
      }
      for (const ast::ImportName& name : use.names) {
        if (name.name.empty()) continue;
        const auto found = imported.items.find(name.name.text);
        if (found == imported.items.end()) {
          std::vector<std::string> public_names;
          for (const auto& [item_name, item] : imported.items) {
            if (item->is_pub) public_names.push_back(item_name);
          }
          diagnostics_.error("E1201",
                             "module `" + ast::join_path(use.path) + "` has no item `" + name.name.text + "`" +
                                 did_you_mean(name.name.text, public_names),
                             name.name.span)
              .with_label("not declared there");
          continue;
        }
        const ast::Item* item = found->second;
        if (!item->is_pub) {
          diagnostics_.error("E1203", "`" + name.name.text + "` is private to module `" + ast::join_path(use.path) + "`",
                             name.name.span)
              .with_label("not `pub`")
              .also(item->name.span, "declared here without `pub`")
              .with_help("declare it `pub` to import it from another module");
          continue;
        }
        bind(m, name.local(), ImportedName{target, item, &use, name.local().span});
      }
    }
  }

  // ------------------------------------------------------------ cycles

  // A module's name (or, without a `module` line, its file) in backquotes.
  std::string module_label(int index) {
    const Module& m = module(index);
    std::string label = "`";
    label += m.name.empty() ? m.path : m.name;
    label += '`';
    return label;
  }

  // Tarjan's strongly connected components, iteratively (a long import chain
  // must not exhaust the stack); one E1206 per cycle.
  void report_cycles() {
    const int count = static_cast<int>(program_->modules_.size());
    std::vector<std::vector<std::pair<int, size_t>>> edges(static_cast<size_t>(count));  // target, use index
    for (int from = 0; from < count; ++from) {
      const std::vector<int>& targets = module(from).use_targets;
      for (size_t use = 0; use < targets.size(); ++use) {
        if (targets[use] >= 0) edges[static_cast<size_t>(from)].push_back({targets[use], use});
      }
    }
    std::vector<int> order(static_cast<size_t>(count), -1), low(static_cast<size_t>(count), 0),
        component(static_cast<size_t>(count), -1);
    std::vector<bool> on_stack(static_cast<size_t>(count), false);
    std::vector<int> stack;
    int next_order = 0;
    int components = 0;
    struct Frame {
      int node;
      size_t edge;
    };
    for (int root = 0; root < count; ++root) {
      if (order[static_cast<size_t>(root)] >= 0) continue;
      std::vector<Frame> frames{{root, 0}};
      order[static_cast<size_t>(root)] = low[static_cast<size_t>(root)] = next_order++;
      stack.push_back(root);
      on_stack[static_cast<size_t>(root)] = true;
      while (!frames.empty()) {
        Frame& frame = frames.back();
        const auto& out = edges[static_cast<size_t>(frame.node)];
        if (frame.edge < out.size()) {
          const int next = out[frame.edge++].first;
          if (order[static_cast<size_t>(next)] < 0) {
            order[static_cast<size_t>(next)] = low[static_cast<size_t>(next)] = next_order++;
            stack.push_back(next);
            on_stack[static_cast<size_t>(next)] = true;
            frames.push_back({next, 0});
          } else if (on_stack[static_cast<size_t>(next)]) {
            low[static_cast<size_t>(frame.node)] =
                std::min(low[static_cast<size_t>(frame.node)], order[static_cast<size_t>(next)]);
          }
          continue;
        }
        const int node = frame.node;
        frames.pop_back();
        if (!frames.empty()) {
          const int parent = frames.back().node;
          low[static_cast<size_t>(parent)] = std::min(low[static_cast<size_t>(parent)], low[static_cast<size_t>(node)]);
        }
        if (low[static_cast<size_t>(node)] == order[static_cast<size_t>(node)]) {
          int member;
          do {
            member = stack.back();
            stack.pop_back();
            on_stack[static_cast<size_t>(member)] = false;
            component[static_cast<size_t>(member)] = components;
          } while (member != node);
          ++components;
        }
      }
    }
    std::set<int> reported;
    for (int start = 0; start < count; ++start) {
      const int c = component[static_cast<size_t>(start)];
      if (reported.count(c)) continue;
      if (std::optional<std::vector<std::pair<int, size_t>>> cycle = find_cycle(start, edges, component)) {
        reported.insert(c);
        report_cycle(start, *cycle);
      }
    }
  }

  // A shortest path from `start` back to itself inside its component, as
  // (module, use index) steps, or nullopt when `start` is on no cycle.
  std::optional<std::vector<std::pair<int, size_t>>> find_cycle(
      int start, const std::vector<std::vector<std::pair<int, size_t>>>& edges, const std::vector<int>& component) {
    const int c = component[static_cast<size_t>(start)];
    std::vector<std::pair<int, size_t>> parent(component.size(), {-1, 0});  // predecessor module, its use index
    std::vector<bool> seen(component.size(), false);
    std::deque<int> queue{start};
    while (!queue.empty()) {
      const int node = queue.front();
      queue.pop_front();
      for (const auto& [next, use] : edges[static_cast<size_t>(node)]) {
        if (component[static_cast<size_t>(next)] != c) continue;
        if (next == start) {
          std::vector<std::pair<int, size_t>> steps{{node, use}};
          for (int at = node; at != start; at = parent[static_cast<size_t>(at)].first) {
            steps.push_back(parent[static_cast<size_t>(at)]);
          }
          std::reverse(steps.begin(), steps.end());
          return steps;
        }
        if (!seen[static_cast<size_t>(next)]) {
          seen[static_cast<size_t>(next)] = true;
          parent[static_cast<size_t>(next)] = {node, use};
          queue.push_back(next);
        }
      }
    }
    return std::nullopt;
  }

  void report_cycle(int start, const std::vector<std::pair<int, size_t>>& steps) {
    std::string chain = module_label(start);
    for (const auto& [from, use] : steps) {
      chain += " -> ";
      chain += module_label(module(from).use_targets[use]);
    }
    const auto use_span = [&](const std::pair<int, size_t>& step) {
      return module(step.first).ast->uses[step.second].path_span;
    };
    Diagnostic& d = diagnostics_.error("E1206", "import cycle: " + chain, use_span(steps.front()));
    d.with_label("this import starts the cycle");
    for (size_t i = 1; i < steps.size(); ++i) {
      std::string label = module_label(steps[i].first);
      label += " imports ";
      label += module_label(module(steps[i].first).use_targets[steps[i].second]);
      label += " here";
      d.also(use_span(steps[i]), std::move(label));
    }
    d.note("modules must not import each other in a cycle");
    d.with_help("move what the modules share into a module that imports neither");
  }

  SourceManager& sources_;
  const LoadOptions& options_;
  Diagnostics& diagnostics_;
  std::unique_ptr<Program> program_;
  std::string std_root_;
  std::map<std::string, int> package_by_root_;
};

std::unique_ptr<Program> load_program(SourceManager& sources, const LoadOptions& options, Diagnostics& diagnostics) {
  return ProgramLoader(sources, options, diagnostics).run();
}

}  // namespace linnet::syntax
