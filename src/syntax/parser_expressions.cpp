// Expressions, generic arguments, types and patterns.
#include <algorithm>

#include "parser_internal.hpp"

namespace linnet::syntax::detail {

using namespace ast;
using K = TokenKind;

namespace {

struct BinaryInfo {
  BinaryOp op;
  int precedence;  // higher binds tighter
};

constexpr int kAdditivePrecedence = 8;

// The binary operator a token spells, with its precedence (spec §5.4).
bool binary_info(TokenKind kind, BinaryInfo& info) {
  switch (kind) {
    case K::PipePipe: info = {BinaryOp::Or, 1}; return true;
    case K::AmpAmp: info = {BinaryOp::And, 2}; return true;
    case K::EqualEqual: info = {BinaryOp::Equal, 3}; return true;
    case K::BangEqual: info = {BinaryOp::NotEqual, 3}; return true;
    case K::Less: info = {BinaryOp::Less, 4}; return true;
    case K::LessEqual: info = {BinaryOp::LessEqual, 4}; return true;
    case K::Greater: info = {BinaryOp::Greater, 4}; return true;
    case K::GreaterEqual: info = {BinaryOp::GreaterEqual, 4}; return true;
    case K::Pipe: info = {BinaryOp::BitOr, 5}; return true;
    case K::Caret: info = {BinaryOp::BitXor, 6}; return true;
    case K::Amp: info = {BinaryOp::BitAnd, 7}; return true;
    case K::Plus: info = {BinaryOp::Add, 8}; return true;
    case K::Minus: info = {BinaryOp::Subtract, 8}; return true;
    case K::Star: info = {BinaryOp::Multiply, 9}; return true;
    case K::Slash: info = {BinaryOp::Divide, 9}; return true;
    case K::Percent: info = {BinaryOp::Remainder, 9}; return true;
    default: return false;
  }
}

bool is_reserved_scalar(std::string_view name) {
  return name == "i4" || name == "u4" || name == "f8e4m3" || name == "f8e5m2";
}

}  // namespace

// ------------------------------------------------------------------ expressions

ExprPtr Parser::error_expr(uint32_t begin) { return std::make_unique<ErrorExpr>(span_from(begin)); }

ExprPtr Parser::parse_expr() {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  if (guard.exceeded()) return error_expr(begin);
  switch (kind()) {
    case K::KwIf: return parse_if();
    case K::KwMatch: return parse_match();
    case K::KwFor: return parse_for_expr();
    default: return parse_binary(1);
  }
}

ExprPtr Parser::parse_binary(int min_precedence) {
  const uint32_t begin = here();
  ExprPtr lhs = parse_unary();
  return parse_binary_rest(std::move(lhs), begin, min_precedence);
}

// Precedence climbing over a left operand already parsed. Every operator is
// left-associative.
ExprPtr Parser::parse_binary_rest(ExprPtr lhs, uint32_t begin, int min_precedence) {
  ChainGuard chain(*this);
  BinaryInfo info{};
  while (binary_info(kind(), info) && info.precedence >= min_precedence) {
    if (!chain.extend()) break;
    const Span op_span = here_span();
    advance();
    ExprPtr rhs = parse_binary(info.precedence + 1);
    auto node = std::make_unique<BinaryExpr>(span_from(begin));
    node->op = info.op;
    node->op_span = op_span;
    node->lhs = std::move(lhs);
    node->rhs = std::move(rhs);
    lhs = std::move(node);
  }
  return lhs;
}

// `unary = [ "!" | "-" | "+" ], postfix`: at most one prefix operator, so
// `--x` is written `-(-x)`.
ExprPtr Parser::parse_unary() {
  const uint32_t begin = here();
  if (!at(K::Bang) && !at(K::Minus) && !at(K::Plus)) return parse_postfix_rest(parse_primary(), begin);
  const UnaryOp op = at(K::Bang) ? UnaryOp::Not : at(K::Minus) ? UnaryOp::Negate : UnaryOp::Plus;
  advance();
  if (at(K::Bang) || at(K::Minus) || at(K::Plus)) {
    Diagnostic* d = error_here("one unary operator applies at a time");
    if (d) d->with_help("parenthesize the inner one: write `-(-x)` or `!(!x)`");
    while (at(K::Bang) || at(K::Minus) || at(K::Plus)) advance();  // one error for the whole run
  }
  const uint32_t operand_begin = here();
  auto node = std::make_unique<UnaryExpr>(span_from(begin));
  node->op = op;
  node->operand = parse_postfix_rest(parse_primary(), operand_begin);
  node->span = span_from(begin);
  return node;
}

bool Parser::is_path_expr(const Expr& expr) {
  const Expr* current = &expr;
  while (const auto* member = current->as<MemberExpr>()) current = member->object.get();
  return current->kind == ExprKind::Name;
}

ExprPtr Parser::parse_postfix_rest(ExprPtr expr, uint32_t begin) {
  ChainGuard chain(*this);
  while (true) {
    if (at(K::LParen)) {
      if (!chain.extend()) break;
      expr = finish_call(std::move(expr), begin, {}, false);
    } else if (at(K::LBracket)) {
      if (!chain.extend()) break;
      auto node = std::make_unique<IndexExpr>(span_from(begin));
      node->object = std::move(expr);
      node->components = parse_index_components();
      node->span = span_from(begin);
      expr = std::move(node);
    } else if (at(K::Dot)) {
      if (!chain.extend()) break;
      advance();
      auto node = std::make_unique<MemberExpr>(span_from(begin));
      node->object = std::move(expr);
      node->member = expect_name("a member name after `.`");
      node->span = span_from(begin);
      const bool named = !node->member.empty();
      expr = std::move(node);
      if (!named) break;
    } else if (at(K::Less) && is_path_expr(*expr) && is_generic_call_open(pos_)) {
      // `name<...>(`: the `>` matching this `<` is followed by `(` (spec §5.5).
      if (!chain.extend()) break;
      std::vector<GenericArg> generic_args = parse_generic_args();
      if (!at(K::LParen)) {
        expected("`(` after the generic arguments");
        break;
      }
      expr = finish_call(std::move(expr), begin, std::move(generic_args), true);
    } else {
      break;
    }
  }
  return expr;
}

ExprPtr Parser::finish_call(ExprPtr callee, uint32_t begin, std::vector<GenericArg> generic_args,
                            bool has_generic_args) {
  auto call = std::make_unique<CallExpr>(span_from(begin));
  call->callee = std::move(callee);
  call->generic_args = std::move(generic_args);
  call->has_generic_args = has_generic_args;
  call->arguments = parse_arguments();
  call->span = span_from(begin);
  return call;
}

std::vector<Argument> Parser::parse_arguments() {
  std::vector<Argument> arguments;
  advance();  // `(`
  while (!at(K::RParen) && !at(K::Eof)) {
    Argument argument;
    const uint32_t begin = here();
    if ((at(K::Identifier) || at(K::Reserved)) && kind(1) == K::Equal) {
      argument.name = expect_name("an argument name");
      advance();  // `=`
    }
    argument.value = parse_expr();
    argument.span = span_from(begin);
    arguments.push_back(std::move(argument));
    if (!accept(K::Comma)) break;
  }
  expect(K::RParen, "to close the argument list");
  return arguments;
}

std::vector<IndexComponent> Parser::parse_index_components() {
  std::vector<IndexComponent> components;
  advance();  // `[`
  const auto at_boundary = [this] {
    return at(K::Comma) || at(K::RBracket) || at(K::Colon) || at(K::ColonColon) || at(K::Eof);
  };
  while (!at(K::RBracket) && !at(K::Eof)) {
    IndexComponent component;
    const uint32_t begin = here();
    if (accept(K::Ellipsis)) {
      component.kind = IndexComponentKind::Ellipsis;
    } else if (at(K::Star)) {
      advance();
      component.kind = IndexComponentKind::Pack;
      component.pack = expect_name("a pack index name after `*`");
    } else {
      if (!at(K::Colon) && !at(K::ColonColon)) component.value = parse_expr();
      if (at(K::Colon) || at(K::ColonColon)) {
        component.kind = IndexComponentKind::Slice;
        component.start = std::move(component.value);
        if (accept(K::Colon)) {
          if (!at_boundary()) component.stop = parse_expr();
          if (accept(K::Colon) && !at_boundary()) component.step = parse_expr();
        } else {
          advance();  // `::`: a slice with no stop
          if (!at_boundary()) component.step = parse_expr();
        }
      }
    }
    component.span = span_from(begin);
    components.push_back(std::move(component));
    if (!accept(K::Comma)) break;
  }
  if (components.empty() && at(K::RBracket)) expected("an index");
  expect(K::RBracket, "to close the index");
  return components;
}

ExprPtr Parser::parse_primary() {
  const uint32_t begin = here();
  const Token& token = peek();
  switch (token.kind) {
    case K::Integer: {
      auto node = std::make_unique<IntegerLiteral>(token.span);
      node->text = std::string(token.text);
      const std::optional<uint64_t> value = integer_literal_value(token.text);
      node->value = value.value_or(0);
      node->exceeds_u64 = !value.has_value();
      advance();
      return node;
    }
    case K::Float: {
      auto node = std::make_unique<FloatLiteral>(token.span);
      node->text = std::string(token.text);
      node->value = float_literal_value(token.text);
      advance();
      return node;
    }
    case K::String: {
      auto node = std::make_unique<StringLiteral>(token.span);
      node->value = decode_string_literal(token.text);
      advance();
      return node;
    }
    case K::KwTrue:
    case K::KwFalse: {
      auto node = std::make_unique<BoolLiteral>(token.span);
      node->value = token.kind == K::KwTrue;
      advance();
      return node;
    }
    case K::KwNone: {
      auto node = std::make_unique<NoneExpr>(token.span);
      advance();
      return node;
    }
    case K::KwSome: {
      advance();
      auto node = std::make_unique<SomeExpr>(span_from(begin));
      if (expect(K::LParen, "after `some`")) {
        node->value = parse_expr();
        expect(K::RParen, "to close `some(...)`");
      } else {
        node->value = error_expr(here());
      }
      node->span = span_from(begin);
      return node;
    }
    case K::Identifier:
    case K::Reserved: {
      if (is_reduction_start(pos_)) return parse_reduction();
      if (token.kind == K::Reserved) report_reserved_word(token);
      auto node = std::make_unique<NameExpr>(token.span);
      node->name = Ident{std::string(token.text), token.span};
      advance();
      return node;
    }
    case K::LParen: return parse_paren_or_tuple();
    case K::LBracket: return parse_shape_literal();
    case K::KwSelf:
    case K::KwSuper: {
      // Reserved (spec §1.4, §2.2). Read as a name so that `self.weight`
      // yields one error rather than a cascade.
      const std::string word(token.text);
      Diagnostic* d = error_here("`" + word + "` is reserved for a future version", "E1103");
      if (d && token.kind == K::KwSelf) d->with_help("name a block's members directly: `weight`, not `self.weight`");
      auto node = std::make_unique<NameExpr>(token.span);
      node->name = Ident{word, token.span};
      advance();
      return node;
    }
    case K::KwIf:
    case K::KwMatch:
    case K::KwFor: {
      const std::string word(token.text);
      Diagnostic* d = error_here("`" + word + "` must be parenthesized to be an operand");
      if (d) d->with_help("write `(" + word + " ...)`, or bind it with `let` first");
      if (token.kind == K::KwIf) return parse_if();
      if (token.kind == K::KwMatch) return parse_match();
      return parse_for_expr();
    }
    default: break;
  }
  expected("an expression");
  return error_expr(begin);
}

ExprPtr Parser::parse_paren_or_tuple() {
  const uint32_t begin = here();
  advance();  // `(`
  if (at(K::RParen)) {
    Diagnostic* d = error_here("`()` is not a value");
    if (d) d->note("Linnet has no unit value; a tuple has at least one element and a comma: `(a,)`");
    advance();
    return error_expr(begin);
  }
  ExprPtr first = parse_expr();
  if (!at(K::Comma)) {
    expect(K::RParen, "to close the parenthesized expression");
    first->parenthesized = true;
    return first;
  }
  auto tuple = std::make_unique<TupleExpr>(span_from(begin));
  tuple->elements.push_back(std::move(first));
  while (accept(K::Comma)) {
    if (at(K::RParen)) break;
    tuple->elements.push_back(parse_expr());
  }
  expect(K::RParen, "to close the tuple");
  tuple->span = span_from(begin);
  return tuple;
}

ExprPtr Parser::parse_shape_literal() {
  const uint32_t begin = here();
  advance();  // `[`
  auto shape = std::make_unique<ShapeExpr>(span_from(begin));
  while (!at(K::RBracket) && !at(K::Eof)) {
    shape->elements.push_back(parse_expr());
    if (!accept(K::Comma)) break;
  }
  expect(K::RBracket, "to close the shape");
  shape->span = span_from(begin);
  return shape;
}

ExprPtr Parser::parse_reduction() {
  const uint32_t begin = here();
  auto node = std::make_unique<ReductionExpr>(span_from(begin));
  const std::string_view word = peek().text;
  node->reduction = word == "sum"    ? ReductionKind::Sum
                    : word == "prod" ? ReductionKind::Prod
                    : word == "max"  ? ReductionKind::Max
                    : word == "min"  ? ReductionKind::Min
                    : word == "any"  ? ReductionKind::Any
                                     : ReductionKind::All;
  node->keyword_span = here_span();
  advance();
  if (accept(K::Less)) {
    node->accumulator = parse_named_type();
    expect(K::Greater, "to close the accumulator type");
  }
  expect(K::LBracket, "to open the reduction indices");
  while (!at(K::RBracket) && !at(K::Eof)) {
    Ident index = expect_name("a reduction index name");
    if (index.empty()) break;
    node->indices.push_back(std::move(index));
    if (!accept(K::Comma)) break;
  }
  if (node->indices.empty() && at(K::RBracket)) expected("a reduction index, as in `sum[k] a[k]`");
  expect(K::RBracket, "to close the reduction indices");
  node->body = parse_expr();
  node->span = span_from(begin);
  return node;
}

// `{ expr }`, one branch of an `if`.
ExprPtr Parser::parse_braced_value() {
  const uint32_t begin = here();
  if (!expect(K::LBrace, "to open the branch")) return error_expr(begin);
  if (at(K::KwLet) || at(K::KwVar) || at(K::KwReturn)) {
    Diagnostic* d = error_here("a branch of an `if` expression holds one expression, not statements");
    if (d) d->with_help("compute the values with `let` before the `if`");
  }
  ExprPtr value = parse_expr();
  expect(K::RBrace, "to close the branch; a branch holds one expression");
  return value;
}

ExprPtr Parser::parse_if() {
  const uint32_t begin = here();
  advance();  // `if`
  auto node = std::make_unique<IfExpr>(span_from(begin));
  node->condition = parse_expr();
  node->then_value = parse_braced_value();
  if (accept(K::KwElse)) {
    if (at(K::KwIf)) {
      Diagnostic* d = error_here("`else if` is not part of Linnet");
      if (d) d->with_help("nest the second `if` in the branch: `else { if c { a } else { b } }`");
      node->else_value = parse_if();
    } else {
      node->else_value = parse_braced_value();
    }
  } else {
    Diagnostic* d = expected("`else`");
    if (d) d->note("an `if` expression has both branches: `if c { a } else { b }`");
    node->else_value = error_expr(here());
  }
  node->span = span_from(begin);
  return node;
}

ExprPtr Parser::parse_match() {
  const uint32_t begin = here();
  advance();  // `match`
  auto node = std::make_unique<MatchExpr>(span_from(begin));
  node->scrutinee = parse_expr();
  if (!expect(K::LBrace, "to open the match arms")) {
    node->span = span_from(begin);
    return node;
  }
  while (!at(K::RBrace) && !at(K::Eof)) {
    const size_t before = pos_;
    const size_t errors_before = errors_;
    MatchArm arm;
    const uint32_t arm_begin = here();
    arm.pattern = parse_pattern(true);
    if (expect(K::FatArrow, "after the arm's pattern")) {
      arm.value = parse_expr();
    } else {
      arm.value = error_expr(here());
    }
    arm.span = span_from(arm_begin);
    node->arms.push_back(std::move(arm));
    if (errors_ != errors_before || pos_ == before) {
      // Resynchronize at the `}` closing this match.
      size_t depth = 0;
      while (!at(K::Eof) && !(depth == 0 && at(K::RBrace))) {
        if (at(K::LParen) || at(K::LBracket) || at(K::LBrace)) ++depth;
        if ((at(K::RParen) || at(K::RBracket) || at(K::RBrace)) && depth > 0) --depth;
        advance();
      }
      break;
    }
    if (at(K::Comma)) {
      Diagnostic* d = error_here("match arms have no separator");
      if (d) d->with_help("remove the `,`; write each arm on its own line");
      advance();
    }
  }
  if (node->arms.empty() && at(K::RBrace)) expected("a match arm, such as `some(x) => x`");
  expect(K::RBrace, "to close the match");
  node->span = span_from(begin);
  return node;
}

ExprPtr Parser::parse_for_expr() {
  const uint32_t begin = here();
  auto node = std::make_unique<ForExpr>(span_from(begin));
  node->loop = parse_for_loop();
  node->span = span_from(begin);
  return node;
}

ExprPtr Parser::path_to_expr(std::vector<Ident> path) {
  const Span first = path.front().span;
  auto name = std::make_unique<NameExpr>(first);
  name->name = std::move(path.front());
  ExprPtr expr = std::move(name);
  for (size_t i = 1; i < path.size(); ++i) {
    auto member = std::make_unique<MemberExpr>(Span{file_, first.begin, path[i].span.end});
    member->object = std::move(expr);
    member->member = std::move(path[i]);
    expr = std::move(member);
  }
  return expr;
}

// ------------------------------------------------------------------ generic arguments

std::vector<GenericArg> Parser::parse_generic_args() {
  std::vector<GenericArg> args;
  advance();  // `<`
  while (!at(K::Greater) && !at(K::Eof)) {
    args.push_back(parse_type_or_expr(false));
    if (!accept(K::Comma)) break;
  }
  if (!accept(K::Greater)) {
    Diagnostic* d = expected("`,` or `>` in the generic arguments");
    if (d && (at(K::Less) || at(K::LessEqual) || at(K::GreaterEqual) || at(K::EqualEqual) || at(K::BangEqual) ||
              at(K::AmpAmp) || at(K::PipePipe))) {
      d->with_help("comparison and logical operators in a generic argument need parentheses: `f<(a < b)>(x)`");
    }
  }
  return args;
}

GenericArg Parser::continue_as_expression(ExprPtr expr, uint32_t begin, bool full_expression) {
  expr = parse_postfix_rest(std::move(expr), begin);
  expr = parse_binary_rest(std::move(expr), begin, full_expression ? 1 : kAdditivePrecedence);
  GenericArg arg;
  arg.expr = std::move(expr);
  arg.span = span_from(begin);
  return arg;
}

// `type_or_expr` (spec §5.5): a type when it parses as one, otherwise an
// arithmetic expression. Decided without backtracking: a name (path) stays a
// type unless what follows can only continue an expression (`(`, `[`, an
// operator). `full_expression` is set inside parentheses, where any
// expression may stand: `f<(a < b)>(x)`.
GenericArg Parser::parse_type_or_expr(bool full_expression) {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  GenericArg arg;
  if (guard.exceeded()) {
    arg.expr = error_expr(begin);
    arg.span = arg.expr->span;
    return arg;
  }
  const auto as_type = [&](TypePtr type) {
    arg.type = std::move(type);
    arg.span = span_from(begin);
    return std::move(arg);
  };

  if (at_word("Tensor") && kind(1) == K::LBracket) return as_type(parse_type());

  if ((at(K::Identifier) || at(K::Reserved)) && !is_reduction_start(pos_)) {
    std::vector<Ident> path = parse_path("a name");
    if (at(K::Less) && (!full_expression || angle_close_[pos_] != 0)) {
      std::vector<GenericArg> generic_args = parse_generic_args();
      if (at(K::LParen)) {
        ExprPtr call = finish_call(path_to_expr(std::move(path)), begin, std::move(generic_args), true);
        return continue_as_expression(std::move(call), begin, full_expression);
      }
      auto named = std::make_unique<NamedType>(span_from(begin));
      named->path = std::move(path);
      named->generic_args = std::move(generic_args);
      named->has_generic_args = true;
      return as_type(finish_optional(std::move(named), begin));
    }
    BinaryInfo info{};
    const bool continues = at(K::LParen) || at(K::LBracket) ||
                           (binary_info(kind(), info) && (full_expression || info.precedence >= kAdditivePrecedence));
    if (continues) return continue_as_expression(path_to_expr(std::move(path)), begin, full_expression);
    if (path.size() == 1 && is_reserved_scalar(path.front().text)) {
      Diagnostic* d = error_at(path.front().span, "`" + path.front().text + "` is reserved for a future version", "E1103");
      if (d) d->note("the scalar types are bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 and f64");
    }
    auto named = std::make_unique<NamedType>(span_from(begin));
    named->path = std::move(path);
    return as_type(finish_optional(std::move(named), begin));
  }

  if (at(K::LParen)) {
    advance();
    if (at(K::RParen)) {
      error_here("`()` is neither a type nor a value");
      advance();
      arg.expr = error_expr(begin);
      arg.span = span_from(begin);
      return arg;
    }
    std::vector<GenericArg> elements;
    bool trailing_comma = false;
    while (true) {
      elements.push_back(parse_type_or_expr(true));
      if (!accept(K::Comma)) break;
      if (at(K::RParen)) {
        trailing_comma = true;
        break;
      }
    }
    expect(K::RParen, "to close the parentheses");
    if (elements.size() == 1 && !trailing_comma) {
      ExprPtr inner = generic_arg_to_expr(std::move(elements.front()));
      inner->parenthesized = true;
      return continue_as_expression(std::move(inner), begin, full_expression);
    }
    const bool all_types = std::all_of(elements.begin(), elements.end(), [](const GenericArg& e) { return e.type != nullptr; });
    if (all_types) {
      auto tuple = std::make_unique<TupleType>(span_from(begin));
      for (GenericArg& element : elements) tuple->elements.push_back(std::move(element.type));
      return as_type(finish_optional(std::move(tuple), begin));
    }
    auto tuple = std::make_unique<TupleExpr>(span_from(begin));
    for (GenericArg& element : elements) tuple->elements.push_back(generic_arg_to_expr(std::move(element)));
    return continue_as_expression(std::move(tuple), begin, full_expression);
  }

  if (at(K::LBracket)) {
    advance();
    auto shape = std::make_unique<ShapeExpr>(span_from(begin));
    if (!at(K::RBracket)) {
      GenericArg first = parse_type_or_expr(true);
      if (accept(K::Semicolon)) {
        auto array = std::make_unique<ArrayType>(span_from(begin));
        if (first.type) {
          array->element = std::move(first.type);
        } else {
          error_at(first.span, "expected a type before `;` in an array type `[T; N]`");
          array->element = std::make_unique<ErrorType>(first.span);
        }
        array->length = parse_expr();
        expect(K::RBracket, "to close the array type");
        array->span = span_from(begin);
        return as_type(finish_optional(std::move(array), begin));
      }
      shape->elements.push_back(generic_arg_to_expr(std::move(first)));
      while (accept(K::Comma)) {
        if (at(K::RBracket)) break;
        shape->elements.push_back(parse_expr());
      }
    }
    expect(K::RBracket, "to close the shape");
    shape->span = span_from(begin);
    return continue_as_expression(std::move(shape), begin, full_expression);
  }

  arg.expr = full_expression ? parse_expr() : parse_binary(kAdditivePrecedence);
  arg.span = span_from(begin);
  return arg;
}

ExprPtr Parser::generic_arg_to_expr(GenericArg arg) {
  if (arg.expr) return std::move(arg.expr);
  return type_to_expr(std::move(arg.type));
}

// A type written where a value stands: a plain path is a name; a tuple of
// such is a tuple value. Anything else is an error.
ExprPtr Parser::type_to_expr(TypePtr type) {
  if (auto* named = type->as<NamedType>(); named && !named->has_generic_args) {
    return path_to_expr(std::move(named->path));
  }
  if (auto* tuple = type->as<TupleType>()) {
    auto expr = std::make_unique<TupleExpr>(tuple->span);
    for (TypePtr& element : tuple->elements) expr->elements.push_back(type_to_expr(std::move(element)));
    return expr;
  }
  error_at(type->span, "expected an expression, found a type");
  return std::make_unique<ErrorExpr>(type->span);
}

// ------------------------------------------------------------------ types

TypePtr Parser::finish_optional(TypePtr type, uint32_t begin) {
  if (!at(K::Question)) return type;
  advance();
  auto optional = std::make_unique<OptionalType>(span_from(begin));
  optional->inner = std::move(type);
  if (at(K::Question)) {
    Diagnostic* d = error_here("a type is made optional once");
    if (d) d->with_help("remove the second `?`");
    advance();
    optional->span = span_from(begin);
  }
  return optional;
}

TypePtr Parser::parse_type() {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  if (guard.exceeded()) return std::make_unique<ErrorType>(span_from(begin));
  return finish_optional(parse_type_primary(), begin);
}

TypePtr Parser::parse_type_primary() {
  const uint32_t begin = here();
  if (at_word("Tensor") && kind(1) == K::LBracket) return parse_tensor_type();
  if (at(K::Identifier) || at(K::Reserved)) return parse_named_type();
  if (at(K::LParen)) {
    advance();
    auto tuple = std::make_unique<TupleType>(span_from(begin));
    if (at(K::RParen)) {
      Diagnostic* d = error_here("`()` is not a type");
      if (d) d->note("a function that returns nothing omits `->`");
      advance();
      tuple->span = span_from(begin);
      return tuple;
    }
    tuple->elements.push_back(parse_type());
    bool comma = false;
    while (accept(K::Comma)) {
      comma = true;
      if (at(K::RParen)) break;
      tuple->elements.push_back(parse_type());
    }
    if (!comma && at(K::RParen)) {
      Diagnostic* d = error_here("a tuple type has at least two elements");
      if (d) d->with_help("remove the parentheses, or write a one-element tuple as `(T,)`");
    }
    expect(K::RParen, "to close the tuple type");
    tuple->span = span_from(begin);
    return tuple;
  }
  if (at(K::LBracket)) {
    advance();
    auto array = std::make_unique<ArrayType>(span_from(begin));
    array->element = parse_type();
    if (expect(K::Semicolon, "and the array's length, as in `[Layer<T>; N]`")) {
      array->length = parse_expr();
    } else {
      array->length = error_expr(here());
    }
    expect(K::RBracket, "to close the array type");
    array->span = span_from(begin);
    return array;
  }
  expected("a type");
  return std::make_unique<ErrorType>(span_from(begin));
}

TypePtr Parser::parse_named_type() {
  const uint32_t begin = here();
  auto named = std::make_unique<NamedType>(span_from(begin));
  named->path = parse_path("a type name");
  if (named->path.size() == 1 && is_reserved_scalar(named->path.front().text)) {
    Diagnostic* d = error_at(named->path.front().span,
                             "`" + named->path.front().text + "` is reserved for a future version", "E1103");
    if (d) d->note("the scalar types are bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 and f64");
  }
  if (at(K::Less)) {
    named->generic_args = parse_generic_args();
    named->has_generic_args = true;
  }
  named->span = span_from(begin);
  return named;
}

TypePtr Parser::parse_tensor_type() {
  const uint32_t begin = here();
  advance();  // `Tensor`
  advance();  // `[`
  auto tensor = std::make_unique<TensorType>(span_from(begin));
  const bool rank_zero = at(K::Semicolon);
  if (!rank_zero) {
    while (!at(K::Semicolon) && !at(K::RBracket) && !at(K::Eof)) {
      ShapeElement element;
      const uint32_t element_begin = here();
      if (accept(K::Star)) {
        element.is_pack = true;
        element.pack = expect_name("a shape pack name after `*`");
      } else {
        element.dim = parse_expr();
      }
      element.span = span_from(element_begin);
      tensor->shape.push_back(std::move(element));
      if (!accept(K::Comma)) break;
    }
  }
  if (expect(K::Semicolon, "and the element dtype, as in `Tensor[N; f32]`")) {
    if (at(K::Identifier) || at(K::Reserved)) {
      tensor->dtype = parse_named_type();
    } else {
      expected("an element dtype such as `f32` or `T`");
      tensor->dtype = std::make_unique<ErrorType>(here_span());
    }
  } else {
    tensor->dtype = std::make_unique<ErrorType>(here_span());
  }
  expect(K::RBracket, "to close the tensor type");
  tensor->span = span_from(begin);
  if (rank_zero) {
    Diagnostic* d = error_at(tensor->span, "a rank-zero tensor type is reserved", "E1103");
    if (d) d->with_help("a scalar value has a scalar type: write `f32` rather than `Tensor[; f32]`");
  }
  return tensor;
}

// ------------------------------------------------------------------ patterns

PatternPtr Parser::parse_pattern(bool match_arm) {
  const uint32_t begin = here();
  DepthGuard guard(*this);
  if (guard.exceeded()) return std::make_unique<ErrorPattern>(span_from(begin));
  switch (kind()) {
    case K::Identifier:
    case K::Reserved: {
      auto binding = std::make_unique<BindingPattern>(here_span());
      binding->name = expect_name("a name");
      return binding;
    }
    case K::KwNone: {
      auto none = std::make_unique<NonePattern>(here_span());
      advance();
      return none;
    }
    case K::KwSome: {
      advance();
      auto some = std::make_unique<SomePattern>(span_from(begin));
      if (expect(K::LParen, "after `some`")) {
        some->inner = parse_pattern(false);
        expect(K::RParen, "to close `some(...)`");
      } else {
        some->inner = std::make_unique<ErrorPattern>(here_span());
      }
      some->span = span_from(begin);
      return some;
    }
    case K::LParen: {
      if (match_arm) {
        Diagnostic* d = error_here("a match arm cannot begin with a tuple pattern");
        if (d) {
          d->note("arms have no separator, so a `(` would continue the previous arm's value");
          d->with_help("match on an optional tuple with `some((a, b)) => ...`");
        }
        return std::make_unique<ErrorPattern>(span_from(begin));
      }
      advance();
      auto tuple = std::make_unique<TuplePattern>(span_from(begin));
      while (!at(K::RParen) && !at(K::Eof)) {
        tuple->elements.push_back(parse_pattern(false));
        if (!accept(K::Comma)) break;
      }
      expect(K::RParen, "to close the tuple pattern");
      tuple->span = span_from(begin);
      return tuple;
    }
    default: break;
  }
  expected(match_arm ? "a match arm pattern (a name, `some(...)` or `none`)" : "a pattern");
  return std::make_unique<ErrorPattern>(span_from(begin));
}

}  // namespace linnet::syntax::detail
