// Entry inputs from literals, JSON and .npy files; outputs as NumPy arrays.
#include "linnet/nest/inputs.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <simdjson.h>

#include "linnet/tensor/half.hpp"

namespace linnet::nest {

namespace ast = syntax::ast;
using tensor::DType;
using tensor::Tensor;

namespace {

// The dtype a type names: a scalar type (`i32`) or a bound dtype generic (`T`).
std::optional<DType> named_dtype(const ast::Type& type, const eval::GenericBindings& generics) {
  const auto* named = type.as<ast::NamedType>();
  if (named == nullptr || named->path.size() != 1 || named->has_generic_args) return std::nullopt;
  const std::string& name = named->path.front().text;
  if (std::optional<DType> dtype = tensor::dtype_from_name(name)) return dtype;
  auto bound = generics.find(name);
  if (bound != generics.end() && bound->second.kind == eval::GenericValue::Kind::DType) return bound->second.dtype;
  return std::nullopt;
}

// The value of a dimension expression (`H / N`, `8 * D`, `A + B`) over the
// bound generics; nothing, with `missing` naming the unbound generic or the
// reason, when the bindings do not decide it.
std::optional<int64_t> dimension_value(const ast::Expr& expr, const eval::GenericBindings& generics,
                                       std::string& missing) {
  if (const auto* literal = expr.as<ast::IntegerLiteral>()) {
    if (literal->exceeds_u64 || literal->value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      missing = "the dimension `" + literal->text + "` is too large";
      return std::nullopt;
    }
    return static_cast<int64_t>(literal->value);
  }
  if (const auto* name = expr.as<ast::NameExpr>()) {
    auto bound = generics.find(name->name.text);
    if (bound == generics.end() || bound->second.kind != eval::GenericValue::Kind::Dim) {
      missing = "`" + name->name.text + "` has no value (give it one with --bind " + name->name.text + "=...)";
      return std::nullopt;
    }
    return bound->second.dim;
  }
  if (const auto* binary = expr.as<ast::BinaryExpr>()) {
    const std::optional<int64_t> lhs = dimension_value(*binary->lhs, generics, missing);
    if (!lhs) return std::nullopt;
    const std::optional<int64_t> rhs = dimension_value(*binary->rhs, generics, missing);
    if (!rhs) return std::nullopt;
    switch (binary->op) {
      case ast::BinaryOp::Add: return *lhs + *rhs;
      case ast::BinaryOp::Subtract: return *lhs - *rhs;
      case ast::BinaryOp::Multiply: return *lhs * *rhs;
      case ast::BinaryOp::Divide:
      case ast::BinaryOp::Remainder:
        if (*rhs == 0) {
          missing = "a dimension divides by zero";
          return std::nullopt;
        }
        return binary->op == ast::BinaryOp::Divide ? *lhs / *rhs : *lhs % *rhs;
      default: break;
    }
  }
  missing = "a dimension is not an arithmetic of generics and integers";
  return std::nullopt;
}

// The shape of `Tensor[...]` with the generics substituted, or nothing
// (with `problem`) when some axis is not decided.
std::optional<tensor::Shape> concrete_shape(const ast::TensorType& type, const eval::GenericBindings& generics,
                                            std::string& problem) {
  tensor::Shape shape;
  for (const ast::ShapeElement& element : type.shape) {
    if (element.is_pack) {
      auto bound = generics.find(element.pack.text);
      if (bound == generics.end() || bound->second.kind != eval::GenericValue::Kind::Shape) {
        problem = "`*" + element.pack.text + "` has no value (give it one with --bind " + element.pack.text + "=2,3)";
        return std::nullopt;
      }
      shape.insert(shape.end(), bound->second.shape.begin(), bound->second.shape.end());
      continue;
    }
    const std::optional<int64_t> dim = dimension_value(*element.dim, generics, problem);
    if (!dim) return std::nullopt;
    if (*dim < 0) {
      problem = "an axis has the negative extent " + std::to_string(*dim);
      return std::nullopt;
    }
    shape.push_back(*dim);
  }
  return shape;
}

// One literal element, as JSON gives it.
struct Element {
  enum class Kind { Int, UInt, Float, Bool } kind = Kind::Int;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double float_value = 0;
  bool bool_value = false;
};

// Walks nested arrays: collects the elements in row-major order and checks
// that the nesting is rectangular.
void collect(const simdjson::dom::element& element, size_t depth, tensor::Shape& shape, bool& shape_known,
             std::vector<Element>& out, const std::string& what) {
  simdjson::dom::array array;
  if (element.get(array) == simdjson::SUCCESS) {
    const int64_t length = static_cast<int64_t>(array.size());
    if (!shape_known) {
      if (depth == shape.size()) shape.push_back(length);
    }
    if (depth >= shape.size() || shape[depth] != length) {
      throw InputError(what + ": the nested lists are not rectangular (a tensor needs equal lengths on each level)");
    }
    if (length == 0 && depth + 1 == shape.size()) shape_known = true;
    for (const simdjson::dom::element item : array) collect(item, depth + 1, shape, shape_known, out, what);
    return;
  }
  if (!shape_known) {
    shape_known = true;
    shape.resize(depth);
  }
  if (depth != shape.size()) {
    throw InputError(what + ": the nested lists are not rectangular (a number where a list is expected, or the reverse)");
  }
  Element value;
  switch (element.type()) {
    case simdjson::dom::element_type::INT64:
      value.kind = Element::Kind::Int;
      value.int_value = int64_t(element);
      break;
    case simdjson::dom::element_type::UINT64:
      value.kind = Element::Kind::UInt;
      value.uint_value = uint64_t(element);
      break;
    case simdjson::dom::element_type::DOUBLE:
      value.kind = Element::Kind::Float;
      value.float_value = double(element);
      break;
    case simdjson::dom::element_type::BOOL:
      value.kind = Element::Kind::Bool;
      value.bool_value = bool(element);
      break;
    default:
      throw InputError(what + ": only numbers, true/false and lists of them make a tensor");
  }
  out.push_back(value);
}

// Whether an integer fits an integer dtype.
bool fits(DType dtype, long double value) {
  switch (dtype) {
    case DType::I8: return value >= -128 && value <= 127;
    case DType::I16: return value >= -32768 && value <= 32767;
    case DType::I32: return value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max();
    case DType::I64:
      return value >= static_cast<long double>(std::numeric_limits<int64_t>::min()) &&
             value <= static_cast<long double>(std::numeric_limits<int64_t>::max());
    case DType::U8: return value >= 0 && value <= 255;
    case DType::U16: return value >= 0 && value <= 65535;
    case DType::U32: return value >= 0 && value <= std::numeric_limits<uint32_t>::max();
    case DType::U64: return value >= 0 && value <= static_cast<long double>(std::numeric_limits<uint64_t>::max());
    default: return true;
  }
}

// Leading axes of extent 1 until `shape` has the slot's rank.
tensor::Shape padded_shape(tensor::Shape shape, const InputSlot& slot, const std::string& what) {
  if (!slot.rank) return shape;
  if (static_cast<int>(shape.size()) > *slot.rank) {
    throw InputError(what + ": a value of shape " + tensor::shape_to_string(shape) + " has more axes than `" +
                     slot.declared + "`");
  }
  while (static_cast<int>(shape.size()) < *slot.rank) shape.insert(shape.begin(), 1);
  return shape;
}

Tensor tensor_from_elements(const std::vector<Element>& elements, const tensor::Shape& shape, const InputSlot& slot,
                            const std::string& what) {
  // Without a declared dtype: i32 for integers (token ids), f32 for floats.
  DType dtype = DType::I32;
  if (slot.dtype) {
    dtype = *slot.dtype;
  } else {
    for (const Element& element : elements) {
      if (element.kind == Element::Kind::Float) dtype = DType::F32;
      if (element.kind == Element::Kind::Bool && dtype == DType::I32) dtype = DType::Bool;
    }
  }
  const std::string dtype_name(tensor::dtype_name(dtype));
  if (dtype == DType::Bool) {
    std::vector<bool> values;
    for (const Element& element : elements) {
      if (element.kind != Element::Kind::Bool) throw InputError(what + ": a bool input takes true or false");
      values.push_back(element.bool_value);
    }
    return Tensor::from_vector(values, shape);
  }
  if (tensor::is_integer(dtype)) {
    std::vector<int64_t> signed_values;
    std::vector<uint64_t> unsigned_values;
    for (const Element& element : elements) {
      if (element.kind == Element::Kind::Float || element.kind == Element::Kind::Bool) {
        throw InputError(what + ": `" + slot.declared + "` takes integers");
      }
      const long double value = element.kind == Element::Kind::UInt ? static_cast<long double>(element.uint_value)
                                                                      : static_cast<long double>(element.int_value);
      if (!fits(dtype, value)) {
        throw InputError(what + ": " + (element.kind == Element::Kind::UInt ? std::to_string(element.uint_value)
                                                                             : std::to_string(element.int_value)) +
                         " does not fit " + dtype_name);
      }
      signed_values.push_back(element.kind == Element::Kind::UInt ? static_cast<int64_t>(element.uint_value)
                                                                   : element.int_value);
      unsigned_values.push_back(element.kind == Element::Kind::UInt ? element.uint_value
                                                                     : static_cast<uint64_t>(element.int_value));
    }
    if (dtype == DType::U64) return Tensor::from_vector(unsigned_values, shape);
    return Tensor::from_vector(signed_values, shape, dtype);
  }
  std::vector<double> values;
  for (const Element& element : elements) {
    switch (element.kind) {
      case Element::Kind::Bool: throw InputError(what + ": `" + slot.declared + "` takes numbers");
      case Element::Kind::Int: values.push_back(static_cast<double>(element.int_value)); break;
      case Element::Kind::UInt: values.push_back(static_cast<double>(element.uint_value)); break;
      case Element::Kind::Float: values.push_back(element.float_value); break;
    }
  }
  return Tensor::from_vector(values, shape, dtype);
}

std::string npy_path(std::string_view reference, const std::string& base_directory) {
  std::filesystem::path path(reference.substr(1));
  if (path.is_relative() && !base_directory.empty()) path = std::filesystem::path(base_directory) / path;
  return path.string();
}

Tensor read_npy_input(const std::string& path, const InputSlot& slot) {
  tensor::NpyArray array;
  try {
    array = tensor::read_npy(path);
  } catch (const std::exception& failure) {
    throw InputError("input `" + slot.name + "`: " + failure.what());
  }
  return input_from_npy(array, slot, "input `" + slot.name + "` (" + path + ")");
}

}  // namespace

std::vector<InputSlot> input_slots(const ast::FunctionItem& entry, const eval::GenericBindings& generics,
                                   const syntax::SourceManager& sources) {
  std::vector<InputSlot> slots;
  for (const ast::Param& param : entry.params) {
    InputSlot slot;
    slot.name = param.name.text;
    const syntax::Span span = param.type->span;
    if (span.valid() && span.file < sources.size()) {
      const std::string& text = sources.file(span.file).text();
      if (span.end <= text.size()) slot.declared = text.substr(span.begin, span.end - span.begin);
    }
    if (const auto* tensor_type = param.type->as<ast::TensorType>()) {
      slot.dtype = named_dtype(*tensor_type->dtype, generics);
      bool has_pack = false;
      for (const ast::ShapeElement& element : tensor_type->shape) has_pack = has_pack || element.is_pack;
      if (!has_pack) slot.rank = static_cast<int>(tensor_type->shape.size());
      slot.shape = concrete_shape(*tensor_type, generics, slot.shape_problem);
    } else if (std::optional<DType> dtype = named_dtype(*param.type, generics)) {
      slot.dtype = dtype;
      slot.rank = 0;
      slot.shape = tensor::Shape{};
    } else {
      slot.shape_problem = "it is not a tensor or a scalar";
    }
    if (slot.shape && !slot.dtype) {
      slot.shape.reset();
      slot.shape_problem = "its dtype is not bound";
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

Tensor input_from_json(const simdjson::dom::element& element, const InputSlot& slot,
                       const std::string& base_directory) {
  std::string_view text;
  if (element.get(text) == simdjson::SUCCESS) {
    if (text.empty() || text.front() != '@') {
      throw InputError("input `" + slot.name + "`: a string value must name a .npy file as \"@file.npy\"");
    }
    return read_npy_input(npy_path(text, base_directory), slot);
  }
  const std::string what = "input `" + slot.name + "`";
  tensor::Shape shape;
  bool shape_known = false;
  std::vector<Element> elements;
  collect(element, 0, shape, shape_known, elements, what);
  return tensor_from_elements(elements, padded_shape(shape, slot, what), slot, what);
}

Tensor input_from_text(std::string_view text, const InputSlot& slot) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && text.front() == '@') return read_npy_input(npy_path(text, ""), slot);
  std::string json(text);
  // `1,2,3` is a list without its brackets.
  if (!json.empty() && json.front() != '[' && json.find(',') != std::string::npos) json = "[" + json + "]";
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (parser.parse(simdjson::padded_string(json)).get(element) != simdjson::SUCCESS) {
    throw InputError("input `" + slot.name + "`: `" + std::string(text) +
                     "` is not a value (write a number, true/false, nested lists such as [[1, 2, 3]], or @file.npy)");
  }
  return input_from_json(element, slot, "");
}

Tensor input_from_npy(const tensor::NpyArray& array, const InputSlot& slot, const std::string& what) {
  Tensor tensor = tensor_from_npy(array);
  const tensor::Shape shape = padded_shape(tensor.shape(), slot, what);
  if (shape != tensor.shape()) tensor = tensor.reshape(shape);
  if (!slot.dtype || *slot.dtype == tensor.dtype()) return tensor;
  const DType wanted = *slot.dtype;
  const std::string conversion = std::string(tensor::dtype_name(tensor.dtype())) + " to " +
                                 std::string(tensor::dtype_name(wanted));
  if (tensor::is_integer(tensor.dtype()) && tensor::is_integer(wanted)) {
    // Every value must fit (NumPy writes token ids as int64 by default).
    const std::vector<int64_t> values = tensor.to_vector<int64_t>();
    const bool from_unsigned = !tensor::is_signed_integer(tensor.dtype());
    for (size_t i = 0; i < values.size(); ++i) {
      const long double value = from_unsigned ? static_cast<long double>(static_cast<uint64_t>(values[i]))
                                              : static_cast<long double>(values[i]);
      if (!fits(wanted, value)) {
        throw InputError(what + ": element " + std::to_string(i) + " does not fit " +
                         std::string(tensor::dtype_name(wanted)) + " (converting " + conversion + ")");
      }
    }
    return tensor.to(wanted);
  }
  if (tensor::is_float(tensor.dtype()) && tensor::is_float(wanted)) return tensor.to(wanted);
  throw InputError(what + ": the file holds " + std::string(tensor::dtype_name(tensor.dtype())) + ", and `" +
                   slot.declared + "` takes " + std::string(tensor::dtype_name(wanted)));
}

Tensor npy_ready(const Tensor& input) {
  return (input.dtype() == DType::BF16 ? input.to(DType::F32) : input).contiguous();
}

tensor::NpyView npy_view(const Tensor& ready) {
  tensor::NpyView view;
  view.dtype = ready.dtype();
  view.shape.assign(ready.shape().begin(), ready.shape().end());
  const size_t bytes = static_cast<size_t>(ready.numel()) * ready.element_size();
  if (bytes > 0) view.data = std::span<const std::byte>(static_cast<const std::byte*>(ready.raw_data()), bytes);
  return view;
}

tensor::NpyArray npy_from_tensor(const Tensor& input) {
  const Tensor ready = npy_ready(input);
  const tensor::NpyView view = npy_view(ready);
  return tensor::NpyArray{view.dtype, view.shape, std::vector<std::byte>(view.data.begin(), view.data.end())};
}

Tensor tensor_from_npy(const tensor::NpyArray& array) {
  const tensor::Shape shape(array.shape.begin(), array.shape.end());
  Tensor tensor = Tensor::empty(array.dtype, shape);
  if (!array.data.empty()) std::memcpy(tensor.raw_mutable_data(), array.data.data(), array.data.size());
  return tensor;
}

std::vector<std::pair<std::string, Tensor>> flatten_outputs(const std::string& name, const eval::Value& value) {
  std::vector<std::pair<std::string, Tensor>> out;
  switch (value.kind()) {
    case eval::Value::Kind::Unit: break;
    case eval::Value::Kind::Tensor: out.emplace_back(name, value.tensor()); break;
    case eval::Value::Kind::Int: out.emplace_back(name, Tensor::scalar(DType::I64, value.int_value())); break;
    case eval::Value::Kind::Float: out.emplace_back(name, Tensor::scalar(DType::F64, value.float_value())); break;
    case eval::Value::Kind::Tuple: {
      const auto& elements = value.elements();
      for (size_t i = 0; i < elements.size(); ++i) {
        for (auto& item : flatten_outputs(name + "_" + std::to_string(i), elements[i])) out.push_back(std::move(item));
      }
      break;
    }
    case eval::Value::Kind::Optional:
      if (value.has_value()) out = flatten_outputs(name, value.inner());
      break;
    case eval::Value::Kind::Struct:
      for (const auto& [field, field_value] : value.fields()) {
        for (auto& item : flatten_outputs(name + "_" + field, field_value)) out.push_back(std::move(item));
      }
      break;
    case eval::Value::Kind::Enum: out.emplace_back(name, Tensor::scalar(DType::I32, value.variant())); break;
    default:
      throw InputError("the result `" + name + "` is " + value.describe() + ", which is not data to write out");
  }
  return out;
}

}  // namespace linnet::nest
