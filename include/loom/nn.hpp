// loom::nn: neural layers inside kernels. Layers are expressions and go through the same
// pipeline as stencils. Included by loom/loom.hpp.
#pragma once

#include <loom/nn/activation.hpp>
#include <loom/nn/chain.hpp>
#include <loom/nn/dense.hpp>
#include <loom/nn/matrix.hpp>
#include <loom/nn/vec_ops.hpp>
#include <loom/nn/weights.hpp>
