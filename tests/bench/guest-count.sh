#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the counted benchmark VM (tests/bench/run.sh, the bench
# kernel under QEMU with the sdcount TCG plugin, -accel tcg,thread=single):
# `smbdirect perf` rows with SMBDIRECT_PERF_MARKS=1, so the plugin counts
# the guest's instructions from the first timed transfer to the last
# completion, both ends of the connection (one guest) and every bucket.
# Usage: guest-count.sh USERSPACE_BUILD NAMES [RUNS]
# NAMES: tests/bench/plugin/sdsyms.sh's list for this kernel (on the host's
# root, which the guest sees). Writes:
#   $SD_OUT/ranges.txt   the plugin's ranges (sdranges.py), before any mark
#   $SD_OUT/kallsyms.txt this boot's /proc/kallsyms
#   $SD_OUT/runs.txt     per run: "row=... run=K ops=N bytes=B" and the
#                        plugin's report line for that run's window
# The plugin itself appends to $SD_OUT/sdcount.txt (its out=).
set -euo pipefail
us=$1 names=$2 runs=${3:-3}
sd=$us/tools/smbdirect
addr=10.77.0.1
export LC_ALL=C

insmod "$SD_MODULE_DIR/af_smbdirect.ko"
# The ranges: after every module is in, before the first mark; the
# symbols too, for tests/bench/sdprofile.py.
cat /proc/kallsyms > "$SD_OUT/kallsyms.txt"
python3 "$SD_REPO/tests/bench/plugin/sdranges.py" /proc/kallsyms /proc/modules "$names" \
	> "$SD_OUT/ranges.txt"
echo "guest-count: $(wc -l < "$SD_OUT/ranges.txt") ranges:" \
	"$(awk '{ print $3 }' "$SD_OUT/ranges.txt" | sort | uniq -c | tr -s ' \n' ' ')"
: > "$SD_OUT/runs.txt"
touch "$SD_OUT/sdcount.txt"

"$sd" perf -l -v $addr 7445 2>"$SD_OUT/perf-server.log" &
srv=$!
for _ in $(seq 100); do
	grep -q listening "$SD_OUT/perf-server.log" && break
	sleep 0.1
done

status=0
# row NAME perf-args...: RUNS runs; each must add exactly one report line.
row() {
	local name=$1 k before after rc
	shift
	for k in $(seq "$runs"); do
		before=$(wc -l < "$SD_OUT/sdcount.txt")
		rc=0
		SMBDIRECT_PERF_MARKS=1 timeout -k 5 300 "$sd" perf --json "$@" $addr 7445 \
			> /tmp/count.json 2>/tmp/count.err || rc=$?
		after=$(wc -l < "$SD_OUT/sdcount.txt")
		if [ $rc -ne 0 ] || [ "$after" -ne $((before + 1)) ] ||
			! grep -q '"verified":true' /tmp/count.json; then
			echo "guest-count: $name run $k: exit $rc, $((after - before)) reports:" \
				"$(cat /tmp/count.json /tmp/count.err)" | tee -a "$SD_OUT/runs.txt"
			status=1
			continue
		fi
		python3 -c 'import json, sys
j = json.load(open("/tmp/count.json"))
print("row=%s run=%s ops=%d bytes=%d seconds=%s" % (sys.argv[1], sys.argv[2],
      j["iterations"], j["bytes"], j["seconds"]))' "$name" "$k" >> "$SD_OUT/runs.txt"
		tail -n 1 "$SD_OUT/sdcount.txt" >> "$SD_OUT/runs.txt"
	done
}

# 64 MiB per window of 64 KiB transfers, 16 MiB of 1 MiB ones. At depth 8
# the number of completions reaped per poll follows the guest's timing:
# on the host's clock the user, module and copy buckets varied by 3 to 27 %
# between runs (256 or 1024 transfers alike, 2026-12-07); run.sh's
# -icount makes guest time instruction time, and they repeat within 0.3 %.
for t in read write; do
	for d in 1 8; do
		row "$t-64K-d$d" --test "$t" --size 64K --depth "$d" --iters 1024
		row "$t-1M-d$d" --test "$t" --size 1M --depth "$d" --iters 16
	done
done
row "send-1M" --test send --size 1M --iters 16

kill $srv 2>/dev/null || true
wait $srv 2>/dev/null || true
rmmod af_smbdirect 2>/dev/null || true
exit $status
