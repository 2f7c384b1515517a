// The checker's types: what a Linnet expression evaluates to.
//
// Types are immutable values shared through TypePtr. A tensor's shape is a
// list of dimension expressions (DimExpr, in the symbols of the generics in
// scope) and shape-pack references (`*S`); its element type is a concrete
// dtype or a dtype generic (`T: Float`).
//
// Scalars come in three flavours:
//   - typed: `f32`, `i32`, `T`, the element of a tensor in index notation;
//   - a contextual integer (an integer literal, a `Dim` generic, an
//     unannotated integer `const`, arithmetic on them): it carries its value
//     as a DimExpr and adopts any numeric dtype from its context (spec 1.7);
//   - a contextual float literal, which adopts any float dtype.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "linnet/check/dim_expr.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/tensor/dtype.hpp"

namespace linnet::check {

struct BlockDecl;
struct StructDecl;
struct EnumDecl;

// An element type: a concrete dtype, or a dtype generic with its constraint.
struct DTypeRef {
  enum class Kind : std::uint8_t { Error, Concrete, Generic };
  Kind kind = Kind::Error;
  tensor::DType concrete = tensor::DType::F32;
  std::string name;                                              // Generic only
  syntax::ast::GenericKind bound = syntax::ast::GenericKind::DType;  // Generic only

  static DTypeRef of(tensor::DType dtype);
  static DTypeRef generic(std::string name, syntax::ast::GenericKind bound);
  static DTypeRef error() { return {}; }

  bool is_error() const { return kind == Kind::Error; }
  bool is_bool() const { return kind == Kind::Concrete && concrete == tensor::DType::Bool; }
  bool is_float() const;
  bool is_integer() const;
  bool is_numeric() const;
  std::string to_string() const;
  friend bool operator==(const DTypeRef& a, const DTypeRef& b);
};

// Whether `dtype` satisfies a generic constraint (`Float`, `Numeric`, ...).
// A generic dtype satisfies the constraints its own bound implies.
bool satisfies(const DTypeRef& dtype, syntax::ast::GenericKind constraint);

// One axis of a tensor shape, or a shape pack standing for any number of axes.
struct ShapeItem {
  DimExpr dim;
  std::string pack;  // non-empty for `*S`

  static ShapeItem of(DimExpr dim) { return {std::move(dim), {}}; }
  static ShapeItem pack_of(std::string name) { return {DimExpr(), std::move(name)}; }
  bool is_pack() const { return !pack.empty(); }
};
using Shape = std::vector<ShapeItem>;

std::string shape_to_string(const Shape& shape);  // "[B, *S, H]"
bool has_pack(const Shape& shape);

enum class TypeKind {
  Error,       // already reported; absorbs every further check
  Unit,        // a function that returns nothing
  Scalar,
  Tensor,
  Tuple,
  Optional,
  None,        // `none` before context gives it an optional type
  Struct,
  Enum,
  Block,       // an instance of a block (a `sub`)
  BlockArray,  // `[Block<...>; N]`
  ShapeValue,  // a shape literal `[B, S, H]`
  String,
};

enum class Contextual : std::uint8_t { No, Integer, Float };

struct Type;
using TypePtr = std::shared_ptr<const Type>;

// Values for generic parameters, by name: dimensions, packs and dtypes.
struct Substitution {
  std::map<std::string, DimExpr, std::less<>> dims;
  std::map<std::string, Shape, std::less<>> packs;
  std::map<std::string, DTypeRef, std::less<>> dtypes;

  bool empty() const { return dims.empty() && packs.empty() && dtypes.empty(); }
};

// A method's result whose type holds a generic its block's declaration left
// to its default (`sub proj: Proj<H>` leaves `Out`, and `proj.forward(x)`
// returns `Tensor[S, Out; f32]` at `Out = 8`). A use of the result that the
// default does not fit is then reported where the declaration is written,
// like an argument the default does not fit.
struct DefaultedResult {
  const BlockDecl* block = nullptr;
  syntax::Span written;               // `Proj<H>`
  std::vector<std::string> defaulted;  // every generic the declaration left out
  std::string callee;                 // `Proj.forward`
  std::string dtype_generic;          // the result's dtype is this defaulted generic ("" if not)
  // (axis counted from the last, the defaulted `Dim` generic that axis is)
  std::vector<std::pair<std::size_t, std::string>> axes;
};

struct Type {
  TypeKind kind = TypeKind::Error;
  DTypeRef dtype;                  // Scalar, Tensor
  Shape shape;                     // Tensor, ShapeValue
  std::vector<TypePtr> elements;   // Tuple; Optional and BlockArray hold one
  const BlockDecl* block = nullptr;        // Block
  const StructDecl* structure = nullptr;   // Struct
  const EnumDecl* enumeration = nullptr;   // Enum
  Substitution args;               // Block, Struct: the generic arguments
  // Block, Struct: the generics left to their defaults where the type is
  // written (`RmsNorm<H>` leaves `T`), and that spelling's span, so that a
  // use the default does not fit is reported there.
  std::vector<std::string> defaulted;
  syntax::Span written;
  std::shared_ptr<const DefaultedResult> from_defaults;  // Tensor: see DefaultedResult
  DimExpr length;                  // BlockArray
  Contextual contextual = Contextual::No;  // Scalar
  std::optional<DimExpr> value;    // Scalar: a compile-time integer's value
  double float_value = 0.0;        // contextual float literal

  bool is_error() const { return kind == TypeKind::Error; }
  bool is_scalar() const { return kind == TypeKind::Scalar; }
  bool is_tensor() const { return kind == TypeKind::Tensor; }
  bool is_contextual() const { return kind == TypeKind::Scalar && contextual != Contextual::No; }
  // A compile-time integer: a contextual integer that carries its value.
  bool is_compile_time_int() const { return is_contextual() && contextual == Contextual::Integer && value.has_value(); }
  // Scalars and tensors both have an element dtype.
  bool has_dtype() const { return kind == TypeKind::Scalar || kind == TypeKind::Tensor; }
};

TypePtr error_type();
TypePtr unit_type();
TypePtr none_type();
TypePtr string_type();
TypePtr scalar_type(DTypeRef dtype);
TypePtr tensor_type(Shape shape, DTypeRef dtype);
TypePtr tuple_type(std::vector<TypePtr> elements);
TypePtr optional_type(TypePtr inner);
TypePtr shape_value_type(Shape shape);
TypePtr block_array_type(TypePtr element, DimExpr length);
TypePtr compile_time_int(DimExpr value);
TypePtr float_literal(double value);
// A scalar or tensor of `like`'s shape with another dtype.
TypePtr with_dtype(const TypePtr& like, DTypeRef dtype);

// How a type is written in Linnet source: `Tensor[B, S, H; bf16]`,
// `(f32, i32)`, `Linear<H, H, T>`, `f32?`.
std::string type_to_string(const Type& type);
inline std::string type_to_string(const TypePtr& type) { return type_to_string(*type); }

// Replaces generic names by their values everywhere in a type (dims, packs,
// dtypes, and the arguments of blocks and structs), simultaneously.
TypePtr substitute(const TypePtr& type, const Substitution& substitution);
Shape substitute(const Shape& shape, const Substitution& substitution);
DTypeRef substitute(const DTypeRef& dtype, const Substitution& substitution);

}  // namespace linnet::check
