#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the benchmark VM (non-debug kernel): perftest and sd_bench on
# the same rxe device, one after the other, and prints the ratios.
# Usage: guest-bench.sh BENCH_BIN_DIR SECONDS
set -u
bin=$1 secs=${2:-5}
addr=10.77.0.1
out=$SD_OUT/bench.txt
: > "$out"
log() { echo "$*" | tee -a "$out"; }

insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { log "insmod failed"; exit 1; }

# perftest over rdma_cm (-R): same device, same addresses as ours.
perf() { # tool args...
	local tool=$1; shift
	"$tool" -R -d rxe0 -F "$@" >/tmp/$tool.srv 2>&1 &
	local srv=$!
	sleep 2
	"$tool" -R -d rxe0 -F "$@" "$addr" >/tmp/$tool.cli 2>&1
	wait $srv
	cat /tmp/$tool.cli >> "$SD_OUT/perftest.log"
}
# The result line is the first one after the "#bytes" header.
perf_col() { # file column
	awk -v c="$2" 'h && NF > c - 1 && $1 ~ /^[0-9]+$/ { print $c; exit } /#bytes/ { h = 1 }' "$1"
}

perf ib_send_bw -s 1048576 -D "$secs"
send_bw=$(perf_col /tmp/ib_send_bw.cli 4)
perf ib_send_lat -s 64 -n 2000
send_lat=$(perf_col /tmp/ib_send_lat.cli 6)
perf ib_read_bw -s 1048576 -D "$secs"
read_bw=$(perf_col /tmp/ib_read_bw.cli 4)
perf ib_write_bw -s 1048576 -D "$secs"
write_bw=$(perf_col /tmp/ib_write_bw.cli 4)

sd() { # mode n size
	"$bin/sd_bench" "$1" server $addr 7445 "$2" "$3" >/tmp/sd.srv 2>&1 &
	local srv=$!
	sleep 1
	"$bin/sd_bench" "$1" client $addr 7445 "$2" "$3" >/tmp/sd.cli 2>&1
	wait $srv
	cat /tmp/sd.srv /tmp/sd.cli >> "$SD_OUT/sd_bench.log"
}
sd bw "$secs" 1048576
sd_bw=$(awk '/^bw_MBps/ { print $2 }' /tmp/sd.srv)
sd lat 2000 64
sd_lat=$(awk '/^lat_us/ { print $2 }' /tmp/sd.cli)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
log "benchmark on rxe0, kernel $(uname -r), ${secs}s per bandwidth run"
log "  ib_send_bw   1 MiB:   ${send_bw:-n/a} MB/s"
log "  ib_read_bw   1 MiB:   ${read_bw:-n/a} MB/s"
log "  ib_write_bw  1 MiB:   ${write_bw:-n/a} MB/s"
log "  ib_send_lat  64 B:    ${send_lat:-n/a} us (t_avg)"
log "  af_smbdirect stream 1 MiB messages: ${sd_bw:-n/a} MB/s"
log "  af_smbdirect stream 64 B round trip/2: ${sd_lat:-n/a} us"
log "ratio throughput af_smbdirect/ib_send_bw: $(ratio "${sd_bw:-0}" "${send_bw:-0}")"
log "ratio latency    af_smbdirect/ib_send_lat: $(ratio "${sd_lat:-0}" "${send_lat:-0}") (lower is better)"
rmmod af_smbdirect
exit 0
