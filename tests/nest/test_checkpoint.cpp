// Checkpoints: single files, directories, sharded indexes, explicit lists,
// and the record of which tensors were read.
#include <catch2/catch.hpp>

#include <optional>

#include "linnet/nest/checkpoint.hpp"
#include "safetensors_builder.hpp"

using namespace linnet::nest;
using namespace linnet::nest::testing;
using Catch::Matchers::Contains;

namespace {

std::optional<std::string> error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const CheckpointError& error) {
    return std::string(error.what());
  }
  return std::nullopt;
}

// Two shards and the index that maps their tensors.
struct ShardedCheckpoint {
  TempDir dir;
  ShardedCheckpoint() {
    dir.write("model-00001-of-00002.safetensors",
              well_formed({{"embed", "BF16", {4, 2}, counting_bytes(16, 1)}, {"layer0.w", "F32", {2}, counting_bytes(8, 2)}}));
    dir.write("model-00002-of-00002.safetensors",
              well_formed({{"layer1.w", "F32", {2}, counting_bytes(8, 3)}, {"norm", "BF16", {2}, counting_bytes(4, 4)},
                           {"head", "BF16", {4, 2}, counting_bytes(16, 5)}}));
    write_index(R"({"embed":"model-00001-of-00002.safetensors","layer0.w":"model-00001-of-00002.safetensors",)"
                R"("layer1.w":"model-00002-of-00002.safetensors","norm":"model-00002-of-00002.safetensors",)"
                R"("head":"model-00002-of-00002.safetensors"})");
  }
  void write_index(const std::string& weight_map) const {
    dir.write_text("model.safetensors.index.json", R"({"metadata":{"total_size":52},"weight_map":)" + weight_map + "}");
  }
};

}  // namespace

TEST_CASE("a single file is a checkpoint", "[checkpoint]") {
  TempDir dir;
  std::string path = dir.write("weights.safetensors", well_formed({{"a", "U8", {3}, counting_bytes(3)}, {"b", "I32", {1}, counting_bytes(4)}}));
  Checkpoint checkpoint = Checkpoint::open(path);
  CHECK(checkpoint.source() == path);
  CHECK(checkpoint.names() == std::vector<std::string>{"a", "b"});
  CHECK(checkpoint.size() == 2);
  CHECK(checkpoint.files().size() == 1);
  REQUIRE(checkpoint.find("a") != nullptr);
  CHECK(checkpoint.find("a")->shape == std::vector<int64_t>{3});
  CHECK(checkpoint.find("zzz") == nullptr);
}

TEST_CASE("a directory with model.safetensors is a checkpoint", "[checkpoint]") {
  TempDir dir;
  dir.write("model.safetensors", well_formed({{"w", "F32", {2, 2}, counting_bytes(16)}}));
  Checkpoint checkpoint = Checkpoint::open(dir.path());
  CHECK(checkpoint.source() == dir.path());
  CHECK(checkpoint.names() == std::vector<std::string>{"w"});
}

TEST_CASE("a sharded directory follows its index", "[checkpoint]") {
  ShardedCheckpoint sharded;
  Checkpoint checkpoint = Checkpoint::open(sharded.dir.path());
  CHECK(checkpoint.files().size() == 2);
  CHECK(checkpoint.names() == std::vector<std::string>{"embed", "head", "layer0.w", "layer1.w", "norm"});
  CHECK_THAT(checkpoint.find("head")->file, Contains("model-00002-of-00002.safetensors"));
  CHECK(std::vector<std::byte>(checkpoint.data("layer1.w").begin(), checkpoint.data("layer1.w").end()) ==
        counting_bytes(8, 3));
}

TEST_CASE("get and data mark tensors touched, find does not", "[checkpoint]") {
  ShardedCheckpoint sharded;
  Checkpoint checkpoint = Checkpoint::open(sharded.dir.path());
  CHECK(checkpoint.touched().empty());
  checkpoint.find("layer1.w");
  checkpoint.find("norm");
  CHECK(checkpoint.touched().empty());
  checkpoint.get("layer0.w");
  checkpoint.data("embed");
  checkpoint.data("embed");
  CHECK(checkpoint.touched() == std::vector<std::string>{"embed", "layer0.w"});
  CHECK(checkpoint.was_touched("embed"));
  CHECK_FALSE(checkpoint.was_touched("layer1.w"));
  // A failed lookup touches nothing.
  std::optional<std::string> missing = error_of([&] { checkpoint.get("layer2.w"); });
  REQUIRE(missing.has_value());
  CHECK_THAT(*missing, Contains(sharded.dir.path()) && Contains("no tensor named 'layer2.w'"));
  CHECK(checkpoint.touched().size() == 2);
  checkpoint.reset_touched();
  CHECK(checkpoint.touched().empty());
  // The record survives moving the checkpoint.
  Checkpoint moved = std::move(checkpoint);
  moved.get("norm");
  CHECK(moved.touched() == std::vector<std::string>{"norm"});
}

TEST_CASE("a missing shard names the shard and the tensors it holds", "[checkpoint][malformed]") {
  ShardedCheckpoint sharded;
  std::filesystem::remove(sharded.dir.file("model-00002-of-00002.safetensors"));
  std::optional<std::string> error = error_of([&] { Checkpoint::open(sharded.dir.path()); });
  REQUIRE(error.has_value());
  CHECK_THAT(*error, Contains("model.safetensors.index.json") && Contains("shard 'model-00002-of-00002.safetensors' is missing") &&
                         Contains("3 tensors") && Contains("head") && Contains("layer1.w") && Contains("norm"));
}

TEST_CASE("index and shards must agree", "[checkpoint][malformed]") {
  ShardedCheckpoint sharded;
  // The index places a tensor in a shard that lacks it.
  sharded.write_index(R"({"embed":"model-00001-of-00002.safetensors","layer0.w":"model-00001-of-00002.safetensors",)"
                      R"("layer1.w":"model-00002-of-00002.safetensors","norm":"model-00002-of-00002.safetensors",)"
                      R"("head":"model-00002-of-00002.safetensors","extra":"model-00001-of-00002.safetensors"})");
  std::optional<std::string> absent = error_of([&] { Checkpoint::open(sharded.dir.path()); });
  REQUIRE(absent.has_value());
  CHECK_THAT(*absent, Contains("tensor 'extra'") && Contains("shard 'model-00001-of-00002.safetensors'") &&
                          Contains("has no such tensor"));

  // A shard holds a tensor the index does not list.
  sharded.write_index(R"({"embed":"model-00001-of-00002.safetensors","layer0.w":"model-00001-of-00002.safetensors",)"
                      R"("layer1.w":"model-00002-of-00002.safetensors","norm":"model-00002-of-00002.safetensors"})");
  std::optional<std::string> unlisted = error_of([&] { Checkpoint::open(sharded.dir.path()); });
  REQUIRE(unlisted.has_value());
  CHECK_THAT(*unlisted, Contains("holds tensor 'head'") && Contains("does not list"));

  // The index places a tensor in the other shard.
  sharded.write_index(R"({"embed":"model-00001-of-00002.safetensors","layer0.w":"model-00002-of-00002.safetensors",)"
                      R"("layer1.w":"model-00002-of-00002.safetensors","norm":"model-00002-of-00002.safetensors",)"
                      R"("head":"model-00002-of-00002.safetensors"})");
  std::optional<std::string> misplaced = error_of([&] { Checkpoint::open(sharded.dir.path()); });
  REQUIRE(misplaced.has_value());
  CHECK_THAT(*misplaced, Contains("layer0.w"));
}

TEST_CASE("malformed indexes are rejected", "[checkpoint][malformed]") {
  ShardedCheckpoint sharded;
  auto open_error = [&](const std::string& index_text) {
    sharded.dir.write_text("model.safetensors.index.json", index_text);
    std::optional<std::string> error = error_of([&] { Checkpoint::open(sharded.dir.path()); });
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Contains("model.safetensors.index.json"));
    return *error;
  };
  CHECK_THAT(open_error("{\"weight_map\": {"), Contains("not valid JSON"));
  CHECK_THAT(open_error(R"({"metadata":{}})"), Contains("no 'weight_map' object"));
  CHECK_THAT(open_error(R"({"weight_map":{"a":3}})"), Contains("tensor 'a'") && Contains("not a string"));
  CHECK_THAT(open_error(R"({"weight_map":{"a":"../outside.safetensors"}})"), Contains("not a file inside"));
  CHECK_THAT(open_error(R"({"weight_map":{"a":"/etc/passwd"}})"), Contains("not a file inside"));
  CHECK_THAT(open_error(R"({"weight_map":{"a":"x.safetensors","a":"x.safetensors"}})"), Contains("lists tensor 'a' twice"));
}

TEST_CASE("a bad shard is reported with its own path", "[checkpoint][malformed]") {
  ShardedCheckpoint sharded;
  sharded.dir.write("model-00002-of-00002.safetensors", zero_bytes(0));
  std::optional<std::string> error = error_of([&] { Checkpoint::open(sharded.dir.path()); });
  REQUIRE(error.has_value());
  CHECK_THAT(*error, Contains("model-00002-of-00002.safetensors") && Contains("file is empty"));
}

TEST_CASE("explicit file lists and duplicate tensors", "[checkpoint]") {
  TempDir dir;
  std::string first = dir.write("a.safetensors", well_formed({{"x", "U8", {1}, counting_bytes(1)}}));
  std::string second = dir.write("b.safetensors", well_formed({{"y", "U8", {2}, counting_bytes(2)}}));
  std::string clash = dir.write("c.safetensors", well_formed({{"x", "U8", {3}, counting_bytes(3)}}));
  Checkpoint both = Checkpoint::open_files({first, second});
  CHECK(both.names() == std::vector<std::string>{"x", "y"});
  CHECK_THAT(both.source(), Contains("a.safetensors") && Contains("b.safetensors"));

  std::optional<std::string> duplicate = error_of([&] { Checkpoint::open_files({first, clash}); });
  REQUIRE(duplicate.has_value());
  CHECK_THAT(*duplicate, Contains("tensor 'x' appears in both") && Contains(first) && Contains(clash));
  CHECK(error_of([&] { Checkpoint::open_files({}); }).has_value());

  std::vector<SafetensorsFile> files;
  files.push_back(SafetensorsFile::from_bytes(well_formed({{"m", "F32", {1}, counting_bytes(4)}}), "memory"));
  Checkpoint in_memory = Checkpoint::from_files(std::move(files), "memory checkpoint");
  CHECK(in_memory.find("m") != nullptr);
}

TEST_CASE("paths that are not checkpoints", "[checkpoint][malformed]") {
  TempDir dir;
  std::optional<std::string> absent = error_of([&] { Checkpoint::open(dir.file("nothing")); });
  REQUIRE(absent.has_value());
  CHECK_THAT(*absent, Contains("nothing") && Contains("not found"));
  std::optional<std::string> empty_dir = error_of([&] { Checkpoint::open(dir.path()); });
  REQUIRE(empty_dir.has_value());
  CHECK_THAT(*empty_dir, Contains("neither model.safetensors.index.json nor model.safetensors"));
}

TEST_CASE("golden mistral-trunc checkpoint holds four layers", "[checkpoint][golden]") {
  Checkpoint checkpoint = Checkpoint::open(std::string(LINNET_SOURCE_DIR) + "/golden/mistral-trunc");
  for (int layer = 0; layer < 4; ++layer)
    CHECK(checkpoint.find("model.layers." + std::to_string(layer) + ".mlp.down_proj.weight") != nullptr);
  CHECK(checkpoint.touched().empty());
}
