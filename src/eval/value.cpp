// Values, generic values and block instances: construction, access, and
// descriptions for messages.
#include "linnet/eval/value.hpp"

#include <sstream>
#include <stdexcept>

#include "linnet/syntax/package.hpp"
#include "linnet/syntax/suggest.hpp"
#include "scalar_elements.hpp"

namespace linnet::eval {

namespace {

[[noreturn]] void wrong_kind(const char* wanted, const Value& value) {
  throw std::logic_error(std::string("value is not ") + wanted + ": " + value.describe());
}

std::string format_float(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

// ---------------------------------------------------------------- GenericValue

GenericValue GenericValue::of_dim(int64_t value) {
  GenericValue result;
  result.kind = Kind::Dim;
  result.dim = value;
  return result;
}

GenericValue GenericValue::of_dtype(DType value) {
  GenericValue result;
  result.kind = Kind::DType;
  result.dtype = value;
  return result;
}

GenericValue GenericValue::of_shape(Shape value) {
  GenericValue result;
  result.kind = Kind::Shape;
  result.shape = std::move(value);
  return result;
}

std::string GenericValue::to_string() const {
  switch (kind) {
    case Kind::Dim: return std::to_string(dim);
    case Kind::DType: return std::string(tensor::dtype_name(dtype));
    case Kind::Shape: return tensor::shape_to_string(shape);
  }
  return "?";
}

bool GenericValue::operator==(const GenericValue& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::Dim: return dim == other.dim;
    case Kind::DType: return dtype == other.dtype;
    case Kind::Shape: return shape == other.shape;
  }
  return false;
}

std::string describe_bindings(const GenericBindings& bindings) {
  if (bindings.empty()) return "";
  std::string text = "<";
  bool first = true;
  for (const auto& [name, value] : bindings) {
    if (!first) text += ", ";
    first = false;
    text += name + " = " + value.to_string();
  }
  return text + ">";
}

// ---------------------------------------------------------------- Value

bool Value::holds_storage_alone() const {
  if (kind_ != Kind::Tensor || inline_scalar_ || tensor_.use_count() != 1) return false;
  return tensor_->storage() != nullptr && tensor_->storage().use_count() == 1 && tensor_->is_writable();
}

Value Value::from_tensor(Tensor tensor) {
  Value value;
  value.kind_ = Kind::Tensor;
  value.tensor_ = std::make_shared<const Tensor>(std::move(tensor));
  return value;
}

Value Value::scalar(DType dtype, tensor::Scalar scalar) {
  const scalar_elements::Element element = scalar_elements::from_scalar(dtype, scalar);
  return from_element(element.dtype, element.bits);
}

Value Value::from_element(DType dtype, uint64_t bits) {
  Value value;
  value.kind_ = Kind::Tensor;
  value.inline_scalar_ = true;
  value.element_dtype_ = dtype;
  value.number_.bits = bits;
  return value;
}

Value Value::contextual_int(int64_t number) {
  Value value;
  value.kind_ = Kind::Int;
  value.number_.integer = number;
  return value;
}

Value Value::contextual_float(double number) {
  Value value;
  value.kind_ = Kind::Float;
  value.number_.real = number;
  return value;
}

Value Value::of_composite(Kind kind, Composite composite) {
  Value value;
  value.kind_ = kind;
  value.composite_ = std::make_shared<const Composite>(std::move(composite));
  return value;
}

const Value::Composite& Value::composite() const {
  // Every kind but tensors and contextual numbers is made by of_composite.
  static const Composite empty;
  return composite_ ? *composite_ : empty;
}

Value Value::tuple(std::vector<Value> elements) {
  Composite composite;
  composite.elements = std::move(elements);
  return of_composite(Kind::Tuple, std::move(composite));
}

Value Value::some(Value inner) {
  Composite composite;
  composite.elements.push_back(std::move(inner));
  return of_composite(Kind::Optional, std::move(composite));
}

Value Value::none() { return of_composite(Kind::Optional, Composite{}); }

Value Value::structure(const syntax::ast::StructItem* item, GenericBindings generics,
                       std::vector<std::pair<std::string, Value>> fields) {
  Composite composite;
  composite.struct_item = item;
  composite.generics = std::move(generics);
  composite.fields = std::move(fields);
  return of_composite(Kind::Struct, std::move(composite));
}

Value Value::enumeration(const syntax::ast::EnumItem* item, int variant) {
  Composite composite;
  composite.enum_item = item;
  composite.variant = variant;
  return of_composite(Kind::Enum, std::move(composite));
}

Value Value::block(std::shared_ptr<BlockInstance> instance) {
  Composite composite;
  composite.block = std::move(instance);
  return of_composite(Kind::Block, std::move(composite));
}

Value Value::block_array(std::vector<std::shared_ptr<BlockInstance>> instances) {
  Composite composite;
  composite.blocks = std::move(instances);
  return of_composite(Kind::BlockArray, std::move(composite));
}

Value Value::shape_literal(Shape dims) {
  Composite composite;
  composite.shape = std::move(dims);
  return of_composite(Kind::Shape, std::move(composite));
}

Value Value::string(std::string text) {
  Composite composite;
  composite.text = std::move(text);
  return of_composite(Kind::String, std::move(composite));
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::Tensor) wrong_kind("a tensor", *this);
  if (inline_scalar_) {
    tensor_ = std::make_shared<const Tensor>(scalar_elements::to_tensor({element_dtype_, number_.bits}));
    inline_scalar_ = false;
  }
  return *tensor_;
}

bool Value::scalar_element(DType& dtype, uint64_t& bits) const {
  if (inline_scalar_) {
    dtype = element_dtype_;
    bits = number_.bits;
    return true;
  }
  if (kind_ != Kind::Tensor || tensor_->rank() != 0) return false;
  const scalar_elements::Element element = scalar_elements::of_tensor(*tensor_);
  dtype = element.dtype;
  bits = element.bits;
  return true;
}

DType Value::tensor_dtype() const {
  if (kind_ != Kind::Tensor) wrong_kind("a tensor", *this);
  return inline_scalar_ ? element_dtype_ : tensor_->dtype();
}

int Value::tensor_rank() const {
  if (kind_ != Kind::Tensor) wrong_kind("a tensor", *this);
  return inline_scalar_ ? 0 : tensor_->rank();
}

int64_t Value::int_value() const {
  if (kind_ != Kind::Int) wrong_kind("a contextual integer", *this);
  return number_.integer;
}

double Value::float_value() const {
  if (kind_ == Kind::Int) return static_cast<double>(number_.integer);
  if (kind_ != Kind::Float) wrong_kind("a contextual number", *this);
  return number_.real;
}

const std::vector<Value>& Value::elements() const {
  if (kind_ != Kind::Tuple) wrong_kind("a tuple", *this);
  return composite().elements;
}

bool Value::has_value() const {
  if (kind_ != Kind::Optional) wrong_kind("an optional", *this);
  return !composite().elements.empty();
}

const Value& Value::inner() const {
  if (kind_ != Kind::Optional || composite().elements.empty()) wrong_kind("some(...)", *this);
  return composite().elements.front();
}

const syntax::ast::StructItem* Value::struct_item() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return composite().struct_item;
}

const GenericBindings& Value::struct_generics() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return composite().generics;
}

const std::vector<std::pair<std::string, Value>>& Value::fields() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return composite().fields;
}

const Value* Value::field(const std::string& name) const {
  for (const auto& [field_name, value] : fields()) {
    if (field_name == name) return &value;
  }
  return nullptr;
}

const syntax::ast::EnumItem* Value::enum_item() const {
  if (kind_ != Kind::Enum) wrong_kind("an enum value", *this);
  return composite().enum_item;
}

int Value::variant() const {
  if (kind_ != Kind::Enum) wrong_kind("an enum value", *this);
  return composite().variant;
}

const std::shared_ptr<BlockInstance>& Value::block() const {
  if (kind_ != Kind::Block) wrong_kind("a block", *this);
  return composite().block;
}

const std::vector<std::shared_ptr<BlockInstance>>& Value::blocks() const {
  if (kind_ != Kind::BlockArray) wrong_kind("a block array", *this);
  return composite().blocks;
}

const Shape& Value::shape_dims() const {
  if (kind_ != Kind::Shape) wrong_kind("a shape", *this);
  return composite().shape;
}

const std::string& Value::text() const {
  if (kind_ != Kind::String) wrong_kind("a string", *this);
  return composite().text;
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::Unit: return "()";
    case Kind::Tensor:
      if (tensor_rank() == 0) return std::string(tensor::dtype_name(tensor_dtype()));
      return tensor_->describe();
    case Kind::Int: return "integer " + std::to_string(number_.integer);
    case Kind::Float: return "float " + format_float(number_.real);
    case Kind::Tuple: {
      const std::vector<Value>& elements = composite().elements;
      std::string text = "(";
      for (size_t i = 0; i < elements.size(); ++i) text += (i ? ", " : "") + elements[i].describe();
      return text + ")";
    }
    case Kind::Optional: {
      const std::vector<Value>& elements = composite().elements;
      return elements.empty() ? "none" : "some(" + elements.front().describe() + ")";
    }
    case Kind::Struct: return "struct " + composite().struct_item->name.text + describe_bindings(composite().generics);
    case Kind::Enum: {
      const Composite& parts = composite();
      return parts.enum_item->name.text + "." + parts.enum_item->variants[static_cast<size_t>(parts.variant)].text;
    }
    case Kind::Block: {
      const auto& block = composite().block;
      return "block " + (block ? block->describe() : std::string("?"));
    }
    case Kind::BlockArray: return "array of " + syntax::count_of(composite().blocks.size(), "block", "blocks");
    case Kind::Shape: return "shape " + tensor::shape_to_string(composite().shape);
    case Kind::String: return "string";
  }
  return "?";
}

// ---------------------------------------------------------------- BlockInstance

std::string BlockInstance::describe() const {
  std::string module_name = module ? module->name : std::string();
  return (module_name.empty() ? "" : module_name + "::") + item->name.text + describe_bindings(generics);
}

std::string BlockInstance::member_path(const std::string& member) const {
  return path.empty() ? member : path + "." + member;
}

void BlockInstance::reset_state() {
  for (auto& [name, member] : members) {
    if (member.item->member == syntax::ast::MemberKind::State && member.value.is_tensor()) {
      const Tensor& old = member.value.tensor();
      member.value = Value::from_tensor(Tensor::zeros(old.dtype(), old.shape()));
    } else if (member.value.kind() == Value::Kind::Block) {
      member.value.block()->reset_state();
    } else if (member.value.kind() == Value::Kind::BlockArray) {
      for (const auto& child : member.value.blocks()) child->reset_state();
    } else if (member.value.kind() == Value::Kind::Optional && member.value.has_value() &&
               member.value.inner().kind() == Value::Kind::Block) {
      member.value.inner().block()->reset_state();
    }
  }
}

const Tensor* BlockInstance::find_state(const std::string& relative_path) const {
  const size_t dot = relative_path.find('.');
  const std::string head = relative_path.substr(0, dot);
  auto found = members.find(head);
  if (found == members.end()) return nullptr;
  const Value& value = found->second.value;
  if (dot == std::string::npos) {
    if (found->second.item->member != syntax::ast::MemberKind::State || !value.is_tensor()) return nullptr;
    return &value.tensor();
  }
  std::string rest = relative_path.substr(dot + 1);
  if (value.kind() == Value::Kind::Block) return value.block()->find_state(rest);
  if (value.kind() == Value::Kind::Optional && value.has_value() && value.inner().kind() == Value::Kind::Block) {
    return value.inner().block()->find_state(rest);
  }
  if (value.kind() == Value::Kind::BlockArray) {
    const size_t next = rest.find('.');
    const std::string position = rest.substr(0, next);
    if (position.empty() || position.size() > 9 || position.find_first_not_of("0123456789") != std::string::npos) {
      return nullptr;
    }
    const size_t index = std::stoul(position);
    if (index >= value.blocks().size() || next == std::string::npos) return nullptr;
    return value.blocks()[index]->find_state(rest.substr(next + 1));
  }
  return nullptr;
}

}  // namespace linnet::eval
