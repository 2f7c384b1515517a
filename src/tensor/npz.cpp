// .npz archives (zip members "<name>.npy") and the file-level entry points.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "linnet/tensor/npz.hpp"
#include "linnet/syntax/file_reading.hpp"
#include "npz_writing.hpp"

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

void write_npy(const std::string& path, const NpyArray& array) { write_npy(path, view_of(array)); }

// The header, then the array's own bytes: no joined copy.
void write_npy(const std::string& path, const NpyView& array) {
  const std::vector<std::byte> header = detail::npy_header(array);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FormatError(path + ": cannot create (" + std::strerror(errno) + ")");
  out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  out.flush();
  if (!out) throw FormatError(path + ": write failed");
}

namespace {

// Each array as a zip member: its .npy header (kept in `headers`) and then
// its data, straight from where it lies.
std::vector<detail::ZipSource> npz_sources(const std::map<std::string, NpyView>& arrays,
                                           std::vector<std::vector<std::byte>>& headers) {
  std::vector<detail::ZipSource> sources;
  headers.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    if (name.empty()) throw std::invalid_argument("an .npz member needs a non-empty name");
    headers.push_back(detail::npy_header(array));
    sources.push_back({name + std::string(kNpySuffix), {headers.back(), array.data}});
  }
  return sources;
}

std::map<std::string, NpyView> views_of(const std::map<std::string, NpyArray>& arrays) {
  std::map<std::string, NpyView> views;
  for (const auto& [name, array] : arrays) views.emplace(name, view_of(array));
  return views;
}

}  // namespace

std::vector<std::byte> serialize_npz(const std::map<std::string, NpyArray>& arrays, bool compress) {
  std::vector<std::vector<std::byte>> headers;
  const std::vector<detail::ZipSource> sources = npz_sources(views_of(arrays), headers);
  std::vector<std::byte> archive;
  detail::write_zip(sources, compress, false,
                    [&](std::span<const std::byte> piece) { archive.insert(archive.end(), piece.begin(), piece.end()); });
  return archive;
}

void write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays, bool compress) {
  write_npz(path, views_of(arrays), compress);
}

// Written piece by piece: the arrays' bytes go to the file without being
// copied into an archive in memory first.
void write_npz(const std::string& path, const std::map<std::string, NpyView>& arrays, bool compress) {
  std::vector<std::vector<std::byte>> headers;
  const std::vector<detail::ZipSource> sources = npz_sources(arrays, headers);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FormatError(path + ": cannot create (" + std::strerror(errno) + ")");
  detail::write_zip(sources, compress, false, [&](std::span<const std::byte> piece) {
    out.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
  });
  out.flush();
  if (!out) throw FormatError(path + ": write failed");
}

}  // namespace linnet::tensor
