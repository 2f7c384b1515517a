// The static walk behind `linnet explain` (explain.hpp says what it follows).
//
// The walk carries, per function it enters, the generic bindings it knows
// and a scope of local names with what it knows of their values
// (StaticValue: a dtype, a tuple of them, or a block a method can be called
// on). Every call it meets is resolved: a function of the current module or
// an import, a method of the current block, a method of a sub-block, or a
// builtin (whose result dtype follows from its arguments). Ops are recorded
// as sites; functions, methods and the bodies of ops that run as bodies are
// walked in turn.
#include "linnet/ops/explain.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace linnet::ops {

namespace {

namespace ast = syntax::ast;
using eval::GenericBindings;
using eval::GenericValue;
using tensor::DType;

constexpr int kMaxDepth = 128;

// What the walk knows of a value.
struct StaticValue {
  std::optional<DType> dtype;         // a tensor's or scalar's dtype
  std::vector<StaticValue> elements;  // a tuple's elements
  bool is_tuple = false;
  // A block instance (a sub member, or a `static for` variable over a sub
  // array), or a sub array itself.
  const syntax::Module* block_module = nullptr;
  const ast::BlockItem* block = nullptr;
  GenericBindings block_generics;
  bool is_block_array = false;
  std::optional<int64_t> array_length;

  static StaticValue of_dtype(std::optional<DType> dtype) {
    StaticValue value;
    value.dtype = dtype;
    return value;
  }
};

// Multiplies trip counts; unknown stays unknown.
std::optional<int64_t> times(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a * *b;
}

// --- Generic values and types ----------------------------------------------------

std::optional<int64_t> evaluate_dim(const ast::Expr& expr, const GenericBindings& bindings) {
  switch (expr.kind) {
    case ast::ExprKind::Integer: return static_cast<int64_t>(expr.cast<ast::IntegerLiteral>().value);
    case ast::ExprKind::Name: {
      const auto found = bindings.find(expr.cast<ast::NameExpr>().name.text);
      if (found == bindings.end() || found->second.kind != GenericValue::Kind::Dim) return std::nullopt;
      return found->second.dim;
    }
    case ast::ExprKind::Unary: {
      const auto& unary = expr.cast<ast::UnaryExpr>();
      const auto operand = evaluate_dim(*unary.operand, bindings);
      if (!operand) return std::nullopt;
      return unary.op == ast::UnaryOp::Negate ? -*operand : *operand;
    }
    case ast::ExprKind::Binary: {
      const auto& binary = expr.cast<ast::BinaryExpr>();
      const auto lhs = evaluate_dim(*binary.lhs, bindings), rhs = evaluate_dim(*binary.rhs, bindings);
      if (!lhs || !rhs) return std::nullopt;
      switch (binary.op) {
        case ast::BinaryOp::Add: return *lhs + *rhs;
        case ast::BinaryOp::Subtract: return *lhs - *rhs;
        case ast::BinaryOp::Multiply: return *lhs * *rhs;
        case ast::BinaryOp::Divide: return *rhs == 0 ? std::nullopt : std::optional<int64_t>(*lhs / *rhs);
        case ast::BinaryOp::Remainder: return *rhs == 0 ? std::nullopt : std::optional<int64_t>(*lhs % *rhs);
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

// A single-segment type name: a generic bound to a dtype, or a scalar type.
std::optional<DType> named_dtype(const ast::Type& type, const GenericBindings& bindings) {
  const auto* named = type.as<ast::NamedType>();
  if (named == nullptr || named->path.size() != 1) return std::nullopt;
  const std::string& name = named->path[0].text;
  const auto found = bindings.find(name);
  if (found != bindings.end()) {
    if (found->second.kind == GenericValue::Kind::DType) return found->second.dtype;
    return std::nullopt;
  }
  return tensor::dtype_from_name(name);
}

std::optional<GenericValue> evaluate_generic_arg(const ast::GenericArg& arg, const GenericBindings& bindings) {
  if (arg.type) {
    if (const auto* named = arg.type->as<ast::NamedType>(); named != nullptr && named->path.size() == 1) {
      const auto found = bindings.find(named->path[0].text);
      if (found != bindings.end()) return found->second;
      if (auto dtype = tensor::dtype_from_name(named->path[0].text)) return GenericValue::of_dtype(*dtype);
    }
    return std::nullopt;
  }
  if (!arg.expr) return std::nullopt;
  if (const auto* shape = arg.expr->as<ast::ShapeExpr>()) {
    tensor::Shape dims;
    for (const auto& element : shape->elements) {
      const auto value = evaluate_dim(*element, bindings);
      if (!value) return std::nullopt;
      dims.push_back(*value);
    }
    return GenericValue::of_shape(dims);
  }
  if (const auto value = evaluate_dim(*arg.expr, bindings)) return GenericValue::of_dim(*value);
  return std::nullopt;
}

// The generics of a declaration given explicit arguments (positionally),
// then defaults for the ones still unbound (evaluated in what is bound so far).
GenericBindings bind_generics(const std::vector<ast::GenericParam>& params, const std::vector<ast::GenericArg>& args,
                              const GenericBindings& caller, GenericBindings bound) {
  for (size_t i = 0; i < params.size() && i < args.size(); ++i) {
    if (auto value = evaluate_generic_arg(args[i], caller)) bound[params[i].name.text] = *value;
  }
  for (const ast::GenericParam& param : params) {
    if (bound.count(param.name.text) || !param.default_value) continue;
    if (auto value = evaluate_generic_arg(*param.default_value, bound)) bound[param.name.text] = *value;
  }
  return bound;
}

// --- The walk ---------------------------------------------------------------------

struct Frame {
  const syntax::Module* module = nullptr;        // where the function is written
  const ast::BlockItem* block = nullptr;         // its block, for members and methods
  const syntax::Module* block_module = nullptr;  // where that block is declared
  GenericBindings generics;
  std::vector<std::map<std::string, StaticValue>> scopes;
  std::string display;                     // "gpt_oss::Model.forward"
  std::optional<int64_t> multiplier = 1;   // how often this code runs per entry call

  void declare(const std::string& name, StaticValue value) { scopes.back()[name] = std::move(value); }
  const StaticValue* local(const std::string& name) const {
    for (auto scope = scopes.rbegin(); scope != scopes.rend(); ++scope) {
      const auto found = scope->find(name);
      if (found != scope->end()) return &found->second;
    }
    return nullptr;
  }
};

// A resolved call target that the walk enters.
struct Callee {
  const syntax::Module* module = nullptr;
  const ast::FunctionItem* function = nullptr;
  const ast::BlockItem* block = nullptr;  // set for a method
  GenericBindings block_generics;
};

class Walker {
 public:
  explicit Walker(const ExplainRequest& request) : request_(request) {}

  Explanation run() {
    Frame frame;
    frame.module = request_.module;
    frame.block = request_.block;
    frame.block_module = request_.module;
    frame.generics = request_.generics;
    if (request_.block) frame.generics = bind_generics(request_.block->generics, {}, {}, frame.generics);
    frame.generics = bind_generics(request_.entry->generics, {}, {}, frame.generics);
    frame.display = display_name(request_.module, request_.block, *request_.entry);
    frame.scopes.emplace_back();
    for (const ast::Param& param : request_.entry->params) {
      frame.declare(param.name.text, value_of_type(*param.type, frame.generics, frame.block_module));
    }
    walk_body(request_.entry->body, frame, 0);

    Explanation explanation;
    explanation.entry = frame.display;
    explanation.bindings = eval::describe_bindings(frame.generics);
    explanation.policy = request_.policy;
    explanation.table = std::string(request_.table->name());
    explanation.sites = std::move(sites_);
    explanation.notes = std::move(notes_);
    return explanation;
  }

 private:
  const ExplainRequest& request_;
  std::vector<ExplainedSite> sites_;
  std::map<std::tuple<uint32_t, uint32_t, std::string, std::string>, size_t> site_index_;
  std::vector<std::string> notes_;

  const syntax::Module* module_at(int index) const {
    if (index < 0 || static_cast<size_t>(index) >= request_.program->modules().size()) return nullptr;
    return request_.program->modules()[static_cast<size_t>(index)].get();
  }

  static std::string display_name(const syntax::Module* module, const ast::BlockItem* block,
                                  const ast::FunctionItem& function) {
    std::string name = module && !module->name.empty() ? module->name + "::" : "";
    if (block) name += block->name.text + ".";
    return name + function.name.text;
  }

  std::string location(syntax::Span span) const {
    if (!span.valid() || span.file >= request_.sources->size()) return "<unknown>";
    const syntax::SourceFile& file = request_.sources->file(span.file);
    const syntax::LineColumn at = file.line_column(span.begin);
    return file.path() + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
  }

  void note(const std::string& text) {
    if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
  }

  // A top-level item visible in `module` by `name`: its own, or imported.
  std::pair<const syntax::Module*, const ast::Item*> resolve_item(const syntax::Module* module,
                                                                   const std::string& name) const {
    if (module == nullptr) return {nullptr, nullptr};
    if (const auto own = module->items.find(name); own != module->items.end()) return {module, own->second};
    if (const auto imported = module->imports.find(name); imported != module->imports.end()) {
      return {module_at(imported->second.module), imported->second.item};
    }
    return {nullptr, nullptr};
  }

  // The block a sub member's type names, with its generics bound.
  StaticValue block_value(const ast::Type& type, const GenericBindings& bindings, const syntax::Module* module) const {
    if (const auto* optional = type.as<ast::OptionalType>()) return block_value(*optional->inner, bindings, module);
    if (const auto* array = type.as<ast::ArrayType>()) {
      StaticValue value = block_value(*array->element, bindings, module);
      value.is_block_array = true;
      value.array_length = evaluate_dim(*array->length, bindings);
      return value;
    }
    StaticValue value;
    const auto* named = type.as<ast::NamedType>();
    if (named == nullptr || named->path.empty()) return value;
    const syntax::Module* scope = module;
    const ast::Item* item = nullptr;
    if (named->path.size() == 1) {
      std::tie(scope, item) = resolve_item(module, named->path[0].text);
    } else {
      // `alias.Block`: a whole-module import, then the block in it.
      const auto imported = module->imports.find(named->path[0].text);
      if (imported != module->imports.end() && imported->second.item == nullptr) {
        scope = module_at(imported->second.module);
        std::tie(scope, item) = resolve_item(scope, named->path.back().text);
      }
    }
    const auto* block = item ? item->as<ast::BlockItem>() : nullptr;
    if (block == nullptr) return value;
    value.block_module = scope;
    value.block = block;
    value.block_generics = bind_generics(block->generics, named->generic_args, bindings, {});
    return value;
  }

  // What a declared type says of a value: its dtype, a tuple's, or a block.
  StaticValue value_of_type(const ast::Type& type, const GenericBindings& bindings,
                            const syntax::Module* module) const {
    if (const auto* tensor_type = type.as<ast::TensorType>()) {
      return StaticValue::of_dtype(tensor_type->dtype ? named_dtype(*tensor_type->dtype, bindings) : std::nullopt);
    }
    if (const auto* tuple = type.as<ast::TupleType>()) {
      StaticValue value;
      value.is_tuple = true;
      for (const auto& element : tuple->elements) value.elements.push_back(value_of_type(*element, bindings, module));
      return value;
    }
    if (const auto* optional = type.as<ast::OptionalType>()) return value_of_type(*optional->inner, bindings, module);
    if (auto dtype = named_dtype(type, bindings)) return StaticValue::of_dtype(dtype);
    return block_value(type, bindings, module);
  }

  // A name used as a value.
  StaticValue lookup(const std::string& name, const Frame& frame) const {
    if (const StaticValue* local = frame.local(name)) return *local;
    if (frame.block != nullptr) {
      for (const auto& member : frame.block->members) {
        const auto* item = member->as<ast::MemberItem>();
        if (item == nullptr || item->name.text != name || !item->type) continue;
        return value_of_type(*item->type, frame.generics, frame.block_module);
      }
    }
    const auto [module, item] = resolve_item(frame.module, name);
    if (item != nullptr) {
      if (const auto* constant = item->as<ast::ConstItem>(); constant != nullptr && constant->type) {
        return value_of_type(*constant->type, {}, module);
      }
      if (item->kind == ast::ItemKind::Function) return {};
    }
    return {};
  }

  void bind_pattern(const ast::Pattern& pattern, const StaticValue& value, Frame& frame) const {
    if (const auto* binding = pattern.as<ast::BindingPattern>()) {
      frame.declare(binding->name.text, value);
    } else if (const auto* tuple = pattern.as<ast::TuplePattern>()) {
      for (size_t i = 0; i < tuple->elements.size(); ++i) {
        bind_pattern(*tuple->elements[i], i < value.elements.size() ? value.elements[i] : StaticValue{}, frame);
      }
    } else if (const auto* some = pattern.as<ast::SomePattern>()) {
      bind_pattern(*some->inner, value, frame);
    }
  }

  // --- Statements ---------------------------------------------------------------

  void walk_body(const ast::Body& body, Frame& frame, int depth) {
    frame.scopes.emplace_back();
    for (const auto& statement : body.statements) walk_statement(*statement, frame, depth);
    frame.scopes.pop_back();
  }

  void walk_statement(const ast::Stmt& statement, Frame& frame, int depth) {
    switch (statement.kind) {
      case ast::StmtKind::Let: {
        const auto& let = statement.cast<ast::LetStmt>();
        StaticValue value = walk(*let.value, frame, depth);
        if (let.type) value = value_of_type(*let.type, frame.generics, frame.block_module);
        bind_pattern(*let.pattern, value, frame);
        break;
      }
      case ast::StmtKind::Comprehension: {
        const auto& comprehension = statement.cast<ast::ComprehensionStmt>();
        frame.declare(comprehension.name.text, walk(*comprehension.value, frame, depth));
        break;
      }
      case ast::StmtKind::Var: {
        const auto& var = statement.cast<ast::VarStmt>();
        StaticValue value = walk(*var.value, frame, depth);
        if (var.type) value = value_of_type(*var.type, frame.generics, frame.block_module);
        frame.declare(var.name.text, value);
        break;
      }
      case ast::StmtKind::Assign: {
        const auto& assign = statement.cast<ast::AssignStmt>();
        StaticValue value = walk(*assign.value, frame, depth);
        if (frame.local(assign.target.text) != nullptr && value.dtype) {
          for (auto scope = frame.scopes.rbegin(); scope != frame.scopes.rend(); ++scope) {
            if (auto found = scope->find(assign.target.text); found != scope->end()) {
              found->second = value;
              break;
            }
          }
        }
        break;
      }
      case ast::StmtKind::Return: {
        const auto& ret = statement.cast<ast::ReturnStmt>();
        if (ret.value) walk(*ret.value, frame, depth);
        break;
      }
      case ast::StmtKind::StaticFor: {
        const auto& loop = statement.cast<ast::StaticForStmt>();
        const std::optional<int64_t> outer = frame.multiplier;
        frame.scopes.emplace_back();
        if (loop.is_range()) {
          walk(*loop.iterable, frame, depth);
          walk(*loop.range_stop, frame, depth);
          const auto start = evaluate_dim(*loop.iterable, frame.generics);
          const auto stop = evaluate_dim(*loop.range_stop, frame.generics);
          frame.multiplier = times(outer, start && stop ? std::optional<int64_t>(std::max<int64_t>(*stop - *start, 0))
                                                        : std::nullopt);
          bind_pattern(*loop.pattern, {}, frame);
        } else {
          StaticValue array = walk(*loop.iterable, frame, depth);
          const std::optional<int64_t> length = array.is_block_array ? array.array_length : std::nullopt;
          array.is_block_array = false;
          array.array_length.reset();
          frame.multiplier = times(outer, length);
          bind_pattern(*loop.pattern, array, frame);
        }
        walk_body(loop.body, frame, depth);
        frame.scopes.pop_back();
        frame.multiplier = outer;
        break;
      }
      case ast::StmtKind::While: {
        const auto& loop = statement.cast<ast::WhileStmt>();
        walk(*loop.condition, frame, depth);
        const std::optional<int64_t> outer = frame.multiplier;
        frame.multiplier.reset();
        walk_body(loop.body, frame, depth);
        frame.multiplier = outer;
        break;
      }
      case ast::StmtKind::For: walk_loop(statement.cast<ast::ForStmt>().loop, frame, depth); break;
      case ast::StmtKind::Yield: walk(*statement.cast<ast::YieldStmt>().value, frame, depth); break;
      case ast::StmtKind::Store: {
        const auto& store = statement.cast<ast::StoreStmt>();
        walk(*store.target, frame, depth);
        walk(*store.value, frame, depth);
        if (store.mask) walk(*store.mask, frame, depth);
        break;
      }
      case ast::StmtKind::Error: break;
    }
  }

  void walk_loop(const ast::ForLoop& loop, Frame& frame, int depth) {
    walk(*loop.start, frame, depth);
    walk(*loop.stop, frame, depth);
    const std::optional<int64_t> outer = frame.multiplier;
    frame.multiplier.reset();  // a runtime loop: its trip count is not known here
    frame.scopes.emplace_back();
    frame.declare(loop.variable.text, {});
    walk_body(loop.body, frame, depth);
    frame.scopes.pop_back();
    frame.multiplier = outer;
  }

  // --- Expressions ----------------------------------------------------------------

  // Walks `expr` (recording and following the calls in it) and returns what
  // is known of its value.
  StaticValue walk(const ast::Expr& expr, Frame& frame, int depth) {
    switch (expr.kind) {
      case ast::ExprKind::Integer:
      case ast::ExprKind::Float:
      case ast::ExprKind::String:
      case ast::ExprKind::None:
      case ast::ExprKind::Error: return {};
      case ast::ExprKind::Bool: return StaticValue::of_dtype(DType::Bool);
      case ast::ExprKind::Name: return lookup(expr.cast<ast::NameExpr>().name.text, frame);
      case ast::ExprKind::Member: {
        const auto& member = expr.cast<ast::MemberExpr>();
        const StaticValue object = walk(*member.object, frame, depth);
        if (object.block != nullptr) {
          for (const auto& item : object.block->members) {
            const auto* declared = item->as<ast::MemberItem>();
            if (declared != nullptr && declared->name.text == member.member.text && declared->type) {
              return value_of_type(*declared->type, object.block_generics, object.block_module);
            }
          }
        }
        return {};
      }
      case ast::ExprKind::Call: return walk_call(expr.cast<ast::CallExpr>(), frame, depth);
      case ast::ExprKind::Index: {
        const auto& index = expr.cast<ast::IndexExpr>();
        StaticValue object = walk(*index.object, frame, depth);
        for (const auto& component : index.components) {
          for (const ast::ExprPtr* part : {&component.value, &component.start, &component.stop, &component.step}) {
            if (*part) walk(**part, frame, depth);
          }
        }
        if (object.is_block_array) {  // `layers[0]`: one block of the array
          object.is_block_array = false;
          object.array_length.reset();
        }
        return object;
      }
      case ast::ExprKind::Unary: {
        const auto& unary = expr.cast<ast::UnaryExpr>();
        StaticValue operand = walk(*unary.operand, frame, depth);
        return unary.op == ast::UnaryOp::Not && !operand.dtype ? StaticValue{} : operand;
      }
      case ast::ExprKind::Binary: {
        const auto& binary = expr.cast<ast::BinaryExpr>();
        const StaticValue lhs = walk(*binary.lhs, frame, depth);
        const StaticValue rhs = walk(*binary.rhs, frame, depth);
        switch (binary.op) {
          case ast::BinaryOp::Equal:
          case ast::BinaryOp::NotEqual:
          case ast::BinaryOp::Less:
          case ast::BinaryOp::LessEqual:
          case ast::BinaryOp::Greater:
          case ast::BinaryOp::GreaterEqual:
          case ast::BinaryOp::And:
          case ast::BinaryOp::Or: return StaticValue::of_dtype(DType::Bool);
          default: return StaticValue::of_dtype(lhs.dtype ? lhs.dtype : rhs.dtype);
        }
      }
      case ast::ExprKind::Tuple: {
        StaticValue value;
        value.is_tuple = true;
        for (const auto& element : expr.cast<ast::TupleExpr>().elements) value.elements.push_back(walk(*element, frame, depth));
        return value;
      }
      case ast::ExprKind::Shape: {
        for (const auto& element : expr.cast<ast::ShapeExpr>().elements) walk(*element, frame, depth);
        return {};
      }
      case ast::ExprKind::Reduction: {
        const auto& reduction = expr.cast<ast::ReductionExpr>();
        StaticValue body = walk(*reduction.body, frame, depth);
        if (reduction.accumulator) return StaticValue::of_dtype(named_dtype(*reduction.accumulator, frame.generics));
        return body;
      }
      case ast::ExprKind::Some: return walk(*expr.cast<ast::SomeExpr>().value, frame, depth);
      case ast::ExprKind::If: {
        const auto& branch = expr.cast<ast::IfExpr>();
        walk(*branch.condition, frame, depth);
        StaticValue then_value = walk(*branch.then_value, frame, depth);
        StaticValue else_value = walk(*branch.else_value, frame, depth);
        return then_value.dtype ? then_value : else_value;
      }
      case ast::ExprKind::Match: {
        const auto& match = expr.cast<ast::MatchExpr>();
        const StaticValue scrutinee = walk(*match.scrutinee, frame, depth);
        StaticValue result;
        for (const ast::MatchArm& arm : match.arms) {
          frame.scopes.emplace_back();
          bind_pattern(*arm.pattern, scrutinee, frame);
          StaticValue value = walk(*arm.value, frame, depth);
          frame.scopes.pop_back();
          if (!result.dtype && !result.is_tuple) result = value;
        }
        return result;
      }
      case ast::ExprKind::For: {
        walk_loop(expr.cast<ast::ForExpr>().loop, frame, depth);
        return {};
      }
    }
    return {};
  }

  // The dtype a builtin returns, from its generic argument or its operands.
  StaticValue builtin_result(const std::string& name, const ast::CallExpr& call, const std::vector<StaticValue>& args,
                             const Frame& frame) const {
    auto generic_dtype = [&]() -> std::optional<DType> {
      if (call.generic_args.empty() || !call.generic_args[0].type) return std::nullopt;
      return named_dtype(*call.generic_args[0].type, frame.generics);
    };
    if (name == "cast" || name == "iota" || name == "fill") return StaticValue::of_dtype(generic_dtype());
    if (name == "select") return args.size() > 1 ? (args[1].dtype ? args[1] : args.size() > 2 ? args[2] : StaticValue{})
                                                 : StaticValue{};
    for (const StaticValue& arg : args) {
      if (arg.dtype) return StaticValue::of_dtype(arg.dtype);
    }
    return {};
  }

  StaticValue walk_call(const ast::CallExpr& call, Frame& frame, int depth) {
    std::vector<StaticValue> args;
    for (const ast::Argument& argument : call.arguments) args.push_back(walk(*argument.value, frame, depth));

    std::optional<Callee> callee = resolve_callee(*call.callee, frame, depth);
    if (!callee) {
      const auto* name = call.callee->as<ast::NameExpr>();
      return builtin_result(name ? name->name.text : "", call, args, frame);
    }
    return enter(*callee, call, args, frame, depth);
  }

  std::optional<Callee> resolve_callee(const ast::Expr& target, Frame& frame, int depth) {
    auto method_of = [](const ast::BlockItem& block, const std::string& name) -> const ast::FunctionItem* {
      for (const auto& member : block.members) {
        if (const auto* function = member->as<ast::FunctionItem>(); function && function->name.text == name) return function;
      }
      return nullptr;
    };
    if (const auto* name = target.as<ast::NameExpr>()) {
      const std::string& text = name->name.text;
      if (frame.local(text) != nullptr) return std::nullopt;
      if (frame.block != nullptr) {
        if (const ast::FunctionItem* method = method_of(*frame.block, text)) {
          GenericBindings block_generics;
          for (const auto& generic : frame.block->generics) {
            if (auto found = frame.generics.find(generic.name.text); found != frame.generics.end()) {
              block_generics.insert(*found);
            }
          }
          return Callee{frame.block_module, method, frame.block, block_generics};
        }
      }
      const auto [module, item] = resolve_item(frame.module, text);
      if (const auto* function = item ? item->as<ast::FunctionItem>() : nullptr) return Callee{module, function, nullptr, {}};
      return std::nullopt;  // a builtin, or something the walk does not know
    }
    if (const auto* member = target.as<ast::MemberExpr>()) {
      // `alias.function` through a whole-module import.
      if (const auto* object = member->object->as<ast::NameExpr>(); object && frame.local(object->name.text) == nullptr) {
        const auto imported = frame.module->imports.find(object->name.text);
        if (imported != frame.module->imports.end() && imported->second.item == nullptr) {
          const auto [module, item] = resolve_item(module_at(imported->second.module), member->member.text);
          if (const auto* function = item ? item->as<ast::FunctionItem>() : nullptr) {
            return Callee{module, function, nullptr, {}};
          }
        }
      }
      const StaticValue object = walk(*member->object, frame, depth);
      if (object.block != nullptr && !object.is_block_array) {
        if (const ast::FunctionItem* method = method_of(*object.block, member->member.text)) {
          return Callee{object.block_module, method, object.block, object.block_generics};
        }
      }
      note("a call of `." + member->member.text + "` at " + location(member->member.span) +
           " names no method the walk could resolve");
    }
    return std::nullopt;
  }

  // Binds the callee's generics, records an op, and walks what runs.
  StaticValue enter(const Callee& callee, const ast::CallExpr& call, const std::vector<StaticValue>& args,
                    Frame& caller, int depth) {
    const ast::FunctionItem& function = *callee.function;
    GenericBindings generics = callee.block_generics;
    for (size_t i = 0; i < function.generics.size() && i < call.generic_args.size(); ++i) {
      if (auto value = evaluate_generic_arg(call.generic_args[i], caller.generics)) {
        generics[function.generics[i].name.text] = *value;
      }
    }
    // Parameter values by position or name; dtype generics inferred from them.
    std::vector<StaticValue> params(function.params.size());
    size_t next = 0;
    for (size_t i = 0; i < call.arguments.size(); ++i) {
      const ast::Argument& argument = call.arguments[i];
      size_t slot = next;
      if (!argument.name.empty()) {
        for (size_t p = 0; p < function.params.size(); ++p) {
          if (function.params[p].name.text == argument.name.text) slot = p;
        }
      } else {
        ++next;
      }
      if (slot < params.size()) params[slot] = args[i];
    }
    for (size_t p = 0; p < function.params.size(); ++p) {
      const auto* tensor_type = function.params[p].type->as<ast::TensorType>();
      const ast::Type* dtype_type = tensor_type ? tensor_type->dtype.get() : function.params[p].type.get();
      const auto* named = dtype_type ? dtype_type->as<ast::NamedType>() : nullptr;
      if (named == nullptr || named->path.size() != 1 || !params[p].dtype) continue;
      for (const ast::GenericParam& generic : function.generics) {
        if (generic.name.text == named->path[0].text && !generics.count(generic.name.text)) {
          generics[generic.name.text] = GenericValue::of_dtype(*params[p].dtype);
        }
      }
    }
    generics = bind_generics(function.generics, {}, {}, generics);

    StaticValue result;
    if (function.result) result = value_of_type(*function.result, generics, callee.module);

    bool walk_body_of_callee = true;
    if (function.function == ast::FunctionKind::Op) {
      walk_body_of_callee = record_op(callee, function, call, generics, params, caller) != SiteDecision::Native;
    }
    if (!walk_body_of_callee) return result;
    if (depth >= kMaxDepth) {
      note("calls nested deeper than " + std::to_string(kMaxDepth) + " were not followed");
      return result;
    }

    Frame frame;
    frame.module = callee.module;
    frame.block = callee.block;
    frame.block_module = callee.module;
    frame.generics = generics;
    frame.display = display_name(callee.module, callee.block, function);
    if (function.function == ast::FunctionKind::Op) frame.display += " (body)";
    frame.multiplier = caller.multiplier;
    frame.scopes.emplace_back();
    for (size_t p = 0; p < function.params.size(); ++p) {
      StaticValue declared = value_of_type(*function.params[p].type, generics, callee.module);
      frame.declare(function.params[p].name.text, declared.dtype || declared.is_tuple || declared.block ? declared : params[p]);
    }
    walk_body(function.body, frame, depth + 1);
    return result;
  }

  SiteDecision record_op(const Callee& callee, const ast::FunctionItem& function, const ast::CallExpr& call,
                         const GenericBindings& generics, const std::vector<StaticValue>& params, const Frame& caller) {
    ExplainedSite site;
    site.span = call.span;
    site.location = location(call.span);
    // Named as the interpreter names it (and as the table is keyed).
    site.op = callee.module && !callee.module->name.empty() ? callee.module->name + "::" + function.name.text
                                                           : function.name.text;
    site.within = caller.display;
    site.reached = caller.multiplier;
    // The dispatcher's rule (call_dtype): T, else the first tensor argument.
    if (auto t = generics.find("T"); t != generics.end() && t->second.kind == GenericValue::Kind::DType) {
      site.dtype = t->second.dtype;
    } else {
      for (size_t p = 0; p < function.params.size() && !site.dtype; ++p) {
        if (function.params[p].type->as<ast::TensorType>() != nullptr) site.dtype = params[p].dtype;
      }
    }
    if (site.dtype) {
      const KernelChoice choice = request_.table->find(site.op, *site.dtype, request_.policy);
      site.decision = choice.kernel ? SiteDecision::Native : SiteDecision::Body;
      site.reason = choice.reason;
    } else if (request_.policy == eval::NumericsPolicy::Exact) {
      site.decision = SiteDecision::Body;
      site.reason = request_.table->find(site.op, DType::F32, request_.policy).reason;
    } else if (!request_.table->has_op(site.op)) {
      site.decision = SiteDecision::Body;
      site.reason = "body: no native kernel for this op";
    } else {
      site.decision = SiteDecision::Unknown;
      site.reason = "depends on the dtype, which is not known here (kernels exist for f32 and bf16)";
    }

    const std::string dtype_text = site.dtype ? std::string(tensor::dtype_name(*site.dtype)) : "?";
    const auto key = std::make_tuple(call.span.file, call.span.begin, site.op, dtype_text + "/" + site.within);
    if (const auto found = site_index_.find(key); found != site_index_.end()) {
      ExplainedSite& existing = sites_[found->second];
      existing.reached = existing.reached && site.reached ? std::optional<int64_t>(*existing.reached + *site.reached)
                                                          : std::nullopt;
      return site.decision;
    }
    site_index_[key] = sites_.size();
    const SiteDecision decision = site.decision;
    sites_.push_back(std::move(site));
    return decision;
  }
};

}  // namespace

const char* site_decision_name(SiteDecision decision) {
  switch (decision) {
    case SiteDecision::Native: return "native";
    case SiteDecision::Body: return "body";
    case SiteDecision::Unknown: return "unknown";
  }
  return "unknown";
}

Explanation explain_entry(const ExplainRequest& request) {
  if (request.program == nullptr || request.sources == nullptr || request.module == nullptr ||
      request.entry == nullptr || request.table == nullptr) {
    throw std::invalid_argument("explain_entry: the request needs a program, its sources, a module, an entry and a table");
  }
  return Walker(request).run();
}

}  // namespace linnet::ops
