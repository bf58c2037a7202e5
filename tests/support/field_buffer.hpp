// A field's Global buffer for IR that a test builds by hand, as lower_iteration_space makes one:
// spatial extents unknown, the index axes' literal, a stride variable per array axis but the
// unit-stride axis (1).
#pragma once

#include "compiler/ir/ir.hpp"

#include <map>
#include <string>
#include <vector>

namespace loom::test {

/// One buffer per field (kept with the field, so that loads built twice compare equal).
inline ir::BufferPtr global_of(const FieldPtr& f) {
    static std::map<FieldPtr, ir::BufferPtr> made;
    if (auto it = made.find(f); it != made.end()) return it->second;
    std::vector<Expr> shape(std::size_t(f->spatial_dims)), strides;
    for (int n : f->index_shape) shape.push_back(ir::ConstNode::make_int(ScalarType::Int64, n));
    for (int a = 0; a < f->array_dims(); ++a)
        strides.push_back(a == f->unit_stride_axis()
                              ? ir::ConstNode::make_int(ScalarType::Int64, 1)
                              : ir::VarNode::make(ScalarType::Int64, f->name + "_stride_" + std::to_string(a),
                                                  ir::VarRole::Stride, f, a));
    return made[f] = ir::make_global_buffer(f, std::move(shape), std::move(strides));
}

} // namespace loom::test
