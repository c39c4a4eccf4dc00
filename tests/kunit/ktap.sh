#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ktap.sh MODULE.ko [OUTDIR]
#
# Runs the KUnit suites of a KUnit build of af_smbdirect.ko (make kunit, or
# make module SMBDIRECT_KUNIT=1) on the running kernel and prints their
# KTAP on stdout, as a kernel CI lab collects in-tree suites: loads the
# module (its suites run at load), takes what the kernel reports, unloads
# it. Needs root and a kernel with CONFIG_KUNIT (y, or m with kunit.ko
# installed). Also writes OUTDIR/kunit.ktap (the stream) and
# OUTDIR/kunit/SUITE.tap (each suite's debugfs results); OUTDIR defaults
# to a new temporary directory.
#
# The stream is one KTAP document: "KTAP version 1", the plan "1..N", then
# the N suites that came with the module, each as the kernel's
# /sys/kernel/debug/kunit/SUITE/results gives it (CONFIG_KUNIT_DEBUGFS)
# without that file's own two header lines and with the suite's result
# line numbered in the stream; without KUnit's debugfs, the module's KTAP
# as the kernel printed it to dmesg at load (timestamps removed).
#
# Exit status: 0 every case passed or was skipped, 1 a case failed, 2 no
# KTAP (the module did not load, or brought no suites). SD_KUNIT_DEBUGFS
# names another directory than /sys/kernel/debug/kunit (tests of this
# script).
#
# Sourced (tests/vm/guest/check.sh, which loads the module itself), it
# only defines the two steps, the same code the stream above comes from:
#   sd_kunit_mark            before insmod: what the kernel has already
#   sd_kunit_collect OUTDIR  after insmod: the new suites' KTAP into OUTDIR

sd_kunit_debugfs=${SD_KUNIT_DEBUGFS:-/sys/kernel/debug/kunit}

sd_kunit_suites() {
	local d
	for d in "$sd_kunit_debugfs"/*/; do
		[ -f "$d/results" ] && basename "$d"
	done
}

sd_kunit_mark() {
	SD_KUNIT_BEFORE=$(sd_kunit_suites)
	SD_KUNIT_DMESG_LINES=$(dmesg 2>/dev/null | wc -l)
}

# One suite's debugfs results as a subtest of the stream: the file's
# "KTAP version 1" / "1..1" header dropped, its "ok 1 SUITE" renumbered.
sd_kunit_suite_body() { # file number
	awk -v n="$2" '
		NR <= 2 && ($0 == "KTAP version 1" || $0 == "1..1") { next }
		/^(not )?ok 1 / { sub(/ok 1 /, "ok " n " ") }
		{ print }' "$1"
}

# The module's KTAP from the kernel log: from the first top-level "KTAP
# version 1" printed since the mark to the plan's last top-level result.
sd_kunit_from_dmesg() {
	dmesg 2>/dev/null | tail -n +"$((SD_KUNIT_DMESG_LINES + 1))" |
		sed -E 's/^\[[ 0-9.]+\] ?//' | awk '
		!on && $0 == "KTAP version 1" { on = 1; print; next }
		!on { next }
		plan == "" && /^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0 }
		{ print }
		/^(not )?ok [0-9]+ / { if (++done >= plan) exit }'
}

sd_kunit_collect() { # outdir
	local out=$1 s n=0 new=()
	mkdir -p "$out/kunit"
	for s in $(sd_kunit_suites); do
		grep -qxF "$s" <<<"${SD_KUNIT_BEFORE:-}" || new+=("$s")
	done
	if [ ${#new[@]} -gt 0 ]; then
		for s in "${new[@]}"; do
			cp "$sd_kunit_debugfs/$s/results" "$out/kunit/$s.tap"
		done
		{
			echo "KTAP version 1"
			echo "1..${#new[@]}"
			for s in "${new[@]}"; do
				n=$((n + 1))
				sd_kunit_suite_body "$out/kunit/$s.tap" "$n"
			done
		} >"$out/kunit.ktap"
	else
		sd_kunit_from_dmesg >"$out/kunit.ktap"
	fi
	if ! grep -q '^1\.\.[1-9]' "$out/kunit.ktap"; then
		echo "ktap: no KUnit suites came with the module (not a SMBDIRECT_KUNIT=1" \
			"build, or a kernel without CONFIG_KUNIT or with kunit.enable=0?)" >&2
		return 2
	fi
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

set -uo pipefail
ko=${1:?usage: ktap.sh MODULE.ko [OUTDIR]}
out=${2:-$(mktemp -d "${TMPDIR:-/tmp}/sd-kunit.XXXXXX")}
name=$(basename "$ko" .ko)
[ -r "$ko" ] || { echo "ktap: no $ko" >&2; exit 2; }
if grep -q "^$name " /proc/modules 2>/dev/null; then
	echo "ktap: $name is loaded already: its suites ran then (rmmod it first)" >&2
	exit 2
fi
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# What the module links against (ib_core, rdma_cm, kunit where modular).
for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
	modprobe "$dep" || echo "ktap: modprobe $dep failed" >&2
done
sd_kunit_mark
if ! insmod "$ko"; then
	echo "ktap: insmod $ko failed" >&2
	exit 2
fi
sd_kunit_collect "$out"
rc=$?
rmmod "$name" || echo "ktap: rmmod $name failed" >&2
[ $rc -eq 0 ] || exit $rc
cat "$out/kunit.ktap"
grep -q '^[[:space:]]*not ok ' "$out/kunit.ktap" && exit 1
exit 0
