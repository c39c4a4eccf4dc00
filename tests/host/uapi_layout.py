#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""uapi_layout.py HEADER...: a C program (on stdout) that prints the binary
contract of the UAPI headers, one line per fact, sorted by the caller:

  struct NAME size N
  struct NAME member M offset O size S
  ioctl NAME dir D type T nr N size S value V
  const NAME V

for every struct, every ioctl number (a macro built with _IO/_IOR/_IOW/
_IOWR) and every integer constant (#define or enum). tests/host/abi.sh
compiles it for each ABI (-m64, -m32) and compares the output with the
committed baseline: a swapped field, a resized struct, a changed ioctl
magic or number, a renumbered netlink attribute all show up as a changed
line. The parser knows the shapes these headers use (one member per
line, no nested types, no bit fields) and fails loudly on anything else,
so a new shape cannot pass unchecked."""
import os
import re
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def parse(path):
    text = strip_comments(open(path).read())
    structs, ioctls, consts = [], [], []
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{(.*?)\}\s*;", text, flags=re.S):
        name, body = m.group(1), m.group(2)
        members = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            mm = re.fullmatch(r"(?:__[us](?:8|16|32|64)|__[lb]e(?:16|32|64)|char|int)"
                              r" (\w+)(\[\w+\])?", decl)
            if not mm or ":" in decl:
                sys.exit(f"{path}: struct {name}: cannot parse member '{decl}'")
            members.append(mm.group(1))
        structs.append((name, members))
    # Names defined only where the system has not (#ifndef X / #define X):
    # their value is the system's business; the header's own names for the
    # same numbers (SMBDIRECT_SOL, SMBDIRECT_IPPROTO) are checked instead.
    guarded = set(re.findall(r"^[ \t]*#[ \t]*ifndef[ \t]+(\w+)[ \t]*\n[ \t]*#[ \t]*define[ \t]+\1\b",
                             text, flags=re.M))
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\(?)(.*?)$",
                         text.replace("\\\n", " "), flags=re.M):
        name, funclike, value = m.group(1), m.group(2), m.group(3).strip()
        if funclike or not value or name.startswith("_") or name in guarded:
            continue
        if re.match(r"_IO(R|W|WR)?\s*\(", value):
            ioctls.append(name)
        elif value.startswith('"') or value.startswith("{"):
            continue  # strings and initialisers: not a binary contract
        else:
            consts.append(name)
    for m in re.finditer(r"\benum\s*\w*\s*\{(.*?)\}\s*;", text, flags=re.S):
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            mm = re.match(r"(\w+)", item)
            if mm and not mm.group(1).startswith("__"):
                consts.append(mm.group(1))
    return structs, ioctls, consts


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: uapi_layout.py HEADER...")
    out = ["#include <stddef.h>", "#include <stdio.h>", "#include <sys/socket.h>",
           "#include <netinet/in.h>"]
    out += [f"#include \"{os.path.abspath(h)}\"" for h in sys.argv[1:]]
    out += ["#define P(...) printf(__VA_ARGS__)", "int main(void)", "{"]
    seen = set()
    for h in sys.argv[1:]:
        structs, ioctls, consts = parse(h)
        for name, members in structs:
            out.append(f'\tP("struct {name} size %zu\\n", sizeof(struct {name}));')
            for mem in members:
                out.append(f'\tP("struct {name} member {mem} offset %zu size %zu\\n", '
                           f'offsetof(struct {name}, {mem}), '
                           f'sizeof(((struct {name} *)0)->{mem}));')
        for name in ioctls:
            out.append(f'\tP("ioctl {name} dir %u type 0x%02x nr 0x%02x size %u value 0x%08x\\n", '
                       f'(unsigned)_IOC_DIR({name}), (unsigned)_IOC_TYPE({name}), '
                       f'(unsigned)_IOC_NR({name}), (unsigned)_IOC_SIZE({name}), '
                       f'(unsigned)({name}));')
        for name in consts:
            if name in seen:
                continue
            seen.add(name)
            out.append(f'\tP("const {name} %lld\\n", (long long)({name}));')
    out += ["\treturn 0;", "}"]
    print("\n".join(out))


main()
