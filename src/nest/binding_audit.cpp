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
  for (const std::string& name : unexpected_tensors(manifest, checkpoint, bindings)) {
    syntax::Diagnostic diagnostic = report("the checkpoint's tensor `" + name + "` is read by no parameter");
    const auto mapped = path_of_tensor.find(name);
    if (mapped != path_of_tensor.end()) {
      diagnostic.note("`" + bindings.source() + "` binds it to `" + mapped->second + "`, which is no parameter" +
                      syntax::did_you_mean(mapped->second, parameter_paths));
    }
    found.push_back(std::move(diagnostic));
  }
  return found;
}

}  // namespace linnet::nest
