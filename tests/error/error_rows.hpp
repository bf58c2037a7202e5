// The rows of the error table, by area (one file each); test_error_table.cpp runs them.
#pragma once

#include "tests/support/error_table.hpp"

#include <vector>

namespace loom::test {

std::vector<ErrorRow> field_rows();       ///< field specs, declarations, accesses, components
std::vector<ErrorRow> expression_rows();  ///< types, literals, integer ops, params, temporaries
std::vector<ErrorRow> space_rows();       ///< ghost layers, slices, races
std::vector<ErrorRow> nn_rows();          ///< loom::nn layers, chains, weights
std::vector<ErrorRow> config_rows();      ///< KernelConfig and the launch description
std::vector<ErrorRow> schedule_rows();    ///< Schedule: block, cells, registers, vector width
std::vector<ErrorRow> stage_rows();       ///< Stages: empty stages, races between stages
std::vector<ErrorRow> array_rows();       ///< HostArray, HostView, DeviceView, DeviceArray
std::vector<ErrorRow> argument_rows();    ///< calls of compiled CPU kernels
std::vector<ErrorRow> environment_rows(); ///< LOOM_* variables, the cache, compilers, files
std::vector<ErrorRow> dlpack_rows();      ///< DLPack import and export

} // namespace loom::test
