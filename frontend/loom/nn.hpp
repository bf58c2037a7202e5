// loom::nn: neural layers inside kernels. Layers are expressions and go through the same
// pipeline as stencils. Included by loom/loom.hpp.
#pragma once

#include "frontend/nn/activation.hpp"
#include "frontend/nn/chain.hpp"
#include "frontend/nn/dense.hpp"
#include "frontend/nn/matrix.hpp"
#include "frontend/nn/vec_ops.hpp"
#include "frontend/nn/weights.hpp"
