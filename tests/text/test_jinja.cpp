// The Jinja engine on its own: syntax, whitespace control, scoping,
// operators, filters, tests and methods, with Jinja2's (Python's) results.
#include <catch2/catch.hpp>

#include "linnet/text/jinja.hpp"

namespace {

using linnet::text::TemplateError;
using linnet::text::jinja::Template;
using linnet::text::jinja::Value;

std::string render(const std::string& source, const std::string& context_json = "{}") {
  return Template(source).render(Value::from_json(context_json));
}

}  // namespace

TEST_CASE("jinja: output, literals and Python's printing", "[jinja]") {
  CHECK(render("Hello {{ name }}!", R"({"name": "world"})") == "Hello world!");
  CHECK(render("{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }}") == "7 3 -4 1 1024 3.5");
  CHECK(render("{{ none }} {{ true }} {{ False }} {{ 1.0 }} {{ [1, 'a', none] }} {{ {'k': 1} }}") ==
        "None True False 1.0 [1, 'a', None] {'k': 1}");
  CHECK(render("{{ undefined_name }}|{{ 'a' ~ 1 ~ none }}") == "|a1None");
  CHECK(render(R"({{ "tab\there" }}{{ 'it\'s' }})") == "tab\there" "it's");
  CHECK(render("{{ 'a' if x else 'b' }}{{ 'c' if not x }}", R"({"x": false})") == "bc");
}

TEST_CASE("jinja: whitespace as transformers renders (trim_blocks, lstrip_blocks, -)", "[jinja]") {
  CHECK(render("{% if true %}\nyes\n{% endif %}\n") == "yes\n");
  CHECK(render("  {% if true %}x{% endif %}") == "x");
  CHECK(render("a  {{- ' b ' -}}  c") == "a b c");
  CHECK(render("a\n{#- a comment -#}\nb") == "ab");
  CHECK(render("line\n") == "line");  // one trailing newline dropped
}

TEST_CASE("jinja: loops, loop variables, filters on loops, break and continue", "[jinja]") {
  const std::string context = R"({"items": ["a", "b", "c", "d"], "d": {"x": 1, "y": 2}})";
  CHECK(render("{% for i in items %}{{ loop.index }}{{ i }}{% if not loop.last %},{% endif %}{% endfor %}", context) ==
        "1a,2b,3c,4d");
  CHECK(render("{% for i in items if i != 'b' %}{{ loop.index0 }}/{{ loop.length }}{% endfor %}", context) ==
        "0/31/32/3");
  CHECK(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", context) == "x=1;y=2;");
  CHECK(render("{% for i in [] %}x{% else %}empty{% endfor %}") == "empty");
  CHECK(render("{% for i in items %}{% if i == 'c' %}{% break %}{% endif %}{% if i == 'a' %}{% continue %}{% endif %}"
               "{{ i }}{% endfor %}",
               context) == "b");
  CHECK(render("{% for i in range(3) %}{{ i }}{% endfor %}{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}") ==
        "012531");
}

TEST_CASE("jinja: set scoping and namespace", "[jinja]") {
  // A set inside a loop does not leak out of it; a namespace's attribute does.
  CHECK(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = 5 %}{% endfor %}{{ x }}") == "1");
  CHECK(render("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}") ==
        "6");
  CHECK(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}") == "21");
  CHECK(render("{% set block %}in {{ 'side' }}{% endset %}[{{ block }}]") == "[in side]");
  CHECK_THROWS_AS(render("{% set x.y = 1 %}", R"({"x": {"y": 0}})"), TemplateError);
}

TEST_CASE("jinja: macros with defaults and keyword arguments", "[jinja]") {
  CHECK(render("{% macro greet(who, greeting='Hi') %}{{ greeting }}, {{ who }}{% endmacro %}"
               "{{ greet('Ann') }} / {{ greet('Bo', greeting='Yo') }} / {{ greet(who='Cy') }}") ==
        "Hi, Ann / Yo, Bo / Hi, Cy");
}

TEST_CASE("jinja: filters", "[jinja]") {
  const std::string context = R"({"m": {"role": "user", "content": "  Hi ", "n": [3, 1]}, "xs": [{"a": 1}, {"a": 2}, {"b": 3}]})";
  CHECK(render("{{ m.content | trim }}|{{ m.content | length }}|{{ m.role | upper }}|{{ 'ab' | capitalize }}", context) ==
        "Hi|5|USER|Ab");
  CHECK(render("{{ m | tojson }}", context) == R"({"role": "user", "content": "  Hi ", "n": [3, 1]})");
  CHECK(render("{{ m.n | tojson(indent=2) }}", context) == "[\n  3,\n  1\n]");
  CHECK(render("{{ 'é\"\n' | tojson }}") == "\"é\\\"\\n\"");
  CHECK(render("{{ m.n | join('-') }} {{ m.n | first }} {{ m.n | last }} {{ m.n | reverse | list }}", context) ==
        "3-1 3 1 [1, 3]");
  CHECK(render("{{ missing | default('dflt') }} {{ '' | default('e', true) }}") == "dflt e");
  CHECK(render("{{ xs | selectattr('a', 'defined') | map(attribute='a') | list }}", context) == "[1, 2]");
  CHECK(render("{{ xs | rejectattr('a', 'equalto', 1) | list | length }}", context) == "2");
  CHECK(render("{{ '12' | int + 1 }} {{ 3 | string ~ 'x' }}") == "13 3x");
  CHECK_THROWS_AS(render("{{ 1 | nosuchfilter }}"), TemplateError);
}

TEST_CASE("jinja: tests, comparisons and membership", "[jinja]") {
  CHECK(render("{{ x is defined }}{{ y is not defined }}{{ x is string }}{{ 3 is number }}{{ none is none }}",
               R"({"x": "s"})") == "TrueTrueTrueTrueTrue");
  CHECK(render("{{ {} is mapping }}{{ [] is iterable }}{{ 4 is even }}{{ 3 is odd }}{{ x is true }}",
               R"({"x": true})") == "TrueTrueTrueTrueTrue");
  CHECK(render("{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 0} }}{{ 'z' not in 'abc' }}") == "TrueTrueTrueTrue");
  CHECK(render("{{ 1 < 2 <= 2 }}{{ 'a' < 'b' }}{{ [1, 2] == [1, 2] }}{{ 1 == 1.0 }}") == "TrueTrueTrueTrue");
}

TEST_CASE("jinja: string and dict methods, indexing and slices", "[jinja]") {
  CHECK(render("{{ ' a b '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\nhi'.lstrip() }}|{{ 'hi\\n'.rstrip('\\n') }}") ==
        "a b|hi|hi|hi");
  CHECK(render("{{ 'a<b>c'.split('<b>')[1] }}|{{ ' x  y '.split() }}|{{ 'a,b,c'.split(',', 1) }}") ==
        "c|['x', 'y']|['a', 'b,c']");
  CHECK(render("{{ 'hello'.startswith('he') }}{{ 'hello'.endswith(('x', 'lo')) }}{{ 'aXa'.replace('a', 'b') }}") ==
        "TrueTruebXb");
  CHECK(render("{{ d.get('k') }} {{ d.get('z', 'none here') }} {{ d.keys() | list }}", R"({"d": {"k": 7}})") ==
        "7 none here ['k']");
  CHECK(render("{{ xs[0] }}{{ xs[-1] }}{{ xs[1:] }}{{ xs[::-1] }}{{ 'abc'[-2:] }}{{ 'héllo'[1] }}",
               R"({"xs": [1, 2, 3]})") == "13[2, 3][3, 2, 1]bcé");
  CHECK(render("{{ 'a {} b'.upper() }}{{ 'ab cd'.title() }}") == "A {} BAb Cd");
}

TEST_CASE("jinja: raise_exception and errors name the line", "[jinja]") {
  try {
    render("ok\n{{ raise_exception('bad role') }}");
    FAIL("no exception");
  } catch (const TemplateError& error) {
    CHECK(std::string(error.what()) == "the template raised: bad role");
  }
  try {
    render("a\nb\n{% if %}");
    FAIL("no exception");
  } catch (const TemplateError& error) {
    CHECK(std::string(error.what()).starts_with("line 3: "));
  }
  CHECK_THROWS_AS(render("{% for x in y %}"), TemplateError);          // unclosed
  CHECK_THROWS_AS(render("{% include 'x' %}"), TemplateError);         // not supported
  CHECK_THROWS_AS(render("{{ 'a' + 1 }}"), TemplateError);
  CHECK_THROWS_AS(render("{{ 'unterminated }}"), TemplateError);
  // Found by fuzz_chat_template: none of these may crash.
  CHECK_THROWS_AS(render("{{ 88888888888888888888888888 }}"), TemplateError);
  CHECK_THROWS_AS(render("{{ '\\uZZZZ' }}"), TemplateError);
  CHECK_THROWS_AS(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), TemplateError);
  CHECK_THROWS_AS(render("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"), TemplateError);
}
