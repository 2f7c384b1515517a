// The root block of a card and the values of its generics.
//
// A card's generics come from nest.toml's [generics], overridden on the
// command line by `--bind K=V`. V is read by what K is declared as:
//   K: Dim            an integer, "4096"
//   T: Float (dtypes) a dtype name, "bf16"
//   *S: Shape         a list, "2,3" or "[2, 3]", or "" for none
// A --bind name that is not a generic of the root block may be a generic
// of one of its entries (B, S, Steps): those values go to the entry calls.
// Whether the values satisfy the block's `where` clause is the
// interpreter's check (instantiate and parameters report E2206).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/eval/value.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::nest {

// The root block of a loaded program and its entries; or, for a plain
// program run without a root block, its module-level entries (then `block`
// is null and there are no generics but the entries' own).
struct RootBlock {
  const syntax::Module* module = nullptr;
  const syntax::ast::BlockItem* block = nullptr;  // null: module-level entries
  std::string qualified_name;  // "llama::Model", or the module's name for module-level entries
  std::vector<const syntax::ast::FunctionItem*> entries;  // in declaration order
  // What Interpreter::call_function calls for each module-level entry
  // ("tests.functions::mean_squared_error"); parallel to `entries`.
  std::vector<std::string> entry_functions;

  const syntax::ast::FunctionItem* entry(std::string_view name) const;
  std::vector<std::string> entry_names() const;
  // The generic `name` of the block, or nullptr.
  const syntax::ast::GenericParam* generic(std::string_view name) const;
};

// The block `name` ("Model", or "module::Model") among the requested
// modules, else among all; nothing (with `why`) when there is none or more
// than one.
std::optional<RootBlock> find_root_block(const syntax::Program& program, const std::string& name, std::string& why);

// The module-level entries of the requested modules (a RootBlock without a
// block); nothing, with `why` (naming the blocks that do have entries),
// when there are none.
std::optional<RootBlock> find_module_entries(const syntax::Program& program, std::string& why);

// `K=V` from the command line.
struct BindArgument {
  std::string name;
  std::string value;
  // Where it came from, for messages: empty for `--bind`, else a phrase
  // naming the file ("`--bind-from meta.json`", "`golden/a/meta.json`
  // (linnet_generics)"): a value there is not a `--bind` the user typed.
  std::string from;
  // "`--bind H=64`" or "`H=64` from `--bind-from meta.json`".
  std::string origin() const;
};
// Nothing when there is no `=` or no name before it.
std::optional<BindArgument> parse_bind_argument(std::string_view text);

// `text` as a value of the generic `declared`; nothing, with `why`, when it
// is not one.
std::optional<eval::GenericValue> parse_generic_value(std::string_view text, const syntax::ast::GenericParam& declared,
                                                      std::string& why);

struct BoundGenerics {
  eval::GenericBindings model;  // the root block's generics
  eval::GenericBindings entry;  // --bind values for generics of the entries
};

// Binds the root block's generics from the card and the --bind arguments.
// Reports E2111 for a --bind that names no generic of the block or of its
// entries, a value of the wrong kind, a [generics] name the block does not
// declare, and a generic with no default left without a value; all of them
// at once. Defaults are applied by the interpreter.
std::optional<BoundGenerics> bind_generics(const RootBlock& root, const Card& card,
                                           const std::vector<BindArgument>& binds, syntax::Diagnostics& diagnostics);

// "dimension", "dtype", "shape" (what a generic's value must be).
const char* generic_value_kind(const syntax::ast::GenericParam& declared);

}  // namespace linnet::nest
