// Generic values from meta.json or config.json (bind_from.hpp).
#include "linnet/nest/bind_from.hpp"

#include <simdjson.h>

#include "linnet/nest/weights.hpp"

namespace linnet::nest {

std::optional<std::vector<std::string>> binds_from_file(const std::string& path, const RootBlock& root,
                                                        std::string& why) {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (auto error = parser.load(path).get(document)) {
    why = "cannot read `" + path + "` as JSON (" + std::string(simdjson::error_message(error)) + ")";
    return std::nullopt;
  }
  simdjson::dom::object top;
  if (document.get(top)) {
    why = "`" + path + "` is not a JSON object";
    return std::nullopt;
  }
  std::vector<std::string> binds;
  simdjson::dom::object generics;
  if (top["linnet_generics"].get(generics) == simdjson::SUCCESS) {
    for (auto [name, value] : generics) {
      int64_t dim = 0;
      std::string_view text;
      if (value.get(dim) == simdjson::SUCCESS) {
        binds.push_back(std::string(name) + "=" + std::to_string(dim));
      } else if (value.get(text) == simdjson::SUCCESS) {
        binds.push_back(std::string(name) + "=" + std::string(text));
      } else {
        why = "`" + path + "`: linnet_generics." + std::string(name) + " is neither an integer nor a string";
        return std::nullopt;
      }
    }
    return binds;
  }
  // A config.json, through the root block's own generics.
  auto size = [&](const std::string& key) -> std::optional<int64_t> {
    int64_t value = 0;
    if (top[key].get(value) != simdjson::SUCCESS || value < 0) return std::nullopt;
    return value;
  };
  for (const auto& [generic, keys] : config_size_keys()) {
    if (root.generic(generic) == nullptr) continue;
    for (const std::string& key : keys) {
      if (std::optional<int64_t> value = size(key)) {
        binds.push_back(generic + "=" + std::to_string(*value));
        break;
      }
    }
  }
  if (root.generic("Layers") != nullptr) {
    if (std::optional<int64_t> layers = size("num_hidden_layers")) binds.push_back("Layers=" + std::to_string(*layers));
  }
  if (binds.empty()) {
    why = "`" + path + "` has no `linnet_generics` (a golden meta.json) and no size a generic of `" +
          root.qualified_name + "` takes (a config.json)";
    return std::nullopt;
  }
  return binds;
}

}  // namespace linnet::nest
