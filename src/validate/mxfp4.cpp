// `std.quant::dequantize_mxfp4` against transformers' dequantized bits
// (see mxfp4.hpp): the op's body and the op table's kernel, both through
// the interpreter, in f32 and bf16.
#include "linnet/validate/mxfp4.hpp"

#include <cstring>
#include <filesystem>

#include "linnet/eval/interpreter.hpp"
#include "linnet/ops/op_table.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/validate/golden.hpp"

namespace linnet::validate {

namespace {

using tensor::DType;
using tensor::Tensor;

constexpr const char* kOp = "std.quant::dequantize_mxfp4";

// Elements whose bytes differ; both tensors contiguous, same shape and
// element size (bf16 against the uint16 bit patterns compares bits).
int64_t differing_elements(const Tensor& ours, const Tensor& reference) {
  const size_t width = ours.element_size();
  const auto* a = static_cast<const unsigned char*>(ours.raw_data());
  const auto* b = static_cast<const unsigned char*>(reference.raw_data());
  int64_t count = 0;
  for (int64_t i = 0; i < ours.numel(); ++i) {
    if (std::memcmp(a + static_cast<size_t>(i) * width, b + static_cast<size_t>(i) * width, width) != 0) ++count;
  }
  return count;
}

std::string shape_text(const tensor::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

bool Mxfp4Report::pass() const {
  if (comparisons.empty()) return false;
  for (const Mxfp4Comparison& comparison : comparisons)
    if (!comparison.pass()) return false;
  return true;
}

Mxfp4Report validate_mxfp4(const std::string& golden_dir, const std::string& std_dir) {
  const GoldenCase golden = read_golden_case(golden_dir);
  const std::string npz = golden.path_of("expected.npz");
  const Tensor blocks = golden.tensor("blocks", DType::U8, 4);
  const Tensor scales = golden.tensor("scales", DType::U8, 3);
  const int64_t experts = blocks.extent(0), rows = blocks.extent(1), groups = blocks.extent(2);
  if (blocks.extent(3) != 16) throw GoldenFormatError(npz + ": `blocks` must be [E, Out, G, 16]");
  if (scales.shape() != tensor::Shape{experts, rows, groups}) {
    throw GoldenFormatError(npz + ": `scales` must be [E, Out, G] = " + shape_text({experts, rows, groups}) +
                      " for `blocks` " + shape_text(blocks.shape()));
  }
  // transformers' layout: [E, G * 32, Out].
  const tensor::Shape transposed{experts, groups * 32, rows};
  const Tensor reference_f32 = golden.tensor("f32", DType::F32, 3);
  // bf16 has no NumPy dtype; the case stores its bit patterns as uint16.
  const Tensor reference_bf16 = golden.tensor("bf16_bits", DType::U16, 3);
  for (const auto& [name, array] : {std::pair{"f32", &reference_f32}, std::pair{"bf16_bits", &reference_bf16}}) {
    if (array->shape() != transposed) {
      throw GoldenFormatError(npz + ": `" + name + "` is " + shape_text(array->shape()) + ", expected [E, G * 32, Out] = " +
                        shape_text(transposed));
    }
  }

  // std.quant and what it imports, nothing else.
  syntax::SourceManager sources;
  syntax::Diagnostics diagnostics;
  syntax::LoadOptions load_options;
  load_options.inputs = {(std::filesystem::path(std_dir) / "quant.linnet").string()};
  load_options.std_dir = std_dir;
  const std::unique_ptr<syntax::Program> program = syntax::load_program(sources, load_options, diagnostics);
  if (!program || diagnostics.has_errors()) {
    throw GoldenError("std.quant did not load from " + load_options.inputs[0] + ":\n" +
                      syntax::render_text(diagnostics, sources));
  }

  Mxfp4Report report;
  report.case_name = golden.name;
  const Tensor references[] = {reference_f32, reference_bf16};
  for (const std::string implementation : {"body", "native"}) {
    eval::Options options;
    if (implementation == "native") {
      options.numerics = eval::NumericsPolicy::Equivalent;
      options.dispatcher = ops::make_cpu_dispatcher();
    }  // else `exact`: no kernel ever runs, the body as written
    eval::Interpreter interpreter(*program, sources, options);
    for (const DType dtype : {DType::F32, DType::BF16}) {
      interpreter.clear_stats();
      eval::EntryInputs inputs;
      inputs.positional = {eval::Value::from_tensor(blocks), eval::Value::from_tensor(scales)};
      inputs.generics = {{"T", eval::GenericValue::of_dtype(dtype)}};
      eval::Value result;
      try {
        result = interpreter.call_function(kOp, inputs);
      } catch (const eval::EvalError& failure) {
        throw GoldenError(std::string(kOp) + " failed:\n" + interpreter.render(failure));
      }
      // [E, Out, G * 32] -> transformers' [E, G * 32, Out].
      const Tensor ours = result.tensor().permute({0, 2, 1}).contiguous();
      const Tensor& reference = references[dtype == DType::F32 ? 0 : 1];
      if (ours.shape() != reference.shape()) {
        throw GoldenError(std::string(kOp) + " returned " + shape_text(result.tensor().shape()) +
                          ", which does not transpose to the reference's " + shape_text(reference.shape()));
      }
      Mxfp4Comparison comparison;
      comparison.implementation = implementation;
      comparison.dtype = dtype;
      const auto counts = interpreter.stats().find(kOp);
      comparison.ran = counts != interpreter.stats().end() && counts->second.native > 0 ? "native" : "body";
      comparison.elements = ours.numel();
      comparison.differing = differing_elements(ours, reference);
      report.comparisons.push_back(comparison);
    }
  }
  return report;
}

}  // namespace linnet::validate
