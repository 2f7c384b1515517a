// A checkpoint: the safetensors files of one model, looked up by tensor name.
//
// Sources:
//   - a single .safetensors file;
//   - a directory with model.safetensors.index.json (Hugging Face sharding:
//     "weight_map" maps tensor name -> shard file in that directory), or else
//     with model.safetensors;
//   - an explicit list of .safetensors files.
// A tensor name may appear in only one file. With an index, the index and the
// shards must agree exactly: every listed tensor is in its shard, and every
// shard tensor is listed for that shard. A missing shard is an error naming
// the shard and the tensors the index places in it.
//
// Tensors are never copied (see safetensors.hpp). The checkpoint records
// which tensors were read: get() and data() mark a tensor "touched", find()
// (a metadata lookup) does not. A run that must not read some tensors (layers
// beyond the ones it runs) can assert that through touched().
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "linnet/nest/safetensors.hpp"

namespace linnet::nest {

class Checkpoint {
 public:
  // A .safetensors file or a directory, as described above.
  static Checkpoint open(const std::string& path);
  static Checkpoint open_files(const std::vector<std::string>& paths);
  // Already opened files (e.g. parsed from memory); `source` names them in messages.
  static Checkpoint from_files(std::vector<SafetensorsFile> files, const std::string& source);

  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  ~Checkpoint();

  // What the checkpoint was opened from, for messages.
  const std::string& source() const { return source_; }

  // Metadata lookup; nullptr when absent. Does not mark the tensor touched.
  const TensorRecord* find(std::string_view name) const;
  // The tensor, marked touched. Throws CheckpointError naming the checkpoint
  // when absent.
  const TensorRecord& get(std::string_view name) const;
  // get(name).bytes
  std::span<const std::byte> data(std::string_view name) const;

  // All tensor names, sorted.
  std::vector<std::string> names() const;
  size_t size() const { return by_name_.size(); }

  // Names passed to get()/data() so far, sorted.
  std::vector<std::string> touched() const;
  bool was_touched(std::string_view name) const;
  void reset_touched();

  const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }

 private:
  Checkpoint() = default;
  void add_file(SafetensorsFile file);

  struct TouchLog {
    std::mutex mutex;
    std::set<std::string, std::less<>> names;
  };

  std::string source_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, const TensorRecord*, std::less<>> by_name_;
  std::unique_ptr<TouchLog> touch_log_ = std::make_unique<TouchLog>();
};

}  // namespace linnet::nest
