# SPDX-License-Identifier: GPL-2.0
#
# Sourced by tests/host/i386.sh and tests/host/abi.sh: i386_exec PROGRAM
# ARGS... runs a 32-bit (i386) program the scripts built. Directly where
# the host's kernel runs such programs; under qemu-user's qemu-i386 (make
# deps installs it) where it has no IA32 emulation, as a Firecracker
# guest's 6.18 here (2026-11-27: "Exec format error"). The program is the
# same either way; i386_how says which ran it. i386_probe DIR first: it
# builds and runs an empty i386 program in DIR.
i386_runner=
i386_how=
i386_probe() { # dir
	local t=$1/i386-probe
	printf 'int main(void) { return 0; }\n' | gcc -m32 -x c - -o "$t" 2>/dev/null ||
		{ i386_how="no i386 toolchain"; return 1; }
	if "$t" 2>/dev/null; then
		i386_runner= i386_how="the host's kernel"
	elif command -v qemu-i386 >/dev/null && qemu-i386 "$t"; then
		i386_runner=qemu-i386 i386_how="qemu-i386 (the host's kernel runs no i386 programs)"
	else
		i386_how="nothing: the host's kernel runs no i386 programs and there is no qemu-i386 (make deps)"
		return 1
	fi
}
i386_exec() { # program args...
	if [ -n "$i386_runner" ]; then "$i386_runner" "$@"; else "$@"; fi
}
