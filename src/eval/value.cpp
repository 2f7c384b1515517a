// Values, generic values and block instances: construction, access, and
// descriptions for messages.
#include "linnet/eval/value.hpp"

#include <sstream>
#include <stdexcept>

#include "linnet/syntax/package.hpp"
#include "linnet/syntax/suggest.hpp"

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

Value Value::from_tensor(Tensor tensor) {
  Value value;
  value.kind_ = Kind::Tensor;
  value.tensor_ = std::move(tensor);
  return value;
}

Value Value::scalar(DType dtype, tensor::Scalar scalar) { return from_tensor(Tensor::scalar(dtype, scalar)); }

Value Value::contextual_int(int64_t number) {
  Value value;
  value.kind_ = Kind::Int;
  value.int_ = number;
  return value;
}

Value Value::contextual_float(double number) {
  Value value;
  value.kind_ = Kind::Float;
  value.float_ = number;
  return value;
}

Value Value::tuple(std::vector<Value> elements) {
  Value value;
  value.kind_ = Kind::Tuple;
  value.elements_ = std::move(elements);
  return value;
}

Value Value::some(Value inner) {
  Value value;
  value.kind_ = Kind::Optional;
  value.elements_.push_back(std::move(inner));
  return value;
}

Value Value::none() {
  Value value;
  value.kind_ = Kind::Optional;
  return value;
}

Value Value::structure(const syntax::ast::StructItem* item, GenericBindings generics,
                       std::vector<std::pair<std::string, Value>> fields) {
  Value value;
  value.kind_ = Kind::Struct;
  value.struct_item_ = item;
  value.generics_ = std::move(generics);
  value.fields_ = std::move(fields);
  return value;
}

Value Value::enumeration(const syntax::ast::EnumItem* item, int variant) {
  Value value;
  value.kind_ = Kind::Enum;
  value.enum_item_ = item;
  value.variant_ = variant;
  return value;
}

Value Value::block(std::shared_ptr<BlockInstance> instance) {
  Value value;
  value.kind_ = Kind::Block;
  value.block_ = std::move(instance);
  return value;
}

Value Value::block_array(std::vector<std::shared_ptr<BlockInstance>> instances) {
  Value value;
  value.kind_ = Kind::BlockArray;
  value.blocks_ = std::move(instances);
  return value;
}

Value Value::shape_literal(Shape dims) {
  Value value;
  value.kind_ = Kind::Shape;
  value.shape_ = std::move(dims);
  return value;
}

Value Value::string(std::string text) {
  Value value;
  value.kind_ = Kind::String;
  value.text_ = std::move(text);
  return value;
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::Tensor) wrong_kind("a tensor", *this);
  return tensor_;
}

int64_t Value::int_value() const {
  if (kind_ != Kind::Int) wrong_kind("a contextual integer", *this);
  return int_;
}

double Value::float_value() const {
  if (kind_ == Kind::Int) return static_cast<double>(int_);
  if (kind_ != Kind::Float) wrong_kind("a contextual number", *this);
  return float_;
}

const std::vector<Value>& Value::elements() const {
  if (kind_ != Kind::Tuple) wrong_kind("a tuple", *this);
  return elements_;
}

bool Value::has_value() const {
  if (kind_ != Kind::Optional) wrong_kind("an optional", *this);
  return !elements_.empty();
}

const Value& Value::inner() const {
  if (kind_ != Kind::Optional || elements_.empty()) wrong_kind("some(...)", *this);
  return elements_.front();
}

const syntax::ast::StructItem* Value::struct_item() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return struct_item_;
}

const GenericBindings& Value::struct_generics() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return generics_;
}

const std::vector<std::pair<std::string, Value>>& Value::fields() const {
  if (kind_ != Kind::Struct) wrong_kind("a struct", *this);
  return fields_;
}

const Value* Value::field(const std::string& name) const {
  for (const auto& [field_name, value] : fields()) {
    if (field_name == name) return &value;
  }
  return nullptr;
}

const syntax::ast::EnumItem* Value::enum_item() const {
  if (kind_ != Kind::Enum) wrong_kind("an enum value", *this);
  return enum_item_;
}

int Value::variant() const {
  if (kind_ != Kind::Enum) wrong_kind("an enum value", *this);
  return variant_;
}

const std::shared_ptr<BlockInstance>& Value::block() const {
  if (kind_ != Kind::Block) wrong_kind("a block", *this);
  return block_;
}

const std::vector<std::shared_ptr<BlockInstance>>& Value::blocks() const {
  if (kind_ != Kind::BlockArray) wrong_kind("a block array", *this);
  return blocks_;
}

const Shape& Value::shape_dims() const {
  if (kind_ != Kind::Shape) wrong_kind("a shape", *this);
  return shape_;
}

const std::string& Value::text() const {
  if (kind_ != Kind::String) wrong_kind("a string", *this);
  return text_;
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::Unit: return "()";
    case Kind::Tensor:
      if (tensor_.rank() == 0) return std::string(tensor::dtype_name(tensor_.dtype()));
      return tensor_.describe();
    case Kind::Int: return "integer " + std::to_string(int_);
    case Kind::Float: return "float " + format_float(float_);
    case Kind::Tuple: {
      std::string text = "(";
      for (size_t i = 0; i < elements_.size(); ++i) text += (i ? ", " : "") + elements_[i].describe();
      return text + ")";
    }
    case Kind::Optional: return elements_.empty() ? "none" : "some(" + elements_.front().describe() + ")";
    case Kind::Struct: return "struct " + struct_item_->name.text + describe_bindings(generics_);
    case Kind::Enum:
      return enum_item_->name.text + "." + enum_item_->variants[static_cast<size_t>(variant_)].text;
    case Kind::Block: return "block " + (block_ ? block_->describe() : std::string("?"));
    case Kind::BlockArray: return "array of " + syntax::count_of(blocks_.size(), "block", "blocks");
    case Kind::Shape: return "shape " + tensor::shape_to_string(shape_);
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
