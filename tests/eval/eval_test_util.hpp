// Helpers for the interpreter's tests: programs written inline (saved to a
// temporary package so the loader reads them as files), tensors built from
// lists, and calls of module functions with positional inputs.
#pragma once

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "linnet/eval/interpreter.hpp"
#include "linnet/tensor/kernels.hpp"

namespace eval_test {

using linnet::eval::DType;
using linnet::eval::EntryInputs;
using linnet::eval::GenericBindings;
using linnet::eval::GenericValue;
using linnet::eval::Interpreter;
using linnet::eval::Value;
using linnet::tensor::Shape;
using linnet::tensor::Tensor;

inline std::string stdlib_dir() { return std::string(LINNET_SOURCE_DIR) + "/stdlib"; }

// A program loaded from source text (one module, `module test` is added when
// the text has no module line) with the project's standard library.
struct TestProgram {
  std::unique_ptr<linnet::eval::LoadedProgram> loaded;
  std::unique_ptr<Interpreter> interpreter;
  std::string diagnostics;

  Interpreter& operator*() { return *interpreter; }
  Interpreter* operator->() { return interpreter.get(); }
};

inline std::filesystem::path fresh_directory() {
  static std::atomic<int> counter{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("linnet_eval_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline TestProgram load_inputs(const std::vector<std::string>& inputs,
                               linnet::eval::Options options = {}) {
  TestProgram program;
  linnet::syntax::Diagnostics diagnostics;
  program.loaded = linnet::eval::load_program(inputs, stdlib_dir(), diagnostics);
  if (!program.loaded) {
    for (const auto& d : diagnostics.all()) program.diagnostics += d.code + " " + d.message + "\n";
    FAIL("the program did not load:\n" << program.diagnostics);
  }
  program.interpreter = std::make_unique<Interpreter>(*program.loaded, std::move(options));
  return program;
}

inline TestProgram load_source(const std::string& text, linnet::eval::Options options = {}) {
  const auto dir = fresh_directory();
  // The loader keeps the text it read, so the file can go once it is loaded.
  struct RemoveWhenDone {
    std::filesystem::path path;
    ~RemoveWhenDone() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{dir};
  const auto file = dir / "test.linnet";
  std::ofstream out(file);
  if (text.find("module ") == std::string::npos) out << "module test\n";
  out << text;
  out.close();
  return load_inputs({file.string()}, std::move(options));
}

// Tensors from lists.
inline Tensor f32(const std::vector<float>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor f64(const std::vector<double>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor i32(const std::vector<int32_t>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor i64(const std::vector<int64_t>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor u8(const std::vector<uint8_t>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor bf16(const std::vector<float>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape, DType::BF16);
}
inline Tensor boolean(const std::vector<bool>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }

inline Value v(const Tensor& tensor) { return Value::from_tensor(tensor); }
inline Value scalar_i32(int32_t value) { return Value::scalar(DType::I32, value); }
inline Value scalar_f32(float value) { return Value::scalar(DType::F32, value); }

inline GenericValue dim(int64_t value) { return GenericValue::of_dim(value); }
inline GenericValue dtype(DType value) { return GenericValue::of_dtype(value); }

// Calls module function `name` with positional inputs (and entry generics).
inline Value call(TestProgram& program, const std::string& name, std::vector<Value> inputs,
                  GenericBindings generics = {}) {
  EntryInputs entry;
  entry.positional = std::move(inputs);
  entry.generics = std::move(generics);
  return program->call_function(name, entry);
}

// Same, expecting a tensor result.
inline Tensor call_tensor(TestProgram& program, const std::string& name, std::vector<Value> inputs,
                          GenericBindings generics = {}) {
  Value result = call(program, name, std::move(inputs), std::move(generics));
  REQUIRE(result.is_tensor());
  return result.tensor();
}

// Elements as doubles, row-major.
inline std::vector<double> values(const Tensor& tensor) { return tensor.to_vector<double>(); }

inline Tensor random_tensor(std::mt19937& rng, const Shape& shape, DType dtype, double low = -1.0, double high = 1.0) {
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> data(static_cast<size_t>(linnet::tensor::shape_numel(shape)));
  for (double& x : data) x = uniform(rng);
  return Tensor::from_vector(data, shape, dtype);
}

inline Tensor random_integers(std::mt19937& rng, const Shape& shape, DType dtype, int64_t low, int64_t high) {
  std::uniform_int_distribution<int64_t> uniform(low, high);
  std::vector<int64_t> data(static_cast<size_t>(linnet::tensor::shape_numel(shape)));
  for (int64_t& x : data) x = uniform(rng);
  return Tensor::from_vector(data, shape, dtype);
}

// Runs `body`, which must throw EvalError with `code`; returns the error.
template <class F>
linnet::eval::EvalError expect_error(F&& body, const std::string& code) {
  try {
    body();
  } catch (const linnet::eval::EvalError& error) {
    INFO("message: " << error.what());
    CHECK(error.code() == code);
    return error;
  } catch (const std::exception& other) {
    FAIL("expected EvalError " << code << ", got: " << other.what());
  }
  FAIL("expected EvalError " << code << ", nothing was thrown");
  throw std::logic_error("unreachable");
}

// Every note of a diagnostic joined, for checks on what a message names.
inline std::string notes_of(const linnet::eval::EvalError& error) {
  std::string text = error.diagnostic().message + "\n";
  for (const auto& note : error.diagnostic().notes) text += note + "\n";
  return text;
}

}  // namespace eval_test
