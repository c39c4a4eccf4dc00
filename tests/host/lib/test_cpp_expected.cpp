// SPDX-License-Identifier: GPL-2.0
// The C++ API compiled as C++23, where sd::Result is std::expected (see
// CMakeLists.txt).
#include "cpp_common.h"

#include <expected>
#include <type_traits>

static_assert(__cpp_lib_expected >= 202202L, "this file must be compiled as C++23");
static_assert(std::is_same_v<sd::Result<int>, std::expected<int, std::error_code>>);

namespace
{
SD_CPP_TESTS(CppExpected)
} // namespace
