// Where a block instance's `param` and `buffer` tensors come from.
//
// Instantiating a root block walks its members and sub-blocks and asks a
// ParameterSource for each tensor by its canonical path (spec §9.5):
// member names joined by `.`, a sub-array element by its position
// (`layers.0.attention.q_proj.weight`). The source answers with a tensor or
// with nothing; the interpreter then checks the tensor's dtype and shape
// against the declaration. An optional parameter (`param bias: ...? = none`)
// is absent when the source has nothing for it; an optional sub-block is
// absent when the source lacks any parameter it requires.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "linnet/syntax/source.hpp"
#include "linnet/tensor/tensor.hpp"

namespace linnet::eval {

enum class ParameterKind { Param, Buffer, State };

const char* parameter_kind_name(ParameterKind kind);  // "param", "buffer", "state"

// One tensor a block instance needs (or, for `state`, keeps).
struct ParameterInfo {
  std::string path;
  ParameterKind kind = ParameterKind::Param;
  tensor::DType dtype = tensor::DType::F32;
  tensor::Shape shape;
  // True for `T?` parameters and for everything inside an optional sub-block.
  bool optional = false;
  syntax::Span declaration;  // the member's declaration
};

// What the interpreter asks a ParameterSource for.
struct ParameterRequest {
  std::string path;
  ParameterKind kind = ParameterKind::Param;
  tensor::DType dtype = tensor::DType::F32;  // the declared dtype, generics substituted
  tensor::Shape shape;                       // the declared shape, generics substituted
  bool optional = false;
};

class ParameterSource {
 public:
  virtual ~ParameterSource() = default;
  // The tensor for `request.path`, or nothing when the source has none.
  // A source may convert what it stores (widen bf16 to a requested f32, as
  // docs/semantics.md allows); the interpreter rejects a tensor whose dtype
  // or shape still differs from the request.
  virtual std::optional<tensor::Tensor> fetch(const ParameterRequest& request) = 0;
};

// Tensors held in memory by path: for tests, and for sources that load
// everything up front. Records which paths were asked for, so a caller can
// list the tensors nobody used.
class MapParameterSource : public ParameterSource {
 public:
  MapParameterSource() = default;
  explicit MapParameterSource(std::map<std::string, tensor::Tensor> tensors) : tensors_(std::move(tensors)) {}

  void set(const std::string& path, tensor::Tensor tensor) { tensors_[path] = std::move(tensor); }
  bool contains(const std::string& path) const { return tensors_.count(path) != 0; }
  const std::map<std::string, tensor::Tensor>& tensors() const { return tensors_; }

  std::optional<tensor::Tensor> fetch(const ParameterRequest& request) override;

  // Paths held here that no fetch asked for.
  std::vector<std::string> unused() const;

 private:
  std::map<std::string, tensor::Tensor> tensors_;
  std::set<std::string> requested_;
};

}  // namespace linnet::eval
