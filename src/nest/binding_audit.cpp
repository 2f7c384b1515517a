// Bindings that are never silent (binding_audit.hpp).
#include "linnet/nest/binding_audit.hpp"

#include <map>
#include <set>

#include "linnet/eval/error.hpp"
#include "linnet/syntax/suggest.hpp"

namespace linnet::nest {

namespace {

// "layers.7.mlp.weight" -> {"layers", 7}; nothing without a numeric component.
std::optional<std::pair<std::string, int64_t>> array_position(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('.', start);
    if (end == std::string::npos) end = path.size();
    const std::string component = path.substr(start, end - start);
    if (!component.empty() && component.size() < 18 &&
        component.find_first_not_of("0123456789") == std::string::npos) {
      return std::make_pair(path.substr(0, start), std::stoll(component));
    }
    start = end + 1;
  }
  return std::nullopt;
}

// For every array prefix ("layers."), how many elements the manifest has.
std::map<std::string, int64_t> array_lengths(const std::vector<eval::ParameterInfo>& manifest) {
  std::map<std::string, int64_t> lengths;
  for (const eval::ParameterInfo& info : manifest) {
    if (auto position = array_position(info.path)) {
      int64_t& length = lengths[position->first];
      length = std::max(length, position->second + 1);
    }
  }
  return lengths;
}

bool past_truncation(const std::string& path, const std::map<std::string, int64_t>& lengths) {
  const auto position = array_position(path);
  if (!position) return false;
  const auto length = lengths.find(position->first);
  return length != lengths.end() && position->second >= length->second;
}

}  // namespace

std::vector<std::string> unexpected_tensors(const std::vector<eval::ParameterInfo>& manifest,
                                            const Checkpoint& checkpoint, const Bindings& bindings) {
  std::set<std::string> bound;
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind != eval::ParameterKind::State) bound.insert(bindings.tensor_for(info.path));
  }
  // Tensor name -> the bindings.json path that names it.
  std::map<std::string, std::string> path_of_tensor;
  for (const auto& [path, tensor] : bindings.entries()) path_of_tensor.emplace(tensor, path);
  const std::map<std::string, int64_t> lengths = array_lengths(manifest);
  std::vector<std::string> unexpected;
  for (const std::string& name : checkpoint.names()) {
    if (bound.count(name) != 0) continue;
    const auto mapped = path_of_tensor.find(name);
    const std::string& path = mapped != path_of_tensor.end() ? mapped->second : name;
    if (past_truncation(path, lengths)) continue;
    unexpected.push_back(name);
  }
  return unexpected;
}

namespace {

// Slips of one kind said one by one up to this many, then counted in one
// more diagnostic: a hostile bindings.json of 20,000 wrong keys took minutes
// of "did you mean" searches and as many screens of warnings.
constexpr size_t kListedAtMost = 20;

// "and 19980 more keys of `bindings.json` name no parameter".
syntax::Diagnostic more_of(size_t count, const std::string& what, bool strict) {
  const std::string message = "and " + std::to_string(count) + " more " + what;
  return strict ? syntax::error(eval::codes::parameter_binding, message, syntax::Span{})
                : syntax::warning(eval::codes::parameter_binding, message, syntax::Span{});
}

// The paths of `manifest`'s params and buffers (states are the model's own).
void add_bound_paths(const std::vector<eval::ParameterInfo>& manifest, std::set<std::string>& paths) {
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind != eval::ParameterKind::State) paths.insert(info.path);
  }
}

// "layers.7.mlp.weight" -> "layers.0.mlp.weight" (the first numeric component).
std::string at_index_zero(const std::string& path) {
  const auto position = array_position(path);
  if (!position) return path;
  const size_t start = position->first.size();
  size_t end = path.find('.', start);
  if (end == std::string::npos) end = path.size();
  return path.substr(0, start) + "0" + path.substr(end);
}

}  // namespace

std::vector<syntax::Diagnostic> audit_binding_paths(const std::vector<eval::ParameterInfo>& manifest,
                                                    const std::vector<eval::ParameterInfo>* published,
                                                    const Bindings& bindings, const std::string& model, bool strict) {
  std::vector<syntax::Diagnostic> found;
  if (bindings.size() == 0) return found;
  std::set<std::string> paths;
  add_bound_paths(manifest, paths);
  if (published != nullptr) add_bound_paths(*published, paths);
  std::set<std::string> states;
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind == eval::ParameterKind::State) states.insert(info.path);
  }
  const std::map<std::string, int64_t> lengths = array_lengths(manifest);
  std::vector<std::string> candidates;  // for "did you mean", built once
  size_t unlisted = 0;
  for (const auto& [path, tensor] : bindings.entries()) {
    if (paths.count(path) != 0) continue;
    if (published == nullptr && past_truncation(path, lengths) && paths.count(at_index_zero(path)) != 0) continue;
    if (found.size() == kListedAtMost) {
      ++unlisted;
      continue;
    }
    if (candidates.empty()) candidates.assign(paths.begin(), paths.end());
    std::string message = "`" + bindings.source() + "` binds `" + path + "`, which is no parameter of `" + model + "`";
    if (states.count(path) != 0) {
      message += ": it is a `state`, which the model keeps itself and never reads from the weights";
    } else {
      message += syntax::did_you_mean(path, candidates);
    }
    const syntax::Span span = bindings.key_span(path);
    syntax::Diagnostic diagnostic = strict ? syntax::error(eval::codes::parameter_binding, message, span)
                                           : syntax::warning(eval::codes::parameter_binding, message, span);
    diagnostic.note("it would bind the tensor `" + tensor + "`" + std::string(strict ? "" : "; the key is ignored"));
    found.push_back(std::move(diagnostic));
  }
  if (unlisted > 0) {
    found.push_back(more_of(unlisted, std::string(unlisted == 1 ? "key" : "keys") + " of `" + bindings.source() +
                                          "` " + (unlisted == 1 ? "names" : "name") + " no parameter",
                            strict));
  }
  return found;
}

std::vector<syntax::Diagnostic> audit_bindings(const std::vector<eval::ParameterInfo>& manifest,
                                               const Checkpoint& checkpoint, const Bindings& bindings, bool strict) {
  auto report = [&](std::string message) {
    return strict ? syntax::error(eval::codes::parameter_binding, std::move(message), syntax::Span{})
                  : syntax::warning(eval::codes::parameter_binding, std::move(message), syntax::Span{});
  };
  std::vector<syntax::Diagnostic> found;
  std::vector<std::string> parameter_paths;
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind == eval::ParameterKind::State) continue;
    parameter_paths.push_back(info.path);
    if (!info.optional || !bindings.maps(info.path)) continue;
    const std::string& name = bindings.tensor_for(info.path);
    if (checkpoint.find(name) != nullptr) continue;
    syntax::Diagnostic diagnostic =
        report("optional " + std::string(eval::parameter_kind_name(info.kind)) + " `" + info.path + "` is bound by `" +
               bindings.source() + "` to the tensor `" + name + "`, which the checkpoint lacks; it is absent");
    diagnostic.note("is the tensor name misspelled?" + syntax::did_you_mean(name, checkpoint.names()));
    found.push_back(std::move(diagnostic));
  }
  std::map<std::string, std::string> path_of_tensor;
  for (const auto& [path, tensor] : bindings.entries()) path_of_tensor.emplace(tensor, path);
  const std::set<std::string> paths(parameter_paths.begin(), parameter_paths.end());
  size_t listed = 0, unlisted = 0;
  for (const std::string& name : unexpected_tensors(manifest, checkpoint, bindings)) {
    // Bound by a key that names no parameter: audit_binding_paths reports
    // that key, at its position.
    const auto mapped = path_of_tensor.find(name);
    if (mapped != path_of_tensor.end() && paths.count(mapped->second) == 0) continue;
    if (listed == kListedAtMost) {
      ++unlisted;
      continue;
    }
    ++listed;
    found.push_back(report("the checkpoint's tensor `" + name + "` is read by no parameter"));
  }
  if (unlisted > 0) {
    found.push_back(more_of(unlisted,
                            std::string(unlisted == 1 ? "tensor" : "tensors") + " of the checkpoint " +
                                (unlisted == 1 ? "is" : "are") + " read by no parameter (`inspect --parameters "
                                                                 "--weights` lists them all)",
                            strict));
  }
  return found;
}

}  // namespace linnet::nest
