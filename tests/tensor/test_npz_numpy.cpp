// Interoperability with NumPy itself: NumPy loads what we write, we load what
// NumPy writes (Fortran order, big-endian, versions 2.0/3.0, savez and
// savez_compressed), and we read the golden expected.npz files exactly as
// NumPy does. These run only where a python3 with numpy is installed; the
// golden files are read (and must parse) regardless.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "linnet/tensor/npz.hpp"

using namespace linnet::tensor;

namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() / ("linnet-numpy-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::optional<std::string> python_with_numpy() {
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    std::string probe = std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return std::string(candidate);
  }
  return std::nullopt;
}

// Runs a Python script with arguments; true on exit status 0.
bool run_python(const std::string& python, const TempDir& dir, const std::string& script,
                const std::vector<std::string>& arguments) {
  std::string script_path = dir.file("script.py");
  std::ofstream(script_path) << script;
  std::string command = python + " '" + script_path + "'";
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  return std::system(command.c_str()) == 0;
}

// One tab-separated line per array: file, key, dtype.str, shape, hex of C-order little-endian bytes.
struct ManifestLine {
  std::string file, key, descr, shape, hex;
};

std::vector<ManifestLine> read_manifest(const std::string& path) {
  std::vector<ManifestLine> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, '\t')) fields.push_back(field);
    if (fields.size() == 4) fields.push_back("");  // an empty array has no hex
    REQUIRE(fields.size() == 5);
    lines.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return lines;
}

// The Python side of the manifest: loads each file and describes its arrays.
constexpr const char* kDescribeScript = R"PY(
import sys, os, numpy as np
def describe(out, path):
    name = os.path.basename(path)
    if path.endswith('.npz'):
        with np.load(path) as archive:
            items = [(key, archive[key]) for key in archive.files]
    else:
        items = [('', np.load(path))]
    for key, array in items:
        little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder('<'))
        shape = ','.join(str(d) for d in array.shape)
        out.write('%s\t%s\t%s\t%s\t%s\n' % (name, key, little.dtype.str, shape, little.tobytes().hex()))
with open(sys.argv[1], 'w') as out:
    for path in sys.argv[2:]:
        describe(out, path)
)PY";

// Writes NumPy-made files of every kind we claim to read.
constexpr const char* kWriteScript = R"PY(
import sys, os, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
arrays = {
    'b': rng.integers(0, 2, size=(3, 4)).astype(np.bool_),
    'i1': rng.integers(-128, 128, size=(5,), dtype=np.int8),
    'i2': rng.integers(-30000, 30000, size=(2, 2), dtype=np.int16),
    'i4': rng.integers(-2**31, 2**31, size=(7,), dtype=np.int32),
    'i8': rng.integers(-2**62, 2**62, size=(2, 3), dtype=np.int64),
    'u1': rng.integers(0, 256, size=(4,), dtype=np.uint8),
    'u2': rng.integers(0, 65536, size=(3, 2), dtype=np.uint16),
    'u4': rng.integers(0, 2**32, size=(3,), dtype=np.uint32),
    'u8': rng.integers(0, 2**63, size=(2,), dtype=np.uint64),
    'f2': rng.standard_normal((2, 3)).astype(np.float16),
    'f4': rng.standard_normal((4, 5)).astype(np.float32),
    'f8': rng.standard_normal((3,)),
    'scalar': np.array(3.5, dtype=np.float32),
    'empty': np.zeros((0, 3), dtype=np.int16),
}
np.savez(os.path.join(d, 'plain.npz'), **arrays)
np.savez_compressed(os.path.join(d, 'compressed.npz'), **arrays)
np.save(os.path.join(d, 'fortran.npy'), np.asfortranarray(np.arange(60, dtype=np.int32).reshape(3, 4, 5)))
np.save(os.path.join(d, 'bigendian.npy'), (np.arange(12, dtype='>f8') / 7).reshape(3, 4))
np.save(os.path.join(d, 'bigendian_fortran.npy'), np.asfortranarray(np.arange(6, dtype='>u2').reshape(2, 3)))
with open(os.path.join(d, 'v2.npy'), 'wb') as f:
    np.lib.format.write_array(f, arrays['u2'], version=(2, 0))
with open(os.path.join(d, 'v3.npy'), 'wb') as f:
    np.lib.format.write_array(f, arrays['f4'], version=(3, 0))
)PY";

std::string numpy_descr(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "|b1";
    case DType::I8: return "|i1";
    case DType::U8: return "|u1";
    default: break;
  }
  std::string kind = is_float(dtype) ? "f" : is_signed_integer(dtype) ? "i" : "u";
  return "<" + kind + std::to_string(dtype_size(dtype));
}

std::string shape_fields(const std::vector<int64_t>& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text;
}

std::string hex_of(const std::vector<std::byte>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (std::byte b : bytes) {
    text += digits[static_cast<unsigned>(b) >> 4];
    text += digits[static_cast<unsigned>(b) & 15];
  }
  return text;
}

// Checks our reading of every file in the manifest against NumPy's.
void check_against_manifest(const std::vector<ManifestLine>& manifest, const std::map<std::string, std::string>& paths) {
  std::map<std::string, std::map<std::string, NpyArray>> loaded;
  for (const ManifestLine& line : manifest) {
    INFO(line.file << " " << line.key);
    const std::string& path = paths.at(line.file);
    if (!loaded.count(line.file))
      loaded[line.file] = path.ends_with(".npz") ? read_npz(path) : std::map<std::string, NpyArray>{{"", read_npy(path)}};
    REQUIRE(loaded[line.file].count(line.key) == 1);
    const NpyArray& array = loaded[line.file].at(line.key);
    CHECK(numpy_descr(array.dtype) == line.descr);
    CHECK(shape_fields(array.shape) == line.shape);
    CHECK(hex_of(array.data) == line.hex);
  }
}

NpyArray counting_array(DType dtype, std::vector<int64_t> shape) {
  NpyArray array{dtype, std::move(shape), {}};
  array.data.resize(array.element_count() * dtype_size(dtype));
  for (size_t i = 0; i < array.data.size(); ++i)
    array.data[i] = dtype == DType::Bool ? std::byte(i % 2) : std::byte((i * 11 + 3) & 0xFF);
  return array;
}

}  // namespace

TEST_CASE("NumPy loads the npy and npz files we write", "[npz][numpy]") {
  std::optional<std::string> python = python_with_numpy();
  if (!python) {
    // Never a warning and a pass: scripts/setup installs python3-numpy.
    FAIL("python3 with numpy not found (scripts/setup installs python3-numpy); the NumPy check cannot run");
  }
  TempDir dir;
  std::map<std::string, NpyArray> arrays;
  for (DType dtype : kAllDTypes)
    if (dtype != DType::BF16) arrays[std::string(dtype_name(dtype))] = counting_array(dtype, {2, 3});
  arrays["scalar"] = counting_array(DType::F64, {});
  arrays["empty"] = counting_array(DType::I16, {0, 4});
  arrays["long"] = counting_array(DType::F32, {1, 24, 512});
  std::map<std::string, std::string> paths = {{"ours_c.npz", dir.file("ours_c.npz")},
                                              {"ours_s.npz", dir.file("ours_s.npz")},
                                              {"ours.npy", dir.file("ours.npy")}};
  write_npz(paths["ours_c.npz"], arrays, true);
  write_npz(paths["ours_s.npz"], arrays, false);
  write_npy(paths["ours.npy"], arrays["long"]);

  std::string manifest = dir.file("manifest.txt");
  REQUIRE(run_python(*python, dir, kDescribeScript, {manifest, paths["ours_c.npz"], paths["ours_s.npz"], paths["ours.npy"]}));
  std::vector<ManifestLine> lines = read_manifest(manifest);
  CHECK(lines.size() == 2 * arrays.size() + 1);
  for (const ManifestLine& line : lines) {
    INFO(line.file << " " << line.key);
    const NpyArray& written = line.file == "ours.npy" ? arrays["long"] : arrays.at(line.key);
    CHECK(line.descr == numpy_descr(written.dtype));
    CHECK(line.shape == shape_fields(written.shape));
    CHECK(line.hex == hex_of(written.data));
  }
}

TEST_CASE("we load what NumPy writes", "[npz][numpy]") {
  std::optional<std::string> python = python_with_numpy();
  if (!python) {
    // Never a warning and a pass: scripts/setup installs python3-numpy.
    FAIL("python3 with numpy not found (scripts/setup installs python3-numpy); the NumPy check cannot run");
  }
  TempDir dir;
  REQUIRE(run_python(*python, dir, kWriteScript, {dir.file("")}));
  std::map<std::string, std::string> paths;
  for (const char* name : {"plain.npz", "compressed.npz", "fortran.npy", "bigendian.npy", "bigendian_fortran.npy",
                           "v2.npy", "v3.npy"})
    paths[name] = dir.file(name);
  std::vector<std::string> arguments = {dir.file("manifest.txt")};
  for (const auto& entry : paths) arguments.push_back(entry.second);
  REQUIRE(run_python(*python, dir, kDescribeScript, arguments));
  std::vector<ManifestLine> manifest = read_manifest(dir.file("manifest.txt"));
  CHECK(manifest.size() == 2 * 14 + 5);
  check_against_manifest(manifest, paths);
}

TEST_CASE("golden expected.npz files read as NumPy reads them", "[npz][golden]") {
  fs::path golden = fs::path(LINNET_SOURCE_DIR) / "golden";
  std::map<std::string, std::string> paths;
  for (const fs::directory_entry& entry : fs::directory_iterator(golden)) {
    fs::path npz = entry.path() / "expected.npz";
    if (!fs::exists(npz)) continue;
    std::string label = entry.path().filename().string() + ".npz";
    paths[label] = npz.string();
    std::map<std::string, NpyArray> arrays = read_npz(npz.string());  // must parse, NumPy or not
    CHECK(!arrays.empty());
  }
  CHECK(paths.size() == 5);
  std::optional<std::string> python = python_with_numpy();
  if (!python) {
    FAIL("python3 with numpy not found (scripts/setup installs python3-numpy); golden files were not compared");
  }
  TempDir dir;
  // The manifest names files by basename; give each case's file a distinct one.
  std::vector<std::string> arguments = {dir.file("manifest.txt")};
  for (const auto& [label, path] : paths) {
    fs::copy_file(path, dir.file(label));
    arguments.push_back(dir.file(label));
  }
  REQUIRE(run_python(*python, dir, kDescribeScript, arguments));
  std::vector<ManifestLine> manifest = read_manifest(dir.file("manifest.txt"));
  CHECK(manifest.size() >= 20);
  check_against_manifest(manifest, paths);
}
