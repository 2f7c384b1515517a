// What the checker knows about each declaration once it has resolved it:
// generic parameters, `where` facts, parameter and result types, block
// members and methods, struct fields, enum variants.
//
// The records point back into the syntax tree (which must outlive them) and
// are owned by the Checker (checker.hpp). Types inside them are written in
// the declaration's own generic names; a use substitutes its arguments.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "linnet/check/solver.hpp"
#include "linnet/check/types.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::check {

struct ModuleScope;

// A generic argument or default: a dimension, a shape pack, or a dtype.
struct GenericValue {
  enum class Kind { Dim, Pack, DType };
  Kind kind = Kind::Dim;
  DimExpr dim;
  Shape pack;
  DTypeRef dtype;
};

struct GenericParamInfo {
  std::string name;
  syntax::ast::GenericKind kind = syntax::ast::GenericKind::Dim;  // Shape for a pack
  syntax::Span span;
  const syntax::ast::GenericArg* default_arg = nullptr;
  bool has_default = false;
  GenericValue default_value;  // valid when has_default

  bool is_dim() const { return kind == syntax::ast::GenericKind::Dim; }
  bool is_pack() const { return kind == syntax::ast::GenericKind::Shape; }
  bool is_dtype() const { return !is_dim() && !is_pack(); }
};

// One relation of a `where` clause, in the declaration's generic names.
struct WhereFact {
  Relation relation;
  syntax::Span span;
  std::string origin;  // "where clause of `Attention`"
};

struct ParamInfo {
  std::string name;
  TypePtr type;
  bool has_default = false;
  syntax::Span span;
};

enum class ResolveState { Unresolved, Resolving, Resolved };

struct BlockDecl;

// fn, op, entry (module level or a block's method) and kernel.
struct FunctionDecl {
  const syntax::ast::FunctionItem* function = nullptr;  // unless a kernel
  const syntax::ast::KernelItem* kernel = nullptr;
  ModuleScope* module = nullptr;
  BlockDecl* block = nullptr;  // the block a method belongs to
  std::string name;
  std::vector<GenericParamInfo> generics;
  std::vector<ParamInfo> params;
  TypePtr result;                     // unit without `->`; a kernel's results as a tuple
  std::vector<ParamInfo> kernel_results;  // kernels: the named results
  std::vector<WhereFact> where;
  ResolveState state = ResolveState::Unresolved;
  bool signature_ok = true;

  bool is_kernel() const { return kernel != nullptr; }
  bool is_op() const { return function && function->function == syntax::ast::FunctionKind::Op; }
  bool is_entry() const { return function && function->function == syntax::ast::FunctionKind::Entry; }
  const syntax::ast::Item& item() const;
  std::string qualified_name() const;  // `Block.method` or `function`
};

struct MemberDecl {
  const syntax::ast::MemberItem* item = nullptr;
  syntax::ast::MemberKind kind = syntax::ast::MemberKind::Param;
  std::string name;
  TypePtr type;
  bool used = false;
};

struct BlockDecl {
  const syntax::ast::BlockItem* item = nullptr;
  ModuleScope* module = nullptr;
  std::string name;
  std::vector<GenericParamInfo> generics;
  std::vector<WhereFact> where;
  std::vector<MemberDecl> members;  // declaration order
  std::map<std::string, std::size_t, std::less<>> member_index;
  std::map<std::string, FunctionDecl*, std::less<>> methods;
  ResolveState state = ResolveState::Unresolved;
  bool members_resolved = false;

  const MemberDecl* member(std::string_view member_name) const;
};

struct StructDecl {
  const syntax::ast::StructItem* item = nullptr;
  ModuleScope* module = nullptr;
  std::string name;
  std::vector<GenericParamInfo> generics;
  std::vector<ParamInfo> fields;
  ResolveState state = ResolveState::Unresolved;
};

struct EnumDecl {
  const syntax::ast::EnumItem* item = nullptr;
  ModuleScope* module = nullptr;
  std::string name;
  std::vector<std::string> variants;
};

struct AliasDecl {
  const syntax::ast::TypeAliasItem* item = nullptr;
  ModuleScope* module = nullptr;
  std::vector<GenericParamInfo> generics;
  TypePtr aliased;
  ResolveState state = ResolveState::Unresolved;
};

struct ConstDecl {
  const syntax::ast::ConstItem* item = nullptr;
  ModuleScope* module = nullptr;
  TypePtr type;  // a contextual scalar for an unannotated constant
  ResolveState state = ResolveState::Unresolved;
};

// What a name in a module's scope refers to.
struct Symbol {
  enum class Kind { None, Const, Alias, Struct, Enum, Function, Block, Module };
  Kind kind = Kind::None;
  ConstDecl* constant = nullptr;
  AliasDecl* alias = nullptr;
  StructDecl* structure = nullptr;
  EnumDecl* enumeration = nullptr;
  FunctionDecl* function = nullptr;
  BlockDecl* block = nullptr;
  ModuleScope* module = nullptr;  // Module: the module a `use a.b` names
};

// A module's top-level names: its own items and what its `use`s import.
struct ModuleScope {
  const syntax::Module* module = nullptr;
  std::string name;
  std::map<std::string, Symbol, std::less<>> symbols;
  // Imported names, for the unused-import lint: local name -> its span and
  // whether anything in the module referred to it.
  struct Import {
    syntax::Span span;
    bool used = false;
  };
  std::map<std::string, Import, std::less<>> imports;
};

}  // namespace linnet::check
