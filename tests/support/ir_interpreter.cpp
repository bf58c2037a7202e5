#include "tests/support/ir_interpreter.hpp"

#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/printer.hpp"

#include <stdexcept>

namespace loom::test {

using namespace ir;

namespace {

class Interpreter {
public:
    Interpreter(const std::map<std::string, InterpretedArray>& arrays) : arrays_(arrays) {
        loads_ = [this](const Expr& e) { return load(e); };
    }

    Bindings vars;

    void run(const Stmt& s) {
        switch (s.kind()) {
        case StmtKind::Block:
            for (const Stmt& c : s.as<BlockNode>()->stmts) run(c);
            return;
        case StmtKind::Comment: return;
        case StmtKind::Declare: {
            auto d = s.as<DeclareNode>();
            vars[d->var.as<VarNode>()] = eval(d->value);
            return;
        }
        case StmtKind::IfThen: {
            auto n = s.as<IfThenNode>();
            if (eval(n->cond).i) run(n->then_case);
            return;
        }
        case StmtKind::For: {
            auto f = s.as<ForNode>();
            const Value start = eval(f->start), stop = eval(f->stop), step = eval(f->step);
            if (step.i <= 0) throw std::logic_error("interpreter: a loop with a step below 1");
            const VarNode* v = f->var.as<VarNode>();
            for (std::int64_t i = start.i; i < stop.i; i += step.i) {
                vars[v] = Value::of_int(f->var.type(), i);
                run(f->body);
            }
            return;
        }
        // Buffers of the kernel (staged weights, layer activations): one per run, as one
        // block, for the allocation's body.
        case StmtKind::Allocate: {
            auto a = s.as<AllocateNode>();
            local_arrays_[a->buffer.get()].assign(std::size_t(a->buffer->size()), Value());
            run(a->body);
            local_arrays_.erase(a->buffer.get());
            return;
        }
        case StmtKind::BufferStore: {
            auto st = s.as<BufferStoreNode>();
            if (const FieldInfo* f = st->buffer->field.get()) { // a field's element
                store(*array_of(f), eval(st->index()).i, eval(st->value));
                return;
            }
            std::vector<Value>& a = local_array(st->buffer.get(), eval(st->index()).i, "writes");
            a[std::size_t(eval(st->index()).i)] = eval(st->value);
            return;
        }
        case StmtKind::Barrier: return; // one thread ran everything before it
        default:
            throw std::logic_error("interpreter: no support for the statement\n" + to_string(s));
        }
    }

private:
    Value eval(const Expr& e) { return evaluate(e, vars, loads_); }

    const InterpretedArray* array_of(const FieldInfo* f) {
        auto it = by_field_.find(f);
        if (it != by_field_.end()) return it->second;
        auto a = arrays_.find(f->name);
        if (a == arrays_.end())
            throw std::logic_error("interpreter: no array for field " + f->name);
        by_field_[f] = &a->second;
        return &a->second;
    }

    /// Throws unless element `i` of `a` lies inside the view (a wrong index must not read or
    /// write memory the test does not own).
    static void check_bounds(const InterpretedArray& a, std::int64_t i, const char* what) {
        std::int64_t lo = 0, hi = 0;
        for (std::size_t d = 0; d < a.shape.size(); ++d) {
            const std::int64_t reach = (a.shape[d] - 1) * a.strides[d];
            (reach < 0 ? lo : hi) += reach;
        }
        if (i < lo || i > hi)
            throw std::logic_error("interpreter: the kernel " + std::string(what) + " element " +
                                   std::to_string(i) + " outside its array " +
                                   shape_string(a.shape));
    }

    std::vector<Value>& local_array(const BufferInfo* array, std::int64_t i, const char* what) {
        auto it = local_arrays_.find(array);
        if (it == local_arrays_.end())
            throw std::logic_error("interpreter: array " + array->name + " used before its allocation");
        if (i < 0 || i >= std::int64_t(it->second.size()))
            throw std::logic_error("interpreter: the kernel " + std::string(what) + " element " +
                                   std::to_string(i) + " outside array " + array->name);
        return it->second;
    }

    Value load(const Expr& e) {
        auto l = e.as<BufferLoadNode>();
        if (!l) throw std::logic_error("interpreter: no support for the read " + to_string(e));
        if (!l->buffer->field) {
            const std::int64_t i = eval(l->index()).i;
            return local_array(l->buffer.get(), i, "reads")[std::size_t(i)];
        }
        const InterpretedArray& a = *array_of(l->buffer->field.get());
        const std::int64_t i = eval(l->index()).i;
        check_bounds(a, i, "reads");
        switch (a.type) {
        case ScalarType::Float32: return Value::of_float(a.type, static_cast<float*>(a.data)[i]);
        case ScalarType::Float64: return Value::of_float(a.type, static_cast<double*>(a.data)[i]);
        case ScalarType::Int32: return Value::of_int(a.type, static_cast<std::int32_t*>(a.data)[i]);
        case ScalarType::Int64: return Value::of_int(a.type, static_cast<std::int64_t*>(a.data)[i]);
        default: throw std::logic_error("interpreter: an array of an unexpected type");
        }
    }

    static void store(const InterpretedArray& a, std::int64_t i, const Value& v) {
        check_bounds(a, i, "writes");
        switch (a.type) {
        case ScalarType::Float32: static_cast<float*>(a.data)[i] = static_cast<float>(v.f); return;
        case ScalarType::Float64: static_cast<double*>(a.data)[i] = v.f; return;
        case ScalarType::Int32:
            static_cast<std::int32_t*>(a.data)[i] = static_cast<std::int32_t>(v.i);
            return;
        case ScalarType::Int64: static_cast<std::int64_t*>(a.data)[i] = v.i; return;
        default: throw std::logic_error("interpreter: an array of an unexpected type");
        }
    }

    const std::map<std::string, InterpretedArray>& arrays_;
    std::map<const FieldInfo*, const InterpretedArray*> by_field_;
    std::map<const BufferInfo*, std::vector<Value>> local_arrays_;
    std::function<Value(const Expr&)> loads_;
};

} // namespace

void interpret_kernel(const Kernel& kernel, const Shape& sizes,
                      const std::map<std::string, InterpretedArray>& arrays,
                      const std::map<std::string, InterpretedScalar>& scalars) {
    if (kernel.config().target != Target::CPU)
        throw std::logic_error("interpret_kernel runs Target::CPU kernels (loops, no threads)");
    interpret_body(kernel.ir(), kernel.parameters(), sizes, arrays, scalars);
}

void interpret_body(const Stmt& body, const std::vector<KernelParam>& params, const Shape& sizes,
                    const std::map<std::string, InterpretedArray>& arrays,
                    const std::map<std::string, InterpretedScalar>& scalars) {
    Interpreter in(arrays);
    for (const KernelParam& p : params) {
        const VarNode* v = p.var.defined() ? p.var.as<VarNode>() : nullptr;
        switch (p.role) {
        case ParamRole::FieldPointer: break;
        case ParamRole::Size:
            in.vars[v] = Value::of_int(p.type, sizes.at(static_cast<std::size_t>(p.axis)));
            break;
        case ParamRole::Stride: {
            const InterpretedArray& a = arrays.at(p.field->name);
            in.vars[v] = Value::of_int(p.type, a.strides.at(static_cast<std::size_t>(p.axis)));
            break;
        }
        case ParamRole::Scalar: {
            auto it = scalars.find(v->name);
            if (it == scalars.end())
                throw std::logic_error("interpreter: no value for the scalar " + v->name);
            in.vars[v] = is_float(p.type) ? Value::of_float(p.type, it->second.f)
                                          : Value::of_int(p.type, it->second.i);
            break;
        }
        }
    }
    in.run(body);
}

} // namespace loom::test
