// loom: symbolic kernel descriptions to fast CUDA. The one header users include.
#pragma once

#include "compiler/ir/printer.hpp"
#include "compiler/kernel_config.hpp"
#include "frontend/assignment.hpp"
#include "frontend/expr.hpp"
#include "frontend/field.hpp"
#include "frontend/kernel.hpp"
#include "frontend/nn/activation.hpp"
#include "frontend/nn/chain.hpp"
#include "frontend/nn/dense.hpp"
#include "frontend/nn/matrix.hpp"
#include "frontend/nn/vec_ops.hpp"
#include "frontend/nn/weights.hpp"
#include "frontend/slice.hpp"
#include "frontend/vec.hpp"
#include "runtime/errors.hpp"
#include "runtime/nvrtc_compiler.hpp"
