// The in-memory parameter source and the parameter kinds' names.
#include "linnet/eval/parameters.hpp"

namespace linnet::eval {

const char* parameter_kind_name(ParameterKind kind) {
  switch (kind) {
    case ParameterKind::Param: return "param";
    case ParameterKind::Buffer: return "buffer";
    case ParameterKind::State: return "state";
  }
  return "param";
}

std::optional<tensor::Tensor> MapParameterSource::fetch(const ParameterRequest& request) {
  requested_.insert(request.path);
  auto found = tensors_.find(request.path);
  if (found == tensors_.end()) return std::nullopt;
  return found->second;
}

std::vector<std::string> MapParameterSource::unused() const {
  std::vector<std::string> paths;
  for (const auto& [path, tensor] : tensors_) {
    if (requested_.count(path) == 0) paths.push_back(path);
  }
  return paths;
}

}  // namespace linnet::eval
