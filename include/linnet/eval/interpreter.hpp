// The Linnet interpreter: runs a parsed program on the CPU by walking its
// syntax tree, with whole-tensor kernels doing the arithmetic (index notation
// is evaluated over whole tensors, a `sum[k] a * b` contraction as one matrix
// product). docs/semantics.md describes what it decides.
//
// Typical use (what `linnet run` and `validate` do):
//
//   auto loaded = eval::load_program({"nest/mistral-7b-instruct-v0.3"}, "stdlib", diagnostics);
//   eval::Interpreter interpreter(*loaded);
//   eval::GenericBindings generics{{"Vocab", GenericValue::of_dim(64)}, ..., {"T", GenericValue::of_dtype(DType::F32)}};
//   for (auto& p : interpreter.parameters("Model", generics)) ...      // what a checkpoint must hold
//   auto model = interpreter.instantiate("Model", generics, source);   // binds param/buffer, zeroes state
//   eval::EntryInputs inputs;
//   inputs.positional = {eval::Value::from_tensor(tokens)};
//   inputs.generics = {{"B", ...}, {"S", ...}};                          // optional: inferred from inputs
//   eval::Value logits = interpreter.call(*model, "forward", inputs);
//   eval::Value next = interpreter.call(*model, "decode", ...);        // state kept in `model`
//
// The interpreter assumes nothing about a static checker having run: every
// call validates its arguments' shapes and dtypes against the parameter
// types, infers generics from them, and checks the result against the
// declared result type.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/eval/dispatch.hpp"
#include "linnet/eval/error.hpp"
#include "linnet/eval/parameters.hpp"
#include "linnet/eval/progress.hpp"
#include "linnet/eval/value.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/package.hpp"
#include "linnet/syntax/source.hpp"

namespace linnet::eval {

// A program with the sources it was read from (spans point into them).
struct LoadedProgram {
  std::unique_ptr<syntax::SourceManager> sources;
  std::unique_ptr<syntax::Program> program;
};

// syntax::load_program over `inputs` (files, packages, card directories)
// with `std_dir` as the standard library. Returns nullptr when the load
// reported errors (they are in `diagnostics`).
std::unique_ptr<LoadedProgram> load_program(const std::vector<std::string>& inputs, const std::string& std_dir,
                                            syntax::Diagnostics& diagnostics);

struct Options {
  NumericsPolicy numerics = NumericsPolicy::Exact;
  // Offered every `op` call before its body runs; may be null.
  std::shared_ptr<OpDispatcher> dispatcher;
  // Under `exact`, a bf16/f16 sum of products (`sum[k] a * b`) rounds every
  // product and partial sum; it materialises all products at once when
  // there are at most this many, and otherwise adds them one reduced index
  // at a time (the same result in less memory).
  int64_t exact_product_limit = int64_t{1} << 22;
  // A `while` loop that runs this many iterations stops with E6005
  // (`--max-loop-iterations`).
  int64_t max_loop_iterations = 10'000'000;
  // A block array (`sub layers: [Layer; L]`) longer than this stops
  // instantiation with E6005: a mistyped --bind (Layers=10000000000) is
  // refused at once instead of listing billions of parameters.
  int64_t max_block_array_length = 1'000'000;
  // Under `equivalent` and `fast`, an op that names a kernel (`kernel k<...>`)
  // runs it, by iterating its launch grid, where the kernel's `where` clause
  // holds; otherwise its body runs. Slow, and meant for testing kernels.
  bool run_kernels = false;
  // Deepest chain of calls (there is no recursion in Linnet; this catches a
  // program the checker would have rejected).
  int max_call_depth = 256;
  // Let go of each local after the last statement of its body that
  // mentions it, instead of when the body ends (src/eval/liveness.cpp):
  // same results, less memory held. Off only to compare the two.
  bool release_dead_locals = true;
  // Told each entry call and each loop iteration, for a progress display
  // (progress.hpp); may be null.
  std::shared_ptr<ProgressObserver> progress;
};

// Arguments of an entry call.
struct EntryInputs {
  std::vector<Value> positional;
  std::map<std::string, Value> named;
  // The entry's own generics by name (`B`, `S`, `Steps`); the ones not
  // given are inferred from the inputs or take their defaults.
  GenericBindings generics;
  // Where each input came from, by parameter name, as its caller would
  // write it (`--input tokens=1,2,3`). When a call fails on an input's
  // value (an argument that does not fit its parameter, an index out of
  // range that the input holds), the error gets a note naming it. Optional.
  std::map<std::string, std::string> origins;
};

// How often each op ran natively and as its body (for `explain`), and the
// wall time its native kernels took (for `--stats`: where a call's time
// goes; a body's time is not measured, its own ops' kernels are).
struct OpCounts {
  int64_t native = 0;
  int64_t body = 0;
  double native_seconds = 0;
};
using ExecutionStats = std::map<std::string, OpCounts>;  // qualified op name -> counts

class Evaluator;

class Interpreter {
 public:
  Interpreter(const syntax::Program& program, const syntax::SourceManager& sources, Options options = {});
  explicit Interpreter(const LoadedProgram& loaded, Options options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  const Options& options() const;
  void set_numerics(NumericsPolicy policy);

  // A block by name: "Model" (searched in the requested modules, then in
  // every module; it must be unique) or "llama::Model" (module::name).
  // Generics not given take their defaults; the block's `where` clause must
  // hold. Throws EvalError.
  std::shared_ptr<BlockInstance> instantiate(std::string_view block, const GenericBindings& generics,
                                             ParameterSource& source);

  // The parameters, buffers and states an instance would have, in
  // declaration order, without reading any weights. Everything inside an
  // optional sub-block is listed as optional.
  std::vector<ParameterInfo> parameters(std::string_view block, const GenericBindings& generics);

  // Calls entry `entry` of `instance` (a block-level `entry`). The instance
  // keeps the state the call assigns. Throws EvalError.
  Value call(BlockInstance& instance, std::string_view entry, const EntryInputs& inputs);

  // Calls a module-level function, op or entry: "name" (searched like a
  // block) or "module::name", e.g. "std.nn.softmax::softmax".
  Value call_function(std::string_view function, const EntryInputs& inputs);

  const ExecutionStats& stats() const;
  void clear_stats();

  // Renders an error against the program's sources (upstream's text format).
  std::string render(const EvalError& error) const;

 private:
  std::unique_ptr<Evaluator> evaluator_;
};

}  // namespace linnet::eval
