// Binding a checkpoint's tensors to a model's parameters (spec chapter 10).
//
// bindings.json maps canonical parameter paths (`layers.0.attention.q_proj.weight`)
// to tensor names (`model.layers.0.self_attn.q_proj.weight`); a path it
// does not map binds to the tensor of the same name. Paths of layers a
// truncated run does not instantiate are simply never asked for.
//
// A stored tensor loads as the declared dtype when it is that dtype (the
// mapped bytes are borrowed, or copied as they are where WeightPlacement
// says so) or a float that widens exactly to it
// (bf16 or f16 to f32 or f64, f32 to f64: an owned copy). Integer, u8 and
// bool tensors never change type, and nothing narrows.
//
// check_parameters compares the whole manifest with the checkpoint before
// anything is instantiated, so that every problem is reported at once;
// CheckpointParameterSource then serves the interpreter's requests.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/eval/parameters.hpp"
#include "linnet/nest/checkpoint.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/source.hpp"
#include "linnet/tensor/dtype.hpp"

namespace linnet::nest {

class Bindings {
 public:
  Bindings() = default;  // every path binds to the tensor of its own name
  explicit Bindings(std::map<std::string, std::string> tensor_by_path, std::string source = "")
      : tensor_by_path_(std::move(tensor_by_path)), source_(std::move(source)) {}

  // The tensor name `path` binds to.
  const std::string& tensor_for(const std::string& path) const;
  bool maps(const std::string& path) const { return tensor_by_path_.count(path) != 0; }
  size_t size() const { return tensor_by_path_.size(); }
  const std::map<std::string, std::string>& entries() const { return tensor_by_path_; }
  // The file read, for messages; empty for identity bindings.
  const std::string& source() const { return source_; }

  // Where each parameter path is written in the file (its quoted key), when
  // it was read with positions (read_bindings with a SourceManager).
  void set_key_spans(std::map<std::string, syntax::Span> spans) { key_spans_ = std::move(spans); }
  // The key's span, or an empty Span.
  syntax::Span key_span(const std::string& path) const {
    const auto found = key_spans_.find(path);
    return found == key_spans_.end() ? syntax::Span{} : found->second;
  }

 private:
  std::map<std::string, std::string> tensor_by_path_;
  std::string source_;
  std::map<std::string, syntax::Span> key_spans_;
};

// Reads a bindings.json: one flat object of strings. Reports E5001 (a file
// that cannot be read, is not JSON, is not a flat object of strings, or
// repeats a path) and returns nothing.
std::optional<Bindings> read_bindings(const std::string& path, syntax::Diagnostics& diagnostics);
// The same with the file added to `sources`, so that a defect is reported
// at its line and column (bindings_json.cpp).
std::optional<Bindings> read_bindings(const std::string& path, syntax::SourceManager& sources,
                                      syntax::Diagnostics& diagnostics);
// The same from text; `name` stands for the file in messages.
std::optional<Bindings> parse_bindings(std::string_view json, const std::string& name,
                                       syntax::Diagnostics& diagnostics);

// Whether a tensor stored as `stored` may stand for a parameter declared
// `declared`: the same dtype, or a float that widens exactly; with
// `cast_weights`, any float for any float (narrowing rounds to nearest
// even, as transformers' `from_pretrained(dtype=...)` does).
bool loadable_as(tensor::DType stored, tensor::DType declared, bool cast_weights = false);

// Every problem binding `manifest` (param and buffer entries; states are
// the model's own) to `checkpoint`, one E6003 diagnostic each: a required
// tensor missing, a present tensor (required or optional) of another shape,
// of a dtype that does not load as the declared one, or of a dtype Linnet
// has none for. Reads only metadata: no tensor is touched.
// A float stored wider than declared gets a help line naming --cast-weights.
std::vector<syntax::Diagnostic> check_parameters(const std::vector<eval::ParameterInfo>& manifest,
                                                 const Checkpoint& checkpoint, const Bindings& bindings,
                                                 bool cast_weights = false);

// The checkpoint's tensors that no entry of `manifest` binds, sorted.
std::vector<std::string> unbound_tensors(const std::vector<eval::ParameterInfo>& manifest,
                                         const Checkpoint& checkpoint, const Bindings& bindings);

// Where the tensors a source serves as stored live (`--load`):
//  - Map: read in place from the checkpoint file's mapping; nothing is
//    copied, a run starts at once, and the pages are the page cache's,
//    which the kernel may drop and read again;
//  - Packed: the packed u8 tensors (MXFP4 experts' blocks and scales, which
//    a prompt reads whole) are copied into the process's own memory at
//    load, in 2 MiB pages where the kernel grants them; the rest is mapped.
//    On a host that translates the file's 4 KiB pages slowly this is what
//    the expert products wait on (docs/performance.md, "Packed weights in
//    the process's memory");
//  - Copy: every tensor copied: the steadiest products, and the most
//    memory (a table read a row at a time, like an embedding, is copied
//    whole).
enum class WeightPlacement { Map, Packed, Copy };

// "map", "packed" or "copy"; nothing for any other name.
std::optional<WeightPlacement> weight_placement_from_name(std::string_view name);
std::string_view weight_placement_name(WeightPlacement placement);

// What a source did, for `--stats` and the tests.
struct LoadCounts {
  size_t borrowed = 0;        // tensors served straight from the mapping
  size_t borrowed_bytes = 0;
  size_t widened = 0;         // tensors converted to another float (owned copies): wider, or narrower with cast_weights
  size_t widened_bytes = 0;   // bytes of the copies
  size_t widen_on_access = 0;        // bf16 matrices kept as stored, read as f32 (Tensor::widen_on_access)
  size_t widen_on_access_bytes = 0;  // their stored bytes
  size_t copied = 0;          // tensors copied because their bytes were misaligned
  size_t copied_bytes = 0;
  size_t placed = 0;          // tensors copied into the process's memory by WeightPlacement
  size_t placed_bytes = 0;
  size_t left_mapped = 0;     // tensors the placement would copy, left mapped for want of free memory
  size_t left_mapped_bytes = 0;
  // Running across processes (shards.hpp): tensors of which this process
  // binds one part, and the bytes of the parts copied out of the mapping
  // (a part along a later axis is not contiguous there).
  size_t split = 0;
  size_t split_copied_bytes = 0;
};

class CheckpointParameterSource : public eval::ParameterSource {
 public:
  // Both must outlive the source (the tensors it returns keep the mapping
  // alive on their own).
  // `cast_weights`: convert any stored float to the declared float
  // (loadable_as), not only a narrower one to a wider. `placement`: which
  // tensors kept as stored are copied out of the mapping.
  CheckpointParameterSource(const Checkpoint& checkpoint, const Bindings& bindings, bool cast_weights = false,
                            WeightPlacement placement = WeightPlacement::Packed)
      : checkpoint_(checkpoint), bindings_(bindings), cast_weights_(cast_weights), placement_(placement) {}

  // The bound tensor (marked touched in the checkpoint), or nothing when the
  // checkpoint has none. A tensor whose shape or dtype does not fit is
  // returned as stored, for the interpreter to report; one of a dtype Linnet
  // has none for throws CheckpointError.
  std::optional<tensor::Tensor> fetch(const eval::ParameterRequest& request) override;

  const LoadCounts& counts() const { return counts_; }

  // The memory the system can still give (Linux's MemAvailable: free
  // memory and the page cache it may drop), or nothing where unknown. A
  // tensor the placement would copy stays mapped when its copy would leave
  // less than kPlacementReserve of it: a copy larger than the machine's
  // memory would end the process in the kernel's out-of-memory kill, where
  // the mapping lets the kernel read pages again as they are needed.
  virtual std::optional<size_t> available_memory() const;
  static constexpr size_t kPlacementReserve = size_t{1} << 30;

 protected:
  // `record`'s tensor as `request` asks for it: borrowed from the mapping,
  // copied when misaligned or when the placement says so, widened where
  // loadable_as allows. `record` may also describe a part of a stored
  // tensor (shards.hpp); `in_mapping` is false when its bytes are already a
  // private copy, which the placement then leaves as it is.
  tensor::Tensor load(const TensorRecord& record, const eval::ParameterRequest& request, bool in_mapping = true);

  const Checkpoint& checkpoint_;
  const Bindings& bindings_;
  bool cast_weights_ = false;
  WeightPlacement placement_ = WeightPlacement::Packed;
  LoadCounts counts_;
};

}  // namespace linnet::nest
