// A checkpoint made of one or more safetensors files (see checkpoint.hpp).
#include "linnet/nest/checkpoint.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <simdjson.h>

namespace linnet::nest {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";
constexpr size_t kNamesListedInMessages = 5;

// "a, b, c and 4 more"
std::string name_list(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < kNamesListedInMessages; ++i) {
    if (i) text += ", ";
    text += names[i];
  }
  if (names.size() > kNamesListedInMessages) text += " and " + std::to_string(names.size() - kNamesListedInMessages) + " more";
  return text;
}

// A shard name from an index is a path relative to the checkpoint directory;
// it may not leave that directory.
bool is_safe_shard_name(const std::string& shard) {
  if (shard.empty()) return false;
  fs::path path(shard);
  if (path.is_absolute()) return false;
  for (const fs::path& part : path)
    if (part == "..") return false;
  return true;
}

// weight_map: shard file -> the tensors the index places in it.
std::map<std::string, std::vector<std::string>> read_weight_map(const std::string& index_path) {
  auto fail = [&](const std::string& problem) { return CheckpointError(index_path + ": " + problem); };
  simdjson::padded_string text;
  if (simdjson::padded_string::load(index_path).get(text)) throw fail("cannot read the index file");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(text).get(root))
    throw fail(std::string("is not valid JSON (") + simdjson::error_message(error) + ")");
  simdjson::dom::object weight_map;
  if (root["weight_map"].get_object().get(weight_map)) throw fail("has no 'weight_map' object");
  std::map<std::string, std::vector<std::string>> shards;
  std::set<std::string_view> seen;
  for (simdjson::dom::key_value_pair entry : weight_map) {
    std::string_view shard;
    if (entry.value.get_string().get(shard))
      throw fail("weight_map entry for tensor '" + std::string(entry.key) + "' is not a string");
    if (!seen.insert(entry.key).second) throw fail("weight_map lists tensor '" + std::string(entry.key) + "' twice");
    std::string shard_name(shard);
    if (!is_safe_shard_name(shard_name))
      throw fail("weight_map places tensor '" + std::string(entry.key) + "' in '" + shard_name +
                 "', which is not a file inside the checkpoint directory");
    shards[shard_name].emplace_back(entry.key);
  }
  return shards;
}

}  // namespace

Checkpoint::Checkpoint(Checkpoint&&) noexcept = default;
Checkpoint& Checkpoint::operator=(Checkpoint&&) noexcept = default;
Checkpoint::~Checkpoint() = default;

void Checkpoint::add_file(SafetensorsFile file) {
  auto shared = std::make_shared<const SafetensorsFile>(std::move(file));
  for (const TensorRecord& record : shared->tensors()) {
    auto [existing, inserted] = by_name_.emplace(record.name, &record);
    if (!inserted)
      throw CheckpointError(source_ + ": tensor '" + record.name + "' appears in both " + existing->second->file +
                            " and " + record.file);
  }
  files_.push_back(std::move(shared));
}

Checkpoint Checkpoint::from_files(std::vector<SafetensorsFile> files, const std::string& source) {
  Checkpoint checkpoint;
  checkpoint.source_ = source;
  for (SafetensorsFile& file : files) checkpoint.add_file(std::move(file));
  return checkpoint;
}

Checkpoint Checkpoint::open_files(const std::vector<std::string>& paths) {
  Checkpoint checkpoint;
  for (const std::string& path : paths) checkpoint.source_ += (checkpoint.source_.empty() ? "" : ", ") + path;
  if (paths.empty()) throw CheckpointError("a checkpoint needs at least one safetensors file");
  for (const std::string& path : paths) checkpoint.add_file(SafetensorsFile::open(path));
  return checkpoint;
}

Checkpoint Checkpoint::open(const std::string& path) {
  std::error_code error;
  fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw CheckpointError(path + ": checkpoint not found");
  if (!fs::is_directory(status)) return open_files({path});

  fs::path directory(path);
  fs::path index_path = directory / kIndexName;
  if (!fs::exists(index_path)) {
    fs::path single = directory / kSingleName;
    if (!fs::exists(single))
      throw CheckpointError(path + ": checkpoint directory has neither " + kIndexName + " nor " + kSingleName);
    Checkpoint checkpoint = open_files({single.string()});
    checkpoint.source_ = path;
    return checkpoint;
  }

  std::string index = index_path.string();
  std::map<std::string, std::vector<std::string>> shards = read_weight_map(index);
  // Every shard must be present before any is opened, so that a missing one
  // is reported as such rather than as whatever else goes wrong first.
  for (const auto& [shard, tensors] : shards) {
    fs::path shard_path = directory / shard;
    if (!fs::is_regular_file(shard_path, error))
      throw CheckpointError(index + ": shard '" + shard + "' is missing (" + shard_path.string() + "); it holds " +
                            std::to_string(tensors.size()) + " tensor" + (tensors.size() == 1 ? "" : "s") + ": " +
                            name_list(tensors));
  }

  Checkpoint checkpoint;
  checkpoint.source_ = path;
  std::map<std::string, std::string, std::less<>> shard_of;
  for (const auto& [shard, tensors] : shards)
    for (const std::string& tensor : tensors) shard_of[tensor] = shard;
  for (const auto& [shard, tensors] : shards) {
    SafetensorsFile file = SafetensorsFile::open((directory / shard).string());
    for (const std::string& tensor : tensors)
      if (!file.find(tensor))
        throw CheckpointError(index + ": weight_map places tensor '" + tensor + "' in shard '" + shard +
                              "', which has no such tensor");
    for (const TensorRecord& record : file.tensors()) {
      auto listed = shard_of.find(record.name);
      if (listed == shard_of.end())
        throw CheckpointError(index + ": shard '" + shard + "' holds tensor '" + record.name +
                              "', which weight_map does not list");
      if (listed->second != shard)
        throw CheckpointError(index + ": shard '" + shard + "' holds tensor '" + record.name +
                              "', which weight_map places in '" + listed->second + "'");
    }
    checkpoint.add_file(std::move(file));
  }
  return checkpoint;
}

const TensorRecord* Checkpoint::find(std::string_view name) const {
  auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : found->second;
}

const TensorRecord& Checkpoint::get(std::string_view name) const {
  const TensorRecord* record = find(name);
  if (!record) throw CheckpointError(source_ + ": no tensor named '" + std::string(name) + "'");
  std::lock_guard lock(touch_log_->mutex);
  touch_log_->names.emplace(name);
  return *record;
}

std::span<const std::byte> Checkpoint::data(std::string_view name) const { return get(name).bytes; }

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  names.reserve(by_name_.size());
  for (const auto& entry : by_name_) names.push_back(entry.first);
  return names;
}

std::vector<std::string> Checkpoint::touched() const {
  std::lock_guard lock(touch_log_->mutex);
  return {touch_log_->names.begin(), touch_log_->names.end()};
}

bool Checkpoint::was_touched(std::string_view name) const {
  std::lock_guard lock(touch_log_->mutex);
  return touch_log_->names.contains(name);
}

void Checkpoint::reset_touched() {
  std::lock_guard lock(touch_log_->mutex);
  touch_log_->names.clear();
}

}  // namespace linnet::nest
