// The error table: every bad input of tests/error/error_rows_*.cpp as its own test case, named
// <area>/ErrorTable.Row/<row>. Each row checks the exception type (or, for settings loom
// survives, the warning) and fragments of the message: what is wrong, where, what was expected,
// what was found and how to fix it. GPU-only inputs are in tests/gpu/test_error_table_gpu.cpp.
#include "tests/error/error_rows.hpp"

#include <set>

namespace loom::test {
namespace {

class ErrorTable : public ::testing::TestWithParam<ErrorRow> {};

TEST_P(ErrorTable, Row) {
    check_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fields, ErrorTable, ::testing::ValuesIn(field_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Expressions, ErrorTable, ::testing::ValuesIn(expression_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Space, ErrorTable, ::testing::ValuesIn(space_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Nn, ErrorTable, ::testing::ValuesIn(nn_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Config, ErrorTable, ::testing::ValuesIn(config_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Schedule, ErrorTable, ::testing::ValuesIn(schedule_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Stages, ErrorTable, ::testing::ValuesIn(stage_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Arrays, ErrorTable, ::testing::ValuesIn(array_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Arguments, ErrorTable, ::testing::ValuesIn(argument_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Environment, ErrorTable, ::testing::ValuesIn(environment_rows()),
                         row_name);
INSTANTIATE_TEST_SUITE_P(DLPack, ErrorTable, ::testing::ValuesIn(dlpack_rows()), row_name);

// The table's own shape: at least 150 rows, each with a distinct name, and no two rows that
// expect the same message (a copy of a row with another name would pass the count).
TEST(ErrorTableShape, HoldsAtLeast150DistinctRows) {
    std::vector<ErrorRow> all;
    for (auto rows : {field_rows, expression_rows, space_rows, nn_rows, config_rows, schedule_rows, stage_rows,
                      array_rows, argument_rows, environment_rows, dlpack_rows})
        for (ErrorRow& r : rows())
            all.push_back(std::move(r));
    EXPECT_GE(all.size(), 150u);
    std::set<std::string> names;
    std::set<std::vector<std::string>> messages;
    for (const ErrorRow& r : all) {
        EXPECT_TRUE(names.insert(r.name).second) << "two rows are named " << r.name;
        EXPECT_TRUE(messages.insert(r.fragments).second)
            << "row " << r.name << " expects the fragments of another row";
        EXPECT_TRUE(r.provoke) << r.name;
    }
}

} // namespace
} // namespace loom::test
