#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of `make kunit` (tests/kunit/run.sh): loads the KUnit build of
# af_smbdirect.ko, writes its suites' KTAP to $SD_OUT/kunit.ktap with
# tests/kunit/ktap.sh (the code check.sh collects them with), unloads it
# and keeps dmesg. The host prints kunit.ktap; the console stays out of it.
set -u
bash "$SD_REPO/tests/kunit/ktap.sh" "$SD_MODULE_DIR/af_smbdirect.ko" "$SD_OUT" >/dev/null
rc=$?
dmesg >"$SD_OUT/dmesg.txt"
exit $rc
