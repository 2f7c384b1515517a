// Reading a Jinja template: the whitespace settings transformers uses,
// splitting into text and tags, the tokens inside tags, and a
// recursive-descent parser with Jinja2's operator precedence.
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "jinja_ast.hpp"

namespace linnet::text::jinja {

namespace {

struct Token {
  enum class Kind { Name, String, Int, Float, Op, End };
  Kind kind;
  std::string text;
  size_t line;
};

struct Chunk {
  bool is_tag = false;
  bool is_statement = false;  // {% %}; else {{ }}
  std::string text;           // a text chunk's text
  std::vector<Token> tokens;  // a tag's tokens, ending with End
  size_t line = 0;
};

[[noreturn]] void fail(size_t line, const std::string& message) {
  throw TemplateError("line " + std::to_string(line) + ": " + message);
}

// Integer and float literals (and escapes) without exceptions: a literal
// past 64 bits is a TemplateError, not a crash.
int64_t integer_literal(const std::string& digits, size_t line) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) fail(line, "the number " + digits + " is too large");
  return value;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// transformers renders with trim_blocks and lstrip_blocks, and Jinja drops
// one trailing newline of the template.
std::string apply_whitespace_settings(std::string source) {
  if (source.ends_with('\n')) source.pop_back();
  std::string out;
  out.reserve(source.size());
  size_t at = 0;
  while (at < source.size()) {
    // lstrip_blocks: blanks from the start of a line up to a block or comment tag.
    if (at == 0 || source[at - 1] == '\n') {
      size_t end = at;
      while (end < source.size() && (source[end] == ' ' || source[end] == '\t')) ++end;
      if (end + 1 < source.size() && source[end] == '{' && (source[end + 1] == '%' || source[end + 1] == '#')) {
        at = end;
      }
    }
    const char c = source[at];
    out += c;
    ++at;
    // trim_blocks: the first newline after a block or comment tag.
    if (c == '}' && out.size() >= 2 && (out[out.size() - 2] == '%' || out[out.size() - 2] == '#') && at < source.size() &&
        source[at] == '\n') {
      ++at;
    }
  }
  return out;
}

// Reads tokens from `at` up to the closing delimiter (`}}` or `%}`, with
// an optional `-` before it); returns whether that `-` was there.
bool lex_tag(const std::string& source, size_t& at, const char* close, size_t& line, std::vector<Token>& tokens) {
  static const char* const operators[] = {"==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/",
                                          "%",  "~",  "|",  ".",  ",",  ":",  "(", ")", "[", "]", "{", "}", "="};
  while (true) {
    while (at < source.size() && is_space(source[at])) {
      if (source[at] == '\n') ++line;
      ++at;
    }
    if (at >= source.size()) fail(line, std::string("a tag is not closed with `") + close + "`");
    if (source.compare(at, 2, close) == 0) {
      at += 2;
      tokens.push_back({Token::Kind::End, "", line});
      return false;
    }
    if ((source[at] == '-' || source[at] == '+') && source.compare(at + 1, 2, close) == 0) {
      const bool trim = source[at] == '-';
      at += 3;
      tokens.push_back({Token::Kind::End, "", line});
      return trim;
    }
    const char c = source[at];
    if (is_name_start(c)) {
      const size_t start = at;
      while (at < source.size() && (is_name_start(source[at]) || is_digit(source[at]))) ++at;
      tokens.push_back({Token::Kind::Name, source.substr(start, at - start), line});
      continue;
    }
    if (is_digit(c)) {
      const size_t start = at;
      bool is_float = false;
      while (at < source.size() && (is_digit(source[at]) || source[at] == '_')) ++at;
      if (at + 1 < source.size() && source[at] == '.' && is_digit(source[at + 1])) {
        is_float = true;
        ++at;
        while (at < source.size() && is_digit(source[at])) ++at;
      }
      std::string digits;
      for (char d : source.substr(start, at - start)) {
        if (d != '_') digits += d;
      }
      tokens.push_back({is_float ? Token::Kind::Float : Token::Kind::Int, digits, line});
      continue;
    }
    if (c == '\'' || c == '"') {
      std::string text;
      ++at;
      while (true) {
        if (at >= source.size()) fail(line, "a string is not closed");
        const char d = source[at++];
        if (d == c) break;
        if (d == '\n') ++line;
        if (d != '\\') {
          text += d;
          continue;
        }
        if (at >= source.size()) fail(line, "a string is not closed");
        const char e = source[at++];
        switch (e) {
          case 'n': text += '\n'; break;
          case 't': text += '\t'; break;
          case 'r': text += '\r'; break;
          case '0': text += '\0'; break;
          case '\\': text += '\\'; break;
          case '\'': text += '\''; break;
          case '"': text += '"'; break;
          case '\n': ++line; break;
          case 'u':
          case 'x': {
            const size_t digits = e == 'u' ? 4 : 2;
            if (at + digits > source.size()) fail(line, "a \\u escape is cut short");
            uint32_t code = 0;
            const char* first = source.data() + at;
            const auto [end, error] = std::from_chars(first, first + digits, code, 16);
            if (error != std::errc() || end != first + digits) fail(line, "a \\u or \\x escape needs hex digits");
            const char32_t cp = code;
            at += digits;
            std::string encoded;
            if (cp < 0x80) encoded += static_cast<char>(cp);
            else if (cp < 0x800) encoded += {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
            else encoded += {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                             static_cast<char>(0x80 | (cp & 0x3F))};
            text += encoded;
            break;
          }
          default: text += '\\'; text += e;  // Python keeps unknown escapes as written
        }
      }
      tokens.push_back({Token::Kind::String, text, line});
      continue;
    }
    bool matched = false;
    for (const char* op : operators) {
      const size_t length = std::strlen(op);
      if (source.compare(at, length, op) == 0) {
        tokens.push_back({Token::Kind::Op, op, line});
        at += length;
        matched = true;
        break;
      }
    }
    if (!matched) fail(line, std::string("unexpected character `") + c + "` in a tag");
  }
}

std::vector<Chunk> split_chunks(const std::string& source) {
  std::vector<Chunk> chunks;
  size_t at = 0;
  size_t line = 1;
  bool trim_next = false;
  const auto add_text = [&](std::string text) {
    if (trim_next) {
      size_t start = 0;
      while (start < text.size() && is_space(text[start])) ++start;
      text.erase(0, start);
      trim_next = false;
    }
    Chunk chunk;
    chunk.text = std::move(text);
    chunk.line = line;
    chunks.push_back(std::move(chunk));
  };
  const auto trim_previous = [&] {
    if (chunks.empty() || chunks.back().is_tag) return;
    std::string& text = chunks.back().text;
    while (!text.empty() && is_space(text.back())) text.pop_back();
  };
  while (at < source.size()) {
    size_t open = source.find('{', at);
    while (open != std::string::npos && open + 1 < source.size() && source[open + 1] != '{' && source[open + 1] != '%' &&
           source[open + 1] != '#') {
      open = source.find('{', open + 1);
    }
    if (open == std::string::npos || open + 1 >= source.size()) {
      add_text(source.substr(at));
      break;
    }
    std::string text = source.substr(at, open - at);
    for (char c : text) line += c == '\n';
    add_text(std::move(text));
    const char kind = source[open + 1];
    at = open + 2;
    const bool trim_before = at < source.size() && source[at] == '-';
    if (at < source.size() && (source[at] == '-' || source[at] == '+')) ++at;
    if (trim_before) trim_previous();
    if (kind == '#') {
      const size_t close = source.find("#}", at);
      if (close == std::string::npos) fail(line, "a comment is not closed with `#}`");
      for (size_t i = at; i < close; ++i) line += source[i] == '\n';
      trim_next = close > at && source[close - 1] == '-';
      at = close + 2;
      continue;
    }
    Chunk chunk;
    chunk.is_tag = true;
    chunk.is_statement = kind == '%';
    chunk.line = line;
    trim_next = lex_tag(source, at, kind == '%' ? "%}" : "}}", line, chunk.tokens);
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

// Parses expressions from one tag's tokens.
class ExpressionParser {
 public:
  explicit ExpressionParser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(at_ + ahead, tokens_.size() - 1)]; }
  bool at_end() const { return peek().kind == Token::Kind::End; }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Op && peek(ahead).text == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Name && peek(ahead).text == name;
  }
  Token next() {
    Token token = peek();
    if (at_ < tokens_.size() - 1) ++at_;
    return token;
  }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(peek().line, std::string("expected `") + op + "`, found `" + describe(peek()) + "`");
    next();
  }
  std::string expect_name() {
    if (peek().kind != Token::Kind::Name) fail(peek().line, "expected a name, found `" + describe(peek()) + "`");
    return next().text;
  }
  void expect_end() {
    if (!at_end()) fail(peek().line, "unexpected `" + describe(peek()) + "` at the end of a tag");
  }
  static std::string describe(const Token& token) { return token.kind == Token::Kind::End ? "end of tag" : token.text; }

  // A full expression, with a trailing tuple (`a, b`) when `tuples`.
  ExprPtr expression(bool tuples = false) {
    ExprPtr first = ternary();
    if (!tuples || !is_op(",")) return first;
    ExprPtr tuple = make(Expr::Kind::Tuple);
    tuple->items.push_back(std::move(first));
    while (is_op(",")) {
      next();
      if (at_end() || is_op(")")) break;
      tuple->items.push_back(ternary());
    }
    return tuple;
  }

  // An expression without a trailing `if` (a for loop's iterable, whose
  // `if` is the loop's filter).
  ExprPtr ternary_free_expression() { return or_expr(); }

  ExprPtr ternary() {
    // Nesting deeper than any template needs is refused before the stack runs out.
    if (++depth_ > kMaxDepth) fail(peek().line, "expressions nest too deeply");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    ExprPtr value = or_expr();
    while (is_name("if")) {
      next();
      ExprPtr node = make(Expr::Kind::Ternary);
      ExprPtr condition = or_expr();
      ExprPtr otherwise;
      if (is_name("else")) {
        next();
        otherwise = ternary();
      }
      node->items.push_back(std::move(condition));
      node->items.push_back(std::move(value));
      node->items.push_back(std::move(otherwise));
      value = std::move(node);
    }
    return value;
  }

 private:
  ExprPtr make(Expr::Kind kind) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->line = peek().line;
    return expr;
  }
  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right) {
    ExprPtr node = make(Expr::Kind::Binary);
    node->name = op;
    node->items.push_back(std::move(left));
    node->items.push_back(std::move(right));
    return node;
  }

  ExprPtr or_expr() {
    ExprPtr left = and_expr();
    while (is_name("or")) {
      next();
      left = binary("or", std::move(left), and_expr());
    }
    return left;
  }
  ExprPtr and_expr() {
    ExprPtr left = not_expr();
    while (is_name("and")) {
      next();
      left = binary("and", std::move(left), not_expr());
    }
    return left;
  }
  ExprPtr not_expr() {
    if (is_name("not")) {
      next();
      ExprPtr node = make(Expr::Kind::Unary);
      node->name = "not";
      node->items.push_back(not_expr());
      return node;
    }
    return compare();
  }
  ExprPtr compare() {
    ExprPtr left = math1();
    while (true) {
      std::string op;
      if (peek().kind == Token::Kind::Op &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">="))) {
        op = next().text;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        return left;
      }
      left = binary(op, std::move(left), math1());
    }
  }
  ExprPtr math1() {
    ExprPtr left = concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = next().text;
      left = binary(op, std::move(left), concat());
    }
    return left;
  }
  ExprPtr concat() {
    ExprPtr left = math2();
    while (is_op("~")) {
      next();
      left = binary("~", std::move(left), math2());
    }
    return left;
  }
  ExprPtr math2() {
    ExprPtr left = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = next().text;
      left = binary(op, std::move(left), power());
    }
    return left;
  }
  ExprPtr power() {
    ExprPtr left = unary();
    while (is_op("**")) {
      next();
      left = binary("**", std::move(left), unary());
    }
    return left;
  }
  ExprPtr unary() {
    if (is_op("-") || is_op("+")) {
      ExprPtr node = make(Expr::Kind::Unary);
      node->name = next().text;
      node->items.push_back(unary());
      return node;
    }
    return filters(postfix(primary()));
  }

  // `|filter(args)` and `is [not] test(args)`, left to right.
  ExprPtr filters(ExprPtr value) {
    while (true) {
      if (is_op("|")) {
        next();
        ExprPtr node = make(Expr::Kind::Filter);
        node->name = expect_name();
        while (is_op(".")) {  // a dotted filter name
          next();
          node->name += "." + expect_name();
        }
        node->items.push_back(std::move(value));
        if (is_op("(")) arguments(*node);
        value = std::move(node);
      } else if (is_name("is")) {
        next();
        ExprPtr node = make(Expr::Kind::Test);
        if (is_name("not")) {
          next();
          node->negated = true;
        }
        // `none`, `true` and `false` are names here.
        node->name = expect_name();
        node->items.push_back(std::move(value));
        if (is_op("(")) {
          arguments(*node);
        } else if (!at_end() && (peek().kind == Token::Kind::String || peek().kind == Token::Kind::Int ||
                                 peek().kind == Token::Kind::Float || (peek().kind == Token::Kind::Name &&
                                                                        !is_name("and") && !is_name("or") &&
                                                                        !is_name("else") && !is_name("if")))) {
          // A test with one argument and no parentheses: `x is divisibleby 3`, `x is sameas none`.
          node->items.push_back(postfix(primary()));
        }
        value = std::move(node);
      } else {
        return value;
      }
    }
  }

  void arguments(Expr& call) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().kind == Token::Kind::Name && is_op("=", 1)) {
        std::string name = next().text;
        next();
        call.keywords.emplace_back(std::move(name), ternary());
      } else {
        call.items.push_back(ternary());
      }
      if (!is_op(",")) break;
      next();
    }
    expect_op(")");
  }

  ExprPtr postfix(ExprPtr value) {
    while (true) {
      if (is_op(".")) {
        next();
        ExprPtr node = make(Expr::Kind::Attribute);
        if (peek().kind == Token::Kind::Int) {
          // `list.0` indexes.
          node->kind = Expr::Kind::Index;
          ExprPtr index = make(Expr::Kind::Literal);
          const Token digits = next();
          index->value = Value::from(integer_literal(digits.text, digits.line));
          node->items.push_back(std::move(value));
          node->items.push_back(std::move(index));
        } else {
          node->name = expect_name();
          node->items.push_back(std::move(value));
        }
        value = std::move(node);
      } else if (is_op("[")) {
        next();
        ExprPtr node = make(Expr::Kind::Index);
        node->items.push_back(std::move(value));
        ExprPtr parts[3];
        int part = 0;
        bool slice = false;
        while (true) {
          if (is_op(":")) {
            next();
            slice = true;
            if (++part > 2) fail(peek().line, "a slice has at most three parts");
            continue;
          }
          if (is_op("]")) break;
          parts[part] = expression();
        }
        expect_op("]");
        if (slice) {
          node->kind = Expr::Kind::Slice;
          for (ExprPtr& p : parts) node->items.push_back(std::move(p));
        } else {
          if (!parts[0]) fail(node->line, "an empty subscript");
          node->items.push_back(std::move(parts[0]));
        }
        value = std::move(node);
      } else if (is_op("(")) {
        ExprPtr node = make(Expr::Kind::Call);
        node->items.push_back(std::move(value));
        arguments(*node);
        value = std::move(node);
      } else {
        return value;
      }
    }
  }

  ExprPtr primary() {
    const Token token = peek();
    switch (token.kind) {
      case Token::Kind::String: {
        next();
        std::string text = token.text;
        while (peek().kind == Token::Kind::String) text += next().text;  // adjacent literals join
        ExprPtr node = make(Expr::Kind::Literal);
        node->value = Value::from(std::move(text));
        return node;
      }
      case Token::Kind::Int: {
        next();
        ExprPtr node = make(Expr::Kind::Literal);
        node->value = Value::from(integer_literal(token.text, token.line));
        return node;
      }
      case Token::Kind::Float: {
        next();
        ExprPtr node = make(Expr::Kind::Literal);
        node->value = Value::from(std::strtod(token.text.c_str(), nullptr));
        return node;
      }
      case Token::Kind::Name: {
        next();
        ExprPtr node = make(Expr::Kind::Literal);
        if (token.text == "true" || token.text == "True") node->value = Value::from(true);
        else if (token.text == "false" || token.text == "False") node->value = Value::from(false);
        else if (token.text == "none" || token.text == "None") node->value = Value::none();
        else {
          node->kind = Expr::Kind::Name;
          node->name = token.text;
        }
        return node;
      }
      case Token::Kind::Op:
        if (token.text == "(") {
          next();
          if (is_op(")")) {
            next();
            return make(Expr::Kind::Tuple);
          }
          ExprPtr inner = expression(true);
          expect_op(")");
          return inner;
        }
        if (token.text == "[") {
          next();
          ExprPtr node = make(Expr::Kind::List);
          while (!is_op("]")) {
            node->items.push_back(ternary());
            if (!is_op(",")) break;
            next();
          }
          expect_op("]");
          return node;
        }
        if (token.text == "{") {
          next();
          ExprPtr node = make(Expr::Kind::Dict);
          while (!is_op("}")) {
            node->items.push_back(ternary());
            expect_op(":");
            node->items.push_back(ternary());
            if (!is_op(",")) break;
            next();
          }
          expect_op("}");
          return node;
        }
        break;
      case Token::Kind::End: fail(token.line, "an expression is missing");
    }
    fail(token.line, "unexpected `" + token.text + "`");
  }

  static constexpr int kMaxDepth = 200;
  const std::vector<Token>& tokens_;
  size_t at_ = 0;
  int depth_ = 0;
};

// Builds nodes from chunks; statements nest until their end tag.
class TemplateParser {
 public:
  explicit TemplateParser(std::vector<Chunk> chunks) : chunks_(std::move(chunks)) {}

  NodeList parse_all() {
    std::string stop;
    NodeList nodes = parse_until({}, stop);
    return nodes;
  }

 private:
  // Parses nodes until a statement whose keyword is in `ends`; that
  // keyword goes to `stop` and its parser is left positioned after it.
  NodeList parse_until(const std::vector<std::string>& ends, std::string& stop) {
    NodeList nodes;
    while (at_ < chunks_.size()) {
      Chunk& chunk = chunks_[at_++];
      if (!chunk.is_tag) {
        if (!chunk.text.empty()) {
          auto node = std::make_unique<Node>();
          node->kind = Node::Kind::Text;
          node->text = std::move(chunk.text);
          nodes.push_back(std::move(node));
        }
        continue;
      }
      current_ = std::make_unique<ExpressionParser>(chunk.tokens);
      ExpressionParser& p = *current_;
      if (!chunk.is_statement) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::Output;
        node->line = chunk.line;
        node->expr = p.expression(true);
        p.expect_end();
        nodes.push_back(std::move(node));
        continue;
      }
      const std::string keyword = p.expect_name();
      for (const std::string& end : ends) {
        if (keyword == end) {
          stop = keyword;
          return nodes;
        }
      }
      if (auto node = statement(keyword, p, chunk.line)) nodes.push_back(std::move(node));
    }
    if (!ends.empty()) {
      fail(chunks_.empty() ? 0 : chunks_.back().line, "the template ends before `{% " + ends.front() + " %}`");
    }
    return nodes;
  }

  std::unique_ptr<Node> statement(const std::string& keyword, ExpressionParser& p, size_t line) {
    if (++depth_ > 200) fail(line, "statements nest too deeply");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    auto node = std::make_unique<Node>();
    node->line = line;
    std::string stop;
    if (keyword == "if") {
      node->kind = Node::Kind::If;
      ExprPtr condition = p.expression(true);
      p.expect_end();
      while (true) {
        NodeList body = parse_until({"elif", "else", "endif"}, stop);
        node->branches.emplace_back(std::move(condition), std::move(body));
        if (stop == "elif") {
          condition = current_->expression(true);
          current_->expect_end();
          continue;
        }
        if (stop == "else") {
          current_->expect_end();
          node->otherwise = parse_until({"endif"}, stop);
        }
        current_->expect_end();
        return node;
      }
    }
    if (keyword == "for") {
      node->kind = Node::Kind::For;
      node->targets.push_back(p.expect_name());
      while (p.is_op(",")) {
        p.next();
        node->targets.push_back(p.expect_name());
      }
      if (!p.is_name("in")) fail(line, "expected `in` in a for loop");
      p.next();
      // The iterable stops before a trailing `if` filter (no ternary here).
      node->expr = p.ternary_free_expression();
      if (p.is_name("if")) {
        p.next();
        node->condition = p.expression();
      }
      if (p.is_name("recursive")) fail(line, "recursive loops are not supported");
      p.expect_end();
      node->body = parse_until({"else", "endfor"}, stop);
      if (stop == "else") {
        current_->expect_end();
        node->otherwise = parse_until({"endfor"}, stop);
      }
      current_->expect_end();
      return node;
    }
    if (keyword == "set") {
      std::string first = p.expect_name();
      node->targets.push_back(first);
      if (p.is_op(".")) {
        p.next();
        node->attribute = true;
        node->targets.push_back(p.expect_name());
      } else {
        while (p.is_op(",")) {
          p.next();
          node->targets.push_back(p.expect_name());
        }
      }
      if (p.at_end()) {
        if (node->attribute || node->targets.size() != 1) fail(line, "a block set assigns one name");
        node->kind = Node::Kind::SetBlock;
        p.expect_end();
        node->body = parse_until({"endset"}, stop);
        current_->expect_end();
        return node;
      }
      node->kind = Node::Kind::Set;
      p.expect_op("=");
      node->expr = p.expression(true);
      p.expect_end();
      return node;
    }
    if (keyword == "macro") {
      node->kind = Node::Kind::Macro;
      node->name = p.expect_name();
      p.expect_op("(");
      while (!p.is_op(")")) {
        std::string parameter = p.expect_name();
        ExprPtr fallback;
        if (p.is_op("=")) {
          p.next();
          fallback = p.ternary();
        }
        node->parameters.emplace_back(std::move(parameter), std::move(fallback));
        if (!p.is_op(",")) break;
        p.next();
      }
      p.expect_op(")");
      p.expect_end();
      node->body = parse_until({"endmacro"}, stop);
      current_->expect_end();
      return node;
    }
    if (keyword == "break" || keyword == "continue") {
      node->kind = keyword == "break" ? Node::Kind::Break : Node::Kind::Continue;
      p.expect_end();
      return node;
    }
    if (keyword == "generation" || keyword == "endgeneration") {
      // transformers' marker for assistant-token masks: renders nothing.
      p.expect_end();
      return nullptr;
    }
    fail(line, "the statement `{% " + keyword + " %}` is not supported");
  }

  std::vector<Chunk> chunks_;
  size_t at_ = 0;
  int depth_ = 0;
  std::unique_ptr<ExpressionParser> current_;
};

}  // namespace

NodeList parse_template(const std::string& source) {
  return TemplateParser(split_chunks(apply_whitespace_settings(source))).parse_all();
}

}  // namespace linnet::text::jinja
