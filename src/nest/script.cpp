// Scripts of entry calls.
#include "linnet/nest/script.hpp"
#include "linnet/syntax/file_reading.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <simdjson.h>
#include <sstream>

namespace linnet::nest {

namespace {

// The generic values of one call's "bind": numbers are dimensions, strings
// are read as the entry declares the generic (dtype names, "2,3" packs).
eval::GenericBindings call_generics(const simdjson::dom::object& bind, const syntax::ast::FunctionItem& entry,
                                    const std::string& where) {
  eval::GenericBindings generics;
  for (const simdjson::dom::key_value_pair field : bind) {
    const std::string name(field.key);
    const syntax::ast::GenericParam* declared = nullptr;
    for (const syntax::ast::GenericParam& generic : entry.generics) {
      if (generic.name.text == name) declared = &generic;
    }
    if (declared == nullptr) {
      std::string names;
      for (const syntax::ast::GenericParam& generic : entry.generics) {
        names += (names.empty() ? "" : ", ") + generic.name.text;
      }
      throw InputError(where + ": entry `" + entry.name.text + "` has no generic `" + name + "`" +
                       (names.empty() ? std::string(" (it has none)") : "; it has " + names));
    }
    std::string text;
    int64_t integer = 0;
    std::string_view string;
    if (field.value.get(integer) == simdjson::SUCCESS) {
      text = std::to_string(integer);
    } else if (field.value.get(string) == simdjson::SUCCESS) {
      text = std::string(string);
    } else {
      simdjson::dom::array list;
      if (field.value.get(list) != simdjson::SUCCESS) {
        throw InputError(where + ": the value of generic `" + name + "` must be a number, a string or a list");
      }
      for (const simdjson::dom::element item : list) {
        int64_t dim = 0;
        if (item.get(dim) != simdjson::SUCCESS) throw InputError(where + ": `" + name + "` lists a non-integer");
        text += (text.empty() ? "" : ",") + std::to_string(dim);
      }
    }
    std::string why;
    std::optional<eval::GenericValue> value = parse_generic_value(text, *declared, why);
    if (!value) throw InputError(where + ": `" + text + "` is not a value for generic `" + name + "`: " + why);
    generics[name] = *value;
  }
  return generics;
}

}  // namespace

std::vector<ScriptCall> parse_script(std::string_view json, const std::string& base_directory, const Session& session) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(simdjson::padded_string(json)).get(root)) {
    throw InputError("the script is not valid JSON (" + std::string(simdjson::error_message(error)) + ")");
  }
  simdjson::dom::array items;
  if (root.get(items) != simdjson::SUCCESS) {
    simdjson::dom::object object;
    if (root.get(object) != simdjson::SUCCESS || object["calls"].get(items) != simdjson::SUCCESS) {
      throw InputError("a script is a list of calls, or an object whose \"calls\" is one");
    }
  }
  std::vector<ScriptCall> calls;
  size_t index = 0;
  for (const simdjson::dom::element item : items) {
    const std::string where = "script call " + std::to_string(index);
    simdjson::dom::object object;
    if (item.get(object) != simdjson::SUCCESS) throw InputError(where + " is not an object");
    ScriptCall call;
    call.index = index++;
    for (const simdjson::dom::key_value_pair field : object) {
      const std::string_view key = field.key;
      if (key != "entry" && key != "inputs" && key != "bind" && key != "reset") {
        throw InputError(where + ": unknown field \"" + std::string(key) +
                         "\" (a call has \"entry\", \"inputs\", \"bind\" and \"reset\")");
      }
    }
    bool reset = false;
    if (object["reset"].get(reset) != simdjson::SUCCESS && object["reset"].error() != simdjson::NO_SUCH_FIELD) {
      throw InputError(where + ": \"reset\" must be true or false");
    }
    call.reset = reset;
    std::string_view entry_name;
    const auto entry_field = object["entry"];
    if (entry_field.error() == simdjson::NO_SUCH_FIELD) {
      if (!call.reset) throw InputError(where + " names no \"entry\"");
      calls.push_back(std::move(call));
      continue;
    }
    if (entry_field.get(entry_name) != simdjson::SUCCESS) throw InputError(where + ": \"entry\" must be a string");
    call.entry = std::string(entry_name);
    const std::vector<InputSlot> slots = session.slots(call.entry);  // throws for an unknown entry

    std::map<std::string, tensor::Tensor> values;
    simdjson::dom::object inputs;
    if (object["inputs"].get(inputs) == simdjson::SUCCESS) {
      for (const simdjson::dom::key_value_pair field : inputs) {
        const std::string name(field.key);
        const InputSlot* slot = nullptr;
        for (const InputSlot& candidate : slots) {
          if (candidate.name == name) slot = &candidate;
        }
        if (slot == nullptr) {
          std::string names;
          for (const InputSlot& candidate : slots) names += (names.empty() ? "" : ", ") + candidate.name;
          throw InputError(where + ": entry `" + call.entry + "` has no parameter `" + name + "`; it takes " + names);
        }
        try {
          values[name] = input_from_json(field.value, *slot, base_directory);
        } catch (const InputError& failure) {
          throw InputError(where + " (`" + call.entry + "`): " + failure.what());
        }
      }
    } else if (object["inputs"].error() != simdjson::NO_SUCH_FIELD) {
      throw InputError(where + ": \"inputs\" must be an object: parameter name -> value");
    }
    try {
      call.inputs = session.inputs(call.entry, values);
    } catch (const InputError& failure) {
      throw InputError(where + ": " + failure.what());
    }
    // An error about an input's value names it (eval::EntryInputs::origins).
    for (const auto& input : values) call.inputs.origins[input.first] = where + "'s \"inputs\".\"" + input.first + "\"";
    simdjson::dom::object bind;
    if (object["bind"].get(bind) == simdjson::SUCCESS) {
      for (auto& [name, value] : call_generics(bind, *session.root().entry(call.entry), where)) {
        call.inputs.generics[name] = value;
      }
    } else if (object["bind"].error() != simdjson::NO_SUCH_FIELD) {
      throw InputError(where + ": \"bind\" must be an object: generic name -> value");
    }
    calls.push_back(std::move(call));
  }
  if (calls.empty()) throw InputError("the script has no calls");
  return calls;
}

std::vector<ScriptCall> read_script(const std::string& path, const Session& session) {
  std::string text, problem;
  if (!syntax::read_whole_file(path, text, problem)) throw InputError("the script `" + path + "` " + problem);
  try {
    return parse_script(text, std::filesystem::path(path).parent_path().string(), session);
  } catch (const InputError& failure) {
    throw InputError("`" + path + "`: " + failure.what());
  }
}

std::vector<ScriptStep> run_script(Session& session, const std::vector<ScriptCall>& calls,
                                   const std::function<void(const ScriptStep&)>& after_each) {
  std::vector<ScriptStep> steps;
  for (const ScriptCall& call : calls) {
    if (call.reset) session.reset_state();
    if (call.entry.empty()) continue;
    ScriptStep step;
    step.index = call.index;
    step.entry = call.entry;
    const auto start = std::chrono::steady_clock::now();
    const eval::Value result = session.call(call.entry, call.inputs);
    step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    step.outputs = flatten_outputs(std::to_string(call.index) + "_" + call.entry, result);
    if (after_each) {
      after_each(step);
      step.outputs.clear();
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace linnet::nest
