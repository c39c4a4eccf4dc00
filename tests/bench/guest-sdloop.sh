#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a VM under QEMU with the sdcount TCG plugin: the instrument
# in system emulation. SDLOOP (tests/bench/plugin/sdloop.c, built by
# tests/host/sdcount.sh) runs N and 2N iterations between marks; the
# plugin's user bucket must be exactly 2N+3 and 4N+3 (interrupts are taken
# between translated blocks, so their instructions go to the kernel
# buckets). The ranges are written first, from this kernel's kallsyms.
# Usage: guest-sdloop.sh SDLOOP N [NAMES]
set -euo pipefail
sdloop=$1 n=$2 names=${3:-}
args=(/proc/kallsyms /proc/modules)
[ -z "$names" ] || args+=("$names")
python3 "$SD_REPO/tests/bench/plugin/sdranges.py" "${args[@]}" > "$SD_OUT/ranges.txt"
echo "guest-sdloop: $(wc -l < "$SD_OUT/ranges.txt") ranges"
touch "$SD_OUT/sdcount.txt"
"$sdloop" "$n" 1
"$sdloop" $((2 * n)) 2
cat "$SD_OUT/sdcount.txt"
