// Hostile `spec-test` folders: malformed manifests exit 2 with the defect
// named at its position, cases that cannot pass exit 1 with a FAIL line,
// and nothing crashes, hangs or prints a C++ exception.
#include "cli_test_util.hpp"

using namespace cli_test;

namespace {

const char* const kGood = "module good\n\npub fn f(x: f32) -> f32 {\n    return x\n}\n";

struct ManifestCase {
  const char* name;
  std::string manifest;
  int status;
  const char* message;  // in stderr (status 2) or stdout (status 1)
};

Outcome spec_test(const ScratchDir& dir) { return run_linnet({"spec-test", "--no-progress", dir.file("spec")}); }

void expect_clean(const Outcome& outcome) {
  // No C++ exception text, no crash.
  CHECK_FALSE(contains(outcome.err, "terminate called"));
  CHECK_FALSE(contains(outcome.err, "what():"));
  CHECK_FALSE(contains(outcome.err, "std::"));
  CHECK((outcome.status == 0 || outcome.status == 1 || outcome.status == 2));
}

}  // namespace

TEST_CASE("spec-test reports a malformed manifest at its position and exits 2", "[spec-test][hostile]") {
  const std::string case_ok = "[[case]]\nfile = \"good.linnet\"\nexpect = \"ok\"\n";
  const std::vector<ManifestCase> cases = {
      {"case is not an array", "case = 5\n", 2, "manifest.toml:1:8: `case` must be an array of tables"},
      {"a case is not a table", "case = [1, 2]\n", 2, "each `case` must be a table"},
      {"no case at all", "version = 1\n", 2, "lists no [[case]]"},
      {"an empty case list", "case = []\n", 2, "`case` lists no case"},
      {"file of the wrong type", "[[case]]\nfile = 5\nexpect = \"ok\"\n", 2, "manifest.toml:2:8: `file` must be a string"},
      {"expect of the wrong type", "[[case]]\nfile = \"good.linnet\"\nexpect = true\n", 2, "`expect` must be a string"},
      {"a misspelled key", "[[case]]\nfiel = \"good.linnet\"\nexpect = \"ok\"\n", 2, "unknown key `fiel` in a [[case]]"},
      {"a missing file key", "[[case]]\nexpect = \"ok\"\n", 2, "a [[case]] without `file`"},
      {"an unknown expectation", "[[case]]\nfile = \"good.linnet\"\nexpect = \"maybe\"\n", 2,
       "`expect` must be \"ok\" or \"error\""},
      {"an error case without a code", "[[case]]\nfile = \"good.linnet\"\nexpect = \"error\"\n", 2,
       "an error case needs the `code` it expects"},
      {"a code that is no code", "[[case]]\nfile = \"good.linnet\"\nexpect = \"error\"\ncode = \"banana\"\n", 2,
       "`code` must be a diagnostic code"},
      {"a huge code", "[[case]]\nfile = \"good.linnet\"\nexpect = \"error\"\ncode = \"E" + std::string(100000, '1') + "\"\n",
       2, "`code` must be a diagnostic code"},
      {"a path escaping the folder", "[[case]]\nfile = \"../../etc/passwd\"\nexpect = \"ok\"\n", 2,
       "`file` must be a path inside"},
      {"an absolute path", "[[case]]\nfile = \"/etc/passwd\"\nexpect = \"ok\"\n", 2, "`file` must be a path inside"},
      {"a file listed twice", case_ok + case_ok, 2, "`good.linnet` is listed twice"},
      {"a negative version", "version = -1\n" + case_ok, 2, "`version` must be the integer 1"},
      {"a huge version", "version = 99999999999999999999\n" + case_ok, 2, "not valid TOML"},
      {"an unknown top-level key", "verison = 1\n" + case_ok, 2, "did you mean `version`?"},
      {"binary garbage", std::string("\x00\xff\xfe[[case\x01\x02", 11), 2, "not valid TOML"},
      {"deep nesting", "case = " + std::string(5000, '[') + std::string(5000, ']') + "\n", 2, "manifest.toml"},
      {"a file that is not there", "[[case]]\nfile = \"missing.linnet\"\nexpect = \"ok\"\n", 1,
       "FAIL missing.linnet: no such file"},
      {"a file that is a folder", "[[case]]\nfile = \"folder.linnet\"\nexpect = \"ok\"\n", 1,
       "FAIL folder.linnet: not a regular file"},
      {"a binary source file", "[[case]]\nfile = \"garbage.linnet\"\nexpect = \"ok\"\n", 1, "FAIL garbage.linnet"},
  };
  for (const ManifestCase& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScratchDir dir;
      dir.write("spec/manifest.toml", c.manifest);
      dir.write("spec/good.linnet", kGood);
      dir.write("spec/garbage.linnet", std::string("\x7f" "ELF\x00\x01\xff", 7));
      std::filesystem::create_directories(dir.file("spec/folder.linnet"));
      const Outcome outcome = spec_test(dir);
      INFO(outcome.out << outcome.err);
      expect_clean(outcome);
      CHECK(outcome.status == c.status);
      CHECK(contains(c.status == 2 ? outcome.err : outcome.out, c.message));
    }
  }
}

TEST_CASE("spec-test fails a snapshot that is a folder; files that import each other end cleanly", "[spec-test][hostile]") {
  ScratchDir dir;
  dir.write("spec/manifest.toml", "[[case]]\nfile = \"a.linnet\"\nexpect = \"error\"\ncode = \"E1204\"\n");
  dir.write("spec/a.linnet", "module a\n\nuse b::{g}\n\npub fn f(x: f32) -> f32 {\n    return g(x)\n}\n");
  dir.write("spec/b.linnet", "module b\n\nuse a::{f}\n\npub fn g(x: f32) -> f32 {\n    return f(x)\n}\n");
  std::filesystem::create_directories(dir.file("spec/diagnostics/a.stderr"));
  const Outcome outcome = spec_test(dir);
  INFO(outcome.out << outcome.err);
  expect_clean(outcome);
  CHECK(outcome.status == 1);
  CHECK(contains(outcome.out, "a.stderr (not a regular file)"));
}
