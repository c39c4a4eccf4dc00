#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""debian/copyright against the files it describes (issue #49).

    tests/host/copyright.py REPO-ROOT

Every file of the source package (what `make dist` puts in the release
tarball: the Makefile's DIST_FILES, as git tracks them) that carries an SPDX-License-Identifier
line must fall, by DEP-5's rule (the last Files stanza whose pattern
matches), under a stanza whose License is that identifier in DEP-5's
names (GPL-2.0 is GPL-2, LGPL-2.1-or-later LGPL-2.1+, "X WITH
Linux-syscall-note" "X with Linux-syscall-note exception", OR is "or").
The Samba patches carry no SPDX line (git format-patch output applied to
Samba's tree): they change Samba, GPL-3.0-or-later, and take its license.
Every License a stanza names must have its text in the file. Prints each
disagreement and exits 1; 0 when the file is right.
"""
import fnmatch
import re
import subprocess
import sys

# Files without an SPDX line whose license is known otherwise.
DECLARED = {"userspace/samba/patches/*.patch": "GPL-3+"}
NAMES = {
    "GPL-2.0": "GPL-2", "GPL-2.0-only": "GPL-2", "GPL-2.0+": "GPL-2+",
    "GPL-2.0-or-later": "GPL-2+", "GPL-3.0-or-later": "GPL-3+", "GPL-3.0+": "GPL-3+",
    "LGPL-2.1": "LGPL-2.1", "LGPL-2.1-only": "LGPL-2.1", "LGPL-2.1+": "LGPL-2.1+",
    "LGPL-2.1-or-later": "LGPL-2.1+", "BSD-3-Clause": "BSD-3-clause", "MIT": "Expat",
}


def dep5_name(expr):
    """An SPDX expression in DEP-5's short names, or None if unknown."""
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    parts = re.split(r"\s+OR\s+", expr)
    if len(parts) > 1:
        names = [dep5_name(p) for p in parts]
        return None if None in names else " or ".join(names)
    m = re.fullmatch(r"(\S+)\s+WITH\s+Linux-syscall-note", expr)
    if m:
        base = dep5_name(m.group(1))
        return base and base + " with Linux-syscall-note exception"
    return NAMES.get(expr)


def stanzas(text):
    """(patterns, license) of each Files paragraph; the standalone
    License paragraphs' names."""
    files, licenses = [], set()
    for para in re.split(r"\n\s*\n", text):
        fields, key = {}, None
        for line in para.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key].append(line.strip())
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = [value.strip()]
        if "Files" in fields and "License" in fields:
            files.append((" ".join(fields["Files"]).split(), fields["License"][0]))
        elif "License" in fields:
            licenses.add(fields["License"][0])
    return files, licenses


def spdx_of(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    m = re.search(r"SPDX-License-Identifier:\s*(.+)", head)
    if not m:
        return None
    # What the comment syntax of the file leaves after the expression.
    return re.sub(r"\s*(\*/|-->|\"|')\s*$", "", m.group(1)).strip()


def main():
    root = sys.argv[1]
    with open(f"{root}/userspace/packaging/debian/copyright", encoding="utf-8") as f:
        files, licenses = stanzas(f.read())
    with open(f"{root}/Makefile", encoding="utf-8") as f:
        shipped = re.search(r"^DIST_FILES = (.*)$", f.read(), re.M).group(1).split()
    paths = subprocess.run(["git", "-C", root, "ls-files", "--", *shipped],
                           check=True, capture_output=True, text=True).stdout.split()
    bad, checked, declared, unknown = [], 0, 0, 0
    for path in paths:
        want = spdx_of(f"{root}/{path}")
        if want is None:
            for pattern, lic in DECLARED.items():
                if fnmatch.fnmatchcase(path, pattern):
                    want, declared = lic, declared + 1
                    break
            else:
                unknown += 1
                continue
        elif "<SPDX" in want:
            unknown += 1	# a license text naming the syntax, not a file's license
            continue
        else:
            name = dep5_name(want)
            if name is None:
                bad.append(f"{path}: SPDX '{want}' has no DEP-5 name here")
                continue
            want = name
            checked += 1
        got = None
        for patterns, lic in files:
            if any(fnmatch.fnmatchcase(path, p) for p in patterns):
                got = lic
        if got != want:
            bad.append(f"{path}: its license is {want}, debian/copyright says {got}")
    for _, lic in files:
        for one in lic.split(" or "):
            if one not in licenses:
                bad.append(f"debian/copyright: no License paragraph with the text of {one}")
    for line in bad:
        print(line)
    print(f"copyright: {checked} files by their SPDX lines, {declared} Samba patches "
          f"(GPL-3+), {unknown} without a license line; {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
