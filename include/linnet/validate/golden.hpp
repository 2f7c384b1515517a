// A golden case on disk: a directory holding meta.json (provenance and the
// generics to bind a card with) and expected.npz (the reference arrays),
// next to the checkpoint the card runs (config.json, model.safetensors).
// golden/README.md describes the layout and what each array holds.
//
//   validate::GoldenCase golden = validate::read_golden_case("golden/mistral-a");
//   tensor::Tensor tokens = golden.tensor("tokens", tensor::DType::I32, 2);
//
// Everything read is checked before use; a missing file, a malformed
// meta.json, a missing .npz member or an array of the wrong dtype or rank is
// a GoldenError naming the file and the member.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "linnet/tensor/npz.hpp"
#include "linnet/tensor/tensor.hpp"

namespace linnet::validate {

// A problem with a golden case or with what a card produced from it (an
// entry that failed, a result of an unexpected shape): not a tolerance
// failure, but the reason no comparison could be made.
class GoldenError : public std::runtime_error {
 public:
  using runtime_error::runtime_error;
};

// A golden case's file that is not what it should be (meta.json not JSON,
// expected.npz not an archive, a member of another dtype or shape): E6007.
class GoldenFormatError : public GoldenError {
 public:
  using GoldenError::GoldenError;
};

struct GoldenCase {
  std::string directory;
  std::string name;  // meta.json's "case", else the directory's name
  // meta.json's `linnet_generics` as `--bind` arguments ("Vocab=512",
  // "T=f32"), in the file's order. Empty for a case without a model (the
  // MXFP4 dequantization case).
  std::vector<std::string> binds;
  std::map<std::string, tensor::NpyArray> arrays;  // expected.npz, by member name

  // Member `member` as a tensor; throws GoldenError unless it exists, has
  // dtype `dtype` and, when `rank` is not negative, that many axes.
  tensor::Tensor tensor(const std::string& member, tensor::DType dtype, int rank = -1) const;
  bool has(const std::string& member) const { return arrays.count(member) != 0; }
  // The path of a file of the case, for messages ("golden/x/expected.npz").
  std::string path_of(const std::string& file) const;
};

// Reads `<directory>/meta.json` and `<directory>/expected.npz`. Throws
// GoldenError when the directory or either file is missing or malformed.
GoldenCase read_golden_case(const std::string& directory);

}  // namespace linnet::validate
