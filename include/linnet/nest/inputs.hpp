// Entry inputs from the command line or a script, and outputs to NumPy files.
//
// A value is written as JSON-style nested lists or a scalar:
//   tokens=[[1, 2, 3]]   a [1, 3] tensor
//   tokens=1,2,3         a flat list (brackets optional at the top level)
//   pos=0  temperature=0.7  flag=true
// or read from a file: `tokens=@prompt.npy`. The dtype is the parameter's
// declared one (`Tensor[B, S; i32]` gives i32; `T` gives the bound dtype).
// A list with fewer axes than the parameter gets leading axes of extent 1
// (`1,2,3` for `Tensor[B, S; i32]` is [1, 3]). Integers must fit the dtype;
// a float literal is refused for an integer parameter. A .npy file must
// hold the declared dtype, except that integers convert to another
// integer dtype when every value fits and floats to another float dtype.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "linnet/eval/value.hpp"
#include "linnet/syntax/ast.hpp"
#include "linnet/tensor/npz.hpp"

namespace simdjson::dom {
class element;
}

namespace linnet::nest {

// An input that cannot be read or built; the message names the input.
class InputError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// What an entry parameter takes, as far as an input needs to know.
struct InputSlot {
  std::string name;
  std::optional<tensor::DType> dtype;  // nothing when the declaration names no dtype the bindings decide
  std::optional<int> rank;             // 0 for a scalar; nothing with a shape pack or a non-tensor type
  std::string declared;                // the type as written, for messages
  // The concrete shape when the bound generics decide every axis (what a
  // random input is made with); otherwise `shape_problem` says why not.
  // (Brace-initialised so that a slot written as {name, dtype, rank,
  // declared} needs no value for them.)
  std::optional<tensor::Shape> shape{};
  std::string shape_problem{};
};

// The slot of each parameter of `entry`, with the bound generics (the root
// block's, and the entry's own from --bind) for dtype names such as `T` and
// for the axes of a concrete shape.
std::vector<InputSlot> input_slots(const syntax::ast::FunctionItem& entry, const eval::GenericBindings& generics,
                                   const syntax::SourceManager& sources);

// A value from its text: a literal (see above) or `@file.npy`.
tensor::Tensor input_from_text(std::string_view text, const InputSlot& slot);
// A value from a parsed JSON element (a number, a bool, nested arrays, or
// a string "@file.npy"); `base_directory` resolves relative .npy paths.
tensor::Tensor input_from_json(const simdjson::dom::element& element, const InputSlot& slot,
                               const std::string& base_directory);
// A tensor from a .npy array, converted as described above.
tensor::Tensor input_from_npy(const tensor::NpyArray& array, const InputSlot& slot, const std::string& what);

// A tensor as a NumPy array: bf16 is widened to f32 (NumPy has no bf16).
tensor::NpyArray npy_from_tensor(const tensor::Tensor& tensor);
// The same array without copying its bytes: npy_ready() gives the tensor as
// NumPy can hold it (the tensor itself when it is contiguous and not bf16,
// else a contiguous or widened copy), and npy_view() a view of that
// tensor's storage for tensor::write_npy / write_npz, valid while the
// tensor lives.
tensor::Tensor npy_ready(const tensor::Tensor& tensor);
tensor::NpyView npy_view(const tensor::Tensor& ready);
// The array as a tensor of its own dtype.
tensor::Tensor tensor_from_npy(const tensor::NpyArray& array);

// An entry's result as named tensors: a tensor is `name`, a tuple's
// elements `name_0`, `name_1`, ... (recursively), a contextual integer or
// float a scalar i64 or f64, an optional its value or nothing, unit nothing.
std::vector<std::pair<std::string, tensor::Tensor>> flatten_outputs(const std::string& name, const eval::Value& value);

}  // namespace linnet::nest
