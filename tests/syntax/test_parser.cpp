// The parser, production by production (spec/grammar.ebnf), with the trees
// printed as S-expressions (parse_helpers.hpp), plus spans, recovery and the
// syntax diagnostics E1004, E1101, E1102, E1103.
#include <catch2/catch.hpp>

#include "parse_helpers.hpp"

using namespace linnet::syntax;
using namespace linnet::syntax::ast;
using namespace linnet::syntax::testing;

namespace {

const FunctionItem& function_at(const Parsed& parsed, size_t index = 0) {
  return parsed.tree->items.at(index)->cast<FunctionItem>();
}

std::string statement_kinds(const Body& body) {
  std::string out;
  for (const StmtPtr& s : body.statements) {
    switch (s->kind) {
      case StmtKind::Let: out += "let "; break;
      case StmtKind::Comprehension: out += "comprehension "; break;
      case StmtKind::Var: out += "var "; break;
      case StmtKind::Assign: out += "assign "; break;
      case StmtKind::Return: out += "return "; break;
      case StmtKind::StaticFor: out += "static-for "; break;
      case StmtKind::While: out += "while "; break;
      case StmtKind::For: out += "for "; break;
      case StmtKind::Yield: out += "yield "; break;
      case StmtKind::Store: out += "store "; break;
      case StmtKind::Error: out += "error "; break;
    }
  }
  return out;
}

}  // namespace

// ------------------------------------------------------------------ module and imports

TEST_CASE("module declaration", "[syntax][parser]") {
  const auto parsed = parse("module models.llama.attention\n");
  CHECK(parsed->diagnostics.all().empty());
  CHECK(join_path(parsed->tree->module_path) == "models.llama.attention");
  CHECK(parsed->slice(parsed->tree->module_span) == "module models.llama.attention");

  const auto missing = parse("fn f() {}\n");
  CHECK(missing->first_code() == "E1102");
  CHECK(missing->first_position() == "1:1");
  // The rest of the file is still parsed.
  CHECK(missing->tree->items.size() == 1);
  CHECK(missing->codes() == std::vector<std::string>{"E1102"});
}

TEST_CASE("use declarations", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "use std.nn::{linear, rms_norm as norm,}\n"
      "use crate.layers.decoder::DecoderLayer\n"
      "use my_dependency.ops\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const auto& uses = parsed->tree->uses;
  REQUIRE(uses.size() == 3);
  CHECK(join_path(uses[0].path) == "std.nn");
  CHECK(uses[0].braced);
  REQUIRE(uses[0].names.size() == 2);
  CHECK(uses[0].names[1].name.text == "rms_norm");
  CHECK(uses[0].names[1].local().text == "norm");
  CHECK(parsed->slice(uses[0].names[1].span) == "rms_norm as norm");
  CHECK(join_path(uses[1].path) == "crate.layers.decoder");
  CHECK_FALSE(uses[1].braced);
  CHECK(uses[1].names.at(0).name.text == "DecoderLayer");
  CHECK(uses[2].imports_module);
  CHECK(uses[2].names.empty());
  CHECK(parsed->slice(uses[2].path_span) == "my_dependency.ops");

  CHECK(parse("module m\nuse self.a::{x}\n")->first_code() == "E1103");
  CHECK(parse("module m\nuse super.a::{x}\n")->first_code() == "E1103");
  CHECK(parse("module m\nuse a.b::*\n")->first_code() == "E1101");
  const auto late = parse("module m\nconst A = 1\nuse a.b\n");
  CHECK(late->first_code() == "E1101");
  CHECK(late->first_position() == "3:1");
  CHECK(late->tree->uses.size() == 1);
}

// ------------------------------------------------------------------ items

TEST_CASE("const and type alias items", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "pub const LIMIT: f32 = 7.0\n"
      "const N = 4\n"
      "type Hidden<B: Dim, S: Dim, H: Dim, T: Float = bf16> =\n"
      "    Tensor[B, S, H; T]\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const auto& limit = parsed->tree->items[0]->cast<ConstItem>();
  CHECK(limit.is_pub);
  CHECK(limit.name.text == "LIMIT");
  CHECK(sexpr(*limit.type) == "f32");
  CHECK(sexpr(*limit.value) == "7.0");
  CHECK(parsed->slice(limit.span) == "pub const LIMIT: f32 = 7.0");
  CHECK(parsed->tree->items[1]->cast<ConstItem>().type == nullptr);
  const auto& alias = parsed->tree->items[2]->cast<TypeAliasItem>();
  REQUIRE(alias.generics.size() == 4);
  CHECK(alias.generics[3].constraint == GenericKind::Float);
  REQUIRE(alias.generics[3].default_value);
  CHECK(sexpr(*alias.generics[3].default_value) == "type:bf16");
  CHECK(sexpr(*alias.type) == "Tensor[B S H; T]");
}

TEST_CASE("struct and enum items", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "struct KVPair<K: DType, V: DType> {\n"
      "    key: K\n"
      "    value: V\n"
      "}\n"
      "enum MaskKind {\n"
      "    None,\n"
      "    Causal,\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const auto& pair = parsed->tree->items[0]->cast<StructItem>();
  REQUIRE(pair.fields.size() == 2);
  CHECK(pair.fields[1].name.text == "value");
  CHECK(sexpr(*pair.fields[1].type) == "V");
  CHECK(parsed->slice(pair.fields[1].span) == "value: V");
  const auto& mask = parsed->tree->items[1]->cast<EnumItem>();
  REQUIRE(mask.variants.size() == 2);
  CHECK(mask.variants[0].text == "None");
  CHECK(mask.variants[1].text == "Causal");

  CHECK(parse("module m\nstruct S {\n a: f32,\n b: f32\n}\n")->first_code() == "E1101");
  CHECK(parse("module m\nenum E { A(i32), B }\n")->first_code() == "E1103");
}

TEST_CASE("fn with generics, parameters, result and where clause", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "/// Rotates half.\n"
      "fn rotate_half<*S: Shape, D: Dim, T: Float>(\n"
      "    x: Tensor[*S, D; T],\n"
      "    eps: f32 = 1e-5,\n"
      ") -> Tensor[*S, D; T]\n"
      "where D % 2 == 0, D > 0, {\n"
      "    return x\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const FunctionItem& f = function_at(*parsed);
  CHECK(f.function == FunctionKind::Fn);
  CHECK(f.doc == "Rotates half.");
  REQUIRE(f.generics.size() == 3);
  CHECK(f.generics[0].is_pack);
  CHECK(f.generics[0].constraint == GenericKind::Shape);
  CHECK(parsed->slice(f.generics[0].span) == "*S: Shape");
  REQUIRE(f.params.size() == 2);
  CHECK(sexpr(*f.params[0].type) == "Tensor[*S D; T]");
  CHECK(sexpr(*f.params[1].default_value) == "1e-5");
  CHECK(sexpr(*f.result) == "Tensor[*S D; T]");
  REQUIRE(f.where.constraints.size() == 2);
  CHECK(sexpr(*f.where.constraints[0]) == "(== (% D 2) 0)");
  CHECK(statement_kinds(f.body) == "return ");

  // A where constraint must be a comparison.
  CHECK(parse("module m\nfn f<N: Dim>() where N + 1 {}\n")->first_code() == "E1101");
  // Unknown generic kinds are rejected with the list of kinds.
  const auto unknown = parse("module m\nfn f<T: Trait>() {}\n");
  CHECK(unknown->first_code() == "E1101");
  CHECK(unknown->first_position() == "2:9");
}

TEST_CASE("op with a kernel binding and a grad clause; entry", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "pub op softmax<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel row_softmax<R, C, 1024>\n"
      "where C > 0 {\n"
      "    return x\n"
      "} grad(y, dy) {\n"
      "    return dy\n"
      "}\n"
      "pub entry forward<B: Dim>(tokens: Tensor[B; i32]) -> Tensor[B; i32] {\n"
      "    return tokens\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const FunctionItem& op = function_at(*parsed);
  CHECK(op.function == FunctionKind::Op);
  REQUIRE(op.kernel);
  CHECK(op.kernel->kernel.text == "row_softmax");
  REQUIRE(op.kernel->generic_args.size() == 3);
  CHECK(sexpr(op.kernel->generic_args[2]) == "1024");
  CHECK(op.where.constraints.size() == 1);
  REQUIRE(op.grad);
  CHECK(op.grad->result.text == "y");
  CHECK(op.grad->gradient.text == "dy");
  CHECK(statement_kinds(op.grad->body) == "return ");
  CHECK(function_at(*parsed, 1).function == FunctionKind::Entry);

  // An op declares its result.
  CHECK(parse("module m\nop f(x: f32) { return x }\n")->first_code() == "E1101");
  // `grad` after a fn parses; the checker rejects it (E2125).
  const auto fn_grad = parse("module m\nfn f(x: f32) -> f32 {\n return x\n} grad(y, dy) {\n return dy\n}\n");
  CHECK(fn_grad->diagnostics.all().empty());
  CHECK(function_at(*fn_grad).grad != nullptr);
  // `grad` elsewhere is an identifier.
  CHECK(parse_body("let grad = 1\nreturn grad")->diagnostics.all().empty());
}

TEST_CASE("kernel with named results, grid and launch hints", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "pub kernel stats<R: Dim, C: Dim, B: Dim>(\n"
      "    x: Tensor[R, C; f32],\n"
      ") -> (total: Tensor[C; f32], top: Tensor[C; f32]) grid((R + B - 1) / B, 1) warps(4) stages(1)\n"
      "where B >= C {\n"
      "    let row = program_id(0)\n"
      "    let v = load(x[row, iota<i32>(B)], true)\n"
      "    atomic_add(total[iota<i32>(B)], v)\n"
      "    store(top[iota<i32>(B)], v, v > 0.0)\n"
      "}\n"
      "kernel single(x: Tensor[4; f32]) -> y: Tensor[4; f32] grid(1) {\n"
      "    store(y[iota<i32>(4)], load(x[iota<i32>(4)]))\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const auto& kernel = parsed->tree->items[0]->cast<KernelItem>();
  CHECK(kernel.results_parenthesized);
  REQUIRE(kernel.results.size() == 2);
  CHECK(kernel.results[1].name.text == "top");
  REQUIRE(kernel.grid.size() == 2);
  CHECK(sexpr(*kernel.grid[0]) == "(/ (- (+ R B) 1) B)");
  REQUIRE(kernel.hints.size() == 2);
  CHECK(kernel.hints[0].name.text == "warps");
  CHECK(sexpr(*kernel.hints[1].value) == "1");
  CHECK(kernel.where.constraints.size() == 1);
  CHECK(statement_kinds(kernel.body) == "let let store store ");
  const auto& add = kernel.body.statements[2]->cast<StoreStmt>();
  CHECK(add.store == StoreKind::AtomicAdd);
  CHECK(add.mask == nullptr);
  const auto& store = kernel.body.statements[3]->cast<StoreStmt>();
  CHECK(store.store == StoreKind::Store);
  CHECK(sexpr(*store.mask) == "(> v 0.0)");
  const auto& single = parsed->tree->items[1]->cast<KernelItem>();
  CHECK_FALSE(single.results_parenthesized);
  CHECK(single.results.size() == 1);

  CHECK(parse("module m\nkernel k(x: f32) -> y: Tensor[4; f32] {\n}\n")->first_code() == "E1101");
}

TEST_CASE("block with members, subs and methods", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "pub block Model<H: Dim, Layers: Dim, T: Float = bf16>\n"
      "where Layers > 0\n"
      "{\n"
      "    param weight: Tensor[H; T]\n"
      "    param bias: Tensor[H; T]? = none\n"
      "    buffer table: Tensor[H; f32]\n"
      "    state cache: Tensor[Layers, H; T]\n"
      "    sub layers: [Layer<H, T>; Layers]\n"
      "    sub pooler: Linear<H, H, T>? = none\n"
      "    const SCALE: f32 = 2.0\n"
      "    pub entry forward(x: Tensor[H; T]) -> Tensor[H; T] {\n"
      "        var y = x\n"
      "        static for layer in layers {\n"
      "            y = layer.forward(y)\n"
      "        }\n"
      "        cache = y\n"
      "        return y\n"
      "    }\n"
      "    fn helper() {}\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const auto& block = parsed->tree->items[0]->cast<BlockItem>();
  CHECK(block.is_pub);
  CHECK(block.where.constraints.size() == 1);
  REQUIRE(block.members.size() == 9);
  const auto& bias = block.members[1]->cast<MemberItem>();
  CHECK(bias.member == MemberKind::Param);
  CHECK(sexpr(*bias.type) == "Tensor[H; T]?");
  CHECK(sexpr(*bias.default_value) == "none");
  CHECK(block.members[2]->cast<MemberItem>().member == MemberKind::Buffer);
  CHECK(block.members[3]->cast<MemberItem>().member == MemberKind::State);
  const auto& layers = block.members[4]->cast<MemberItem>();
  CHECK(layers.member == MemberKind::Sub);
  CHECK(sexpr(*layers.type) == "[Layer<type:H type:T>; Layers]");
  CHECK(sexpr(*block.members[5]->cast<MemberItem>().type) == "Linear<type:H type:H type:T>?");
  CHECK(block.members[6]->kind == ItemKind::Const);
  const auto& forward = block.members[7]->cast<FunctionItem>();
  CHECK(forward.is_pub);
  CHECK(statement_kinds(forward.body) == "var static-for assign return ");
  const auto& loop = forward.body.statements[1]->cast<StaticForStmt>();
  CHECK_FALSE(loop.is_range());
  CHECK(sexpr(*loop.iterable) == "layers");
  CHECK(block.members[8]->cast<FunctionItem>().result == nullptr);

  // Members are not `pub`; the error is at the member keyword.
  const auto pub_param = parse("module m\nblock B {\n    pub param w: Tensor[4; f32]\n}\n");
  CHECK(pub_param->first_code() == "E1101");
  CHECK(pub_param->first_position() == "3:9");
  CHECK(parse("module m\nparam w: Tensor[4; f32]\n")->first_code() == "E1101");
  CHECK(parse("module m\nblock B {\n    state s: Tensor[4; f32] = none\n}\n")->first_code() == "E1101");
  // `param w: T = value` parses; the checker rejects the payload (E4102).
  CHECK(parse("module m\nblock B {\n    param w: f32 = 1.0\n}\n")->diagnostics.all().empty());
}

// ------------------------------------------------------------------ statements

TEST_CASE("let, comprehension, var and assignment", "[syntax][parser]") {
  const auto parsed = parse_body(
      "let q = linear(x, w)\n"
      "let scale: f32 = 0.5\n"
      "let (a, (b, c)) = t\n"
      "let some(v) = o\n"
      "let y[*s, o] = sum[i] x[*s, i] * w[o, i]\n"
      "var count: i32 = 0\n"
      "count = count + 1\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const Body& body = function_at(*parsed).body;
  CHECK(statement_kinds(body) == "let let let let comprehension var assign ");
  CHECK(sexpr(*body.statements[1]->cast<LetStmt>().type) == "f32");
  CHECK(sexpr(*body.statements[2]->cast<LetStmt>().pattern) == "(tuple a (tuple b c))");
  CHECK(sexpr(*body.statements[3]->cast<LetStmt>().pattern) == "(some v)");
  const auto& comprehension = body.statements[4]->cast<ComprehensionStmt>();
  CHECK(comprehension.name.text == "y");
  REQUIRE(comprehension.outputs.size() == 2);
  CHECK(comprehension.outputs[0].is_pack);
  CHECK(comprehension.outputs[0].name.text == "s");
  CHECK(parsed->slice(comprehension.outputs[0].span) == "*s");
  CHECK(sexpr(*comprehension.value) == "(sum [i] (* (index x *s i) (index w o i)))");
  CHECK(sexpr(*body.statements[5]->cast<VarStmt>().type) == "i32");
  CHECK(body.statements[6]->cast<AssignStmt>().target.text == "count");

  CHECK(parse_body("let x 1")->first_code() == "E1101");
  CHECK(parse_body("let y[] = 1")->first_code() == "E1101");
}

TEST_CASE("return, loops, yield", "[syntax][parser]") {
  const auto parsed = parse_body(
      "static for i in 0..Steps {\n"
      "    x = x + cast<f32>(i)\n"
      "}\n"
      "while running && count < MaxNew {\n"
      "    count = count + 1\n"
      "}\n"
      "for t in 0..(K + B - 1) / B {\n"
      "    h = cell(h, t)\n"
      "}\n"
      "let hs = for t in 1..T {\n"
      "    yield h\n"
      "}\n"
      "return\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const Body& body = function_at(*parsed).body;
  CHECK(statement_kinds(body) == "static-for while for let return ");
  const auto& range = body.statements[0]->cast<StaticForStmt>();
  CHECK(range.is_range());
  CHECK(sexpr(*range.iterable) == "0");
  CHECK(sexpr(*range.range_stop) == "Steps");
  CHECK(sexpr(*body.statements[1]->cast<WhileStmt>().condition) == "(&& running (< count MaxNew))");
  const auto& loop = body.statements[2]->cast<ForStmt>().loop;
  CHECK(loop.variable.text == "t");
  CHECK(sexpr(*loop.stop) == "(/ (- (+ K B) 1) B)");
  const auto& scan = body.statements[3]->cast<LetStmt>();
  REQUIRE(scan.value->kind == ExprKind::For);
  CHECK(statement_kinds(scan.value->cast<ForExpr>().loop.body) == "yield ");
  CHECK(body.statements[4]->cast<ReturnStmt>().value == nullptr);

  // A bare `return` followed by another statement does not swallow it.
  const auto bare = parse_body("return\nx = 1");
  CHECK(bare->diagnostics.all().empty());
  CHECK(statement_kinds(function_at(*bare).body) == "return assign ");

  CHECK(parse_body("static x in y {}")->first_code() == "E1101");
  CHECK(parse_body("for i in xs {}")->first_code() == "E1101");
}

TEST_CASE("no expression statements", "[syntax][parser]") {
  const auto parsed = parse_body("f(x)\nlet y = 1");
  CHECK(parsed->codes() == std::vector<std::string>{"E1101"});
  CHECK(parsed->first_position() == "3:1");
  // Recovery: the next statement is parsed.
  CHECK(statement_kinds(function_at(*parsed).body) == "error let ");
  CHECK(parse_body("if c { a } else { b }")->first_code() == "E1101");
  const auto semicolon = parse_body("let a = 1;\nlet b = 2");
  CHECK(semicolon->codes() == std::vector<std::string>{"E1101"});
  CHECK(semicolon->diagnostics.all().front().help.size() == 1);
}

// ------------------------------------------------------------------ expressions

TEST_CASE("binary operator precedence and associativity", "[syntax][parser]") {
  CHECK(expr_of("a || b && c") == "(|| a (&& b c))");
  CHECK(expr_of("a && b == c") == "(&& a (== b c))");
  CHECK(expr_of("a == b < c") == "(== a (< b c))");
  CHECK(expr_of("a < b | c") == "(< a (| b c))");
  CHECK(expr_of("a | b ^ c") == "(| a (^ b c))");
  CHECK(expr_of("a ^ b & c") == "(^ a (& b c))");
  CHECK(expr_of("a & b + c") == "(& a (+ b c))");
  CHECK(expr_of("a + b * c") == "(+ a (* b c))");
  CHECK(expr_of("a - b - c") == "(- (- a b) c)");
  CHECK(expr_of("a / b % c * d") == "(* (% (/ a b) c) d)");
  CHECK(expr_of("(a == b) & (i < n)") == "(& (== a b) (< i n))");
  CHECK(expr_of("mask & (x > 0) | mask ^ (x < 0)") == "(| (& mask (> x 0)) (^ mask (< x 0)))");
  CHECK(expr_of("-a * b") == "(* (- a) b)");
  CHECK(expr_of("!done && -x.y[0] > +z") == "(&& (! done) (> (- (index (. x y) 0)) (+ z)))");
  // One prefix operator at a time.
  CHECK(expr_of("--x") == "ERR:E1101 ");
  CHECK(expr_of("-(-x)") == "(- (- x))");
}

TEST_CASE("a binary operator at the end of a line continues the expression", "[syntax][parser]") {
  const auto parsed = parse_body(
      "let attended =\n"
      "    x + f(y)\n"
      "let own[i, j] =\n"
      "    a[i] == a[j] &&\n"
      "    b[j] <= b[i]\n"
      "return attended +\n"
      "    g(own)\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const Body& body = function_at(*parsed).body;
  CHECK(sexpr(*body.statements[0]->cast<LetStmt>().value) == "(+ x (call f y))");
  CHECK(sexpr(*body.statements[1]->cast<ComprehensionStmt>().value) ==
        "(&& (== (index a i) (index a j)) (<= (index b j) (index b i)))");
  CHECK(sexpr(*body.statements[2]->cast<ReturnStmt>().value) == "(+ attended (call g own))");
}

TEST_CASE("generic calls versus comparisons", "[syntax][parser]") {
  CHECK(expr_of("cast<f32>(x)") == "(call cast <type:f32> x)");
  CHECK(expr_of("a < b && c > (a)") == "(&& (< a b) (> c a))");
  CHECK(expr_of("a < b") == "(< a b)");
  CHECK(expr_of("a < b > c") == "(> (< a b) c)");
  // The matching `>` followed by `(` makes a generic call, as the spec says.
  CHECK(expr_of("a < b > (c)") == "(call a <type:b> c)");
  CHECK(expr_of("mlp.forward_routed<1, P + Batch>(x)") == "(call (. mlp forward_routed) <1 (+ P Batch)> x)");
  CHECK(expr_of("split_heads<B, S, N * D, T>(q.forward(x))") ==
        "(call split_heads <type:B type:S (* N D) type:T> (call (. q forward) x))");
  CHECK(expr_of("iota<i64>(S)[s]") == "(index (call iota <type:i64> S) s)");
  CHECK(expr_of("x < f<T>(y)") == "(< x (call f <type:T> y))");
  CHECK(expr_of("f<g<T>>(x)") == "(call f <type:g<type:T>> x)");
  CHECK(expr_of("f<(a < b)>(x)") == "(call f <(< a b)> x)");
  CHECK(expr_of("f<(H / 2), 3>(x)") == "(call f <(/ H 2) 3> x)");
  CHECK(expr_of("f<(f32, i32)>(x)") == "(call f <type:(tuple f32 i32)> x)");
  CHECK(expr_of("f<Tensor[N; f32], [2, 3]>(x)") == "(call f <type:Tensor[N; f32] (shape 2 3)> x)");
  CHECK(expr_of("KVPair<f32, i32>(key = k, value = v)") == "(call KVPair <type:f32 type:i32> key=k value=v)");
  // A comparison inside an unparenthesized generic argument list ends it:
  // the whole is a comparison (spec §5.5).
  CHECK(expr_of("f<a == b>(x)") == "(== (< f a) (> b x))");
  // A generic argument that is itself a generic call.
  CHECK(expr_of("f<g<T>(n)>(x)") == "(call f <(call g <type:T> n)> x)");
}

TEST_CASE("reductions and contextual reduction names", "[syntax][parser]") {
  CHECK(expr_of("sum[k] a[m, k] * b[k, n]") == "(sum [k] (* (index a m k) (index b k n)))");
  CHECK(expr_of("sum<f32>[k] cast<f32>(d[k])") == "(sum<f32> [k] (call cast <type:f32> (index d k)))");
  CHECK(expr_of("all[b] (next[b] == eos)") == "(all [b] (== (index next b) eos))");
  CHECK(expr_of("max[i, j] x[i, j]") == "(max [i j] (index x i j))");
  CHECK(expr_of("exp(v - max[c] v[c])") == "(call exp (- v (max [c] (index v c))))");
  // Elsewhere the names are identifiers.
  CHECK(expr_of("max(a, b)") == "(call max a b)");
  CHECK(expr_of("sum + min") == "(+ sum min)");
  CHECK(expr_of("sum < n") == "(< sum n)");
  // `sum<T>[` with a type that is not a scalar is not a reduction.
  CHECK(expr_of("sum<T>[k]") == "(> (< sum T) (shape k))");
  const auto max_local = parse_body("let max = max[i] x[i]\nreturn max");
  CHECK(max_local->diagnostics.all().empty());
  CHECK(expr_of("sum[] x") == "ERR:E1101 ");
}

TEST_CASE("indexing and slicing", "[syntax][parser]") {
  CHECK(expr_of("x[..., 0::2]") == "(index x ... (: 0 _ 2))");
  CHECK(expr_of("x[:, start:end]") == "(index x (: _ _ _) (: start end _))");
  CHECK(expr_of("x[:, a:b:c]") == "(index x (: _ _ _) (: a b c))");
  CHECK(expr_of("x[::2, 1:]") == "(index x (: _ _ 2) (: 1 _ _))");
  CHECK(expr_of("q[:, :, P:P + Batch, :]") == "(index q (: _ _ _) (: _ _ _) (: P (+ P Batch) _) (: _ _ _))");
  CHECK(expr_of("x[*s, i]") == "(index x *s i)");
  CHECK(expr_of("x[b, cast<i64>(lengths[b]) - 1, h]") ==
        "(index x b (- (call cast <type:i64> (index lengths b)) 1) h)");
  CHECK(expr_of("layers[0].attention.cache") == "(. (. (index layers 0) attention) cache)");
  CHECK(expr_of("x[]") == "ERR:E1101 ");
}

TEST_CASE("tuples, shapes, optionals and literals", "[syntax][parser]") {
  CHECK(expr_of("(produced, count)") == "(tuple produced count)");
  CHECK(expr_of("(a,)") == "(tuple a)");
  CHECK(expr_of("[B, S, H / Heads]") == "(shape B S (/ H Heads))");
  CHECK(expr_of("[]") == "(shape)");
  CHECK(expr_of("some(reshape(b, [E * 2]))") == "(some (call reshape b (shape (* E 2))))");
  CHECK(expr_of("none") == "none");
  CHECK(expr_of("\"w\\n\"") == "\"w\n\"");
  CHECK(expr_of("true && false") == "(&& true false)");
  CHECK(expr_of("concat(a, b, axis = -1)") == "(call concat a b axis=(- 1))");
  CHECK(expr_of("()") == "ERR:E1101 ");
  const auto parsed = parse_body("let v = (a + b) * c");
  const auto& product = first_let_value(*parsed).cast<BinaryExpr>();
  CHECK(product.lhs->parenthesized);
  CHECK_FALSE(product.rhs->parenthesized);
}

TEST_CASE("if, match and for expressions", "[syntax][parser]") {
  CHECK(expr_of("if causal { mask(s) } else { s }") == "(if causal (call mask s) s)");
  CHECK(expr_of("match bias {\n some(b) => y + b\n none => y\n}") == "(match bias ((some b) => (+ y b)) (none => y))");
  CHECK(expr_of("match MASK {\n Causal => causal_mask(s)\n None => s\n}") ==
        "(match MASK (Causal => (call causal_mask s)) (None => s))");
  CHECK(expr_of("match o {\n some((a, b)) => a\n none => x\n}") == "(match o ((some (tuple a b)) => a) (none => x))");
  CHECK(expr_of("for i in 0..4 {\n yield i\n}") == "(for i 0 4 1 statements)");
  const auto parenthesized = parse_body("let v = (for i in 0..4 {\n yield i\n})");
  CHECK(parenthesized->diagnostics.all().empty());
  CHECK(first_let_value(*parenthesized).parenthesized);

  // `else if`, a missing `else`, tuple arms, separators, no arms.
  CHECK(expr_of("if a { 1 } else if b { 2 } else { 3 }") == "ERR:E1101 ");
  CHECK(expr_of("if a { 1 }") == "ERR:E1101 ");
  CHECK(expr_of("match o {\n (a, b) => a\n none => x\n}") == "ERR:E1101 ");
  CHECK(expr_of("match o {\n some(a) => a,\n none => x\n}") == "ERR:E1101 ");
  CHECK(expr_of("match o {}") == "ERR:E1101 ");
  // `if` as an operand needs parentheses.
  CHECK(expr_of("1 + if a { 1 } else { 2 }") == "ERR:E1101 ");
  CHECK(expr_of("1 + (if a { 1 } else { 2 })") == "(+ 1 (if a 1 2))");
}

// ------------------------------------------------------------------ types

TEST_CASE("types", "[syntax][parser]") {
  CHECK(type_of("f32") == "f32");
  CHECK(type_of("Tensor[B, S, H; bf16]") == "Tensor[B S H; bf16]");
  CHECK(type_of("Tensor[*S, H; T]") == "Tensor[*S H; T]");
  CHECK(type_of("Tensor[B, S, N * D; T]") == "Tensor[B S (* N D); T]");
  CHECK(type_of("Tensor[1, P + Batch, H; T]") == "Tensor[1 (+ P Batch) H; T]");
  CHECK(type_of("Tensor[H; f32]?") == "Tensor[H; f32]?");
  CHECK(type_of("(Tensor[B; T], i32)") == "(tuple Tensor[B; T] i32)");
  CHECK(type_of("(f32,)") == "(tuple f32)");
  CHECK(type_of("(f32, f32)?") == "(tuple f32 f32)?");
  CHECK(type_of("[DecoderLayer<Hidden, T>; Layers]") == "[DecoderLayer<type:Hidden type:T>; Layers]");
  CHECK(type_of("Linear<H, Heads * HeadDim, T>") == "Linear<type:H (* Heads HeadDim) type:T>");
  CHECK(type_of("layers.Decoder<T>") == "layers.Decoder<type:T>");
  CHECK(type_of("[Pair<H, Inner /\n32, T>; Layers / 2]") == "[Pair<type:H (/ Inner 32) type:T>; (/ Layers 2)]");
  CHECK(type_of("Moments<N, f32>") == "Moments<type:N type:f32>");

  CHECK(type_of("Tensor[; f32]") == "ERR:E1103 ");
  CHECK(type_of("i4") == "ERR:E1103 ");
  CHECK(type_of("Tensor[N; f8e4m3]") == "ERR:E1103 ");
  CHECK(type_of("Tensor[N]") == "ERR:E1101 ");
  CHECK(type_of("(f32)") == "ERR:E1101 ");
  CHECK(type_of("f32??") == "ERR:E1101 ");
}

// ------------------------------------------------------------------ names, spans, recovery

TEST_CASE("reserved words and keywords as names", "[syntax][parser]") {
  const auto reserved = parse("module m\npub fn bad(async: i32) -> i32 {\n    return async\n}\n");
  CHECK(reserved->first_code() == "E1004");
  CHECK(reserved->first_position() == "2:12");
  // The tree is still complete.
  CHECK(function_at(*reserved).params.at(0).name.text == "async");
  CHECK(parse("module m\nstruct trait {}\n")->first_code() == "E1004");
  CHECK(parse("module m\nasync fn f() {}\n")->first_code() == "E1103");
  // `self` is reserved: one error, and the member access still parses.
  const auto self = parse_body("let w = self.weight");
  CHECK(self->codes() == std::vector<std::string>{"E1103"});
  CHECK(sexpr(first_let_value(*self)) == "(. self weight)");
  // A keyword where a name belongs is an unexpected token.
  const auto keyword = parse("module m\nfn let() {}\n");
  CHECK(keyword->first_code() == "E1101");
  CHECK(keyword->diagnostics.all().front().notes.size() == 1);
}

TEST_CASE("spans are exact", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "fn f<T: Float>(x: Tensor[4; T]) -> T {\n"
      "    let y = x[0] * 2.0 + g<T>(x)\n"
      "    return y\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  const FunctionItem& f = function_at(*parsed);
  CHECK(parsed->slice(f.span) == "fn f<T: Float>(x: Tensor[4; T]) -> T {\n    let y = x[0] * 2.0 + g<T>(x)\n    return y\n}");
  CHECK(parsed->slice(f.name.span) == "f");
  CHECK(parsed->slice(f.params[0].span) == "x: Tensor[4; T]");
  CHECK(parsed->slice(f.params[0].type->span) == "Tensor[4; T]");
  const auto& let = f.body.statements[0]->cast<LetStmt>();
  CHECK(parsed->slice(let.span) == "let y = x[0] * 2.0 + g<T>(x)");
  const auto& sum = let.value->cast<BinaryExpr>();
  CHECK(parsed->slice(sum.span) == "x[0] * 2.0 + g<T>(x)");
  CHECK(parsed->slice(sum.op_span) == "+");
  CHECK(parsed->slice(sum.lhs->span) == "x[0] * 2.0");
  CHECK(parsed->slice(sum.rhs->span) == "g<T>(x)");
  CHECK(parsed->slice(sum.lhs->cast<BinaryExpr>().lhs->span) == "x[0]");
  CHECK(parsed->slice(f.body.span) == "{\n    let y = x[0] * 2.0 + g<T>(x)\n    return y\n}");
}

TEST_CASE("recovery reports several errors", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "fn a() {\n"
      "    let x = (1 + )\n"
      "    let y = 2\n"
      "    foo(y)\n"
      "}\n"
      "fn b() -> {\n"
      "}\n"
      "fn c() {\n"
      "    return 1\n"
      "}\n");
  CHECK(parsed->diagnostics.error_count() == 3);
  // Every function is still in the tree.
  REQUIRE(parsed->tree->items.size() == 3);
  CHECK(function_at(*parsed, 2).name.text == "c");
  CHECK(statement_kinds(function_at(*parsed, 2).body) == "return ");

  // A missing `}` ends the function at the next item.
  const auto unclosed = parse("module m\nfn a() {\n    let x = 1\nfn b() {}\n");
  CHECK(unclosed->codes() == std::vector<std::string>{"E1101"});
  CHECK(unclosed->tree->items.size() == 2);
}

TEST_CASE("nesting deeper than the limit is one E1101", "[syntax][parser]") {
  const std::string deep(max_nesting_depth + 10, '(');
  const auto parsed = parse_body("let v = " + deep + "x" + std::string(max_nesting_depth + 10, ')'));
  CHECK(parsed->codes() == std::vector<std::string>{"E1101"});
  CHECK(parsed->diagnostics.all().front().message.find("too deep") != std::string::npos);
  // Just inside the limit parses.
  const size_t fits = max_nesting_depth - 8;
  CHECK(parse_body("let v = " + std::string(fits, '(') + "x" + std::string(fits, ')'))->diagnostics.all().empty());
  // Long operator chains count too, so a later recursive walk stays bounded.
  std::string chain = "x";
  for (uint32_t i = 0; i < max_nesting_depth + 5; ++i) chain += " + x";
  CHECK(parse_body("let v = " + chain)->first_code() == "E1101");
}

TEST_CASE("doc comments attach to the next item", "[syntax][parser]") {
  const auto parsed = parse(
      "module m\n"
      "/// Two\n"
      "/// lines.\n"
      "const A = 1\n"
      "// plain\n"
      "const B = 2\n"
      "/** Block. */\n"
      "block C {\n"
      "    /// Member.\n"
      "    param w: f32\n"
      "}\n");
  REQUIRE(parsed->diagnostics.all().empty());
  CHECK(parsed->tree->items[0]->doc == "Two\nlines.");
  CHECK(parsed->tree->items[1]->doc.empty());
  CHECK(parsed->tree->items[2]->doc == "Block.");
  CHECK(parsed->tree->items[2]->cast<BlockItem>().members[0]->doc == "Member.");
}

TEST_CASE("dump_ast prints every node with its span", "[syntax][parser]") {
  const auto parsed = parse("module m\nfn f() -> i32 {\n    return 1 + 2\n}\n");
  const std::string dump = dump_ast(*parsed->tree, parsed->sources);
  CHECK(dump.find("File module m @1:1-1:9") != std::string::npos);
  CHECK(dump.find("Function fn f @2:1-4:2") != std::string::npos);
  CHECK(dump.find("Binary + @3:12-3:17") != std::string::npos);
  CHECK(dump.find("Integer 2 @3:16-3:17") != std::string::npos);
}
