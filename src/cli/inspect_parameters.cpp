// `linnet inspect --parameters CARD`: see inspect_parameters.hpp.
#include "inspect_parameters.hpp"

#include <iostream>
#include <limits>

#include "linnet/nest/binding_audit.hpp"
#include "linnet/nest/session.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "run_support.hpp"

namespace linnet::cli {

namespace {

std::string shape_json(const tensor::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string generic_json(const eval::GenericValue& value) {
  switch (value.kind) {
    case eval::GenericValue::Kind::Dim: return std::to_string(value.dim);
    case eval::GenericValue::Kind::DType: return "\"" + std::string(tensor::dtype_name(value.dtype)) + "\"";
    case eval::GenericValue::Kind::Shape: return shape_json(value.shape);
  }
  return "null";
}

std::string render_json(const nest::Session& session) {
  using syntax::json_escape;
  std::string text = "{\n  \"version\": 1,\n  \"card\": \"" + json_escape(session.card().name) + "\",\n";
  text += "  \"root\": \"" + json_escape(session.root().qualified_name) + "\",\n  \"generics\": {";
  bool first = true;
  for (const auto& [name, value] : session.instance_generics()) {
    text += std::string(first ? "" : ",") + "\n    \"" + json_escape(name) + "\": " + generic_json(value);
    first = false;
  }
  text += "\n  },\n  \"parameters\": [";
  first = true;
  for (const eval::ParameterInfo& info : session.manifest()) {
    if (info.kind == eval::ParameterKind::State) continue;
    text += std::string(first ? "" : ",") + "\n    {\"path\": \"" + json_escape(info.path) + "\", \"tensor\": \"" +
            json_escape(session.bindings().tensor_for(info.path)) + "\", \"kind\": \"" +
            eval::parameter_kind_name(info.kind) + "\", \"dtype\": \"" + std::string(tensor::dtype_name(info.dtype)) +
            "\", \"shape\": " + shape_json(info.shape) + ", \"optional\": " + (info.optional ? "true" : "false") + "}";
    first = false;
  }
  text += "\n  ]";
  if (session.has_checkpoint()) {
    text += ",\n  \"unexpected_tensors\": [";
    first = true;
    for (const std::string& name :
         nest::unexpected_tensors(session.manifest(), session.checkpoint(), session.bindings())) {
      text += std::string(first ? "" : ", ") + "\"" + json_escape(name) + "\"";
      first = false;
    }
    text += "]";
  }
  return text + "\n}\n";
}

std::string render_text(const nest::Session& session) {
  std::string text = session.root().qualified_name + eval::describe_bindings(session.instance_generics()) +
                     "  (card " + session.card().name + ")\n";
  size_t required = 0;
  size_t optional = 0;
  size_t states = 0;
  int64_t elements = 0;
  bool overflow = false;
  for (const eval::ParameterInfo& info : session.manifest()) {
    if (info.kind == eval::ParameterKind::State) {
      ++states;
      continue;
    }
    const std::string& name = session.bindings().tensor_for(info.path);
    text += "  " + std::string(eval::parameter_kind_name(info.kind)) + " " + info.path +
            (name == info.path ? "" : " -> " + name) + ": " + std::string(tensor::dtype_name(info.dtype)) +
            tensor::shape_to_string(info.shape) + (info.optional ? " (optional)" : "") + "\n";
    if (info.optional) {
      ++optional;
    } else {
      ++required;
      // Each count fits (instantiation checked it); their sum may not.
      overflow = overflow || __builtin_add_overflow(elements, tensor::shape_numel(info.shape), &elements);
    }
  }
  text += std::to_string(required) + " required tensors of " +
          (overflow ? "more than " + std::to_string(std::numeric_limits<int64_t>::max()) : std::to_string(elements)) +
          " elements, " + std::to_string(optional) + " optional";
  if (states > 0) text += "; " + std::to_string(states) + " state tensors the model keeps itself";
  text += "\n";
  if (session.has_checkpoint()) {
    const std::vector<std::string> unexpected =
        nest::unexpected_tensors(session.manifest(), session.checkpoint(), session.bindings());
    text += std::to_string(unexpected.size()) + " unexpected checkpoint " +
            (unexpected.size() == 1 ? "tensor" : "tensors") + " (read by no parameter)" +
            (unexpected.empty() ? "" : ":") + "\n";
    for (const std::string& name : unexpected) text += "  " + name + "\n";
  }
  return text;
}

}  // namespace

int run_inspect_parameters(const InspectParametersOptions& options, const CommandContext& context) {
  if (int status = check_card_path(options.card); status != 0) return status;
  if (int status = check_bind_arguments(options.binds); status != 0) return status;
  if (int status = check_weights_paths(options.weights); status != 0) return status;
  if (int status = check_bind_from_path(options.bind_from); status != 0) return status;
  nest::SessionOptions session_options =
      cli::session_options(options.card, options.binds, options.weights, "exact", context);
  // With --weights the checkpoint is opened too, for its unexpected tensors.
  session_options.load_weights = !options.weights.empty();
  session_options.bind_from = options.bind_from;
  session_options.strict = options.strict;
  nest::Session session(session_options);
  const bool loaded = session.load();
  if (options.json && !loaded) {
    std::cout << session.render_diagnostics_json();
    return 1;
  }
  if (!session.diagnostics().all().empty()) std::cerr << session.render_diagnostics();
  if (!loaded) return 1;
  std::cout << (options.json ? render_json(session) : render_text(session));
  return 0;
}

}  // namespace linnet::cli
