// The syntax tree of one Linnet source file (one module).
//
// Ownership model: a tree of heap nodes owned by std::unique_ptr. There are
// four node families -- Item, Stmt, Expr, Type (plus Pattern) -- each a base
// struct with a `kind` enum and a `span`, and one derived struct per kind.
// Walk a family with a switch on `kind` and `as<T>()` (checked: nullptr on a
// kind mismatch) or `cast<T>()` (asserted by the switch):
//
//   switch (expr.kind) {
//     case ExprKind::Binary: { const auto& b = expr.cast<BinaryExpr>(); ... }
//     ...
//   }
//
// Every node and every name (Ident) carries its exact source span. Parenthesized
// expressions have no node of their own: `(a + b)` is the Binary node, whose
// span is that of `a + b`.
//
// Nodes that failed to parse are kept as Error kinds (ErrorExpr, ErrorType,
// ...) so that consumers can walk a partial tree after diagnostics; a tree
// with no parse errors contains none of them.
//
// Annotation slots: Expr::type_id and Expr::annotation, and Item::annotation,
// are `mutable` so that a checker or an interpreter holding a const tree can
// record what it computed (a type table index, a resolved symbol). The parser
// leaves them at -1 / nullptr.
//
// Nesting depth is bounded by the parser (parser.hpp: max_nesting_depth), so
// recursive walks over a tree are safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "linnet/syntax/source.hpp"

namespace linnet::syntax::ast {

// A name as written, with its span.
struct Ident {
  std::string text;
  Span span;
  bool empty() const { return text.empty(); }
};

// Helper for the derived nodes: `as<T>()` / `cast<T>()` on a family base.
template <typename Base, typename Kind>
struct Node {
  const Kind kind;
  Span span;

  template <typename T>
  const T* as() const { return kind == T::Kind ? static_cast<const T*>(static_cast<const Base*>(this)) : nullptr; }
  template <typename T>
  T* as() { return kind == T::Kind ? static_cast<T*>(static_cast<Base*>(this)) : nullptr; }
  template <typename T>
  const T& cast() const { return *static_cast<const T*>(static_cast<const Base*>(this)); }
  template <typename T>
  T& cast() { return *static_cast<T*>(static_cast<Base*>(this)); }

 protected:
  Node(Kind k, Span s) : kind(k), span(s) {}
};

struct Expr;
struct Type;
struct Pattern;
struct Stmt;
struct Item;
using ExprPtr = std::unique_ptr<Expr>;
using TypePtr = std::unique_ptr<Type>;
using PatternPtr = std::unique_ptr<Pattern>;
using StmtPtr = std::unique_ptr<Stmt>;
using ItemPtr = std::unique_ptr<Item>;

// A generic argument (`type_or_expr` in the grammar): a type when it parses
// as one, otherwise an arithmetic expression. A bare name such as `H` is a
// NamedType; the checker decides whether it names a dimension or a dtype.
// Exactly one of `type` and `expr` is set.
struct GenericArg {
  TypePtr type;
  ExprPtr expr;
  Span span;
};

// ---------------------------------------------------------------- types

enum class TypeKind { Named, Tensor, Tuple, Array, Optional, Error };

struct Type : Node<Type, TypeKind> {
  virtual ~Type() = default;

 protected:
  Type(TypeKind k, Span s) : Node(k, s) {}
};

// `f32`, `T`, `Linear<H, H, T>`, `layers.Decoder<T>`: a dotted path with
// optional generic arguments. Scalar types are Named types with one segment
// spelled `bool`, `i8` ... `f64`.
struct NamedType : Type {
  static constexpr TypeKind Kind = TypeKind::Named;
  explicit NamedType(Span s) : Type(Kind, s) {}
  std::vector<Ident> path;
  std::vector<GenericArg> generic_args;
  bool has_generic_args = false;  // `Foo<>` is written with an empty list
};

// One dimension of a tensor type: an expression, or a shape pack `*S`.
struct ShapeElement {
  ExprPtr dim;     // set unless this is a pack
  Ident pack;      // set for `*S`
  bool is_pack = false;
  Span span;
};

// `Tensor[B, *S, H; T]`.
struct TensorType : Type {
  static constexpr TypeKind Kind = TypeKind::Tensor;
  explicit TensorType(Span s) : Type(Kind, s) {}
  std::vector<ShapeElement> shape;
  TypePtr dtype;  // a scalar or a named dtype generic
};

// `(A, B)`, at least two elements.
struct TupleType : Type {
  static constexpr TypeKind Kind = TypeKind::Tuple;
  explicit TupleType(Span s) : Type(Kind, s) {}
  std::vector<TypePtr> elements;
};

// `[Block<T>; N]`, a structural array of sub-blocks.
struct ArrayType : Type {
  static constexpr TypeKind Kind = TypeKind::Array;
  explicit ArrayType(Span s) : Type(Kind, s) {}
  TypePtr element;
  ExprPtr length;
};

// `T?`.
struct OptionalType : Type {
  static constexpr TypeKind Kind = TypeKind::Optional;
  explicit OptionalType(Span s) : Type(Kind, s) {}
  TypePtr inner;
};

struct ErrorType : Type {
  static constexpr TypeKind Kind = TypeKind::Error;
  explicit ErrorType(Span s) : Type(Kind, s) {}
};

// ---------------------------------------------------------------- expressions

enum class ExprKind {
  Integer, Float, String, Bool,
  Name,       // identifier
  Member,     // object.name
  Call,       // callee<generics>(args)
  Index,      // object[components]
  Unary, Binary,
  Tuple,      // (a, b)
  Shape,      // [a, b] shape literal
  Reduction,  // sum<f32>[k] body
  Some,       // some(value)
  None,       // none
  If, Match,
  For,        // a `for` scan used as a value
  Error,
};

struct Expr : Node<Expr, ExprKind> {
  virtual ~Expr() = default;
  // Written inside its own parentheses: `(for ...)` is then not "the whole
  // value" of a binding (spec §8.5), and `(a == b) & c` keeps its grouping.
  bool parenthesized = false;
  mutable int32_t type_id = -1;              // for the checker: an index into its type table
  mutable const void* annotation = nullptr;  // for later passes: anything they attach

 protected:
  Expr(ExprKind k, Span s) : Node(k, s) {}
};

struct IntegerLiteral : Expr {
  static constexpr ExprKind Kind = ExprKind::Integer;
  explicit IntegerLiteral(Span s) : Expr(Kind, s) {}
  uint64_t value = 0;
  bool exceeds_u64 = false;  // too large for 64 bits (the checker reports E2105)
  std::string text;          // spelling as written
};

struct FloatLiteral : Expr {
  static constexpr ExprKind Kind = ExprKind::Float;
  explicit FloatLiteral(Span s) : Expr(Kind, s) {}
  double value = 0.0;
  std::string text;
};

struct StringLiteral : Expr {
  static constexpr ExprKind Kind = ExprKind::String;
  explicit StringLiteral(Span s) : Expr(Kind, s) {}
  std::string value;  // decoded
};

struct BoolLiteral : Expr {
  static constexpr ExprKind Kind = ExprKind::Bool;
  explicit BoolLiteral(Span s) : Expr(Kind, s) {}
  bool value = false;
};

struct NameExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Name;
  explicit NameExpr(Span s) : Expr(Kind, s) {}
  Ident name;
};

struct MemberExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Member;
  explicit MemberExpr(Span s) : Expr(Kind, s) {}
  ExprPtr object;
  Ident member;
};

// `name = value` or a positional `value`.
struct Argument {
  Ident name;  // empty for a positional argument
  ExprPtr value;
  Span span;
};

struct CallExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Call;
  explicit CallExpr(Span s) : Expr(Kind, s) {}
  ExprPtr callee;  // a Name or Member chain
  std::vector<GenericArg> generic_args;
  bool has_generic_args = false;
  std::vector<Argument> arguments;
};

// One component of `x[...]`.
enum class IndexComponentKind {
  Value,     // x[i], x[i + 1], x[rows]
  Ellipsis,  // x[..., 0]
  Pack,      // x[*s, h]
  Slice,     // x[a:b], x[a:b:c], x[::2], x[:]
};

struct IndexComponent {
  IndexComponentKind kind = IndexComponentKind::Value;
  ExprPtr value;  // Value
  Ident pack;     // Pack
  ExprPtr start, stop, step;  // Slice; each may be null (defaults 0, the extent, 1)
  Span span;
};

struct IndexExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Index;
  explicit IndexExpr(Span s) : Expr(Kind, s) {}
  ExprPtr object;
  std::vector<IndexComponent> components;
};

enum class UnaryOp { Not, Negate, Plus };

struct UnaryExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Unary;
  explicit UnaryExpr(Span s) : Expr(Kind, s) {}
  UnaryOp op = UnaryOp::Negate;
  ExprPtr operand;
};

// Loosest first: Or; And; Equal NotEqual; Less LessEqual Greater GreaterEqual;
// BitOr; BitXor; BitAnd; Add Subtract; Multiply Divide Remainder (spec §5.4).
enum class BinaryOp {
  Or, And,
  Equal, NotEqual,
  Less, LessEqual, Greater, GreaterEqual,
  BitOr, BitXor, BitAnd,
  Add, Subtract,
  Multiply, Divide, Remainder,
};

// `==`, `!=`, `<`, `<=`, `>`, `>=`: the operators whose result is bool.
inline bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Less || op == BinaryOp::LessEqual ||
         op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
}

// `|`, `^`, `&`.
inline bool is_bitwise(BinaryOp op) { return op == BinaryOp::BitOr || op == BinaryOp::BitXor || op == BinaryOp::BitAnd; }

struct BinaryExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Binary;
  explicit BinaryExpr(Span s) : Expr(Kind, s) {}
  BinaryOp op = BinaryOp::Add;
  Span op_span;
  ExprPtr lhs, rhs;
};

struct TupleExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Tuple;
  explicit TupleExpr(Span s) : Expr(Kind, s) {}
  std::vector<ExprPtr> elements;  // at least two, or one written `(a,)`
};

// `[B, S, H]`: a compile-time shape literal.
struct ShapeExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Shape;
  explicit ShapeExpr(Span s) : Expr(Kind, s) {}
  std::vector<ExprPtr> elements;
};

enum class ReductionKind { Sum, Prod, Max, Min, Any, All };

// `sum<f32>[k, j] body`; the body extends as far as an expression does.
struct ReductionExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Reduction;
  explicit ReductionExpr(Span s) : Expr(Kind, s) {}
  ReductionKind reduction = ReductionKind::Sum;
  Span keyword_span;
  TypePtr accumulator;  // null unless written `<T>`
  std::vector<Ident> indices;
  ExprPtr body;
};

struct SomeExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Some;
  explicit SomeExpr(Span s) : Expr(Kind, s) {}
  ExprPtr value;
};

struct NoneExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::None;
  explicit NoneExpr(Span s) : Expr(Kind, s) {}
};

// `if c { a } else { b }`: both branches are single expressions.
struct IfExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::If;
  explicit IfExpr(Span s) : Expr(Kind, s) {}
  ExprPtr condition, then_value, else_value;
};

struct MatchArm {
  PatternPtr pattern;
  ExprPtr value;
  Span span;
};

struct MatchExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Match;
  explicit MatchExpr(Span s) : Expr(Kind, s) {}
  ExprPtr scrutinee;
  std::vector<MatchArm> arms;
};

// A statement list in braces.
struct Body {
  std::vector<StmtPtr> statements;
  Span span;  // from `{` to `}`
};

// `for i in start..stop { body }`, a statement or (as a scan) a value.
struct ForLoop {
  Ident variable;
  ExprPtr start, stop;
  Body body;
};

struct ForExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::For;
  explicit ForExpr(Span s) : Expr(Kind, s) {}
  ForLoop loop;
};

struct ErrorExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Error;
  explicit ErrorExpr(Span s) : Expr(Kind, s) {}
};

// ---------------------------------------------------------------- patterns

enum class PatternKind { Binding, Tuple, Some, None, Error };

struct Pattern : Node<Pattern, PatternKind> {
  virtual ~Pattern() = default;

 protected:
  Pattern(PatternKind k, Span s) : Node(k, s) {}
};

// A name: binds a value, or in a match arm also names an enum variant.
struct BindingPattern : Pattern {
  static constexpr PatternKind Kind = PatternKind::Binding;
  explicit BindingPattern(Span s) : Pattern(Kind, s) {}
  Ident name;
};

struct TuplePattern : Pattern {
  static constexpr PatternKind Kind = PatternKind::Tuple;
  explicit TuplePattern(Span s) : Pattern(Kind, s) {}
  std::vector<PatternPtr> elements;
};

struct SomePattern : Pattern {
  static constexpr PatternKind Kind = PatternKind::Some;
  explicit SomePattern(Span s) : Pattern(Kind, s) {}
  PatternPtr inner;
};

struct NonePattern : Pattern {
  static constexpr PatternKind Kind = PatternKind::None;
  explicit NonePattern(Span s) : Pattern(Kind, s) {}
};

struct ErrorPattern : Pattern {
  static constexpr PatternKind Kind = PatternKind::Error;
  explicit ErrorPattern(Span s) : Pattern(Kind, s) {}
};

// ---------------------------------------------------------------- statements

enum class StmtKind {
  Let,            // let pattern[: T] = value
  Comprehension,  // let name[i, *s] = value
  Var,            // var name[: T] = value
  Assign,         // name = value
  Return,         // return [value]
  StaticFor,      // static for pattern in iterable { } / static for i in a..b { }
  While,          // while condition { }
  For,            // for i in a..b { }
  Yield,          // yield value
  Store,          // store / atomic_add / atomic_max / atomic_min (target, value[, mask])
  Error,
};

struct Stmt : Node<Stmt, StmtKind> {
  virtual ~Stmt() = default;

 protected:
  Stmt(StmtKind k, Span s) : Node(k, s) {}
};

struct LetStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Let;
  explicit LetStmt(Span s) : Stmt(Kind, s) {}
  PatternPtr pattern;
  TypePtr type;  // null when not annotated
  ExprPtr value;
};

// One output index of a comprehension: `i`, or a pack `*s`.
struct IndexOutput {
  Ident name;
  bool is_pack = false;
  Span span;  // includes the `*`
};

struct ComprehensionStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Comprehension;
  explicit ComprehensionStmt(Span s) : Stmt(Kind, s) {}
  Ident name;
  std::vector<IndexOutput> outputs;
  ExprPtr value;
};

struct VarStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Var;
  explicit VarStmt(Span s) : Stmt(Kind, s) {}
  Ident name;
  TypePtr type;  // null when not annotated
  ExprPtr value;
};

struct AssignStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Assign;
  explicit AssignStmt(Span s) : Stmt(Kind, s) {}
  Ident target;  // a `var` local or a `state` member
  ExprPtr value;
};

struct ReturnStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Return;
  explicit ReturnStmt(Span s) : Stmt(Kind, s) {}
  ExprPtr value;  // null for a bare `return`
};

// `static for layer in layers { }` iterates a structural array: `iterable` is
// the array and `range_stop` is null. `static for i in 0..N { }` iterates a
// range: `iterable` is the start and `range_stop` the stop.
struct StaticForStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::StaticFor;
  explicit StaticForStmt(Span s) : Stmt(Kind, s) {}
  PatternPtr pattern;
  ExprPtr iterable;
  ExprPtr range_stop;
  Body body;
  bool is_range() const { return range_stop != nullptr; }
};

struct WhileStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::While;
  explicit WhileStmt(Span s) : Stmt(Kind, s) {}
  ExprPtr condition;
  Body body;
};

struct ForStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::For;
  explicit ForStmt(Span s) : Stmt(Kind, s) {}
  ForLoop loop;
};

struct YieldStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Yield;
  explicit YieldStmt(Span s) : Stmt(Kind, s) {}
  ExprPtr value;
};

enum class StoreKind { Store, AtomicAdd, AtomicMax, AtomicMin };

// A kernel's memory write. The parser accepts it in any body; the checker
// rejects it outside a kernel (E2127).
struct StoreStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Store;
  explicit StoreStmt(Span s) : Stmt(Kind, s) {}
  StoreKind store = StoreKind::Store;
  Span keyword_span;
  ExprPtr target;  // y[i, j]
  ExprPtr value;
  ExprPtr mask;    // null when omitted
};

struct ErrorStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Error;
  explicit ErrorStmt(Span s) : Stmt(Kind, s) {}
};

// ---------------------------------------------------------------- declarations

enum class GenericKind { Dim, Shape, DType, Numeric, Integer, Float, Unknown };

// `N: Dim`, `*S: Shape`, `T: Float = bf16`.
struct GenericParam {
  Ident name;
  bool is_pack = false;
  GenericKind constraint = GenericKind::Unknown;
  Ident constraint_name;
  std::unique_ptr<GenericArg> default_value;  // null without `= ...`
  Span span;
};

struct Param {
  Ident name;
  TypePtr type;
  ExprPtr default_value;  // null without `= ...`
  Span span;
};

// `where A % B == 0, C > 0`: each constraint is a comparison BinaryExpr.
struct WhereClause {
  std::vector<ExprPtr> constraints;
  Span span;  // from `where` to the last constraint; invalid when absent
};

enum class ItemKind {
  Const, TypeAlias, Struct, Enum,
  Function,  // fn, op and entry
  Kernel,
  Block,
  Member,    // param, buffer, state, sub (inside a block)
  Error,
};

struct Item : Node<Item, ItemKind> {
  virtual ~Item() = default;
  Ident name;
  bool is_pub = false;
  std::string doc;  // text of the `///` or `/** */` comments just before the item
  mutable const void* annotation = nullptr;

 protected:
  Item(ItemKind k, Span s) : Node(k, s) {}
};

struct ConstItem : Item {
  static constexpr ItemKind Kind = ItemKind::Const;
  explicit ConstItem(Span s) : Item(Kind, s) {}
  TypePtr type;  // null when not annotated
  ExprPtr value;
};

struct TypeAliasItem : Item {
  static constexpr ItemKind Kind = ItemKind::TypeAlias;
  explicit TypeAliasItem(Span s) : Item(Kind, s) {}
  std::vector<GenericParam> generics;
  TypePtr type;
};

struct Field {
  Ident name;
  TypePtr type;
  Span span;
};

struct StructItem : Item {
  static constexpr ItemKind Kind = ItemKind::Struct;
  explicit StructItem(Span s) : Item(Kind, s) {}
  std::vector<GenericParam> generics;
  std::vector<Field> fields;
};

struct EnumItem : Item {
  static constexpr ItemKind Kind = ItemKind::Enum;
  explicit EnumItem(Span s) : Item(Kind, s) {}
  std::vector<GenericParam> generics;
  std::vector<Ident> variants;
};

enum class FunctionKind { Fn, Op, Entry };

// `kernel name<args>` after an op's result type.
struct KernelBinding {
  Ident kernel;
  std::vector<GenericArg> generic_args;
  bool has_generic_args = false;
  Span span;
};

// `grad(y, dy) { ... }` after an op's body.
struct GradClause {
  Ident result;
  Ident gradient;
  Body body;
  Span span;
};

// fn, op and entry share one shape. The parser accepts a kernel binding and a
// grad clause after any of them; the checker reports them on anything but an
// op (E2126, E2125).
struct FunctionItem : Item {
  static constexpr ItemKind Kind = ItemKind::Function;
  explicit FunctionItem(Span s) : Item(Kind, s) {}
  FunctionKind function = FunctionKind::Fn;
  std::vector<GenericParam> generics;
  std::vector<Param> params;
  TypePtr result;  // null when there is no `->` (a fn or entry returning nothing)
  std::unique_ptr<KernelBinding> kernel;
  WhereClause where;
  Body body;
  std::unique_ptr<GradClause> grad;
};

struct KernelResult {
  Ident name;
  TypePtr type;
  Span span;
};

// `warps(n)` or `stages(n)`.
struct LaunchHint {
  Ident name;
  ExprPtr value;
  Span span;
};

struct KernelItem : Item {
  static constexpr ItemKind Kind = ItemKind::Kernel;
  explicit KernelItem(Span s) : Item(Kind, s) {}
  std::vector<GenericParam> generics;
  std::vector<Param> params;
  std::vector<KernelResult> results;
  bool results_parenthesized = false;
  std::vector<ExprPtr> grid;
  Span grid_span;
  std::vector<LaunchHint> hints;
  WhereClause where;
  Body body;
};

// A block's members and methods are Items; MemberItem holds the
// param/buffer/state/sub declarations.
struct BlockItem : Item {
  static constexpr ItemKind Kind = ItemKind::Block;
  explicit BlockItem(Span s) : Item(Kind, s) {}
  std::vector<GenericParam> generics;
  WhereClause where;
  std::vector<ItemPtr> members;
};

enum class MemberKind { Param, Buffer, State, Sub };

struct MemberItem : Item {
  static constexpr ItemKind Kind = ItemKind::Member;
  explicit MemberItem(Span s) : Item(Kind, s) {}
  MemberKind member = MemberKind::Param;
  TypePtr type;
  ExprPtr default_value;  // null without `= ...` (`= none` for an optional sub or param)
};

struct ErrorItem : Item {
  static constexpr ItemKind Kind = ItemKind::Error;
  explicit ErrorItem(Span s) : Item(Kind, s) {}
};

// ---------------------------------------------------------------- file

// One imported name: `x` or `x as y`.
struct ImportName {
  Ident name;
  Ident alias;  // empty without `as`
  Span span;
  const Ident& local() const { return alias.empty() ? name : alias; }
};

// `use a.b` (a whole module, bound as `b`), `use a.b::x`, `use a.b::{x, y as z}`.
struct UseDecl {
  std::vector<Ident> path;  // first segment `std`, `crate`, or a dependency key
  bool imports_module = false;  // `use a.b` with no `::`
  bool braced = false;
  std::vector<ImportName> names;
  Span path_span;
  Span span;
};

struct File {
  uint32_t file_id = 0;
  std::vector<Ident> module_path;  // empty when the `module` line is missing
  Span module_span;
  std::vector<UseDecl> uses;
  std::vector<ItemPtr> items;
};

// Spellings for dumps and messages.
const char* binary_op_spelling(BinaryOp op);
const char* unary_op_spelling(UnaryOp op);
const char* reduction_spelling(ReductionKind kind);
const char* generic_kind_spelling(GenericKind kind);
const char* function_kind_spelling(FunctionKind kind);
const char* member_kind_spelling(MemberKind kind);
const char* store_kind_spelling(StoreKind kind);
std::string join_path(const std::vector<Ident>& path);

}  // namespace linnet::syntax::ast
