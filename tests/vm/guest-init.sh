#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM. The root file system is the host's, read-only over
# 9p; everything writable is tmpfs. Sets up the networks and RDMA links the
# tests use, runs $SD_SCRIPT from the repository share, writes its exit status
# to the output share and powers off.
#
#   veth0 10.77.0.1/24 fd77::1/64  <->  veth1 10.77.0.2/24 fd77::2/64
#   rxe0 (Soft-RoCE) on veth0, siw0 (Soft-iWARP) on lo, siw1 on veth1
# siw0 on lo can be created but carries no connection (rdma_resolve_route
# gives ENODEV for 127.0.0.1 and ::1): the iWARP tests use siw1 (10.77.0.2,
# fd77::2).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8

# One process per step where it can be (each start costs ~1 s of the
# guest's one CPU under TCG): the file systems in one `mount -a` from
# guest-fstab (sysfs, dev, debugfs, cgroup2, the tmpfs mounts), the
# links in one `ip -b` and one `rdma -b`.
# (mount -a needs /proc to see what is mounted.)
mount -t proc proc /proc
mount -a --fstab "${0%/*}/guest-fstab" || echo "guest: mount -a: exit $?"
# Progress markers go to the kernel log, with its timestamps.
mark() { echo "guest: $*" > /dev/kmsg 2>/dev/null || echo "guest: $*"; }
# kmemleak scans when the tests say (two scans at the end of every boot:
# guest/check.sh, guest/quick.sh), not by itself: an automatic scan (first
# a minute after boot, then every 10 minutes) took 12-18 s of the guest's
# one CPU under TCG and slowed every process started meanwhile by a third
# or more (measured 2026-11-23: /bin/true 365 -> 215 ms, `smbdirect
# --help` 1160 -> 768 ms with scan=off). What a scan finds is the same.
echo scan=off > /sys/kernel/debug/kmemleak 2>/dev/null
# cgroup2 (in guest-fstab) with the memory controller for children
# (memcg_test: a user's connection buffers charged to its memory cgroup).
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p /run/sd-out "$SD_REPO"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 sdout /run/sd-out
# The repository (and a BUILD under it, as make check's) with cache=loose,
# as the root: what a boot reads there was built before the boot and does
# not change during it, and without the cache every exec from BUILD cost
# ~85 ms more and every library search through an LD_LIBRARY_PATH there
# ~220 ms more (measured 2026-11-28 on 7.2: smbdirect --version 410 ->
# 325 ms; env LD_LIBRARY_PATH=BUILD/... /bin/true 540 -> 315 ms).
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro sdrepo "$SD_REPO"
export SD_OUT=/run/sd-out

status=125
finish() {
	echo "$status" > "$SD_OUT/status"
	sync
	echo "guest: exit status $status"
	reboot -f
}
trap finish EXIT

mark "mounted"
ip -b - <<'EOF' || echo "guest: network setup failed"
link set lo up
link add veth0 type veth peer name veth1
addr add 10.77.0.1/24 dev veth0
addr add 10.77.0.2/24 dev veth1
addr add fd77::1/64 dev veth0 nodad
addr add fd77::2/64 dev veth1 nodad
link set veth0 up
link set veth1 up
EOF
mark "network up"
rdma -f -b - <<'EOF' || echo "guest: rdma link setup failed"
link add rxe0 type rxe netdev veth0
link add siw0 type siw netdev lo
link add siw1 type siw netdev veth1
EOF

read -r rel </proc/sys/kernel/osrelease
mark "$rel up; running $SD_SCRIPT"
eval "set -- $(<"$SD_OUT/args")"
cd "$SD_REPO"
bash "$SD_REPO/$SD_SCRIPT" "$@" </dev/null
status=$?
