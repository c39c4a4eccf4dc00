#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a program built against the installed library gets, checked on the
# host (nothing runs; tests/userspace/install.sh runs such programs in the
# VM):
#
#   tests/host/install.sh <repo-root> <build-dir> [<userspace-build>]
#
# USERSPACE-BUILD (default BUILD/host-asan, tests/host/check.sh's) is
# installed with `cmake --install --prefix /usr/local` under
# DESTDIR=BUILD/install-stage, and then, against that tree only:
#
# host-install/cmake-cxx20    a CMake project that links smbdirect::smbdirect
#                             and says nothing about the standard compiles
#                             tests/userspace/install/client.cpp (which
#                             includes <smbdirect/smbdirect.hpp>) with
#                             -std=gnu++20 or -std=c++20: the exported
#                             targets carry cxx_std_20
# host-install/cmake-c-only   a project that enables C alone compiles
#                             server.c and links it into one program with
#                             smbdirect::smbdirect_static and one with
#                             smbdirect::smbdirect, by the C compiler alone:
#                             the library needs no C++ runtime (was:
#                             undefined reference to __gxx_personality_v0,
#                             operator new, ...), and neither program needs
#                             libstdc++ or libgcc_s
# host-install/cxx17-error    g++ -std=c++17 on a file that includes
#                             <smbdirect/smbdirect.hpp> fails with the
#                             header's #error ("needs C++20") and no other
#                             error (was: "'span' is not a member of 'std'")
# host-install/readme-examples
#                             README.md's C and C++ examples compile with
#                             -Wall -Wextra -Werror against the staged headers
# host-install/pkg-config-version
#                             the staged smbdirect.pc's version is the
#                             header's SMBDIRECT_VERSION_STRING (0.2.0 or
#                             later): --atleast-version=0.2 and =0.1 hold,
#                             "smbdirect >= 0.2.0" resolves, the next minor
#                             and major versions do not
# host-install/cmake-version  find_package(smbdirect 0.2) and (0.1) find the
#                             staged package and its version is the
#                             header's; (next minor) and (1.0) fail
# host-install/version-macros a C program built against the staged header
#                             with $(pkg-config --cflags) checks
#                             SMBDIRECT_CHECK_VERSION(0, 2, 0) in #if
# host-install/pkg-config-static
#                             `pkg-config --static --libs smbdirect` names
#                             no C++ runtime (was: Libs.private: -lstdc++)
#                             and with it gcc links server.c against the
#                             staged libsmbdirect.a
#
# One "pass|fail host-install/<name>" line each in $SMBDIRECT_RESULTS.
set -u -o pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 <repo-root> <build-dir> [<userspace-build>]" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")
us=${3:-$build/host-asan}
results=${SMBDIRECT_RESULTS:-}
status=0
record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	echo "$1 $2"
	[ "$1" = pass ] || status=1
}
names="cmake-cxx20 cmake-c-only cxx17-error readme-examples pkg-config-version cmake-version version-macros pkg-config-static"

stage=$build/install-stage
prefix=$stage/usr/local
work=$build/install-check
rm -rf "$stage" "$work"
mkdir -p "$work"
if ! DESTDIR=$stage cmake --install "$us" --prefix /usr/local >"$work/install.log" 2>&1; then
	echo "cmake --install $us failed:"
	tail -n 20 "$work/install.log"
	for n in $names; do record fail "host-install/$n"; done
	exit 1
fi
include=$prefix/include
src=$repo/tests/userspace/install

# A sanitizer build of the library links only with the sanitizers' runtimes.
sanitize=
grep -q '^SD_SANITIZE:BOOL=ON$' "$us/CMakeCache.txt" 2>/dev/null &&
	sanitize="-fsanitize=address,undefined"

# consumer KIND SOURCE: configures and builds tests/host/install/KIND
# against the stage; its compile command in $work/KIND.command.
consumer() {
	local kind=$1 source=$2 dir=$work/$1
	cmake -S "$repo/tests/host/install/$kind" -B "$dir" -DSD_SOURCE="$source" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
		-DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
		-DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$dir.log" 2>&1 &&
		cmake --build "$dir" >>"$dir.log" 2>&1 &&
		grep -q "smbdirect_DIR:PATH=$prefix/" "$dir/CMakeCache.txt" &&
		python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["command"])' \
			"$dir/compile_commands.json" >"$work/$kind.command"
	local rc=$?
	[ $rc -eq 0 ] || tail -n 20 "$dir.log"
	return $rc
}

if consumer cxx "$src/client.cpp" && grep -Eq -- '-std=(gnu|c)\+\+(20|2a|23|2b)( |$)' "$work/cxx.command"; then
	record pass host-install/cmake-cxx20
else
	echo "the C++ consumer's compile command: $(cat "$work/cxx.command" 2>/dev/null)"
	record fail host-install/cmake-cxx20
fi

if consumer c "$src/server.c"; then
	cxx_runtime=
	for p in sd_consumer_c_static sd_consumer_c_shared; do
		needs=$(readelf -d "$work/c/$p" 2>/dev/null |
			sed -n 's/.*(NEEDED).*\[\(libstdc++[^]]*\|libgcc_s[^]]*\)\]/\1/p' | tr '\n' ' ')
		[ -z "$needs" ] || cxx_runtime+="$p needs $needs; "
	done
	if [ -z "$cxx_runtime" ]; then
		record pass host-install/cmake-c-only
	else
		echo "the C-only consumer's programs: $cxx_runtime"
		record fail host-install/cmake-c-only
	fi
else
	record fail host-install/cmake-c-only
fi

echo '#include <smbdirect/smbdirect.hpp>' >"$work/cxx17.cpp"
g++ -std=c++17 -fsyntax-only -I"$include" "$work/cxx17.cpp" >"$work/cxx17.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q '#error "<smbdirect/smbdirect.hpp> needs C++20' "$work/cxx17.log" &&
	[ "$(grep -c 'error:' "$work/cxx17.log")" -eq 1 ]; then
	record pass host-install/cxx17-error
else
	echo "g++ -std=c++17 on a file that includes <smbdirect/smbdirect.hpp> (exit $rc):"
	head -n 20 "$work/cxx17.log"
	record fail host-install/cxx17-error
fi

# The README's ```c and ```cpp blocks, each compiled as it stands.
readme_ok=1
for lang in c cpp; do
	awk -v lang="$lang" '$0 == "```" lang { on = 1; next } on && $0 == "```" { exit } on' \
		"$repo/README.md" >"$work/readme.$lang"
	if [ ! -s "$work/readme.$lang" ]; then
		echo "README.md has no \`\`\`$lang example"
		readme_ok=0
		continue
	fi
	if [ "$lang" = c ]; then
		cc=(gcc -std=c11 -x c)
	else
		cc=(g++ -std=c++20 -x c++)
	fi
	"${cc[@]}" -Wall -Wextra -Werror -fsyntax-only -I"$include" "$work/readme.$lang" \
		>"$work/readme.$lang.log" 2>&1 || {
		echo "README.md's $lang example does not compile:"
		head -n 20 "$work/readme.$lang.log"
		readme_ok=0
	}
done
if [ $readme_ok -eq 1 ]; then
	record pass host-install/readme-examples
else
	record fail host-install/readme-examples
fi
# --- the version, as consumers check it ---------------------------------------
header=$include/smbdirect/smbdirect.h
want=$(sed -n 's/^#define SMBDIRECT_VERSION_STRING "\(.*\)"$/\1/p' "$header")
IFS=. read -r major minor patch <<<"$want"
next_minor=$major.$((minor + 1))
next_major=$((major + 1)).0
# The staged smbdirect.pc alone; its -I and -L inside the stage.
pcdir=$(dirname "$(find "$prefix" -name smbdirect.pc | head -n 1)")
pc() { PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$pcdir pkg-config "$@"; }
have=$(pc --modversion smbdirect 2>&1)
if [ -n "$want" ] && [ "$have" = "$want" ] &&
	pc --atleast-version=0.2 smbdirect && pc --atleast-version=0.1 smbdirect &&
	pc --exists "smbdirect >= 0.2.0" && pc --exists "smbdirect >= $want" &&
	! pc --atleast-version="$next_minor" smbdirect &&
	! pc --atleast-version="$next_major" smbdirect; then
	record pass host-install/pkg-config-version
else
	echo "pkg-config: smbdirect.pc says '$have', the header '$want' (>= 0.2, not $next_minor or $next_major)"
	record fail host-install/pkg-config-version
fi

# find_version WANT: configures tests/host/install/version asking for WANT.
find_version() {
	local dir=$work/version-$1
	cmake -S "$repo/tests/host/install/version" -B "$dir" -DSD_WANT="$1" \
		-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
		>"$dir.log" 2>&1
}
if find_version 0.2 && grep -q "smbdirect_VERSION=$want\$" "$work/version-0.2.log" &&
	find_version 0.1 && ! find_version "$next_minor" && ! find_version "$next_major"; then
	record pass host-install/cmake-version
else
	echo "find_package(smbdirect VERSION): 0.2 and 0.1 must be found as $want; $next_minor and $next_major not:"
	tail -n 5 "$work"/version-*.log
	record fail host-install/cmake-version
fi

cat >"$work/version.c" <<'EOC'
#include <smbdirect/smbdirect.h>
#include <string.h>
#if !SMBDIRECT_CHECK_VERSION(0, 2, 0)
#error "the installed <smbdirect/smbdirect.h> is older than 0.2.0"
#endif
_Static_assert(SMBDIRECT_VERSION_MAJOR == 0 && SMBDIRECT_VERSION_MINOR >= 2, "0.2 or later");
int version_matches(void);
int version_matches(void)
{
	struct smbdirect_interface *list = 0;
	/* The 0.2 calls are declared: the asynchronous ones, the sized list. */
	(void)smbdirect_rdma_reap;
	(void)smbdirect_interfaces_sized;
	(void)smbdirect_interfaces(&list, 0);
	return strcmp(smbdirect_version(), SMBDIRECT_VERSION_STRING) == 0;
}
EOC
if gcc -std=c11 -Wall -Wextra -Werror -c $(pc --cflags smbdirect) -o "$work/version.o" \
	"$work/version.c" >"$work/version.c.log" 2>&1; then
	record pass host-install/version-macros
else
	head -n 20 "$work/version.c.log"
	record fail host-install/version-macros
fi

# A static link as pkg-config describes it: the archive, and what it needs.
static_libs=$(pc --static --libs smbdirect)
if [[ " $static_libs " == *" -lstdc++ "* ]]; then
	echo "pkg-config --static --libs smbdirect: $static_libs (a C++ runtime)"
	record fail host-install/pkg-config-static
elif gcc -std=c11 $sanitize $(pc --cflags smbdirect) -o "$work/server-static" "$src/server.c" \
	-Wl,-Bstatic $static_libs -Wl,-Bdynamic >"$work/server-static.log" 2>&1; then
	record pass host-install/pkg-config-static
else
	echo "gcc ... $static_libs (static):"
	head -n 20 "$work/server-static.log"
	record fail host-install/pkg-config-static
fi
exit $status
