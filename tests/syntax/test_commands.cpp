// `linnet check` and `linnet inspect`, run as the built executable on small
// files in a temporary directory: exit statuses (0 clean, 1 input errors,
// 2 bad command line), text diagnostics on stderr, JSON on stdout.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

class Workspace {
 public:
  Workspace() {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("linnet-command-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~Workspace() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  std::string write(const std::string& relative, const std::string& text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string path(const std::string& relative) const { return (root_ / relative).string(); }

 private:
  fs::path root_;
};

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs `linnet <arguments>` with an empty standard library directory.
Run linnet(const Workspace& workspace, const std::string& arguments) {
  REQUIRE(fs::exists(LINNET_BINARY));
  fs::create_directories(workspace.path("std"));
  const std::string out = workspace.path("stdout.txt");
  const std::string err = workspace.path("stderr.txt");
  const std::string command = std::string("'") + LINNET_BINARY + "' --std '" + workspace.path("std") + "' " +
                              arguments + " >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(command.c_str());
  Run run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

}  // namespace

TEST_CASE("linnet check: a clean file exits 0 and prints only the summary line", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("ok.linnet", "module ok\npub fn f(x: f32) -> f32 {\n    return x\n}\n");
  const Run run = linnet(workspace, "check '" + file + "'");
  CHECK(run.status == 0);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with("checked "));
  CHECK(run.err.ends_with(": 0 errors, 0 warnings\n"));
}

TEST_CASE("linnet check: errors exit 1 with text on stderr", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("bad.linnet", "module bad\nuse std.nn.linear::{Linear}\nfn f( {}\n");
  const Run run = linnet(workspace, "check '" + file + "'");
  CHECK(run.status == 1);
  CHECK(run.out.empty());
  CHECK(run.err.find("error E1101: unclosed delimiter `(`") != std::string::npos);
  CHECK(run.err.find("error E1202: cannot find module `std.nn.linear`") != std::string::npos);
  CHECK(run.err.find("bad.linnet:3:5") != std::string::npos);
}

TEST_CASE("linnet check --json prints one document on stdout", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("bad.linnet", "module bad\nconst X = 007\n");
  const Run run = linnet(workspace, "check --json '" + file + "'");
  CHECK(run.status == 1);
  CHECK(run.err.empty());
  CHECK(run.out.find("\"version\": 1") != std::string::npos);
  CHECK(run.out.find("\"code\": \"E1005\"") != std::string::npos);
  CHECK(run.out.find("\"start\": {\"line\": 2, \"column\": 11, \"offset\": 21}") != std::string::npos);
  CHECK(run.out.find("\"summary\": {\"errors\": 1, \"warnings\": 0}") != std::string::npos);

  const std::string clean = workspace.write("clean.linnet", "module clean\n");
  const Run ok = linnet(workspace, "check --json --strict '" + clean + "'");
  CHECK(ok.status == 0);
  CHECK(ok.out.find("\"summary\": {\"errors\": 0, \"warnings\": 0}") != std::string::npos);
}

TEST_CASE("linnet check: packages, folders, and a bad command line", "[syntax][commands]") {
  Workspace workspace;
  workspace.write("pkg/linnet.toml", "[package]\nname = \"pkg\"\nversion = \"0.1.0\"\nlanguage = \"0.1\"\n");
  workspace.write("pkg/src/lib.linnet",
                  "module pkg\nuse crate.a::{f}\npub fn g(x: f32) -> f32 {\n    return f(x)\n}\n");
  workspace.write("pkg/src/a.linnet", "module pkg.a\npub fn f(x: f32) -> f32 {\n    return x\n}\n");
  workspace.write("more/x/y.linnet", "module y\n");
  const Run run = linnet(workspace, "check '" + workspace.path("pkg") + "' '" + workspace.path("more") + "'");
  CHECK(run.status == 0);
  CHECK(run.err.ends_with(": 0 errors, 0 warnings\n"));

  // A warning (here W1001, an unused import) fails only with --strict.
  workspace.write("lint/linnet.toml", "[package]\nname = \"lint\"\nversion = \"0.1.0\"\nlanguage = \"0.1\"\n");
  workspace.write("lint/src/lib.linnet", "module lint\nuse crate.a::{f}\n");
  workspace.write("lint/src/a.linnet", "module lint.a\npub fn f() {}\n");
  const Run lenient = linnet(workspace, "check '" + workspace.path("lint") + "'");
  CHECK(lenient.status == 0);
  CHECK(lenient.err.find("warning W1001") != std::string::npos);
  CHECK(linnet(workspace, "check --strict '" + workspace.path("lint") + "'").status == 1);

  const Run missing = linnet(workspace, "check '" + workspace.path("no-such-file.linnet") + "'");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("does not exist") != std::string::npos);
  CHECK(linnet(workspace, "check").status == 2);
}

TEST_CASE("linnet inspect --tokens and --ast", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("t.linnet", "module t\nconst N = 1 + 2\n");
  const Run tokens = linnet(workspace, "inspect --tokens '" + file + "'");
  CHECK(tokens.status == 0);
  CHECK(tokens.out.find("1:1-1:7") != std::string::npos);
  CHECK(tokens.out.find("keyword") != std::string::npos);
  CHECK(tokens.out.find("integer literal") != std::string::npos);
  CHECK(tokens.out.find("end of file") != std::string::npos);

  const Run ast = linnet(workspace, "inspect --ast '" + file + "'");
  CHECK(ast.status == 0);
  CHECK(ast.out.find("Const N @2:1-2:16") != std::string::npos);
  CHECK(ast.out.find("    Binary + @2:11-2:16") != std::string::npos);

  const std::string bad = workspace.write("bad.linnet", "module bad\nconst = 1\n");
  const Run broken = linnet(workspace, "inspect --ast '" + bad + "'");
  CHECK(broken.status == 1);
  CHECK(broken.out.find("Const") != std::string::npos);  // the partial tree is still shown
  CHECK(broken.err.find("error E1101") != std::string::npos);

  CHECK(linnet(workspace, "inspect '" + file + "'").status == 2);
  CHECK(linnet(workspace, "inspect --tokens --ast '" + file + "'").status == 2);
}

TEST_CASE("linnet check --verbose lists every fact searched; the summary counts right", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("facts.linnet", R"(module facts

pub fn bad<H: Dim, N: Dim, A: Dim, B: Dim, C: Dim>(x: Tensor[H; f32]) -> Tensor[N, H / N; f32]
where N > 0, A > 0, B > 0, C > 0, A > B {
    return reshape(x, [N, H / N])
}
)");
  const Run brief = linnet(workspace, "check '" + file + "'");
  CHECK(brief.status == 1);
  CHECK(brief.err.find("more (`linnet check --verbose` lists them)") != std::string::npos);
  CHECK(brief.err.find("checked 1 module: 1 error, 0 warnings") != std::string::npos);
  const Run verbose = linnet(workspace, "check --verbose '" + file + "'");
  CHECK(verbose.status == 1);
  CHECK(verbose.err.find("--verbose` lists them") == std::string::npos);
  CHECK(verbose.err.find("`A > B`") != std::string::npos);
}

TEST_CASE("linnet check: an extra `}` is reported once, where the block closes early", "[syntax][commands]") {
  Workspace workspace;
  const std::string file = workspace.write("brace.linnet",
                                           "module brace\n"
                                           "fn f(x: f32) -> f32 {\n"
                                           "    let y = x\n"
                                           "    }\n"
                                           "    return y\n"
                                           "}\n");
  const Run run = linnet(workspace, "check '" + file + "'");
  CHECK(run.status == 1);
  CHECK(run.err.find("error E1101: unexpected closing delimiter `}`") != std::string::npos);
  CHECK(run.err.find("brace.linnet:6:1") != std::string::npos);
  CHECK(run.err.find("...as it matches this one, indented differently") != std::string::npos);
  CHECK(run.err.find("checked 1 module: 1 error, 0 warnings") != std::string::npos);
}
