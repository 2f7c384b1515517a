// bindings.json, the pre-instantiation check of a checkpoint against a
// parameter manifest, and the parameter source over a checkpoint.
#include "linnet/nest/bindings.hpp"

#include <cstring>
#include <fstream>
#include <set>
#include <simdjson.h>
#include <sstream>

#include "linnet/eval/error.hpp"
#include "linnet/nest/card.hpp"
#include "linnet/tensor/mapped_pages.hpp"

namespace linnet::nest {

namespace {

std::string dtype_text(tensor::DType dtype) { return std::string(tensor::dtype_name(dtype)); }

std::string stored_dtype_text(const TensorRecord& record) {
  return record.dtype ? dtype_text(*record.dtype) : record.format_dtype;
}

// "path (tensor `name`)" or just the path when the name is the same.
std::string describe_binding(const std::string& path, const std::string& tensor_name) {
  if (path == tensor_name) return "`" + path + "`";
  return "`" + path + "` (tensor `" + tensor_name + "`)";
}

}  // namespace

const std::string& Bindings::tensor_for(const std::string& path) const {
  auto found = tensor_by_path_.find(path);
  return found == tensor_by_path_.end() ? path : found->second;
}

bool loadable_as(tensor::DType stored, tensor::DType declared, bool cast_weights) {
  using tensor::DType;
  if (stored == declared) return true;
  if (cast_weights && tensor::is_float(stored) && tensor::is_float(declared)) return true;
  switch (declared) {
    case DType::F32: return stored == DType::BF16 || stored == DType::F16;
    case DType::F64: return stored == DType::BF16 || stored == DType::F16 || stored == DType::F32;
    default: return false;
  }
}

std::vector<syntax::Diagnostic> check_parameters(const std::vector<eval::ParameterInfo>& manifest,
                                                 const Checkpoint& checkpoint, const Bindings& bindings,
                                                 bool cast_weights) {
  std::vector<syntax::Diagnostic> problems;
  auto problem = [&](std::string message) -> syntax::Diagnostic& {
    problems.push_back(syntax::error(eval::codes::parameter_binding, std::move(message), syntax::Span{}));
    return problems.back();
  };
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind == eval::ParameterKind::State) continue;
    const std::string& name = bindings.tensor_for(info.path);
    const std::string declared = dtype_text(info.dtype) + tensor::shape_to_string(info.shape);
    const char* kind = eval::parameter_kind_name(info.kind);
    const TensorRecord* record = checkpoint.find(name);
    if (record == nullptr) {
      if (info.optional) continue;  // absent: an optional parameter or sub-block the weights lack
      syntax::Diagnostic& error =
          problem("the checkpoint has no tensor `" + name + "` for " + kind + " `" + info.path + "`");
      error.note("expected " + declared);
      if (bindings.maps(info.path)) {
        error.note("`" + bindings.source() + "` binds `" + info.path + "` to `" + name + "`");
      } else if (!bindings.source().empty()) {
        error.note("`" + bindings.source() + "` does not bind `" + info.path + "`, so it binds to the same name");
      }
      continue;
    }
    if (!record->dtype) {
      problem(std::string(kind) + " " + describe_binding(info.path, name) + " is stored as " + record->format_dtype +
              ", which Linnet has no dtype for")
          .note("expected " + declared);
      continue;
    }
    const bool shape_fits = record->shape == info.shape;
    const bool dtype_fits = loadable_as(*record->dtype, info.dtype, cast_weights);
    if (shape_fits && dtype_fits) continue;
    std::string what;
    if (!shape_fits) what = "shape " + tensor::shape_to_string(record->shape);
    if (!dtype_fits) what += std::string(what.empty() ? "" : " and ") + "dtype " + stored_dtype_text(*record);
    syntax::Diagnostic& error = problem(std::string(kind) + " " + describe_binding(info.path, name) + " has " + what +
                                        ", expected " + declared);
    error.note("the checkpoint holds " + stored_dtype_text(*record) + tensor::shape_to_string(record->shape) +
               " in `" + record->file + "`");
    if (!dtype_fits) {
      if (tensor::is_float(*record->dtype) && tensor::is_float(info.dtype)) {
        error.note("a stored float loads as its own dtype or a wider one; it is narrowed only on request");
        error.with_help("pass --cast-weights to round the stored " + stored_dtype_text(*record) + " values to " +
                        dtype_text(info.dtype) + " (nearest even, as transformers' from_pretrained(dtype=...) does)");
      } else {
        error.note("integer, u8 and bool tensors load only as their own dtype");
      }
    }
  }
  return problems;
}

std::vector<std::string> unbound_tensors(const std::vector<eval::ParameterInfo>& manifest,
                                         const Checkpoint& checkpoint, const Bindings& bindings) {
  std::set<std::string> bound;
  for (const eval::ParameterInfo& info : manifest) {
    if (info.kind != eval::ParameterKind::State) bound.insert(bindings.tensor_for(info.path));
  }
  std::vector<std::string> unbound;
  for (const std::string& name : checkpoint.names()) {
    if (bound.count(name) == 0) unbound.push_back(name);
  }
  return unbound;
}

std::optional<tensor::Tensor> CheckpointParameterSource::fetch(const eval::ParameterRequest& request) {
  const std::string& name = bindings_.tensor_for(request.path);
  if (checkpoint_.find(name) == nullptr) return std::nullopt;
  return load(checkpoint_.get(name), request);  // get() marks it touched
}

std::optional<WeightPlacement> weight_placement_from_name(std::string_view name) {
  if (name == "map") return WeightPlacement::Map;
  if (name == "packed") return WeightPlacement::Packed;
  if (name == "copy") return WeightPlacement::Copy;
  return std::nullopt;
}

std::string_view weight_placement_name(WeightPlacement placement) {
  switch (placement) {
    case WeightPlacement::Map:
      return "map";
    case WeightPlacement::Packed:
      return "packed";
    case WeightPlacement::Copy:
      return "copy";
  }
  return "packed";
}

std::optional<size_t> CheckpointParameterSource::available_memory() const {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemAvailable:") return kilobytes * 1024;
  }
  return std::nullopt;
}

namespace {

// Whether `placement` copies a tensor stored as `stored` out of the mapping.
bool placed_in_memory(WeightPlacement placement, tensor::DType stored) {
  switch (placement) {
    case WeightPlacement::Map:
      return false;
    case WeightPlacement::Packed:
      return stored == tensor::DType::U8;
    case WeightPlacement::Copy:
      return true;
  }
  return false;
}

// A copy of `bytes` in the process's own memory (tensor storage: 2 MiB
// pages for 4 MiB and more), after which the mapping's pages of it are
// let go, so the resident size does not count the tensor twice. Served
// read-only, as the mapping is: no kernel writes into a parameter.
tensor::Tensor copied_out_of_mapping(tensor::DType dtype, const tensor::Shape& shape,
                                     std::span<const std::byte> bytes) {
  auto copy = std::make_shared<tensor::Tensor>(tensor::Tensor::empty(dtype, shape));
  tensor::populate_mapped_pages(bytes.data(), bytes.size());
  std::memcpy(copy->raw_mutable_data(), bytes.data(), bytes.size());
  tensor::release_mapped_pages(bytes.data(), bytes.size());
  return tensor::Tensor::borrow(dtype, shape, copy->raw_data(), copy);
}

}  // namespace

tensor::Tensor CheckpointParameterSource::load(const TensorRecord& record, const eval::ParameterRequest& request,
                                               bool in_mapping) {
  if (!record.dtype) {
    throw CheckpointError("tensor `" + record.name + "` in `" + record.file + "` is stored as " + record.format_dtype +
                          ", which Linnet has no dtype for");
  }
  const tensor::DType stored = *record.dtype;
  const tensor::Shape shape(record.shape.begin(), record.shape.end());
  const bool widen =
      stored != request.dtype && loadable_as(stored, request.dtype, cast_weights_) && shape == request.shape;
  // Matrices stay bf16 where they are: product and gather kernels read the
  // stored bf16 directly (exact: every bf16 is an f32), and anything else
  // that reads the tensor gets its f32 copy, made on first use.
  const bool widen_on_access =
      widen && stored == tensor::DType::BF16 && request.dtype == tensor::DType::F32 && shape.size() >= 2;
  // Only bytes the run keeps as stored are worth placing: a tensor widened
  // now is a new copy anyway.
  bool place = in_mapping && (!widen || widen_on_access) && placed_in_memory(placement_, stored);
  if (place) {
    const std::optional<size_t> available = available_memory();
    if (available && *available < record.bytes.size() + kPlacementReserve) {
      place = false;
      ++counts_.left_mapped;
      counts_.left_mapped_bytes += record.bytes.size();
    }
  }

  // safetensors places tensors wherever the header ends; kernels read
  // elements through typed pointers, so misaligned bytes are copied first.
  tensor::Tensor stored_tensor;
  if (reinterpret_cast<uintptr_t>(record.bytes.data()) % tensor::dtype_size(stored) != 0) {
    stored_tensor = tensor::Tensor::empty(stored, shape);
    std::memcpy(stored_tensor.raw_mutable_data(), record.bytes.data(), record.bytes.size());
    ++counts_.copied;
    counts_.copied_bytes += record.bytes.size();
  } else if (place) {
    stored_tensor = copied_out_of_mapping(stored, shape, record.bytes);
    if (!widen) {
      ++counts_.placed;
      counts_.placed_bytes += record.bytes.size();
    }
  } else {
    stored_tensor = tensor::Tensor::borrow(stored, shape, record.bytes.data(), record.keep_alive);
    // The packed (u8) MXFP4 experts left in the mapping (--load map): a
    // prompt reads every expert's weights whole, in rows whose parts are
    // far apart, so a 4 KiB mapping costs a page-table walk every few rows
    // (measured on a GPT-OSS prefill, the first part of each expert tile
    // waited ~1,000+ cycles per row on its page, against ~130 in 2 MiB
    // pages: docs/performance.md, "Where an item's decode waits: the expert
    // weights' pages").
    if (stored == tensor::DType::U8) tensor::prefer_huge_pages(record.bytes.data(), record.bytes.size());
    if (!widen) {
      ++counts_.borrowed;
      counts_.borrowed_bytes += record.bytes.size();
    }
  }
  if (!widen) return stored_tensor;
  if (widen_on_access) {
    ++counts_.widen_on_access;
    counts_.widen_on_access_bytes += record.bytes.size();
    return tensor::Tensor::widen_on_access(stored_tensor);
  }
  tensor::Tensor widened = stored_tensor.to(request.dtype);
  tensor::release_mapped_pages(record.bytes.data(), record.bytes.size());
  ++counts_.widened;
  counts_.widened_bytes += static_cast<size_t>(widened.numel()) * widened.element_size();
  return widened;
}

}  // namespace linnet::nest
