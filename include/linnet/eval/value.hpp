// The values a Linnet program computes with, as the interpreter holds them.
//
// A Value is one of:
// - a tensor of a dtype (a scalar such as `f32` or `bool` is a rank-0 tensor);
// - a contextual integer or float: a literal, a `Dim` generic, an
//   unannotated integer `const`, or arithmetic over them. It has no dtype
//   until it meets one (the other operand, a parameter type, an annotation);
//   see docs/semantics.md;
// - a tuple, an optional (`some(v)` / `none`), a struct value or an enum
//   variant;
// - a block instance or a sub-block array (values that methods are called on);
// - a shape literal (`[B, S, H]`), which only shape-taking calls consume;
// - unit, what a function without a result returns.
//
// Values are cheap to copy: tensors are views of shared storage, block
// instances are shared, and a typed scalar (`i32`, `bool`) is held as its
// element alone.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "linnet/syntax/ast.hpp"
#include "linnet/tensor/tensor.hpp"

namespace linnet::syntax {
struct Module;
}

namespace linnet::eval {

using tensor::DType;
using tensor::Shape;
using tensor::Tensor;

struct BlockInstance;

// The value of one generic parameter: a dimension, a dtype, or (for a
// `*S: Shape` pack) a list of dimensions.
struct GenericValue {
  enum class Kind { Dim, DType, Shape };
  Kind kind = Kind::Dim;
  int64_t dim = 0;
  DType dtype = DType::F32;
  Shape shape;

  static GenericValue of_dim(int64_t value);
  static GenericValue of_dtype(DType value);
  static GenericValue of_shape(Shape value);
  // "4096", "bf16", "[2, 3]".
  std::string to_string() const;
  bool operator==(const GenericValue& other) const;
};

// Generic parameter name -> value.
using GenericBindings = std::map<std::string, GenericValue>;

// "<H = 64, T = f32>".
std::string describe_bindings(const GenericBindings& bindings);

class Value {
 public:
  enum class Kind { Unit, Tensor, Int, Float, Tuple, Optional, Struct, Enum, Block, BlockArray, Shape, String };

  Value() = default;  // unit
  // A copy shares the tensor (one reference count more, no allocation: the
  // interpreter copies a value on every name lookup). Whether an op may
  // write into a tensor's storage is therefore asked of the value
  // (holds_storage_alone), which counts both the values sharing the tensor
  // and the other tensors viewing its storage.
  Value(const Value& other) = default;
  Value& operator=(const Value& other) = default;
  Value(Value&&) noexcept = default;
  Value& operator=(Value&&) noexcept = default;
  ~Value() = default;

  static Value unit() { return Value(); }
  static Value from_tensor(Tensor tensor);
  // A rank-0 tensor of `dtype` holding `value` (converted by the cast rules).
  static Value scalar(DType dtype, tensor::Scalar value);
  // A typed scalar from one element's bits, as tensor storage of `dtype`
  // holds them (little-endian, in the low bytes).
  static Value from_element(DType dtype, uint64_t bits);
  static Value contextual_int(int64_t value);
  static Value contextual_float(double value);
  static Value tuple(std::vector<Value> elements);
  static Value some(Value inner);
  static Value none();
  // A struct value: `item` is the declaration, fields in declaration order.
  static Value structure(const syntax::ast::StructItem* item, GenericBindings generics,
                         std::vector<std::pair<std::string, Value>> fields);
  static Value enumeration(const syntax::ast::EnumItem* item, int variant);
  static Value block(std::shared_ptr<BlockInstance> instance);
  static Value block_array(std::vector<std::shared_ptr<BlockInstance>> instances);
  static Value shape_literal(Shape dims);
  static Value string(std::string text);

  Kind kind() const { return kind_; }
  bool is_unit() const { return kind_ == Kind::Unit; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_contextual() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  // A tensor of rank 0: a typed scalar.
  bool is_scalar_tensor() const { return inline_scalar_ || (kind_ == Kind::Tensor && tensor_->rank() == 0); }
  // A typed scalar's dtype and element bits without making a tensor: true
  // for a scalar held inline or a rank-0 tensor.
  bool scalar_element(DType& dtype, uint64_t& bits) const;
  // A tensor whose storage no other value or tensor holds, owned and
  // writable: an op given this value may write into it and return it.
  bool holds_storage_alone() const;
  // A tensor's dtype and rank, without making the tensor of an inline scalar.
  DType tensor_dtype() const;
  int tensor_rank() const;

  // Accessors; each throws std::logic_error on a value of another kind.
  const Tensor& tensor() const;
  int64_t int_value() const;
  double float_value() const;
  const std::vector<Value>& elements() const;  // tuple elements
  bool has_value() const;                      // optional: some
  const Value& inner() const;                  // optional: the value of some
  const syntax::ast::StructItem* struct_item() const;
  const GenericBindings& struct_generics() const;
  const std::vector<std::pair<std::string, Value>>& fields() const;
  const Value* field(const std::string& name) const;  // nullptr when absent
  const syntax::ast::EnumItem* enum_item() const;
  int variant() const;
  const std::shared_ptr<BlockInstance>& block() const;
  const std::vector<std::shared_ptr<BlockInstance>>& blocks() const;
  const Shape& shape_dims() const;
  const std::string& text() const;

  // A short description for messages: "f32[2, 3]", "bf16", "integer 3",
  // "(f32[2], i32)", "some(f32[4])", "block llama::Linear".
  std::string describe() const;

 private:
  // The parts of the rarer kinds, shared between copies: a Value is copied
  // on every name lookup, so it stays small.
  struct Composite {
    std::vector<Value> elements;  // tuple elements, or the optional's inner value (0 or 1)
    std::vector<std::pair<std::string, Value>> fields;
    GenericBindings generics;
    const syntax::ast::StructItem* struct_item = nullptr;
    const syntax::ast::EnumItem* enum_item = nullptr;
    int variant = 0;
    std::shared_ptr<BlockInstance> block;
    std::vector<std::shared_ptr<BlockInstance>> blocks;
    Shape shape;
    std::string text;
  };
  static Value of_composite(Kind kind, Composite composite);
  const Composite& composite() const;

  // A Value is made and dropped for every operand the interpreter reads,
  // so it stays small (48 bytes): what the kind needs beyond a number
  // lives behind a shared pointer.
  Kind kind_ = Kind::Unit;
  // A typed scalar made by scalar() or from_element() is held as its
  // element's bits (`number_.bits`), with no tensor until tensor() is first
  // asked for; the value then holds the tensor alone, as from_tensor() makes it.
  mutable bool inline_scalar_ = false;
  DType element_dtype_ = DType::Bool;
  union Number {
    int64_t integer;  // Kind::Int
    double real;      // Kind::Float
    uint64_t bits;    // an inline scalar's element
  } number_{0};
  mutable std::shared_ptr<const Tensor> tensor_;  // Kind::Tensor, unless held inline
  std::shared_ptr<const Composite> composite_;
};

// One instantiated block: its generics, its bound parameters and buffers,
// its current state, and its sub-blocks. A parent reaches a child's members
// through `members`; only the block's own methods assign its state.
struct BlockInstance {
  const syntax::Module* module = nullptr;  // where the block is declared
  const syntax::ast::BlockItem* item = nullptr;
  GenericBindings generics;
  std::string path;  // "layers.0.attention"; empty for the root

  struct Member {
    const syntax::ast::MemberItem* item = nullptr;
    // param/buffer: a tensor, or an optional of one (`T? = none`);
    // state: a tensor; sub: a block, a block array, or an optional block.
    Value value;
  };
  std::map<std::string, Member> members;
  std::map<std::string, const syntax::ast::FunctionItem*> methods;

  // "llama::Model<Vocab = 64, ...>".
  std::string describe() const;
  // The path of a member: "layers.0.attention.cache_k".
  std::string member_path(const std::string& member) const;
  // Sets every state tensor (here and in every sub-block) back to zeros.
  void reset_state();
  // A state tensor by its path relative to this block ("layers.0.attention.cache_k");
  // nullptr when there is no such state member.
  const Tensor* find_state(const std::string& relative_path) const;
};

}  // namespace linnet::eval
