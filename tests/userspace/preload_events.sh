#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libsmbdirect-preload.so under event loops, in the test VM (TAP): what
# replacing a socket must keep and what a non-blocking connect must never do
# (issue #23). run.sh covers the rest of `smbdirect run`.
#
#   events.*.epoll_before_connect   sd_tcponly evclient registers its
#       non-blocking socket in epoll (EPOLLIN|EPOLLOUT|EPOLLET) before
#       connect(), as Boost.Asio and tevent do; the replacement must keep the
#       registration: EPOLLOUT for the connect, EPOLLIN for the answer, over
#       SMB-Direct (with fallback allowed, and without)
#   events.inet.v6only              --inet: a listener on :: with IPV6_V6ONLY
#       reads it back as 1 and takes no IPv4 client
#   events.fallback.nonblocking     a non-blocking connect toward 127.0.0.1
#       (no RDMA route) returns at once, falls back to TCP under the
#       program's epoll registration and moves data; the second connect of
#       the process goes to TCP from the negative cache (its debug line)
#
# Environment: SD_US (user-space build dir).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/interop/common.bash"
tap_case_times

us=${SD_US:?SD_US is not set}
sd=$us/tools/smbdirect
tcponly=$us/tests/userspace/tcponly/sd_tcponly
tmp=$(mktemp -d /tmp/events.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ensure_siw_on_veth1
family=$(cat /sys/module/af_smbdirect/parameters/family 2>/dev/null || echo none)
T="timeout -s KILL 40"
tap_plan 4

port=7800
next_port() { port=$((port + 1)); }

show_debug() {
	local f line
	for f; do
		[ -r "$f" ] || continue
		while IFS= read -r line; do
			[[ $line == smbdirect-preload:* ]] && echo "# $line"
		done <"$f"
	done
	return 0
}

# server NAME ONCE [run options...] -- ADDR PORT: sd_tcponly server for ONCE
# connections in the background (under `smbdirect run` with the options
# given; none: plain TCP); waits until it listens. Sets spid.
server() {
	local name=$1 once=$2 opts=()
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	if [ ${#opts[@]} -gt 0 ]; then
		SMBDIRECT_DEBUG=1 $T "$sd" run "${opts[@]}" -- "$tcponly" server --once "$once" \
			--timeout 35 "$@" >"$tmp/$name.srv" 2>"$tmp/$name.srv.err" &
	else
		$T "$tcponly" server --once "$once" --timeout 35 "$@" >"$tmp/$name.srv" \
			2>"$tmp/$name.srv.err" &
	fi
	spid=$!
	wait_for_line "$tmp/$name.srv" 30 '^listening' "$spid"
}

# field VAR FILE PREFIX KEY: VALUE of "KEY=VALUE" on the first line of FILE
# starting with "PREFIX", in VAR (empty when there is none).
field() {
	local line re=" $4=([^ ]*)"
	printf -v "$1" '%s' ""
	[ -r "$2" ] || return 0
	while IFS= read -r line; do
		[[ $line == "$3"* ]] || continue
		[[ $line =~ $re ]] && printf -v "$1" '%s' "${BASH_REMATCH[1]}"
		return 0
	done <"$2"
	return 0
}

# --- epoll registrations survive the replacement -----------------------------
for mode in fallback no_fallback; do
	name=events.rxe4.epoll_before_connect.$mode
	opts=(--ports)
	[ $mode = no_fallback ] && opts=(--no-fallback --ports)
	next_port
	if ! server "$name" 1 --listen --ports $port -- 10.77.0.1 $port; then
		tap_fail "$name" "server did not listen" "$tmp/$name.srv" "$tmp/$name.srv.err"
		continue
	fi
	SMBDIRECT_DEBUG=1 $T "$sd" run "${opts[@]}" $port -- "$tcponly" evclient --down 262144 \
		--timeout 15 10.77.0.1 $port >"$tmp/$name.cli" 2>"$tmp/$name.cli.err"
	crc=$?
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	field cdom "$tmp/$name.cli" "round=1" domain
	if [ $crc -eq 0 ] && file_has "$tmp/$name.cli" '^result=ok' && [ "$cdom" = "$family" ] &&
		file_has "$tmp/$name.cli.err" "connect .*:$port -> SMB-Direct"; then
		show_debug "$tmp/$name.cli.err"
		tap_comment "$(cat "$tmp/$name.cli")"
		tap_ok "$name"
	else
		tap_fail "$name" "client exit $crc, domain '$cdom' (family $family)" \
			"$tmp/$name.cli" "$tmp/$name.cli.err" "$tmp/$name.srv.err"
	fi
done

# --- --inet keeps IPV6_V6ONLY --------------------------------------------------
# A listener on [::]:P with IPV6_V6ONLY=1 reads 1 back; an IPv4 SMB-Direct
# client of P is refused (nothing listens for IPv4), an IPv6 one is taken.
name=events.inet.v6only
next_port
out=$(SMBDIRECT_DEBUG=1 $T "$sd" run --listen --inet --no-fallback --ports $port -- python3 -c '
import errno, socket, sys
port = int(sys.argv[1])
s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s6.bind(("::", port))
s6.listen(4)
c4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    c4.connect(("10.77.0.1", port))
    v4 = "connected"
except OSError as e:
    v4 = errno.errorcode[e.errno]
c6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
c6.connect(("fd77::1", port))
a, peer = s6.accept()
print("v6only", s6.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY), "v4", v4,
      "v6 accepted", peer[0], "protocol", s6.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))
' $port 2>&1)
if str_has "$out" '^v6only 1 v4 (ECONNREFUSED|ETIMEDOUT|ECONNRESET) v6 accepted fd77::1 protocol 257$' &&
	! str_has "$out" "no SMB-Direct equivalent"; then
	tap_comment "$out"
	tap_ok "$name"
else
	tap_fail "$name" "$(tr '\n' ' ' <<<"$out")"
fi

# --- a non-blocking connect without an RDMA route: at once, then TCP -----------
name=events.fallback.nonblocking
next_port
if server "$name" 2 -- 127.0.0.1 $port; then
	SMBDIRECT_DEBUG=1 $T "$sd" run --ports $port -- "$tcponly" evclient --rounds 2 \
		--down 65536 --timeout 15 127.0.0.1 $port >"$tmp/$name.cli" 2>"$tmp/$name.cli.err"
	crc=$?
	wait $spid
	src=$?
	field ms1 "$tmp/$name.cli" "round=1" connect_ms
	field dom1 "$tmp/$name.cli" "round=1" domain
	field dom2 "$tmp/$name.cli" "round=2" domain
	# connect() itself must not wait for the SMB-Direct attempt (seconds
	# for a route that times out); 1 s leaves room for a stalled guest.
	if [ $crc -eq 0 ] && [ $src -eq 0 ] && file_has "$tmp/$name.cli" '^result=ok' &&
		[ "$dom1" = 2 ] && [ "$dom2" = 2 ] && [ -n "$ms1" ] && [ "$ms1" -lt 1000 ] &&
		file_has "$tmp/$name.cli.err" "connect 127.0.0.1:$port -> TCP fallback \\(no RDMA path" &&
		file_has "$tmp/$name.cli.err" \
			"connect 127.0.0.1:$port -> TCP fallback \\(cached: no RDMA path, [0-9]+ s left\\)"; then
		show_debug "$tmp/$name.cli.err"
		tap_comment "$(cat "$tmp/$name.cli")"
		tap_ok "$name"
	else
		tap_fail "$name" "client exit $crc, server exit $src, connect_ms '$ms1', domains '$dom1' '$dom2'" \
			"$tmp/$name.cli" "$tmp/$name.cli.err" "$tmp/$name.srv.err"
	fi
else
	tap_fail "$name" "TCP server did not listen" "$tmp/$name.srv.err"
fi
echo "# preload_events.sh: $SECONDS s in the guest"
tap_exit
