// Type construction, printing and substitution.
#include "gcc_workarounds.hpp"  // first: see the file

#include "linnet/check/types.hpp"

#include "linnet/check/declarations.hpp"

namespace linnet::check {

using syntax::ast::GenericKind;

DTypeRef DTypeRef::of(tensor::DType dtype) {
  DTypeRef ref;
  ref.kind = Kind::Concrete;
  ref.concrete = dtype;
  return ref;
}

DTypeRef DTypeRef::generic(std::string name, GenericKind bound) {
  DTypeRef ref;
  ref.kind = Kind::Generic;
  ref.name = std::move(name);
  ref.bound = bound;
  return ref;
}

bool DTypeRef::is_float() const {
  if (kind == Kind::Concrete) return tensor::is_float(concrete);
  return kind == Kind::Generic && bound == GenericKind::Float;
}

bool DTypeRef::is_integer() const {
  if (kind == Kind::Concrete) return tensor::is_integer(concrete);
  return kind == Kind::Generic && bound == GenericKind::Integer;
}

bool DTypeRef::is_numeric() const {
  if (kind == Kind::Concrete) return concrete != tensor::DType::Bool;
  return kind == Kind::Generic &&
         (bound == GenericKind::Numeric || bound == GenericKind::Integer || bound == GenericKind::Float);
}

std::string DTypeRef::to_string() const {
  switch (kind) {
    case Kind::Concrete: return std::string(tensor::dtype_name(concrete));
    case Kind::Generic: return name;
    case Kind::Error: break;
  }
  return "{error}";
}

bool operator==(const DTypeRef& a, const DTypeRef& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case DTypeRef::Kind::Concrete: return a.concrete == b.concrete;
    case DTypeRef::Kind::Generic: return a.name == b.name;
    case DTypeRef::Kind::Error: return true;
  }
  return false;
}

bool satisfies(const DTypeRef& dtype, GenericKind constraint) {
  if (dtype.is_error()) return true;
  switch (constraint) {
    case GenericKind::DType: return true;
    case GenericKind::Numeric: return dtype.is_numeric();
    case GenericKind::Integer: return dtype.is_integer();
    case GenericKind::Float: return dtype.is_float();
    default: return false;
  }
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += shape[i].is_pack() ? "*" + shape[i].pack : shape[i].dim.to_string();
  }
  return out + "]";
}

bool has_pack(const Shape& shape) {
  for (const ShapeItem& item : shape) {
    if (item.is_pack()) return true;
  }
  return false;
}

namespace {

TypePtr make(Type type) { return std::make_shared<const Type>(std::move(type)); }

// `<H, *S, T>` for the arguments of a generic block or struct.
std::string generic_arguments(const std::vector<GenericParamInfo>& generics, const Substitution& args) {
  if (generics.empty()) return {};
  std::string out = "<";
  for (std::size_t i = 0; i < generics.size(); ++i) {
    if (i > 0) out += ", ";
    const GenericParamInfo& g = generics[i];
    if (g.is_dim()) {
      auto it = args.dims.find(g.name);
      out += it == args.dims.end() ? g.name : it->second.to_string();
    } else if (g.is_pack()) {
      auto it = args.packs.find(g.name);
      out += it == args.packs.end() ? "*" + g.name : shape_to_string(it->second);
    } else {
      auto it = args.dtypes.find(g.name);
      out += it == args.dtypes.end() ? g.name : it->second.to_string();
    }
  }
  return out + ">";
}

}  // namespace

TypePtr error_type() {
  static const TypePtr type = make(Type{});
  return type;
}

TypePtr unit_type() {
  static const TypePtr type = [] {
    Type t;
    t.kind = TypeKind::Unit;
    return make(std::move(t));
  }();
  return type;
}

TypePtr none_type() {
  static const TypePtr type = [] {
    Type t;
    t.kind = TypeKind::None;
    return make(std::move(t));
  }();
  return type;
}

TypePtr string_type() {
  static const TypePtr type = [] {
    Type t;
    t.kind = TypeKind::String;
    return make(std::move(t));
  }();
  return type;
}

TypePtr scalar_type(DTypeRef dtype) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.dtype = std::move(dtype);
  return make(std::move(t));
}

TypePtr tensor_type(Shape shape, DTypeRef dtype) {
  Type t;
  t.kind = TypeKind::Tensor;
  t.shape = std::move(shape);
  t.dtype = std::move(dtype);
  return make(std::move(t));
}

TypePtr tuple_type(std::vector<TypePtr> elements) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.elements = std::move(elements);
  return make(std::move(t));
}

TypePtr optional_type(TypePtr inner) {
  Type t;
  t.kind = TypeKind::Optional;
  t.elements.push_back(std::move(inner));
  return make(std::move(t));
}

TypePtr shape_value_type(Shape shape) {
  Type t;
  t.kind = TypeKind::ShapeValue;
  t.shape = std::move(shape);
  return make(std::move(t));
}

TypePtr block_array_type(TypePtr element, DimExpr length) {
  Type t;
  t.kind = TypeKind::BlockArray;
  t.elements.push_back(std::move(element));
  t.length = std::move(length);
  return make(std::move(t));
}

TypePtr compile_time_int(DimExpr value) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.dtype = DTypeRef::of(tensor::DType::I64);
  t.contextual = Contextual::Integer;
  t.value = std::move(value);
  return make(std::move(t));
}

TypePtr float_literal(double value) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.dtype = DTypeRef::of(tensor::DType::F64);
  t.contextual = Contextual::Float;
  t.float_value = value;
  return make(std::move(t));
}

TypePtr with_dtype(const TypePtr& like, DTypeRef dtype) {
  if (like->kind == TypeKind::Tensor) return tensor_type(like->shape, std::move(dtype));
  return scalar_type(std::move(dtype));
}

std::string type_to_string(const Type& type) {
  switch (type.kind) {
    case TypeKind::Error: return "{error}";
    case TypeKind::Unit: return "()";
    case TypeKind::None: return "none";
    case TypeKind::String: return "string";
    case TypeKind::Scalar:
      if (type.contextual == Contextual::Integer) {
        return type.value ? "compile-time integer `" + type.value->to_string() + "`" : "integer literal";
      }
      if (type.contextual == Contextual::Float) return "float literal";
      return type.dtype.to_string();
    case TypeKind::Tensor: {
      std::string out = "Tensor[";
      for (std::size_t i = 0; i < type.shape.size(); ++i) {
        if (i > 0) out += ", ";
        out += type.shape[i].is_pack() ? "*" + type.shape[i].pack : type.shape[i].dim.to_string();
      }
      return out + "; " + type.dtype.to_string() + "]";
    }
    case TypeKind::Tuple: {
      std::string out = "(";
      for (std::size_t i = 0; i < type.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += type_to_string(*type.elements[i]);
      }
      return out + ")";
    }
    case TypeKind::Optional: return type_to_string(*type.elements.front()) + "?";
    case TypeKind::Struct:
      return type.structure->name + generic_arguments(type.structure->generics, type.args);
    case TypeKind::Enum: return type.enumeration->name;
    case TypeKind::Block: return type.block->name + generic_arguments(type.block->generics, type.args);
    case TypeKind::BlockArray:
      return "[" + type_to_string(*type.elements.front()) + "; " + type.length.to_string() + "]";
    case TypeKind::ShapeValue: return shape_to_string(type.shape);
  }
  return "{error}";
}

DTypeRef substitute(const DTypeRef& dtype, const Substitution& substitution) {
  if (dtype.kind != DTypeRef::Kind::Generic) return dtype;
  auto it = substitution.dtypes.find(dtype.name);
  return it == substitution.dtypes.end() ? dtype : it->second;
}

Shape substitute(const Shape& shape, const Substitution& substitution) {
  Shape out;
  out.reserve(shape.size());
  for (const ShapeItem& item : shape) {
    if (item.is_pack()) {
      auto it = substitution.packs.find(item.pack);
      if (it == substitution.packs.end()) {
        out.push_back(item);
      } else {
        out.insert(out.end(), it->second.begin(), it->second.end());
      }
    } else {
      out.push_back(ShapeItem::of(substitution.dims.empty() ? item.dim : item.dim.substitute(substitution.dims)));
    }
  }
  return out;
}

namespace {

Substitution substitute_args(const Substitution& args, const Substitution& substitution) {
  Substitution out;
  for (const auto& [name, dim] : args.dims) out.dims.emplace(name, dim.substitute(substitution.dims));
  for (const auto& [name, pack] : args.packs) out.packs.emplace(name, substitute(pack, substitution));
  for (const auto& [name, dtype] : args.dtypes) out.dtypes.emplace(name, substitute(dtype, substitution));
  return out;
}

}  // namespace

TypePtr substitute(const TypePtr& type, const Substitution& substitution) {
  if (substitution.empty()) return type;
  switch (type->kind) {
    case TypeKind::Scalar: {
      if (type->is_contextual()) {
        if (!type->value) return type;
        return compile_time_int(type->value->substitute(substitution.dims));
      }
      if (type->dtype.kind != DTypeRef::Kind::Generic) return type;
      return scalar_type(substitute(type->dtype, substitution));
    }
    case TypeKind::Tensor:
      return tensor_type(substitute(type->shape, substitution), substitute(type->dtype, substitution));
    case TypeKind::ShapeValue: return shape_value_type(substitute(type->shape, substitution));
    case TypeKind::Tuple:
    case TypeKind::Optional: {
      Type t = *type;
      for (TypePtr& element : t.elements) element = substitute(element, substitution);
      return std::make_shared<const Type>(std::move(t));
    }
    case TypeKind::BlockArray:
      return block_array_type(substitute(type->elements.front(), substitution),
                              type->length.substitute(substitution.dims));
    case TypeKind::Block:
    case TypeKind::Struct: {
      Type t = *type;
      t.args = substitute_args(type->args, substitution);
      return std::make_shared<const Type>(std::move(t));
    }
    default: return type;
  }
}

}  // namespace linnet::check
