# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/interop/*.sh (not a test itself: check.sh runs *.sh).
# TAP helpers and the guest facts the interop scripts share.

tap_n=0 tap_failed=0 tap_case_start=
tap_plan() { echo "1..$1"; }
# tap_case_times: from then on each verdict follows a comment with the
# guest seconds its case took (since the previous verdict).
tap_case_times() { tap_case_start=$SECONDS; }
tap_took() {
	[ -n "$tap_case_start" ] || return 0
	echo "# $((SECONDS - tap_case_start)) s"
	tap_case_start=$SECONDS
}
tap_ok() { tap_took; tap_n=$((tap_n + 1)); echo "ok $tap_n $1"; }
tap_skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1 # SKIP $2"; }
# tap_fail NAME REASON [LOG...]: the logs' last lines as comments, then the verdict.
tap_fail() {
	local name=$1 why=$2 f
	shift 2
	tap_took
	for f in "$@"; do
		[ -s "$f" ] && tail -n 12 "$f" | sed "s|^|# $(basename "$f"): |"
	done
	tap_n=$((tap_n + 1)); tap_failed=1
	echo "not ok $tap_n $name # ${why//$'\n'/ }"
}
tap_exit() { exit "$tap_failed"; }

# The C peers (tests/selftests/interop_*.c) are built next to the selftests.
helper() { echo "${SD_SELFTESTS:?SD_SELFTESTS is not set}/interop/$1"; }

# Soft-iWARP cannot be reached through guest-init.sh's siw0 on lo (RDMA CM
# finds no route for 127.0.0.1/::1 on it; rping fails alike), so the iWARP
# cases use a siw link on veth1 (10.77.0.2), added here when missing.
ensure_siw_on_veth1() {
	rdma link show 2>/dev/null | grep -q '^link siw[^ ]* .* netdev veth1 *$' ||
		rdma link add siw1 type siw netdev veth1
}

# --- Waiting without starting processes ----------------------------------------
# In the TCG guest (one CPU, a kernel with KASAN, lockdep and kmemleak) every
# process started costs 0.3-1 s of that CPU: fork, exec and the dynamic
# loader run mostly in the debug kernel (measured 2026-11-23: /bin/true
# 0.7-0.9 s, `bash -c :` 1.2 s). A poll loop of `grep` and `sleep` every
# 0.1 s therefore took most of the CPU from the program it was waiting for:
# perf in the guest charged grep with 17%, sed 7% and sleep 3% of run.sh's
# time. The helpers below wait and look with bash builtins only.

# sd_sleep SECONDS: sleeps in `read -t` on a FIFO this shell holds open for
# reading and writing (no data ever comes), so no process is started.
sd_sleep_fd=
sd_sleep() {
	if [ -z "$sd_sleep_fd" ]; then
		local fifo
		fifo=$(mktemp -u "${TMPDIR:-/tmp}/sd-sleep.XXXXXX") && mkfifo -m 600 "$fifo" &&
			exec {sd_sleep_fd}<>"$fifo" && rm -f "$fifo" || { sleep "$1"; return 0; }
	fi
	read -r -t "$1" -u "$sd_sleep_fd" _ || :
}

# file_has FILE ERE: whether a line of FILE matches ERE (bash [[ =~ ]]).
file_has() {
	local line
	[ -r "$1" ] || return 1
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ $2 ]] && return 0
	done <"$1"
	return 1
}

# file_count FILE ERE: the number of lines of FILE matching ERE, in sd_count.
file_count() {
	local line
	sd_count=0
	[ -r "$1" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ $2 ]] && sd_count=$((sd_count + 1))
	done <"$1"
	return 0
}

# str_has STRING ERE: whether a line of STRING matches ERE.
str_has() {
	local line
	while IFS= read -r line; do
		[[ $line =~ $2 ]] && return 0
	done <<<"$1"
	return 1
}

# str_count STRING ERE: the number of lines of STRING matching ERE, in sd_count.
str_count() {
	local line
	sd_count=0
	while IFS= read -r line; do
		[[ $line =~ $2 ]] && sd_count=$((sd_count + 1))
	done <<<"$1"
	return 0
}

# tap_comment STRING: each line of STRING as a TAP comment.
tap_comment() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$1"
}

# cm_id_lines ERE: the lines of `rdma resource show cm_id` matching ERE, in
# the array sd_cm_ids (one process: rdma itself).
cm_id_lines() {
	local line all
	sd_cm_ids=()
	# (a here-string, not < <(...): the guest has no /dev/fd)
	mapfile -t all <<<"$(rdma resource show cm_id 2>/dev/null)"
	for line in "${all[@]}"; do
		[ -n "$line" ] && [[ $line =~ $1 ]] && sd_cm_ids+=("$line")
	done
	return 0
}

# wait_for_line FILE SECONDS ERE [PID]: waits up to SECONDS for a line of
# FILE to match ERE; fails early if PID ends without having written it.
# FILE must be emptied before PID is started (`: >FILE`): `cmd 2>FILE &`
# truncates it in the child, after the fork, so a wait that starts at once
# can read an earlier run's line from it (under load it did: a client
# started before its listener had listened was refused, 2026-11-28).
wait_for_line() {
	local deadline=$((SECONDS + $2))
	while :; do
		file_has "$1" "$3" && return 0
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			file_has "$1" "$3"
			return
		fi
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sd_sleep 0.1
	done
}

# The first error line a helper wrote, for the verdict.
first_error() { grep -v '^\(negotiated\|listening\|accepted\|SMB2\|socket: SO_DOMAIN\)' "$1" | head -n 1; }

# ksmbd, started once per VM boot and left running (stopping it on 7.2 hits
# a KASAN report inside ksmbd): every ksmbd-facing script calls ksmbd_start,
# which writes the one configuration they share and starts ksmbd.mountd
# unless it runs already. Share "share" on $ksmbd_share, user U password P.
#
# smb2 max write = 128K: a client that sends its WRITE data inline (Samba's
# smbclient; any client without the RDMA channel) must fit each WRITE into
# ksmbd's SMB-Direct MaxFragmentedSize, 173910 bytes (255 receive credits of
# 1364 bytes, halved). SMB2 offers no other way to bound it: this is the
# rule for administrators serving inline-only clients over SMB-Direct.
# (make bench sets ksmbd_max_write=4M: it measures clients with the RDMA
# channel, and 128K would cut cifs.ko's wsize to 128 KiB.)
# READ responses come the other way and fit our receive side (the preload
# raises its MaxFragmentedSize for SMB sockets), so smb2 max read stays 4 MiB.
#
# Sets ksmbd_listening (the LISTEN cm_ids), ksmbd_rxe_port and ksmbd_siw_port
# (7.x listens on 445 for IB/RoCE and 5445 for iWARP; 6.12 on one port for
# all, 5445 as soon as an iWARP device exists). Returns 1 with the reason in
# ksmbd_error.
ksmbd_share=/tmp/sd-ksmbd-share
ksmbd_start() {
	local first deadline
	ksmbd_error=
	command -v ksmbd.mountd >/dev/null || { ksmbd_error="ksmbd-tools are not installed"; return 1; }
	grep -q ksmbd /proc/filesystems /proc/modules 2>/dev/null ||
		[ -d /sys/module/ksmbd ] || [ -d /sys/class/ksmbd-control ] ||
		{ ksmbd_error="no ksmbd in this kernel"; return 1; }
	if ! pgrep -x ksmbd.mountd >/dev/null; then
		mkdir -p "$ksmbd_share" /etc/ksmbd
		cat >/etc/ksmbd/ksmbd.conf <<CONF || { ksmbd_error="/etc/ksmbd is not writable"; return 1; }
[global]
	server min protocol = SMB2_10
	smb2 max write = ${ksmbd_max_write:-128K}
[share]
	path = $ksmbd_share
	read only = no
	force user = root
CONF
		ksmbd.adduser -a U -p P >/dev/null 2>&1 || ksmbd.adduser -u U -p P >/dev/null 2>&1
		ensure_siw_on_veth1 || echo "# could not add a siw link on veth1"
		# -n: stay in the foreground (it prints nothing, even with -v).
		ksmbd.mountd -n >/dev/null 2>&1 </dev/null &
	fi
	# A deadline in seconds: each round of rdma + grep costs most of a
	# second in the TCG guest. One port alone may be the first of two
	# listeners (7.x): wait a few seconds more for the other before taking
	# it as the only one (6.12).
	ksmbd_listening= first=
	deadline=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$deadline" ]; do
		cm_id_lines LISTEN
		printf -v ksmbd_listening '%s\n' "${sd_cm_ids[@]}"
		[[ $ksmbd_listening == *':445 '* && $ksmbd_listening == *':5445 '* ]] && break
		if [[ $ksmbd_listening == *':445 '* || $ksmbd_listening == *':5445 '* ]]; then
			: "${first:=$SECONDS}"
			[ $((SECONDS - first)) -ge 3 ] && break
		fi
		sd_sleep 0.5
	done
	if [[ $ksmbd_listening != *':445 '* && $ksmbd_listening != *':5445 '* ]]; then
		rdma resource show cm_id | sed 's/^/# cm_id: /'
		ksmbd_error="ksmbd's SMB-Direct listener did not come up in 30 s"
		return 1
	fi
	ksmbd_rxe_port=5445 ksmbd_siw_port=445
	[[ $ksmbd_listening == *':445 '* ]] && ksmbd_rxe_port=445
	[[ $ksmbd_listening == *':5445 '* ]] && ksmbd_siw_port=5445
	return 0
}

# --- smbclient's command set, over SMB-Direct and over TCP ---------------------
# smbc_command_set DIR FILE: the -c string of the SMB2 operations smbclient
# offers, but change notification (it waits for events): in a new remote
# DIR with FILE's data: put, allinfo, hardlink, rename, setmode, open with
# a byte-range lock and unlock, server-side copy (scopy: FSCTL_SRV_COPYCHUNK),
# volume, du, ls, showacls (security descriptors), echo, get, del, rmdir.
# Every script runs it twice, over SMB-Direct and over TCP, against the same
# server and compares the two outputs (smbc_normalise).
smbc_command_set() {
	printf '%s' "mkdir $1; cd $1; put $2 a; allinfo a; hardlink a h; allinfo h;" \
		" rename h r; setmode a +r; allinfo a; setmode a -r; open a; lock 1 w 0 10;" \
		" unlock 1 0 10; close 1; scopy a c; allinfo c; volume; du; ls; showacls; ls a;" \
		" showacls; echo 2 ping; get c $2.back; del r; del c; del a; cd ..; rmdir $1; ls $1"
}

# smbc_normalise LOG: smbclient's output without what differs between two
# runs of the same commands (the preload's lines, times, transfer rates, the
# share's free blocks), for diff.
smbc_normalise() {
	sed -E -e '/^smbdirect-preload:/d' \
		-e 's/\((average )?[0-9.]+ [A-Za-z/]+\)//g' \
		-e 's/(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +[0-9]+ [0-9:]+( [AP]M)? [0-9]{4}( [A-Z]+)?/DATE/g' \
		-e 's/[0-9]+ blocks of size [0-9]+\. [0-9]+ blocks available/BLOCKS/' \
		-e 's/^([a-z_]*time): .*/\1: T/' "$1"
}

# --- the patched Samba's smbd (samba-*.sh) ------------------------------------------
# samba_write_conf DIR ADDRS: a standalone smbd's whole configuration under
# DIR: DIR/smb.conf (`smb ports = 445`, `server smbdirect ports = 445 5445`,
# SMB3 only, interfaces ADDRS, its state in DIR/state) with share "share"
# (DIR/share) for user root, password P, and DIR/client.conf for the
# patched smbclient (its state in DIR/cstate).
samba_write_conf() {
	local dir=$1 st=$1/state lct
	mkdir -p "$dir/share" "$st/ncalrpc" "$dir/cstate"
	# User root, password P: an smbpasswd file written here (no pdbedit run:
	# a process start costs seconds in the guest). The NT hash is MD4 of
	# UTF-16LE "P"; U normal account, X password does not expire; the last
	# change time is now (0 would mean "must change at next logon").
	printf -v lct '%08X' "$EPOCHSECONDS"
	echo "root:0:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:E788D377ACD8B4CAFBA02CC864D5E4DB:[UX         ]:LCT-$lct:" \
		>"$st/smbpasswd"
	chmod 600 "$st/smbpasswd"
	cat >"$dir/smb.conf" <<CONF
[global]
	server role = standalone server
	smb ports = 445
	server smbdirect ports = 445 5445
	interfaces = $2
	bind interfaces only = yes
	disable netbios = yes
	server min protocol = SMB3
	passdb backend = smbpasswd:$st/smbpasswd
	state directory = $st
	lock directory = $st
	cache directory = $st
	pid directory = $st
	private dir = $st
	binddns dir = $st
	ncalrpc dir = $st/ncalrpc
	log file = $st/log.%m
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
[share]
	path = $dir/share
	read only = no
	force user = root
CONF
	# The clients' configuration: everything they write under DIR.
	cat >"$dir/client.conf" <<CONF
[global]
	client min protocol = SMB3
	disable netbios = yes
	cache directory = $dir/cstate
	lock directory = $dir/cstate
	state directory = $dir/cstate
	private dir = $dir/cstate
	ncalrpc dir = $dir/cstate
CONF
}

# samba_smbd_start BIN CONF LOG LIBPATH N ADDR...: starts BIN/smbd in the
# foreground (in its own session: it signals its process group when it
# stops; $SD_SAMBA_DEBUG its debug level, 1) and waits up to 90 s for its
# TCP 445 listener on every ADDR (/proc/net/tcp, LISTEN is state 0A,
# addresses little-endian hex; read with builtins while smbd starts) and N
# SMB-Direct listeners (rdma's LISTEN cm_ids on 10.77.0.x, 445 or 5445, in
# sd_cm_ids). smbd's pid in sd_smbd_pid; why it is not listening in sd_why.
samba_smbd_start() {
	local bin=$1 conf=$2 log=$3 lib=$4 n=$5 deadline listening=0 a o ok hex=()
	shift 5
	for a in "$@"; do
		IFS=. read -r -a o <<<"$a"
		printf -v a '%02X%02X%02X%02X:01BD' "${o[3]}" "${o[2]}" "${o[1]}" "${o[0]}"
		hex+=("$a")
	done
	sd_why=
	LD_LIBRARY_PATH=$lib setsid "$bin/smbd" --foreground --no-process-group \
		--debug-stdout -d "${SD_SAMBA_DEBUG:-1}" -s "$conf" >"$log" 2>&1 </dev/null &
	sd_smbd_pid=$!
	deadline=$((SECONDS + 90))
	while :; do
		ok=1
		for a in "${hex[@]}"; do
			file_has /proc/net/tcp "^ *[0-9]+: $a 00000000:0000 0A " || { ok=0; break; }
		done
		if [ $ok = 1 ]; then
			cm_id_lines 'state LISTEN .*src-addr 10\.77\.0\.[0-9]+:(445|5445) '
			[ ${#sd_cm_ids[@]} -ge "$n" ] && { listening=1; break; }
		fi
		kill -0 "$sd_smbd_pid" 2>/dev/null || { sd_why="smbd exited: $(tail -n 1 "$log")"; break; }
		[ $SECONDS -lt $deadline ] || break
		sd_sleep 0.3
	done
	[ -z "$sd_why" ] && [ $listening = 0 ] &&
		sd_why="smbd has not its TCP 445 listeners on $* and $n SMB-Direct ones after 90 s"
	return 0
}

# --- the module's counters ------------------------------------------------------
# For the Samba scripts (samba-*.sh): $sd is the smbdirect tool.
# stats FILE: `smbdirect stats --json`, the namespace's counters.
stats() { "$sd" stats --json >"$1" 2>"$1.err"; }
# counter FILE NAME [DEV]: the namespace's total (or device DEV's) counter
# NAME, in sd_val (empty if absent). No process.
counter() {
	local j='' re
	sd_val=
	[ -r "$1" ] && IFS= read -r j <"$1"
	if [ -n "${3:-}" ]; then
		[[ $j == *"\"name\":\"$3\""* ]] || return 0
		j=${j#*\"name\":\""$3"\"}
		j=${j%%\"name\":*}
	else
		j=${j%%\"devices\"*}
	fi
	re="\"$2\":([0-9]+)"
	[[ $j =~ $re ]] && sd_val=${BASH_REMATCH[1]}
	return 0
}
# delta BEFORE AFTER NAME [DEV]: the counter's growth, in sd_d ("?" if unread).
delta() {
	local a
	counter "$1" "$3" "${4:-}"
	a=$sd_val
	# A device gets its column when a socket first uses it.
	[ -n "${4:-}" ] && [ -z "$a" ] && a=0
	counter "$2" "$3" "${4:-}"
	if [ -z "$a" ] || [ -z "$sd_val" ]; then sd_d='?'; else sd_d=$((sd_val - a)); fi
}
# at_least BEFORE AFTER NAME N [DEV]: empty if NAME grew by N or more.
at_least() {
	delta "$1" "$2" "$3" "${5:-}"
	if [ "$sd_d" = '?' ]; then
		echo "counter $3 unread ($(head -c 200 "$2.err" 2>/dev/null))"
	elif [ "$sd_d" -lt "$4" ]; then
		echo "$3${5:+ on $5} grew by $sd_d, want >= $4"
	fi
}
# rdma_summary BEFORE AFTER: the RDMA and message counters' growth, one line.
rdma_summary() {
	local n out=
	for n in rdma_reads rdma_read_bytes rdma_writes rdma_write_bytes registrations \
		send_invalidates remote_invalidations bytes_tx bytes_rx connections err_rdma; do
		delta "$1" "$2" "$n"
		out+=" $n+$sd_d"
	done
	echo "${out# }"
}

