// loom: symbolic kernel descriptions to fast CUDA. The one header users include.
#pragma once

#include "compiler/ir/printer.hpp"
#include "compiler/kernel_config.hpp"
#include "frontend/assignment.hpp"
#include "frontend/expr.hpp"
#include "frontend/field.hpp"
#include "frontend/kernel.hpp"
#include "frontend/slice.hpp"
#include "frontend/vec.hpp"
#include "runtime/errors.hpp"
#include "runtime/nvrtc_compiler.hpp"
