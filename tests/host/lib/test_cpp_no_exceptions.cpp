// SPDX-License-Identifier: GPL-2.0
// The C++ API compiled with -fno-exceptions (see CMakeLists.txt).
#include "cpp_common.h"

#ifdef __cpp_exceptions
#error "this file must be compiled with -fno-exceptions"
#endif

namespace
{
SD_CPP_TESTS(CppNoExceptions)
} // namespace
