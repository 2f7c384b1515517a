// The checker's implementation, shared by the src/check/check_*.cpp files.
//
// One Checker::Impl holds the declaration records of every module
// (declarations.hpp) and checks function bodies one at a time in a Context:
// the generics, `where` facts and solver in force, the locals in scope, and
// the index-notation state. Files by concern:
//   check_declarations.cpp  collecting items, resolving signatures, members
//   check_types.cpp         syntax types and dimension expressions to Types
//   check_expressions.cpp   operators, names, members, literals, if, match
//   check_calls.cpp         calls of user functions: arguments, inference, `where`
//   check_prelude.cpp       the prelude's functions (cast, reshape, concat, ...)
//   check_indexing.cpp      indexing, slicing, comprehensions and reductions
//   check_statements.cpp    statements, returns, loops, state assignment
//   check_kernels.cpp       kernels, op kernel bindings, `grad` clauses
//   check_proofs.cpp        shape relations proved with the solver, as diagnostics
//   check_lints.cpp         W1001-W1003
//   check_instantiate.cpp   concrete bindings and entry signatures
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "linnet/check/checker.hpp"
#include "linnet/check/declarations.hpp"
#include "linnet/check/dim_text.hpp"
#include "linnet/check/solver.hpp"
#include "linnet/check/types.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"

namespace linnet::check {

namespace ast = syntax::ast;
using syntax::Diagnostic;
using syntax::Span;

// A value bound in a function body.
struct Local {
  enum class Kind { Param, Let, Var, LoopVar, MatchBinding, GradName };
  std::string name;
  TypePtr type;
  Span span;
  Kind kind = Kind::Let;
  bool used = false;
  bool memory = false;  // a kernel's tensor parameter or result, read only by `load`/`store`
};

// An index variable of index notation (spec ch. 6).
struct IndexVar {
  std::string name;
  bool is_pack = false;
  bool is_output = false;  // a comprehension's output; otherwise a reduction's
  Span span;               // where it is introduced
  bool used = false;
  // Its domain, from the first axis it indexes.
  bool has_domain = false;
  DimExpr extent;
  Shape pack_extent;
  std::string source;  // the tensor whose axis gave the domain, as written
  Span domain_span;
};

struct IndexScope {
  std::vector<IndexVar> vars;
  const ast::ReductionExpr* reduction = nullptr;        // null for a comprehension
  const ast::ComprehensionStmt* comprehension = nullptr;
};

// Everything in force while checking one declaration or body.
struct Context {
  ModuleScope* module = nullptr;
  BlockDecl* block = nullptr;
  FunctionDecl* function = nullptr;
  std::map<std::string, const GenericParamInfo*, std::less<>> generics;
  std::vector<WhereFact> facts;
  std::shared_ptr<Solver> solver;  // null while `where` clauses are read
  // Body state.
  std::deque<Local> locals;
  std::vector<std::map<std::string, std::size_t, std::less<>>> scopes;
  int loop_depth = 0;          // runtime `while` / `for`
  bool in_kernel = false;
  bool in_memory_access = false;  // checking the target of a `load` or `store`
  bool in_grad = false;
  TypePtr result;              // the declared result, for `return`
  std::vector<IndexScope> index_scopes;
  const ast::Expr* scan_position = nullptr;  // the one expression that may be a `for` scan
  std::vector<const ast::ForLoop*> scans;    // scans being checked (their bodies may `yield`)
  // Kernels: how each result is written (store or an atomic), for E2127.
  std::map<std::string, std::pair<ast::StoreKind, Span>, std::less<>> kernel_writes;
  // Problems reported once per declaration (the same unprovable divisor in
  // fifty shapes is one diagnostic).
  std::set<std::string, std::less<>> reported;

  bool in_index_notation() const { return !index_scopes.empty(); }
};

struct Checker::Impl {
  Impl(const syntax::Program& program, const syntax::SourceManager& sources, syntax::Diagnostics& diagnostics);

  const syntax::Program& program;
  const syntax::SourceManager& sources;
  syntax::Diagnostics& diagnostics;

  // Declaration records (stable addresses).
  std::deque<ModuleScope> modules;
  std::deque<FunctionDecl> functions;
  std::deque<BlockDecl> blocks;
  std::deque<StructDecl> structs;
  std::deque<EnumDecl> enums;
  std::deque<AliasDecl> aliases;
  std::deque<ConstDecl> consts;
  std::map<const ast::Item*, Symbol> symbol_of_item;
  std::map<const syntax::Module*, ModuleScope*> scope_of_module;
  // Names each module imports, including those whose import failed (the
  // loader reported those; uses of them are not reported again).
  std::map<const ModuleScope*, std::set<std::string, std::less<>>> imported_names;

  // Call edges for the recursion check.
  struct CallEdge {
    const FunctionDecl* caller;
    const FunctionDecl* callee;
    Span span;
  };
  std::vector<CallEdge> calls;
  std::size_t functions_checked = 0;
  bool checked = false;

  // ---- diagnostics -----------------------------------------------------
  Diagnostic& error(const char* code, std::string message, Span span);
  std::string text_of(Span span) const;  // the source text of a span
  std::string text_of(const ast::Expr& expr) const { return text_of(expr.span); }
  // An unknown name's help: the `use` that brings it from the standard
  // library, else the nearest name in scope (locals, generics, the module's).
  // Help for a name that resolves to nothing: the `use` that imports it from
  // the standard library, or the nearest name in scope (with `called`, the
  // prelude's functions too), or the nearest standard library name.
  void explain_unknown_name(Diagnostic& d, const std::string& name, const Context& cx, bool called = false);
  bool verbose = false;  // every fact searched, in explain_failure
  // "facts searched: ..." with the first few facts (all with --verbose).
  std::string facts_searched_note(const std::vector<std::string>& facts) const;
  // The help for two dimensions not proved equal: a `where` clause only
  // when it can be the fix (not `Vocab == H`; see check_proofs.cpp).
  void help_for_unequal(Diagnostic& diagnostic, const DimExpr& a, const DimExpr& b, Context& cx);
  // Types written with too few generic arguments already reported, by the
  // span's file and offset (blame_defaulted_generics).
  std::set<std::pair<uint32_t, uint32_t>> defaults_blamed;
  // The standard library's public names, read on the first unknown name.
  std::optional<std::map<std::string, std::string>> std_items;

  // ---- declarations (check_declarations.cpp) ----------------------------
  void collect();
  void collect_module(const syntax::Module& module, ModuleScope& scope);
  Symbol symbol_for_item(const ast::Item& item, ModuleScope& scope, BlockDecl* block);
  void resolve_imports(ModuleScope& scope);
  void check_all();
  void resolve_function(FunctionDecl& function);
  void resolve_block(BlockDecl& block);
  void resolve_block_members(BlockDecl& block);
  void resolve_struct(StructDecl& decl);
  void resolve_alias(AliasDecl& decl);
  void resolve_const(ConstDecl& decl);
  void check_function_body(FunctionDecl& function);
  void check_const_item(ConstDecl& decl);
  void check_recursion();
  // A fresh context for a declaration inside a module (and block).
  Context make_context(ModuleScope* module, BlockDecl* block, FunctionDecl* function);
  void add_generics(Context& cx, std::vector<GenericParamInfo>& generics, const std::vector<ast::GenericParam>& params);
  void resolve_generic_defaults(Context& cx, std::vector<GenericParamInfo>& generics);
  void add_where(Context& cx, const ast::WhereClause& where, std::vector<WhereFact>* record, const std::string& origin);
  void build_solver(Context& cx);
  bool check_not_prelude(const std::string& name, Span span);
  static bool is_prelude_name(std::string_view name);

  // ---- types and dimensions (check_types.cpp) ----------------------------
  TypePtr resolve_type(const ast::Type& type, Context& cx);
  DTypeRef resolve_dtype(const ast::Type& type, Context& cx);
  std::optional<DimExpr> resolve_dim(const ast::Expr& expr, Context& cx);
  std::optional<Shape> resolve_shape_elements(const std::vector<ast::ShapeElement>& elements, Context& cx);
  // One generic argument for a parameter of a given kind.
  std::optional<GenericValue> resolve_generic_arg(const ast::GenericArg& arg, const GenericParamInfo& param,
                                                  Context& cx);
  // Explicit arguments, then defaults, for a block, struct or alias.
  std::optional<Substitution> bind_explicit_generics(const std::vector<GenericParamInfo>& generics,
                                                     const std::vector<ast::GenericArg>& args, Span span,
                                                     const std::string& what, Context& cx, bool require_all,
                                                     std::vector<std::string>* defaulted = nullptr);
  // Compile-time divisors must be positive (E2205); walks a DimExpr.
  void check_divisors(const DimExpr& dim, Span span, Context& cx);
  // A dimension proven negative is an error (E2208).
  void check_nonnegative(const DimExpr& dim, Span span, Context& cx);
  // `where` clauses of a block or struct instantiation, proved in cx (E2206).
  // `block` and `defaulted`: the generics the written type left to their
  // defaults, named in a note when a clause with one of them fails.
  void prove_instantiation(const std::vector<WhereFact>& where, const Substitution& args, Span span,
                           const std::string& what, Context& cx, const BlockDecl* block = nullptr,
                           const std::vector<std::string>& defaulted = {});

  // ---- expressions (check_expressions.cpp) --------------------------------
  TypePtr check_expr(const ast::Expr& expr, Context& cx, const TypePtr& expected = nullptr);
  TypePtr check_name(const ast::NameExpr& expr, Context& cx);
  TypePtr check_member(const ast::MemberExpr& expr, Context& cx);
  TypePtr check_unary(const ast::UnaryExpr& expr, Context& cx, const TypePtr& expected);
  TypePtr check_binary(const ast::BinaryExpr& expr, Context& cx, const TypePtr& expected);
  TypePtr check_if(const ast::IfExpr& expr, Context& cx, const TypePtr& expected);
  TypePtr check_match(const ast::MatchExpr& expr, Context& cx, const TypePtr& expected);
  TypePtr check_shape_literal(const ast::ShapeExpr& expr, Context& cx);
  // Combining two operands elementwise: the common dtype and broadcast shape.
  // `what` names the operation for messages; reports E2103, E2207, E2101.
  TypePtr elementwise(const TypePtr& lhs, const TypePtr& rhs, Span span, Span lhs_span, Span rhs_span, Context& cx);
  // The dtype a contextual scalar takes next to `other`'s dtype (E2101, E2105).
  bool adopt_literal(const Type& literal, const DTypeRef& dtype, Span span);
  // A contextual scalar with nothing to adopt: i64 or f64.
  static TypePtr default_literal(const TypePtr& type);
  bool broadcast(const Shape& a, const Shape& b, Shape& out, Span span, Context& cx);
  // Whether `value` may be used where `target` is declared; reports E2101,
  // E2113 and shape errors. `what` says where ("argument `x`", "return value").
  bool coerce(const TypePtr& value, const TypePtr& target, Span span, const std::string& what, Context& cx,
              const char* mismatch_code = "E2101");
  // A generic left to its default where a block is declared (`RmsNorm<H>`
  // leaves `T`), when a use needs another value: reported once, at the
  // declaration (code `code`, saying "but " + `needs`), with the use
  // (`use`, `use_label`) and the spelling to write (the `wanted` values,
  // by generic; "" or absent: its default). False when nothing is wanted.
  bool report_defaulted(const BlockDecl& block, Span written, const std::vector<std::string>& defaulted,
                        const std::map<std::string, std::string>& wanted, const char* code, const std::string& needs,
                        Span use, const std::string& use_label);
  // report_defaulted for a use of a method's result that carries defaults
  // (Type::from_defaults). False when `value` carries none.
  // Whether the axes of `value` that differ from `other` (aligned from the
  // last; `broadcasting` also lets a 1 fit) are all defaulted generics of a
  // method's result, at least one: their wanted values go into `wanted`.
  // A tensor `value` typed through a declaration that left generics at
  // their defaults (`sub norm: RmsNorm<H>`), where `target` is needed: when
  // the defaulted dtype or axes are all that differ, reports it once at that
  // declaration (dtype_code or shape_code) and returns true.
  bool blame_defaulted_tensor(const TypePtr& value, const TypePtr& target, const char* dtype_code,
                              const char* shape_code, Span span, const std::string& what, Context& cx);
  bool defaulted_axes_break(const Type& value, const Shape& other, bool broadcasting,
                            std::map<std::string, std::string>& wanted, Context& cx);
  bool blame_defaulted_result(const Type& value, const std::map<std::string, std::string>& wanted, const char* code,
                              Span use, const std::string& use_label);
  bool same_type(const TypePtr& a, const TypePtr& b, Context& cx);
  bool shapes_equal(const Shape& a, const Shape& b, Context& cx);
  // Lookup of a plain name: locals, generics, block members, module items.
  Local* find_local(const std::string& name, Context& cx);
  Local& declare_local(const ast::Ident& name, TypePtr type, Local::Kind kind, Context& cx);
  std::optional<Symbol> find_symbol(const std::string& name, Context& cx);
  Symbol module_symbol(ModuleScope& scope, const std::string& name);
  bool was_imported(const ModuleScope& scope, const std::string& name) const;

  // ---- calls (check_calls.cpp) ---------------------------------------------
  TypePtr check_call(const ast::CallExpr& call, Context& cx);
  TypePtr call_function(const ast::CallExpr& call, FunctionDecl& callee, const Type* instance, Context& cx);
  TypePtr construct_struct(const ast::CallExpr& call, StructDecl& decl, Context& cx);
  void record_call(const FunctionDecl& callee, Span span, Context& cx);

  // ---- prelude (check_prelude.cpp) ----------------------------------------
  static bool is_prelude_function(std::string_view name);
  static const std::vector<std::string>& prelude_function_names();
  TypePtr call_prelude(const ast::CallExpr& call, const std::string& name, Context& cx);

  // ---- indexing and index notation (check_indexing.cpp) -------------------
  TypePtr check_index(const ast::IndexExpr& expr, Context& cx);
  TypePtr check_reduction(const ast::ReductionExpr& expr, Context& cx);
  void check_comprehension(const ast::ComprehensionStmt& stmt, Context& cx);
  IndexVar* find_index_var(const std::string& name, Context& cx);

  // ---- statements (check_statements.cpp) ----------------------------------
  void check_body(const ast::Body& body, Context& cx, bool function_body);
  void check_stmt(const ast::Stmt& stmt, Context& cx);
  void bind_pattern(const ast::Pattern& pattern, const TypePtr& type, Context& cx, Local::Kind kind);
  TypePtr check_scan(const ast::ForExpr& expr, Context& cx);
  // The bounds of a counted loop, when both are compile-time integers
  // (reports `code` otherwise, and E2208 when `stop >= start` is unprovable).
  std::optional<std::pair<DimExpr, DimExpr>> check_for_bounds(const ast::ForLoop& loop, Context& cx, const char* code);
  bool ends_with_return(const ast::Body& body) const;

  // ---- kernels and gradients (check_kernels.cpp) --------------------------
  void check_kernel_declaration(FunctionDecl& kernel, Context& cx);
  void check_kernel_binding(FunctionDecl& op);
  void check_grad(FunctionDecl& op);
  TypePtr kernel_builtin(const ast::CallExpr& call, const std::string& name, Context& cx);
  void check_store(const ast::StoreStmt& stmt, Context& cx);
  bool is_memory_tensor(const ast::Expr& expr, Context& cx);

  // ---- proofs (check_proofs.cpp) -------------------------------------------
  // Proves `relation`; on failure reports `code` with the relation, where it
  // was needed, the facts searched and a `where` suggestion. Returns whether
  // it was proved.
  bool require(const Relation& relation, const char* code, const std::string& message, Span span,
               const std::string& needed_for, Context& cx);
  void explain_failure(Diagnostic& diagnostic, const ProofResult& proof, Context& cx);
  bool prove_equal_dims(const DimExpr& a, const DimExpr& b, Context& cx);
  bool is_one(const DimExpr& dim, Context& cx);
  DimExpr simplify(const DimExpr& dim, Context& cx);
  // The value of a dimension expression that is a constant under the facts.
  std::optional<std::int64_t> constant_value(const DimExpr& dim, Context& cx);

  // ---- lints (check_lints.cpp) -----------------------------------------------
  void run_lints();
  void lint_locals(const Context& cx);
  std::vector<std::pair<std::string, Span>> unused_locals_pending;  // W1002, collected while checking

  // ---- instantiation (check_instantiate.cpp) ---------------------------------
  std::optional<Instance> instantiate(const InstantiateRequest& request);
};

// "`x`" for names and source snippets in messages (dim_text.hpp's `code`,
// which also avoids g++ 12's false -Wrestrict on `"literal" + string`).
inline std::string quoted(std::string_view text) { return code(text); }

}  // namespace linnet::check
