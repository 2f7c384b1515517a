// One process's part of a checkpoint (shards.hpp).
#include "linnet/nest/shards.hpp"

#include <cstring>

#include "linnet/eval/error.hpp"
#include "linnet/tensor/mapped_pages.hpp"

namespace linnet::nest {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) { return tensor::shape_to_string(tensor::Shape(shape.begin(), shape.end())); }

// `declared` with `axis` `shards` times longer: the whole a part comes from.
tensor::Shape whole_along(const tensor::Shape& declared, size_t axis, int64_t shards) {
  tensor::Shape whole = declared;
  whole[axis] *= shards;
  return whole;
}

}  // namespace

std::optional<size_t> split_axis(const tensor::Shape& declared, const std::vector<int64_t>& stored, int64_t shards) {
  if (shards <= 1 || declared.size() != stored.size()) return std::nullopt;
  std::optional<size_t> found;
  for (size_t axis = 0; axis < declared.size(); ++axis) {
    if (declared[axis] == stored[axis]) continue;
    if (found || declared[axis] * shards != stored[axis]) return std::nullopt;
    found = axis;
  }
  return found;
}

std::vector<syntax::Diagnostic> check_sharded_parameters(const std::vector<eval::ParameterInfo>& manifest,
                                                         const Checkpoint& checkpoint, const Bindings& bindings,
                                                         int64_t shards, bool cast_weights) {
  // Each split tensor is checked at its whole shape; what is left
  // (missing tensors, dtypes) is check_parameters' to report.
  std::vector<syntax::Diagnostic> problems;
  std::vector<eval::ParameterInfo> wholes = manifest;
  for (eval::ParameterInfo& info : wholes) {
    if (info.kind == eval::ParameterKind::State) continue;
    const std::string& name = bindings.tensor_for(info.path);
    const TensorRecord* record = checkpoint.find(name);
    if (record == nullptr || record->shape.size() != info.shape.size()) continue;
    const tensor::Shape stored(record->shape.begin(), record->shape.end());
    if (stored == info.shape) continue;
    if (split_axis(info.shape, record->shape, shards)) {
      info.shape = stored;
      continue;
    }
    std::string parts;
    for (size_t axis = 0; axis < info.shape.size(); ++axis) {
      parts += (parts.empty() ? "" : " or ") + tensor::shape_to_string(whole_along(info.shape, axis, shards));
    }
    syntax::Diagnostic& problem = problems.emplace_back(syntax::error(
        eval::codes::parameter_binding,
        std::string(eval::parameter_kind_name(info.kind)) + " `" + info.path + "` binds `" + name + "` of shape " +
            shape_text(record->shape) + ", which does not split into " + std::to_string(shards) +
            " parts of the declared " + tensor::shape_to_string(info.shape),
        syntax::Span{}));
    problem.note("at Shards = " + std::to_string(shards) + " a process binds the whole tensor when it is declared " +
                 "whole, else one of " + std::to_string(shards) + " equal parts along one axis: the checkpoint " +
                 "would hold " + tensor::shape_to_string(info.shape) + (parts.empty() ? "" : " or " + parts));
    for (size_t axis = 0; axis < info.shape.size(); ++axis) {
      if (record->shape[axis] != info.shape[axis] && record->shape[axis] % shards != 0) {
        problem.note("axis " + std::to_string(axis) + " holds " + std::to_string(record->shape[axis]) +
                     ", which " + std::to_string(shards) + " processes cannot share equally");
      }
    }
    info.shape = stored;  // reported here; check_parameters then checks the dtype alone
  }
  for (syntax::Diagnostic& problem : check_parameters(wholes, checkpoint, bindings, cast_weights)) {
    problems.push_back(std::move(problem));
  }
  return problems;
}

ShardedParameterSource::ShardedParameterSource(const Checkpoint& checkpoint, const Bindings& bindings, int64_t rank,
                                               int64_t shards, bool cast_weights, WeightPlacement placement)
    : CheckpointParameterSource(checkpoint, bindings, cast_weights, placement), rank_(rank), shards_(shards) {}

std::optional<tensor::Tensor> ShardedParameterSource::fetch(const eval::ParameterRequest& request) {
  const std::string& name = bindings_.tensor_for(request.path);
  const TensorRecord* found = checkpoint_.find(name);
  if (found == nullptr || !found->dtype) return CheckpointParameterSource::fetch(request);
  const std::optional<size_t> axis = split_axis(request.shape, found->shape, shards_);
  if (!axis) return CheckpointParameterSource::fetch(request);  // the whole tensor

  const TensorRecord& whole = checkpoint_.get(name);  // marks it touched
  const size_t element = tensor::dtype_size(*whole.dtype);
  // The whole as [outer, shards * part, inner] elements; this process's
  // part is [outer, part, inner] from offset rank * part on the middle axis.
  int64_t outer = 1;
  int64_t inner = 1;
  for (size_t i = 0; i < *axis; ++i) outer *= whole.shape[i];
  for (size_t i = *axis + 1; i < whole.shape.size(); ++i) inner *= whole.shape[i];
  const int64_t part = request.shape[*axis];
  const size_t run_bytes = static_cast<size_t>(part * inner) * element;  // one contiguous piece of the part
  const size_t stride_bytes = run_bytes * static_cast<size_t>(shards_);  // from one piece to the next

  TensorRecord piece = whole;
  piece.shape[*axis] = part;
  ++counts_.split;
  if (outer == 1) {
    // Contiguous in the file: a view of the mapping, no copy.
    piece.bytes = whole.bytes.subspan(static_cast<size_t>(rank_) * run_bytes, run_bytes);
    return load(piece, request);
  }
  // Copy this process's pieces alone, then let the pages of the whole go.
  auto copy = std::make_shared<std::vector<std::byte>>(run_bytes * static_cast<size_t>(outer));
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(copy->data() + static_cast<size_t>(o) * run_bytes,
                whole.bytes.data() + static_cast<size_t>(o) * stride_bytes + static_cast<size_t>(rank_) * run_bytes,
                run_bytes);
  }
  tensor::release_mapped_pages(whole.bytes.data(), whole.bytes.size());
  counts_.split_copied_bytes += copy->size();
  piece.bytes = std::span<const std::byte>(copy->data(), copy->size());
  piece.keep_alive = copy;
  tensor::Tensor loaded = load(piece, request, /*in_mapping=*/false);
  // load() counted the copy as borrowed (it is a view of `copy`); it is not the mapping's.
  if (loaded.dtype() == *whole.dtype) {
    --counts_.borrowed;
    counts_.borrowed_bytes -= copy->size();
  }
  return loaded;
}

std::optional<int64_t> bound_shards(const eval::GenericBindings& generics) {
  auto found = generics.find("Shards");
  if (found == generics.end() || found->second.kind != eval::GenericValue::Kind::Dim) return std::nullopt;
  return found->second.dim;
}

bool check_process_count(const RootBlock& root, const eval::GenericBindings& generics, int processes,
                         syntax::Diagnostics& diagnostics) {
  const std::optional<int64_t> shards = bound_shards(generics);
  const std::string count = std::to_string(processes);
  if (processes > 1 && root.generic("Shards") == nullptr) {
    diagnostics
        .error(eval::codes::bad_generic_arguments,
               "`" + root.qualified_name + "` has no generic `Shards`, so it cannot run split across the " + count +
                   " processes of this run",
               syntax::Span{})
        .note("a card runs across processes when it sizes each process's part of its weights by `Shards`")
        .with_help("run it as one process, without mpirun");
    return false;
  }
  if (processes > 1 && !shards) {
    diagnostics
        .error(eval::codes::bad_generic_arguments,
               "this run has " + count + " processes, but `Shards` is not bound: each would hold the whole model",
               syntax::Span{})
        .with_help("add --bind Shards=" + count);
    return false;
  }
  if (shards && *shards != processes && (processes > 1 || *shards > 1)) {
    syntax::Diagnostic& error = diagnostics.error(
        eval::codes::bad_generic_arguments,
        "`Shards` is " + std::to_string(*shards) + ", but this run has " + count +
            (processes == 1 ? " process" : " processes") + ": each process holds one of the `Shards` parts",
        syntax::Span{});
    error.with_help("run `mpirun -np " + std::to_string(*shards) + " linnet ...`" +
                    (processes > 1 ? ", or bind Shards=" + count : ""));
    return false;
  }
  return true;
}

}  // namespace linnet::nest
