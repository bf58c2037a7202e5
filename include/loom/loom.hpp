// loom: symbolic kernel descriptions to fast CUDA. The one header users include; it brings in the
// whole public API (everything under include/loom/ but detail/).
#pragma once

#include <loom/version.hpp>

// The DSL: types, fields, expressions, assignments, slices, the configuration and the schedule.
#include <loom/assignment.hpp>
#include <loom/config.hpp>
#include <loom/expr.hpp>
#include <loom/field.hpp>
#include <loom/field_info.hpp>
#include <loom/half.hpp>
#include <loom/index_var.hpp>
#include <loom/schedule.hpp>
#include <loom/slice.hpp>
#include <loom/types.hpp>
#include <loom/vec.hpp>

// Neural layers inside kernels.
#include <loom/nn.hpp>

// Kernels: create_kernel, the generated source, compile() and the callable KernelFunction.
#include <loom/autotune.hpp>
#include <loom/kernel.hpp>
#include <loom/kernel_function.hpp>
#include <loom/kernel_param.hpp>
#include <loom/kernel_spec.hpp>
#include <loom/launch.hpp>

// Arrays, devices, DLPack and errors.
#include <loom/device.hpp>
#include <loom/device_array.hpp>
#include <loom/dlpack.hpp>
#include <loom/errors.hpp>
#include <loom/host_array.hpp>
