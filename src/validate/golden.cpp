// Reading a golden case: meta.json through simdjson, expected.npz through
// the tensor component's .npz reader.
#include "linnet/validate/golden.hpp"

#include <filesystem>
#include <simdjson.h>

#include "linnet/nest/inputs.hpp"
#include "linnet/syntax/file_reading.hpp"

namespace linnet::validate {

namespace {

// "Vocab=512" or "T=f32" for one entry of linnet_generics.
std::string bind_argument(std::string_view name, simdjson::dom::element value, const std::string& meta_path) {
  int64_t dim = 0;
  std::string_view text;
  if (value.get(dim) == simdjson::SUCCESS) return std::string(name) + "=" + std::to_string(dim);
  if (value.get(text) == simdjson::SUCCESS) return std::string(name) + "=" + std::string(text);
  throw GoldenFormatError(meta_path + ": linnet_generics." + std::string(name) + " is neither an integer nor a string");
}

}  // namespace

std::string GoldenCase::path_of(const std::string& file) const {
  return (std::filesystem::path(directory) / file).string();
}

tensor::Tensor GoldenCase::tensor(const std::string& member, tensor::DType dtype, int rank) const {
  const std::string where = path_of("expected.npz");
  const auto found = arrays.find(member);
  if (found == arrays.end()) throw GoldenFormatError(where + " has no member `" + member + "`");
  const tensor::NpyArray& array = found->second;
  if (array.dtype != dtype) {
    throw GoldenFormatError(where + ": `" + member + "` is " + std::string(tensor::dtype_name(array.dtype)) + ", expected " +
                      std::string(tensor::dtype_name(dtype)));
  }
  if (rank >= 0 && static_cast<int>(array.shape.size()) != rank) {
    throw GoldenFormatError(where + ": `" + member + "` has " + std::to_string(array.shape.size()) + " axes, expected " +
                      std::to_string(rank));
  }
  return nest::tensor_from_npy(array);
}

GoldenCase read_golden_case(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) throw GoldenFormatError("`" + directory + "` is not a golden case directory");
  GoldenCase golden;
  golden.directory = directory;
  golden.name = fs::path(directory).lexically_normal().filename().string();
  if (golden.name.empty()) golden.name = fs::path(directory).lexically_normal().parent_path().filename().string();

  const std::string meta_path = golden.path_of("meta.json");
  if (const syntax::PathProblem problem = syntax::path_problem(meta_path)) {
    throw GoldenFormatError(meta_path + (problem.kind == syntax::PathProblemKind::Missing
                                             ? " is missing"
                                             : " " + syntax::path_problem_text(problem)));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element meta;
  if (auto error = parser.load(meta_path).get(meta)) {
    throw GoldenFormatError(meta_path + " is not valid JSON: " + std::string(simdjson::error_message(error)));
  }
  if (!meta.is_object()) throw GoldenFormatError(meta_path + " does not hold a JSON object");
  std::string_view case_name;
  if (meta["case"].get(case_name) == simdjson::SUCCESS && !case_name.empty()) golden.name = std::string(case_name);
  simdjson::dom::element generics;
  if (meta["linnet_generics"].get(generics) == simdjson::SUCCESS) {
    simdjson::dom::object entries;
    if (generics.get(entries)) throw GoldenFormatError(meta_path + ": linnet_generics is not an object");
    for (auto [name, value] : entries) golden.binds.push_back(bind_argument(name, value, meta_path));
  }

  const std::string npz_path = golden.path_of("expected.npz");
  if (const syntax::PathProblem problem = syntax::path_problem(npz_path)) {
    throw GoldenFormatError(npz_path + (problem.kind == syntax::PathProblemKind::Missing
                                            ? " is missing"
                                            : " " + syntax::path_problem_text(problem)));
  }
  try {
    golden.arrays = tensor::read_npz(npz_path);
  } catch (const std::exception& failure) {  // FormatError, or the file could not be read
    throw GoldenFormatError(failure.what());
  }
  return golden;
}

}  // namespace linnet::validate
