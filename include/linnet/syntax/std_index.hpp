// Which standard library module declares a public name, for the help of an
// unknown name: `RmsNorm` used without its `use` gets
// "add `use std.nn.norm::{RmsNorm}`".
#pragma once

#include <map>
#include <optional>
#include <string>

namespace linnet::syntax {

// Every `pub` item of every module under `std_root` (fn, op, kernel, block,
// struct, enum, type, const), by name, with the module that declares it
// ("std.nn.norm"). The files are read as text, not parsed: a module that
// does not load still lends its names. Empty when `std_root` is "".
std::map<std::string, std::string> index_std_items(const std::string& std_root);

// The standard library item a misspelled or missing name most likely
// means: the closest name (closest_name's rule), else the one item that
// holds `name` as a whole `_`-separated word (`erf` -> `gelu_erf`).
std::optional<std::string> std_item_for(const std::string& name, const std::map<std::string, std::string>& std_items);

}  // namespace linnet::syntax
