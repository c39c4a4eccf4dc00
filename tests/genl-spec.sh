#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# genl-spec.sh ROOT KERNEL-SOURCE
#
# The netlink spec Documentation/netlink/specs/af_smbdirect.yaml and the
# UAPI header uapi/linux/smbdirect_genl.h describe one family; this checks
# that they agree and that the kernel's own tools accept the spec:
#  1. the kernel's generator (tools/net/ynl/pyynl/ynl_gen_c.py --mode uapi)
#     reads the spec, which validates it against the kernel's schema
#     (Documentation/netlink/genetlink-legacy.yaml, the spec's protocol,
#     by jsonschema), and writes
#     the C header that the spec implies;
#  2. every constant named in either header (commands, attributes, their
#     _MAX and count names, the family name and version) exists in both,
#     with the same value: two programs, one per header, print them all
#     and the outputs must be identical. The enums' UNSPEC entries are ours
#     alone (the generator numbers from the first attribute's value).
# Exit 0 when both hold; the reason otherwise.
set -uo pipefail
root=${1:?usage: genl-spec.sh ROOT KERNEL-SOURCE}
ksrc=${2:?usage: genl-spec.sh ROOT KERNEL-SOURCE}
spec=$root/Documentation/netlink/specs/af_smbdirect.yaml
ours=$root/uapi/linux/smbdirect_genl.h
gen=$ksrc/tools/net/ynl/pyynl/ynl_gen_c.py
# Debian's python3 (python3-yaml, python3-jsonschema from make deps), not
# whatever python3 comes first in PATH.
py=/usr/bin/python3

[ -f "$gen" ] || { echo "genl-spec: no $gen in the kernel source"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The generator finds the schema beside the spec's directory and the
# "kernel root" by a MAINTAINERS file above the spec (it searches upwards
# without end otherwise): a tree of their shape.
mkdir -p "$tmp/Documentation/netlink/specs" "$tmp/linux"
touch "$tmp/MAINTAINERS"
cp "$ksrc"/Documentation/netlink/genetlink*.yaml "$tmp/Documentation/netlink/"
cp "$spec" "$tmp/Documentation/netlink/specs/"
if ! timeout 120 "$py" "$gen" --mode uapi --header \
		--spec "$tmp/Documentation/netlink/specs/af_smbdirect.yaml" \
		-o "$tmp/linux/smbdirect_genl.h" >"$tmp/gen.log" 2>&1; then
	echo "genl-spec: the kernel's ynl_gen_c.py rejects the spec:"
	tail -n 15 "$tmp/gen.log"
	exit 1
fi

# The names: enumerators and #defines starting with SMBDIRECT_ or
# __SMBDIRECT_ in either header, except the include guard and UNSPEC.
names() {
	sed -n -e 's/^[[:space:]]*\(_*SMBDIRECT_[A-Z0-9_]*\)[[:space:]]*[,=].*/\1/p' \
		-e 's/^[[:space:]]*\(_*SMBDIRECT_[A-Z0-9_]*\)[[:space:]]*$/\1/p' \
		-e 's/^#define[[:space:]]\+\(_*SMBDIRECT_[A-Z0-9_]*\)[[:space:]].*/\1/p' "$1" |
		grep -v -e '_UNSPEC$' -e '_H$' -e '^_UAPI'
}
{ names "$ours"; names "$tmp/linux/smbdirect_genl.h"; } | sort -u >"$tmp/names"
[ -s "$tmp/names" ] || { echo "genl-spec: no constants found"; exit 1; }

# One program per header printing NAME VALUE for the union of names; a
# name one header lacks is a compile error that names it.
printer() { # header out
	{
		echo "#include <stdio.h>"
		echo "#include \"$1\""
		echo '#define P(x) printf(_Generic((x), char *: "%s %s\n", default: "%s %lld\n"), #x, _Generic((x), char *: (x), default: (long long)(x)))'
		echo "int main(void) {"
		sed 's/.*/\tP(&);/' "$tmp/names"
		echo "return 0; }"
	} >"$2.c"
	if ! LC_ALL=C gcc -std=gnu11 -Wall -Werror -o "$2" "$2.c" >"$2.log" 2>&1; then
		grep -o "'[_A-Z0-9]*' undeclared" "$2.log" | sort -u | sed "s|^|   missing in $1: |"
		return 1
	fi
	"$2" >"$2.out"
}
ok=1
printer "$ours" "$tmp/ours" || ok=0
printer "$tmp/linux/smbdirect_genl.h" "$tmp/spec" || ok=0
[ $ok = 1 ] || { echo "genl-spec: the spec and $ours name different constants"; exit 1; }
if ! diff -u --label uapi/linux/smbdirect_genl.h --label "the spec" \
		"$tmp/ours.out" "$tmp/spec.out"; then
	echo "genl-spec: values differ"
	exit 1
fi
echo "genl-spec: $(wc -l <"$tmp/names") constants agree; the kernel's ynl_gen_c.py accepts the spec"
