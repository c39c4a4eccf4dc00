#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""exports.py SRC ARCH > Module.symvers

The kernel's export table, read from its source instead of a built
vmlinux: one Module.symvers line (crc, symbol, "vmlinux", export type,
namespace) per EXPORT_SYMBOL* in SRC's .c, .S and .h files, the other
architectures' directories left out. With it, a tree that was only
`make modules_prepare`d lets modpost check a module's imports (the symbol
exists, GPL-only use, namespace imported) as it does against a built
kernel, in seconds instead of a kernel build (tests/cross/prepare.sh).

It lists exports of code the configuration may not build, so it can
accept an import a built kernel would refuse (a symbol of a disabled
subsystem): what it catches is a symbol that no longer exists, lost its
export, became GPL-only or moved into a namespace.
"""
import os
import re
import sys

if len(sys.argv) != 3:
    sys.exit("usage: exports.py SRC ARCH")
src, arch = sys.argv[1], sys.argv[2]
srcarch = {"x86_64": "x86", "i386": "x86", "arm64": "arm64"}.get(arch, arch)

# EXPORT_SYMBOL(sym), _GPL, _NS(sym, NS), _NS_GPL, EXPORT_SYMBOL_FOR_MODULES
# (sym, "mods"), EXPORT_PER_CPU_SYMBOL(_GPL), EXPORT_TRACEPOINT_SYMBOL(_GPL),
# EXPORT_STATIC_CALL(_GPL|_TRAMP|_TRAMP_GPL). Namespaces are identifiers
# before 6.13 and strings since.
MACRO = re.compile(
    r'\b(EXPORT_(?:PER_CPU_)?SYMBOL(?:_NS)?(?:_GPL)?(?:_FOR_MODULES)?'
    r'|EXPORT_TRACEPOINT_SYMBOL(?:_GPL)?'
    r'|EXPORT_STATIC_CALL(?:_TRAMP)?(?:_GPL)?'
    r'|EXPORT_INDIRECT_CALLABLE|EXPORT_EARLY_PER_CPU_SYMBOL|EXPORT_SYMBOL_IF_KUNIT)'
    r'\(\s*([A-Za-z_][A-Za-z0-9_]*(?:\s*##\s*[A-Za-z_][A-Za-z0-9_]*)?)\s*'
    r'(?:,\s*("?)([\w:.,-]*)\3\s*)?\)')
# Symbols pasted from a register name (x86's retpoline and return thunks).
GPRS = ["rax", "rbx", "rcx", "rdx", "rsp", "rsi", "rdi", "rbp", "r8", "r9", "r10",
        "r11", "r12", "r13", "r14", "r15", "eax", "ebx", "ecx", "edx", "esi",
        "edi", "ebp", "x0"]

table = {}


def add(sym, gpl, ns):
    kind = "EXPORT_SYMBOL_GPL" if gpl else "EXPORT_SYMBOL"
    # A symbol exported twice (per architecture, per configuration): the
    # least restrictive entry wins, as one of them is what gets built.
    old = table.get(sym)
    if old is None or (old[0] == "EXPORT_SYMBOL_GPL" and not gpl) or (old[1] and not ns):
        table[sym] = (kind, ns)


def handle(macro, sym, arg, explicit=False):
    gpl = "_GPL" in macro
    ns = arg
    if "FOR_MODULES" in macro:
        gpl, ns = True, "module:" + arg
    elif macro == "EXPORT_SYMBOL_IF_KUNIT":
        ns = "EXPORTED_FOR_KUNIT_TESTING"
    if "##" in sym:
        head, _, tail = (p.strip() for p in sym.partition("##"))
        if tail not in ("reg", "r"):
            return
        syms = [head + r for r in GPRS]
    else:
        syms = [sym]
    for s in syms:
        if macro.startswith("EXPORT_TRACEPOINT_SYMBOL"):
            for t in ("__tracepoint_", "__traceiter_", "__SCK__tp_func_", "__SCT__tp_func_"):
                add(t + s, gpl, "")
        elif macro.startswith("EXPORT_STATIC_CALL"):
            add("__SCT__" + s, gpl, "")
            if "_TRAMP" not in macro:
                add("__SCK__" + s, gpl, "")
        else:
            add(s, gpl, ns)


DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)', re.M)
NSDEF = re.compile(r'^[ \t]*#[ \t]*define[ \t]+DEFAULT_SYMBOL_NAMESPACE[ \t]+"?(\w+)"?', re.M)


def call_args(text, start):
    """The comma-separated arguments of the call whose '(' is at start."""
    depth, args, cur = 0, [], ""
    for i in range(start, min(len(text), start + 400)):
        c = text[i]
        if c == "(":
            depth += 1
            if depth == 1:
                continue
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            continue
        cur += c
    return None


def scan(text, dir_ns):
    file_ns = dir_ns
    m = NSDEF.search(text)
    if m:
        file_ns = m.group(1)
    # Macros that export: a wrapper exports its argument as it is
    # (x86's __EXPORT_THUNK(sym)); a template pastes an argument into the
    # name (STANDARD_PARAM_DEF(name, ...): param_ops_##name). Their
    # invocations in the same file are the exports.
    in_macro = []
    makers = []
    for d in DEFINE.finditer(text):
        in_macro.append((d.start(), d.end()))
        params = [p.strip() for p in d.group(2).split(",")]
        for e in MACRO.finditer(d.group(3)):
            sym = e.group(2)
            pieces = [p.strip() for p in sym.split("##")]
            if any(p in params for p in pieces) and pieces != ["reg"] and not (
                    len(pieces) == 2 and pieces[1] == "reg"):
                makers.append((d.group(1), params, pieces, e.group(1), e.group(4) or ""))
    wrappers = {}
    for d in DEFINE.finditer(text):
        params = [p.strip() for p in d.group(2).split(",")]
        for e in MACRO.finditer(d.group(3)):
            if e.group(2).strip() in params and len(params) == 1:
                wrappers[d.group(1)] = e.group(1)
    for w, macro in wrappers.items():
        for c in re.finditer(r'(?<![#\w])' + re.escape(w) +
                             r'\(\s*([A-Za-z_]\w*(?:\s*##\s*\w+)?)\s*\)', text):
            sym = [p.strip() for p in c.group(1).split("##")]
            inside = any(a <= c.start() < b for a, b in in_macro)
            if inside and not (len(sym) == 2 and sym[1] == "reg"):
                continue
            if not inside and text[max(0, c.start() - 40):c.start()].rstrip().endswith("define"):
                continue
            handle(macro, c.group(1), file_ns if "_NS" not in macro else "")
    for e in MACRO.finditer(text):
        if any(a <= e.start() < b for a, b in in_macro):
            sym = [p.strip() for p in e.group(2).split("##")]
            # Only what no invocation can name: register-pasted thunks.
            if not (len(sym) == 2 and sym[1] == "reg"):
                continue
        ns = e.group(4) or ""
        if not ns and "_NS" not in e.group(1) and "FOR_MODULES" not in e.group(1):
            ns = file_ns if "PER_CPU" not in e.group(1) else ""
        handle(e.group(1), e.group(2), ns, explicit="_NS" in e.group(1) or "FOR_MODULES" in e.group(1))
    for name, params, pieces, macro, arg in makers:
        for c in re.finditer(r'(?<![#\w])' + re.escape(name) + r'\s*\(', text):
            if any(a <= c.start() < b for a, b in in_macro):
                continue
            args = call_args(text, c.end() - 1)
            if not args or len(args) < len(params):
                continue
            sub = dict(zip(params, args))
            sym = "".join(sub.get(p, p) for p in pieces)
            if re.fullmatch(r"[A-Za-z_]\w*", sym):
                handle(macro, sym, arg if ("_NS" in macro or "FOR_MODULES" in macro) else file_ns,
                       explicit=True)


skip_top = {"Documentation", "tools", "samples", "scripts", "usr", ".git"}
for dirpath, dirnames, filenames in os.walk(src):
    rel = os.path.relpath(dirpath, src)
    parts = rel.split(os.sep)
    if rel == ".":
        dirnames[:] = [d for d in dirnames if d not in skip_top]
    elif parts[0] == "arch" and len(parts) == 1:
        dirnames[:] = [d for d in dirnames if d == srcarch]
    # A directory's Makefile may put its exports in a namespace
    # (ccflags-y += -DDEFAULT_SYMBOL_NAMESPACE='"NS"').
    dir_ns = ""
    if "Makefile" in filenames:
        try:
            with open(os.path.join(dirpath, "Makefile"), encoding="utf-8", errors="replace") as f:
                m = re.search(r"-DDEFAULT_SYMBOL_NAMESPACE=\W*(\w+)", f.read())
            if m:
                dir_ns = m.group(1)
        except OSError:
            pass
    # ... or a header of the directory that its files include
    # (fs/smb/smbdirect/internal.h).
    for name in filenames:
        if name.endswith(".h") and not dir_ns:
            try:
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    m = NSDEF.search(f.read())
                if m:
                    dir_ns = m.group(1)
            except OSError:
                pass
    for name in filenames:
        if not name.endswith((".c", ".S", ".h")):
            continue
        try:
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if "EXPORT_" not in text:
            continue
        scan(text, dir_ns)

for sym in sorted(table):
    kind, ns = table[sym]
    print(f"0x00000000\t{sym}\tvmlinux\t{kind}\t{ns}")
