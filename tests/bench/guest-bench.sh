#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the benchmark VM (non-debug kernel): perftest and
# `smbdirect perf` on the same rxe device, then SMB over it (the example
# client and server, cifs.ko, ksmbd), one after the other, and prints the
# table of ratios (issue #24, item 4).
# Usage: guest-bench.sh USERSPACE_BUILD SECONDS SMB_MIB [BASELINE_MODULE_DIR]
# BASELINE_MODULE_DIR: the module before pooled memory regions, for the
# register+deregister comparison ("none": not built).
#
# Units: perftest's "BW average[MB/sec]" column is MiB/s (2^20 bytes: it
# divides by 0x100000, see its --help for --report_gbits). smbdirect perf
# prints mib_per_s (the same unit) and gbit_per_s, dd's rate is turned into
# MiB/s from its byte count and seconds; every throughput ratio below is
# MiB/s over MiB/s. CPU: guest-wide busy time (user, nice, system, irq,
# softirq, steal from /proc/stat) over the run of each command, per GiB
# moved: both ends of an SMB connection are in this guest, so it is the
# cost of client and server together.
set -u
us=$1 secs=${2:-5} smb_mib=${3:-64} base_mdir=${4:-none}
sd=$us/tools/smbdirect
exclient=$us/examples/smbdirect-example-smb2-client
exserver=$us/examples/smbdirect-example-smb2-server
addr=10.77.0.1
out=$SD_OUT/bench.txt
: > "$out"
: > "$SD_OUT/perftest.log"
: > "$SD_OUT/smbdirect-perf.log"
: > "$SD_OUT/smb.log"
log() { echo "$*" | tee -a "$out"; }
notes=()
export LC_ALL=C

insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { log "insmod failed"; exit 1; }
# Whether this module pools its memory regions (branch pooled-mr): its UAPI
# header says so.
pooled=
if grep -q 'keeps deregistered' "$SD_REPO/uapi/linux/smbdirect.h"; then
	pooled=1
	pooled_note="in this module (REGISTER does not wait for REG_MR; regions reused); the v1 line is pooled"
else
	pooled_note="not in this module: branch pooled-mr has not landed on main, so there is nothing pooled to measure"
fi

# --- perftest ----------------------------------------------------------------
# perftest over rdma_cm (-R): same device, same addresses as ours. Its
# duration mode (-D) measures only between the margins (-f) at both ends:
# -D W+2 -f 1 samples for W seconds after a 1 s warm-up. It counts whole
# messages completed in that window, so at ~15 MiB/s an 8 MiB run sees a
# handful of them: those get a window of 2*SECONDS. smbdirect perf instead times
# exactly the calls it made, so it needs no such care.
perf() { # tool args...
	local tool=$1; shift
	timeout -k 5 120 "$tool" -R -d rxe0 -F "$@" >/tmp/$tool.srv 2>&1 &
	local srv=$!
	sleep 2
	timeout -k 5 120 "$tool" -R -d rxe0 -F "$@" "$addr" >/tmp/$tool.cli 2>&1
	wait $srv
	{ echo "=== $tool $*"; cat /tmp/$tool.cli; } >> "$SD_OUT/perftest.log"
}
# The result line is the first one after the "#bytes" header.
perf_col() { # file column
	awk -v c="$2" 'h && NF > c - 1 && $1 ~ /^[0-9]+$/ { print $c; exit } /#bytes/ { h = 1 }' "$1"
}
# perftest converts its TSC cycles with a CPU frequency it samples; under
# TCG on a busy host the sample can fail ("Correlation coefficient r^2 <
# 0.9") and every rate comes out 0.00. The iterations it counted in the
# window are right still: then MiB/s = iterations x size / window.
perftest_clock_failed=
perf_bw() { # tool size [perftest args...] -> MiB/s
	local tool=$1 size=$2 window=$secs bw iters
	shift 2
	[ "$size" -gt 1048576 ] && window=$((2 * secs))
	perf "$tool" -s "$size" -D $((window + 2)) -f 1 "$@"
	bw=$(perf_col "/tmp/$tool.cli" 4)
	if [ -n "$bw" ] && awk -v b="$bw" 'BEGIN { exit !(b == 0) }'; then
		iters=$(perf_col "/tmp/$tool.cli" 2)
		bw=$(awk -v n="$iters" -v s="$size" -v w="$window" 'BEGIN { if (n > 0) printf "%.2f", n * s / w / 1048576 }')
		perftest_clock_failed=1
	fi
	echo "$bw"
}

send_bw=$(perf_bw ib_send_bw 1048576)
perf ib_send_lat -s 64 -n 2000
send_lat=$(perf_col /tmp/ib_send_lat.cli 6)
case $send_lat in inf | nan | 0 | 0.00) send_lat= perftest_clock_failed=1 ;; esac
# 64 KiB, perftest's own depth (-t 128 WRITEs, -o the device's ORD READs
# in flight): the device's best for that size.
read_bw64=$(perf_bw ib_read_bw 65536)
write_bw64=$(perf_bw ib_write_bw 65536)
read_bw1=$(perf_bw ib_read_bw 1048576)
write_bw1=$(perf_bw ib_write_bw 1048576)
# perftest busy-polls its CQ; on this 2-vCPU TCG guest the poller and rxe's
# work compete for the CPUs, while af_smbdirect's callers sleep until done.
# perftest offers no fair alternative here: -e (sleep on CQ events) is
# refused with -D ("Duration mode doesn't work with events") and by
# ib_write_bw altogether ("Events feature not available on WRITE verb").

# --- smbdirect perf ----------------------------------------------------------
# One server for every run; the client prints one JSON object per run,
# logged whole. The time of a run is exactly the calls it timed (send:
# until the server confirmed the count), so no margins are needed as for
# perftest.
"$sd" perf -l -v $addr 7445 2>>"$SD_OUT/smbdirect-perf.log" &
sd_srv=$!
for _ in $(seq 50); do
	grep -q listening "$SD_OUT/smbdirect-perf.log" && break
	sleep 0.1
done
sd_perf() { # label perf-args... -> /tmp/sd.json
	local label=$1
	shift
	rm -f /tmp/sd.json
	timeout -k 5 120 "$sd" perf --json "$@" $addr 7445 >/tmp/sd.json 2>/tmp/sd.err
	local rc=$?
	{ echo "=== smbdirect perf $* (exit $rc)"; cat /tmp/sd.json /tmp/sd.err; } \
		>> "$SD_OUT/smbdirect-perf.log"
	[ $rc -eq 0 ] || notes+=("  [$label] exit $rc: $(head -n1 /tmp/sd.err)")
	grep -q '"verified":false' /tmp/sd.json && notes+=("  [$label] data check FAILED")
	return $rc
}
sd_val() { # key.path -> value from /tmp/sd.json
	python3 -c 'import json, sys
try:
    v = json.load(open("/tmp/sd.json"))
    for k in sys.argv[1].split("."):
        v = v[k]
    print(v)
except Exception:
    pass' "$1"
}

sd_perf "send 1MiB" --test send --size 1M --time "$secs"
sd_bw=$(sd_val mib_per_s) sd_bw_gb=$(sd_val gbit_per_s)
sd_perf "latency 64B" --test latency --size 64 --iters 2000
sd_lat=$(sd_val latency_us.avg) sd_lat99=$(sd_val latency_us.p99)

sd_rdma() { # read|write size label perf-args... -> sets rdma_mib rdma_us
	local t=$1 s=$2 l=$3
	shift 3
	rdma_mib= rdma_us=
	sd_perf "$l" --test "$t" --size "$s" --time "$secs" "$@" || return 0
	rdma_mib=$(sd_val mib_per_s) rdma_us=$(sd_val latency_us.avg)
}
sd_rdma read 64K "read 64KiB v1" --api v1;               rd_v1=$rdma_mib rd_v1_us=$rdma_us
sd_rdma read 64K "read 64KiB depth 1" --depth 1;         rd_d1=$rdma_mib rd_d1_us=$rdma_us
sd_rdma read 64K "read 64KiB depth 8" --depth 8;         rd_d8=$rdma_mib rd_d8_us=$rdma_us
sd_rdma write 64K "write 64KiB v1" --api v1;             wr_v1=$rdma_mib wr_v1_us=$rdma_us
sd_rdma write 64K "write 64KiB depth 1" --depth 1;       wr_d1=$rdma_mib wr_d1_us=$rdma_us
sd_rdma write 64K "write 64KiB depth 8" --depth 8;       wr_d8=$rdma_mib wr_d8_us=$rdma_us
sd_rdma read 1M "read 1MiB depth 8" --depth 8;           rd1m_d8=$rdma_mib
sd_rdma write 1M "write 1MiB depth 8" --depth 8;         wr1m_d8=$rdma_mib

reg_lat() { # label api -> sets reg_avg reg_p99
	reg_avg= reg_p99=
	sd_perf "$1" --test register --size 1M --iters 1000 --api "$2" || return 0
	reg_avg=$(sd_val latency_us.avg) reg_p99=$(sd_val latency_us.p99)
}
reg_lat "register 1MiB v1" v1;            reg_v1=$reg_avg reg_v1_99=$reg_p99
reg_lat "register 1MiB async-dereg" async; reg_as=$reg_avg reg_as_99=$reg_p99
kill $sd_srv 2>/dev/null
wait $sd_srv 2>/dev/null

# The same register+deregister with the module before pooled MRs.
reg_base= reg_base_99=
if [ -f "$base_mdir/af_smbdirect.ko" ] && [ -n "$pooled" ]; then
	rmmod af_smbdirect && insmod "$base_mdir/af_smbdirect.ko" && {
		"$sd" perf -l -v $addr 7445 2>>"$SD_OUT/smbdirect-perf.log" &
		sd_srv=$!
		sleep 2
		reg_lat "register 1MiB v1, module before pooled MRs" v1
		reg_base=$reg_avg reg_base_99=$reg_p99
		kill $sd_srv 2>/dev/null
		wait $sd_srv 2>/dev/null
		rmmod af_smbdirect
	}
	insmod "$SD_MODULE_DIR/af_smbdirect.ko" || { log "insmod of this module again failed"; exit 1; }
fi

# What the connections negotiated (server side of a test connection).
"$sd" params -l --once --json -v $addr 7446 >/tmp/params.json 2>/tmp/params.err &
for _ in $(seq 50); do
	grep -q listening /tmp/params.err && break
	sleep 0.1
done
timeout -k 5 60 "$sd" params --json $addr 7446 > /dev/null 2>&1
wait
params=$(head -n1 /tmp/params.json)

# --- SMB: cifs.ko, ksmbd, the example client and server ----------------------
. "$SD_REPO/tests/interop/common.bash"
smb_bytes=$((smb_mib << 20))
src=/tmp/bench-src back=/tmp/bench-back
head -c "$smb_bytes" /dev/urandom > "$src"
src_sum=$(sha256sum "$src" | cut -d' ' -f1)
smblog() { echo "$*" >> "$SD_OUT/smb.log"; }

# Guest-wide busy ticks (USER_HZ) so far.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
hz=$(getconf CLK_TCK)
# measure KEY BYTES COMMAND...: runs COMMAND, sets mib[KEY] (from the
# command's own seconds, in /tmp/bench-seconds, else the wall time) and
# cpu[KEY] (busy CPU seconds per GiB over the command's run).
declare -A mib cpu
measure() {
	local key=$1 bytes=$2 t0 t1 c0 c1 s rc
	shift 2
	rm -f /tmp/bench-seconds
	c0=$(busy_ticks) t0=$(date +%s%N)
	"$@" > /tmp/bench-cmd.log 2>&1
	rc=$?
	t1=$(date +%s%N) c1=$(busy_ticks)
	cat /tmp/bench-cmd.log >> "$SD_OUT/smb.log"
	s=$(cat /tmp/bench-seconds 2>/dev/null)
	[ -n "$s" ] || s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
	smblog "--- $key: exit $rc, $s s, $((c1 - c0)) busy ticks"
	if [ $rc -ne 0 ]; then
		notes+=("  [$key] exit $rc: $(tail -n 1 /tmp/bench-cmd.log)")
		return 1
	fi
	mib[$key]=$(awk -v b="$bytes" -v s="$s" 'BEGIN { if (s > 0) printf "%.1f", b / s / 1048576 }')
	cpu[$key]=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v b="$bytes" \
		'BEGIN { printf "%.2f", t / hz / (b / 1073741824) }')
}
# dd's own time (from its last line) into /tmp/bench-seconds.
timed_dd() {
	dd "$@" 2>/tmp/dd.err
	local rc=$?
	cat /tmp/dd.err
	sed -n 's/.* copied, \([0-9.]*\) s,.*/\1/p' /tmp/dd.err > /tmp/bench-seconds
	return $rc
}
same_as_src() { # file label
	local s
	s=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$s" = "$src_sum" ] || notes+=("  [$2] data check FAILED: sha256 of $1 differs")
}
# cifs_run KEY MOUNT-OPTIONS SERVER-DIR: write then read SMB_MIB through a
# cifs mount with 8 MiB direct I/O (cifs splits each into wsize/rsize
# requests in flight), the data checked by sha256 on both sides.
cifs_run() {
	local key=$1 opts=$2 dir=$3 mnt=/tmp/bench-mnt
	mkdir -p "$mnt"
	if ! timeout -s KILL 120 mount -t cifs "//$addr/share" "$mnt" -o "$opts" >>"$SD_OUT/smb.log" 2>&1; then
		notes+=("  [$key] mount -o $opts failed: $(dmesg | grep -i cifs | tail -n 1)")
		return
	fi
	grep -A2 -i "rdma\|smbd" /proc/fs/cifs/DebugData 2>/dev/null | head -n 4 >> "$SD_OUT/smb.log"
	measure "$key.write" "$smb_bytes" timed_dd if="$src" of="$mnt/bench.bin" bs=8M oflag=direct &&
		same_as_src "$dir/bench.bin" "$key.write"
	rm -f "$back"
	measure "$key.read" "$smb_bytes" timed_dd if="$mnt/bench.bin" of="$back" bs=8M iflag=direct &&
		same_as_src "$back" "$key.read"
	rm -f "$mnt/bench.bin" "$back"
	timeout -s KILL 60 umount "$mnt" || umount -l "$mnt"
}
# The example client's own seconds (its --json) into /tmp/bench-seconds.
client_io() { # depth put|get A B
	local d=$1
	shift
	timeout -s KILL 300 "$exclient" -u U -p P "$addr" "$ksmbd_rxe_port" "//$addr/share" "$@" \
		--rdma --invalidate --depth "$d" --json > /tmp/client.json
	local rc=$?
	cat /tmp/client.json
	python3 -c 'import json; print(json.load(open("/tmp/client.json"))["seconds"])' \
		> /tmp/bench-seconds 2>/dev/null
	return $rc
}

# 1. cifs.ko -> the example server (before ksmbd: it cannot be stopped once
#    started, and takes the SMB ports).
exshare=/tmp/bench-exshare
mkdir -p "$exshare"
"$exserver" --listen "$addr" --port 445 --port 5445 --log /tmp/exserver.log "$exshare" &
expid=$!
if wait_for_line /tmp/exserver.log 30 'listening on' "$expid"; then
	cifs_run cifs-exserver "rdma,vers=3.1.1,guest" "$exshare"
else
	notes+=("  [cifs-exserver] the example server did not start: $(tail -n 1 /tmp/exserver.log)")
fi
sd_sleep 1
kill "$expid" 2>/dev/null
wait "$expid" 2>/dev/null
grep 'summary:' /tmp/exserver.log | sed 's/^/example server: /' >> "$SD_OUT/smb.log"
rm -rf "$exshare"

# 1b. cifs.ko -> the patched smbd of `make samba` (BUILD/samba/bin), over
#     SMB-Direct with the RDMA channel and over TCP on the same address and
#     port, one smbd serving both. "use sendfile" lets RDMA READs go from
#     the page cache. Guest access as root: no passdb tool needed.
samba_bin=${us%/userspace/build}/samba/bin
smbd_pid=
if [ -x "$samba_bin/smbd" ]; then
	sshare=/tmp/bench-sshare sst=/tmp/bench-sstate
	mkdir -p "$sshare" "$sst/ncalrpc"
	cat > /tmp/bench-smb.conf <<CONF
[global]
	server role = standalone server
	smb ports = 445
	server smbdirect ports = 445 5445
	interfaces = $addr
	bind interfaces only = yes
	disable netbios = yes
	server min protocol = SMB3
	map to guest = bad user
	guest account = root
	state directory = $sst
	lock directory = $sst
	cache directory = $sst
	pid directory = $sst
	private dir = $sst
	ncalrpc dir = $sst/ncalrpc
	log file = $sst/log.%m
	load printers = no
	disable spoolss = yes
[share]
	path = $sshare
	read only = no
	guest ok = yes
	force user = root
	use sendfile = yes
CONF
	LD_LIBRARY_PATH=$samba_bin/lib setsid "$samba_bin/smbd" --foreground --no-process-group \
		--debug-stdout -d 2 -s /tmp/bench-smb.conf > /tmp/bench-smbd.log 2>&1 < /dev/null &
	smbd_pid=$!
	if wait_for_line /tmp/bench-smbd.log 30 'waiting for connections' "$smbd_pid"; then
		cifs_run cifs-samba "rdma,vers=3.1.1,guest" "$sshare"
		cifs_run cifs-samba-tcp "vers=3.1.1,guest" "$sshare"
	else
		notes+=("  [cifs-samba] the patched smbd did not start: $(tail -n 1 /tmp/bench-smbd.log)")
	fi
	kill "$smbd_pid" 2>/dev/null
	sd_sleep 1
	pkill -KILL '^smbd' 2>/dev/null
	rm -rf "$sshare"
else
	notes+=("  [cifs-samba] no patched Samba in $samba_bin (make samba)")
fi

# The patched smbclient: put and get of SMB_MIB, SMB-Direct (RDMA channel
# from 4 KiB) or TCP (SMBC_TRANSPORT=tcp), against ksmbd.
# SMB-Direct without the TCP fallback (--smbdirect-required): a TCP number
# must not pass for an SMB-Direct one.
smbc_io() { # put|get REMOTE LOCAL
	local opt=(--smbdirect-required)
	[ "${SMBC_TRANSPORT:-rdma}" = tcp ] && opt=()
	if [ "$1" = put ]; then
		LD_LIBRARY_PATH=$samba_bin/lib timeout -s KILL 300 "$samba_bin/smbclient" \
			"//$addr/share" -p "$ksmbd_rxe_port" -U U%P -m SMB3 "${opt[@]}" -c "put $3 $2"
	else
		LD_LIBRARY_PATH=$samba_bin/lib timeout -s KILL 300 "$samba_bin/smbclient" \
			"//$addr/share" -p "$ksmbd_rxe_port" -U U%P -m SMB3 "${opt[@]}" -c "get $2 $3"
	fi
}

# 2. ksmbd: cifs.ko over SMB-Direct and over TCP, the example client.
ksmbd_max_write=4M
if ksmbd_start; then
	cifs_run cifs-ksmbd "rdma,vers=3.1.1,username=U,password=P" "$ksmbd_share"
	cifs_run cifs-tcp "vers=3.1.1,username=U,password=P" "$ksmbd_share"
	if [ -x "$samba_bin/smbclient" ]; then
		for tr in rdma tcp; do
			k=smbc-ksmbd
			[ $tr = tcp ] && k=smbc-ksmbd-tcp
			SMBC_TRANSPORT=$tr measure "$k.write" "$smb_bytes" smbc_io put bench-smbc.bin "$src" &&
				same_as_src "$ksmbd_share/bench-smbc.bin" "$k.write"
			rm -f "$back"
			SMBC_TRANSPORT=$tr measure "$k.read" "$smb_bytes" smbc_io get bench-smbc.bin "$back" &&
				same_as_src "$back" "$k.read"
			rm -f "$ksmbd_share/bench-smbc.bin" "$back"
		done
	fi
	for d in 8 1; do
		measure "client$d.write" "$smb_bytes" client_io "$d" put "$src" bench-client.bin &&
			same_as_src "$ksmbd_share/bench-client.bin" "client$d.write"
		rm -f "$back"
		measure "client$d.read" "$smb_bytes" client_io "$d" get bench-client.bin "$back" &&
			same_as_src "$back" "client$d.read"
		rm -f "$ksmbd_share/bench-client.bin" "$back"
	done
else
	notes+=("  [ksmbd] $ksmbd_error")
fi

# --- the table ---------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
v() { echo "${1:-n/a}"; }
# target LABEL VALUE MIN
target() {
	local verdict
	verdict=$(awk -v a="$2" -v m="$3" 'BEGIN { if (a == "n/a" || a == "") print "NOT MEASURED";
		else if (a + 0 >= m + 0) print "reached"; else print "not reached" }')
	log "target $1 >= $3: $2 ($verdict)"
}
log "benchmark on rxe0, kernel $(uname -r), ${secs}s sampled per RDMA run, SMB files of $smb_mib MiB"
log "units: MiB/s = 2^20 B/s (perftest's \"MB/sec\" column is MiB/s); CPU = guest-wide busy seconds per GiB moved"
[ -n "$perftest_clock_failed" ] &&
	log "  (perftest could not calibrate its clock here: its MiB/s are iterations x size / window, its latency n/a)"
log "  ib_send_bw   1 MiB:   $(v "$send_bw") MiB/s"
log "  ib_send_lat  64 B:    $(v "$send_lat") us (t_avg)"
log "  ib_read_bw   64 KiB:  $(v "$read_bw64") MiB/s     1 MiB: $(v "$read_bw1") MiB/s"
log "  ib_write_bw  64 KiB:  $(v "$write_bw64") MiB/s     1 MiB: $(v "$write_bw1") MiB/s"
log "  smbdirect perf send 1 MiB messages: $(v "$sd_bw") MiB/s ($(v "$sd_bw_gb") Gbit/s)"
log "  smbdirect perf latency 64 B (round trip/2): $(v "$sd_lat") us avg, $(v "$sd_lat99") us p99"
log "  smbdirect perf read  64 KiB: v1 ioctl $(v "$rd_v1") MiB/s ($(v "$rd_v1_us") us/call), async depth 1 $(v "$rd_d1") MiB/s ($(v "$rd_d1_us") us), depth 8 $(v "$rd_d8") MiB/s ($(v "$rd_d8_us") us); 1 MiB depth 8 $(v "$rd1m_d8") MiB/s"
log "  smbdirect perf write 64 KiB: v1 ioctl $(v "$wr_v1") MiB/s ($(v "$wr_v1_us") us/call), async depth 1 $(v "$wr_d1") MiB/s ($(v "$wr_d1_us") us), depth 8 $(v "$wr_d8") MiB/s ($(v "$wr_d8_us") us); 1 MiB depth 8 $(v "$wr1m_d8") MiB/s"
log "  smbdirect perf register+deregister 1 MiB: v1 $(v "$reg_v1") us avg ($(v "$reg_v1_99") p99), v1 + async deregister $(v "$reg_as") us ($(v "$reg_as_99") p99)"
# The pooled registration (branch pooled-mr) changes REGISTER/DEREGISTER
# in the module, not the calls: with it these are the pooled numbers, and
# "pooled / today's" is this line over the same line of a run without it.
log "    pooled registration: $pooled_note"
[ -n "$pooled" ] && log "    module before pooled MRs (same calls, same run): $(v "$reg_base") us avg ($(v "$reg_base_99") p99)"
[ -n "${params:-}" ] && log "  negotiated (server side): $params"
smbrow() { # label key
	log "$(printf '  %-38s write %8s MiB/s %7s CPU-s/GiB   read %8s MiB/s %7s CPU-s/GiB' "$1" \
		"$(v "${mib[$2.write]:-}")" "$(v "${cpu[$2.write]:-}")" "$(v "${mib[$2.read]:-}")" "$(v "${cpu[$2.read]:-}")")"
}
log "  SMB, $smb_mib MiB files (dd bs=8M direct on cifs; example client --rdma --invalidate):"
smbrow "cifs.ko -> ksmbd, SMB-Direct" cifs-ksmbd
smbrow "cifs.ko -> ksmbd, TCP (same veth)" cifs-tcp
smbrow "cifs.ko -> example server, SMB-Direct" cifs-exserver
smbrow "cifs.ko -> patched smbd, SMB-Direct" cifs-samba
smbrow "cifs.ko -> patched smbd, TCP" cifs-samba-tcp
smbrow "patched smbclient -> ksmbd, SMB-Direct" smbc-ksmbd
smbrow "patched smbclient -> ksmbd, TCP" smbc-ksmbd-tcp
smbrow "example client -> ksmbd, depth 8" client8
smbrow "example client -> ksmbd, depth 1" client1
for n in "${notes[@]}"; do
	[ -n "$n" ] && log "$n"
done
log "ratio throughput smbdirect send/ib_send_bw: $(ratio "${sd_bw:-0}" "${send_bw:-0}")"
log "ratio latency    smbdirect latency/ib_send_lat: $(ratio "${sd_lat:-0}" "${send_lat:-0}") (lower is better)"
log "ratio read  64KiB depth 1 / ib_read_bw:  $(ratio "${rd_d1:-0}" "${read_bw64:-0}")   depth 8 / ib_read_bw:  $(ratio "${rd_d8:-0}" "${read_bw64:-0}")"
log "ratio write 64KiB depth 1 / ib_write_bw: $(ratio "${wr_d1:-0}" "${write_bw64:-0}")   depth 8 / ib_write_bw: $(ratio "${wr_d8:-0}" "${write_bw64:-0}")"
log "ratio read  64KiB depth 1 / v1 ioctl: $(ratio "${rd_d1:-0}" "${rd_v1:-0}")   depth 8 / v1 ioctl: $(ratio "${rd_d8:-0}" "${rd_v1:-0}")"
log "ratio write 64KiB depth 1 / v1 ioctl: $(ratio "${wr_d1:-0}" "${wr_v1:-0}")   depth 8 / v1 ioctl: $(ratio "${wr_d8:-0}" "${wr_v1:-0}")"
log "ratio register+deregister v1+async/v1: $(ratio "${reg_as:-0}" "${reg_v1:-0}") (lower is better)"
[ -n "$pooled" ] && log "ratio register+deregister pooled / before pooled MRs: $(ratio "${reg_v1:-0}" "${reg_base:-0}") (lower is better)"
for io in write read; do
	log "ratio SMB $io example client (depth 8) / cifs.ko -> ksmbd: $(ratio "${mib[client8.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")"
	log "ratio SMB $io cifs.ko -> example server / cifs.ko -> ksmbd: $(ratio "${mib[cifs-exserver.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")"
	log "ratio SMB $io cifs.ko SMB-Direct / TCP (-> ksmbd): $(ratio "${mib[cifs-ksmbd.$io]:-0}" "${mib[cifs-tcp.$io]:-0}")"
	log "ratio SMB $io cifs.ko -> patched smbd / cifs.ko -> ksmbd (SMB-Direct): $(ratio "${mib[cifs-samba.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")"
	log "ratio SMB $io cifs.ko -> patched smbd, SMB-Direct / TCP: $(ratio "${mib[cifs-samba.$io]:-0}" "${mib[cifs-samba-tcp.$io]:-0}"), CPU-s/GiB SMB-Direct / TCP: $(ratio "${cpu[cifs-samba.$io]:-0}" "${cpu[cifs-samba-tcp.$io]:-0}") (lower is better)"
	log "ratio SMB $io patched smbclient -> ksmbd / cifs.ko -> ksmbd (SMB-Direct): $(ratio "${mib[smbc-ksmbd.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}"), SMB-Direct / TCP: $(ratio "${mib[smbc-ksmbd.$io]:-0}" "${mib[smbc-ksmbd-tcp.$io]:-0}")"
done
target "read 64KiB depth 8 / depth 1" "$(ratio "${rd_d8:-0}" "${rd_d1:-0}")" 3
target "write 64KiB depth 8 / depth 1" "$(ratio "${wr_d8:-0}" "${wr_d1:-0}")" 3
if [ -n "$pooled" ]; then
	# target: pooled <= 0.3 x before, i.e. before / pooled >= 3.33
	target "register+deregister before pooled MRs / pooled (pooled <= 0.3x)" "$(ratio "${reg_base:-0}" "${reg_v1:-0}")" 3.33
fi
for io in write read; do
	target "SMB $io example client / cifs.ko -> ksmbd" "$(ratio "${mib[client8.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")" 1.0
	target "SMB $io cifs.ko -> example server / cifs.ko -> ksmbd" "$(ratio "${mib[cifs-exserver.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")" 0.9
	target "SMB $io cifs.ko -> patched smbd / cifs.ko -> ksmbd" "$(ratio "${mib[cifs-samba.$io]:-0}" "${mib[cifs-ksmbd.$io]:-0}")" 0.8
	# below TCP smbd's CPU per GiB: TCP / SMB-Direct >= 1
	target "SMB $io patched smbd CPU-s/GiB, TCP / SMB-Direct" "$(ratio "${cpu[cifs-samba-tcp.$io]:-0}" "${cpu[cifs-samba.$io]:-0}")" 1.0
done
rm -f "$src" "$back"
# ksmbd stays up (stopping it is not safe on 7.2); the VM ends here.
rmmod af_smbdirect 2>/dev/null
exit 0
