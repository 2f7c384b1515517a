// .npz archives (zip members "<name>.npy") and the file-level entry points.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "linnet/tensor/npz.hpp"
#include "linnet/syntax/file_reading.hpp"

namespace linnet::tensor {
namespace {

constexpr std::string_view kNpySuffix = ".npy";

std::vector<std::byte> read_whole_file(const std::string& path) {
  // A FIFO would block the read, /dev/zero never end: only regular files.
  if (const syntax::PathProblem problem = syntax::path_problem(path)) {
    throw FormatError(path + ": " + syntax::path_problem_text(problem));
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw FormatError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::streamoff size = in.tellg();
  if (size < 0) throw FormatError(path + ": cannot determine the file size");
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw FormatError(path + ": read failed");
  return bytes;
}

void write_whole_file(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FormatError(path + ": cannot create (" + std::strerror(errno) + ")");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw FormatError(path + ": write failed");
}

}  // namespace

std::map<std::string, NpyArray> parse_npz(std::span<const std::byte> bytes, const std::string& what) {
  std::map<std::string, NpyArray> arrays;
  for (const ZipMember& member : parse_zip(bytes, what)) {
    std::string where = what + ": member '" + member.name + "'";
    if (member.name.size() <= kNpySuffix.size() || !member.name.ends_with(kNpySuffix))
      throw FormatError(where + " is not a .npy array (its name does not end in .npy)");
    std::string key = member.name.substr(0, member.name.size() - kNpySuffix.size());
    // parse_zip already rejects duplicate member names, so keys are unique.
    arrays.emplace(std::move(key), parse_npy(member.bytes, where));
  }
  return arrays;
}

NpyArray read_npy(const std::string& path) { return parse_npy(read_whole_file(path), path); }

std::map<std::string, NpyArray> read_npz(const std::string& path) { return parse_npz(read_whole_file(path), path); }

void write_npy(const std::string& path, const NpyArray& array) { write_whole_file(path, serialize_npy(array)); }

std::vector<std::byte> serialize_npz(const std::map<std::string, NpyArray>& arrays, bool compress) {
  std::vector<ZipMember> members;
  members.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    if (name.empty()) throw std::invalid_argument("an .npz member needs a non-empty name");
    members.push_back(ZipMember{name + std::string(kNpySuffix), serialize_npy(array)});
  }
  return build_zip(members, compress);
}

void write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays, bool compress) {
  write_whole_file(path, serialize_npz(arrays, compress));
}

}  // namespace linnet::tensor
