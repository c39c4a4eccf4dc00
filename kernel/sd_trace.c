// SPDX-License-Identifier: GPL-2.0
/* The tracepoints of sd_trace.h are defined here, once. */
#define CREATE_TRACE_POINTS
#include "sd_trace.h"
