#!/usr/bin/env python3
"""libtorch conformance harness: compiles PyTorch's C++ API tests (supplied by
the user, never part of this repository) against gradiens through the
`gradiens::torch_compat` target and reports, test by test, what compiles and
what passes. See README.md beside this file."""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS_VERSION = "2"

DEFAULT_FILES = [
    "tensor", "tensor_indexing", "tensor_options", "autograd", "grad_mode",
    "inference_mode", "functional", "modules", "module", "sequential",
    "modulelist", "moduledict", "init", "nn_utils", "optim", "rnn",
    "dataloader", "ordered_dict", "misc",
]

MAX_COMPILE_ITERATIONS = 15
MAX_LINK_ITERATIONS = 6


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------
# C++ source scanning: comments, strings and preprocessor lines blanked so
# that braces can be matched; spans of TEST blocks and top-level declarations.

def sanitize(text):
    """Same length as text; comments, string/char literals and preprocessor
    directives replaced by spaces (newlines kept)."""
    out = list(text)
    n = len(text)
    i = 0
    at_line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if at_line_start and c in " \t":
            i += 1
            continue
        if at_line_start and c == "#":
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            blank(i, j)
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            blank(i, end)
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum() and
                                          i + 1 < n and text[i + 1].isalnum())):
            # a ' between two alphanumerics is a digit separator (1'000)
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            blank(i + 1, min(j, n))
            i = j + 1
            continue
        i += 1
    return "".join(out)


def match_close(s, i):
    """s[i] is an opening bracket; index of its partner (or len(s)-1)."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[s[i]]]
    j = i + 1
    n = len(s)
    while j < n and stack:
        ch = s[j]
        if ch in pairs:
            stack.append(pairs[ch])
        elif ch in ")]}":
            if ch == stack[-1]:
                stack.pop()
            elif ch in stack:
                while stack and stack[-1] != ch:
                    stack.pop()
                stack.pop()
        j += 1
    return j - 1


FUNC_BODY_PREFIX = re.compile(r"(\)|\bconst|\boverride|\bnoexcept|\bfinal|\bmutable|\btry|->\s*[\w:<>,\s*&]+)\s*$")
TEST_MACRO = re.compile(r"\b(TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")


class Decl:
    def __init__(self, start, end, kind, name):
        self.start, self.end, self.kind, self.name = start, end, kind, name

    def __repr__(self):
        return f"Decl({self.kind} {self.name} {self.start}-{self.end})"


def decl_name(s):
    """A readable name for a namespace-scope declaration's sanitized text."""
    t = " ".join(s.split())
    m = TEST_MACRO.match(t)
    if m:
        return f"{m.group(2)}.{m.group(3)}"
    m = re.search(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(?:alignas\([^)]*\)\s*)?(\w+)", t)
    if m and (t.find("(") < 0 or m.start() < t.find("(")):
        return m.group(1)
    m = re.match(r"(?:template\s*<.*?>\s*)?using\s+(\w+)\s*=", t)
    if m:
        return m.group(1)
    m = re.match(r"([A-Z_][A-Z0-9_]*)\s*\(\s*(\w+)", t)  # MACRO(Name, ...)
    if m:
        return m.group(2)
    m = re.search(r"([\w:~]+)\s*\(", t)
    if m:
        return m.group(1).split("::")[-1] if "operator" not in m.group(1) else m.group(1)
    m = re.search(r"(\w+)\s*(?:=|;|\{|\[)", t)
    if m:
        return m.group(1)
    return t[:40]


def scan_decls(s, start=0, end=None, out=None):
    """Declarations at namespace scope of sanitized text s, namespaces entered."""
    if end is None:
        end = len(s)
    if out is None:
        out = []
    i = start
    dstart = None
    while i < end:
        ch = s[i]
        if ch.isspace():
            i += 1
            continue
        if dstart is None:
            dstart = i
            m = re.match(r"(?:inline\s+)?namespace\b[\w\s:]*\{", s[i:min(end, i + 300)])
            if not m:
                m = re.match(r'extern\s+"C"\s*\{', s[i:min(end, i + 40)])
            if m:
                ob = i + m.end() - 1
                cb = match_close(s, ob)
                scan_decls(s, ob + 1, cb, out)
                i = cb + 1
                dstart = None
                continue
        if ch == ";":
            seg = s[dstart:i + 1]
            out.append(Decl(dstart, i + 1, "decl", decl_name(seg)))
            dstart = None
            i += 1
            continue
        if ch in "([":
            i = match_close(s, i) + 1
            continue
        if ch == "{":
            cb = match_close(s, i)
            before = s[dstart:i]
            k = cb + 1
            while k < end and s[k].isspace():
                k += 1
            if k < end and s[k] == ";":
                out.append(Decl(dstart, k + 1, "decl", decl_name(s[dstart:k + 1])))
                dstart = None
                i = k + 1
                continue
            if FUNC_BODY_PREFIX.search(before) or TEST_MACRO.match(" ".join(before.split())):
                kind = "test" if TEST_MACRO.match(" ".join(before.split())) else "decl"
                out.append(Decl(dstart, cb + 1, kind, decl_name(before)))
                dstart = None
                i = cb + 1
                continue
            i = cb + 1  # e.g. `struct X {...} x;`: go on to the ';'
            continue
        if ch == "}":  # stray closer: stop
            i += 1
            dstart = None
            continue
        i += 1
    if dstart is not None and s[dstart:end].strip():
        out.append(Decl(dstart, end, "decl", decl_name(s[dstart:end])))
    return out


class SourceFile:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            self.text = f.read()
        self.refresh()

    def refresh(self):
        self.san = sanitize(self.text)
        self.decls = scan_decls(self.san)
        self.line_starts = [0]
        for m in re.finditer("\n", self.text):
            self.line_starts.append(m.end())

    def offset(self, line):
        line = max(1, min(line, len(self.line_starts)))
        return self.line_starts[line - 1]

    def decl_at_line(self, line):
        a = self.offset(line)
        b = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        for d in self.decls:
            if d.start < b and d.end > a and self.san[max(a, d.start):min(b, d.end)].strip():
                return d
        return None

    def blank(self, d):
        t = list(self.text)
        for k in range(d.start, d.end):
            if t[k] != "\n":
                t[k] = " "
        self.text = "".join(t)
        with open(self.path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(self.text)
        self.refresh()


def list_tests(text):
    """[(Suite.Name, kind)] of the TEST macros in text, in order."""
    san = sanitize(text)
    return [(f"{m.group(2)}.{m.group(3)}", m.group(1)) for m in TEST_MACRO.finditer(san)]


# --------------------------------------------------------------------------
# Diagnostics

DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+):\s+(?P<kind>fatal error|error|note|warning):\s?(?P<msg>.*)$")
CHAIN = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+):\s+(?P<what>required from here|required from .*|required by .*|recursively required .*)$")
CONTEXT = re.compile(r"^(?P<file>[^\s:][^:]*): (?P<what>In .*|At global scope):$")
TESTBODY = re.compile(r"(\w+?)_(\w+)_Test::TestBody")
MACRO_NOTE = re.compile(r"in expansion of macro")


def parse_diagnostics(output):
    """Groups: dict(msg, loc, chain=[locs], macros=[locs], func=str)."""
    groups = []
    cur = None
    func_ctx = ""
    chain = []
    blob = []
    for raw in output.splitlines():
        line = raw.rstrip()
        m = CONTEXT.match(line)
        if m:
            what = m.group("what")
            if what.startswith("In instantiation of") or what.startswith("In substitution of"):
                if cur is not None:
                    cur = None
                    chain = []
                    blob = []
                if not chain:
                    func_ctx = ""  # an instantiation block does not happen inside the last function named
                chain.append((m.group("file"), 0))
                blob.append(what)
            elif what.startswith("In ") or what.startswith("At global"):
                func_ctx = what
                cur = None
                chain = []
                blob = []
            continue
        m = CHAIN.match(line)
        if m:
            if cur is not None:
                cur = None
                chain = []
                blob = []
            chain.append((m.group("file"), int(m.group("line"))))
            blob.append(m.group("what"))
            continue
        m = DIAG.match(line)
        if m:
            kind = m.group("kind")
            loc = (m.group("file"), int(m.group("line")))
            if kind in ("error", "fatal error"):
                cur = {"msg": m.group("msg"), "loc": loc, "chain": chain[:], "macros": [],
                       "func": func_ctx, "fatal": kind == "fatal error",
                       "blob": " ".join(blob + [func_ctx, m.group("msg")])}
                groups.append(cur)
                chain = []
                blob = []
            elif kind == "note" and cur is not None:
                if MACRO_NOTE.search(m.group("msg")):
                    cur["macros"].append(loc)
            continue
    return groups


LINK_FUNC = re.compile(r"in function [`'](?P<f>.*)':\s*$")
LINK_UNDEF = re.compile(r"(undefined reference to [`'](?P<s>.*)'|multiple definition of [`'](?P<m>.*)')")


def parse_link_errors(output):
    out = []
    func = ""
    for line in output.splitlines():
        m = LINK_FUNC.search(line)
        if m:
            func = m.group("f")
            continue
        m = LINK_UNDEF.search(line)
        if m:
            sym = m.group("s") or m.group("m")
            what = "undefined reference to" if m.group("s") else "multiple definition of"
            out.append({"func": func, "msg": f"link: {what} '{sym}'"})
    return out


# --------------------------------------------------------------------------
# Normalizing an error message into a "blocked on" key

def short_type(t):
    t = re.sub(r"\b(?:class|struct|enum)\s+", "", t)
    t = re.sub(r"\b(?:gradiens|std|c10|at|torch|nn|detail|__cxx11|__1)::", "", t)
    t = re.sub(r"basic_string<char(?:, char_traits<char>, allocator<char> )?>", "string", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t


def uninformative(msg):
    """Parse errors that follow from an earlier one ("expected ';' before ...")."""
    return bool(re.match(r"(expected |invalid use of incomplete|template argument \d+ is invalid|"
                         r"there are no arguments|'.*' cannot be used as a function|"
                         r"request for member .* which is of non-class type)", msg))


def normalize(msg):
    msg = msg.strip()
    msg = re.sub(r"\s*\[with .*$", "", msg)
    msg = re.sub(r";?\s*did you mean .*$", "", msg)
    msg = msg.replace("\u2018", "'").replace("\u2019", "'")
    msg = re.sub(r" \{aka '[^']*'\}", "", msg)
    msg = re.sub(r"^static assertion failed: ", "", msg)
    msg = msg.replace("'F'", "'torch::nn::functional'")  # the tests' alias
    m = re.search(r"no match for '(?P<op>operator[^']*)' in '.*' \(operand types? (?:is|are) '(?P<a>[^']+)'(?: and '(?P<b>[^']+)')?\)", msg)
    if m:
        b = f" and {short_type(m.group('b'))}" if m.group("b") else ""
        return f"no {m.group('op')} for {short_type(m.group('a'))}{b}"
    m = re.search(r"'(?P<t>[^']+)' has no member named '(?P<m>[^']+)'", msg)
    if m:
        return f"no member named '{m.group('m')}' in {short_type(m.group('t'))}"
    m = re.search(r"no matching function for call to '(?P<f>[^(']+)(?P<a>\([^']*\))?", msg)
    if m:
        f = short_type(m.group("f"))
        args = short_type(m.group("a") or "")
        if "::" in f or not args or len(args) > 70:  # members and constructors: one row per callee
            args = "(...)"
        return f"no matching function for call to {f}{args}"
    m = re.search(r"no matching constructor for initialization of '(?P<t>[^']+)'", msg)
    if m:
        return f"no matching constructor for {short_type(m.group('t'))}"
    m = re.search(r"no match for '(?P<op>operator[^']*)' \(operand types? (?:are|is) '(?P<a>[^']+)'(?: and '(?P<b>[^']+)')?\)", msg)
    if m:
        b = f" and {short_type(m.group('b'))}" if m.group("b") else ""
        return f"no {m.group('op')} for {short_type(m.group('a'))}{b}"
    m = re.search(r"'(?P<n>[^']+)' is not a member of '(?P<ns>[^']+)'", msg)
    if m:
        return f"'{m.group('n')}' is not a member of '{m.group('ns')}'"
    m = re.search(r"'(?P<n>[^']+)' (?:was not declared in this scope|has not been declared|does not name a type|is not a namespace-name|is not a class, namespace, or enumeration)", msg)
    if m:
        return re.sub(r"'[^']+'", f"'{m.group('n')}'", msg, count=1)
    m = re.search(r"(?:could not convert|cannot convert) '.*' from '(?P<a>[^']+)' to '(?P<b>[^']+)'", msg)
    if m:
        return f"cannot convert {short_type(m.group('a'))} to {short_type(m.group('b'))}"
    m = re.search(r"cannot convert '(?P<a>[^']+)' to '(?P<b>[^']+)'", msg)
    if m:
        return f"cannot convert {short_type(m.group('a'))} to {short_type(m.group('b'))}"
    m = re.search(r"conversion from '(?P<a>[^']+)' to non-scalar type '(?P<b>[^']+)' requested", msg)
    if m:
        return f"no conversion from {short_type(m.group('a'))} to {short_type(m.group('b'))}"
    m = re.search(r"link: undefined reference to '(?P<s>[^'(]+)", msg)
    if m:
        return f"link: undefined {short_type(m.group('s'))}"
    msg = re.sub(r"'([^']{60,})'", lambda mm: "'" + short_type(mm.group(1))[:60] + "...'", msg)
    return msg[:160]


# --------------------------------------------------------------------------
# Toolchain: flags for compiling and linking against gradiens

def run(cmd, cwd=None, timeout=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=env, errors="replace")
    return p.returncode, p.stdout + p.stderr


def probe_cmake(build_dir, work):
    """flags from find_package(gradiens CONFIG) + gradiens::torch_compat + GTest."""
    d = os.path.join(work, "cmake-probe")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
        f.write("""cmake_minimum_required(VERSION 3.16)
project(ltprobe CXX)
find_package(gradiens CONFIG QUIET)
if(NOT TARGET gradiens::torch_compat)
  message(FATAL_ERROR "LTPROBE-NO-TARGET gradiens_FOUND=${gradiens_FOUND}")
endif()
find_package(GTest REQUIRED)
add_executable(probe probe.cpp)
target_link_libraries(probe PRIVATE gradiens::torch_compat GTest::gtest_main)
""")
    with open(os.path.join(d, "probe.cpp"), "w") as f:
        f.write("int main() { return 0; }\n")
    rc, out = run(["cmake", "-S", d, "-B", os.path.join(d, "build"), "-G", "Unix Makefiles",
                   f"-Dgradiens_DIR={build_dir}", "-DCMAKE_BUILD_TYPE=Release"], timeout=300)
    if rc != 0:
        reason = "no gradiens::torch_compat target" if "LTPROBE-NO-TARGET" in out else "find_package(gradiens) failed"
        tail = [l for l in out.splitlines() if l.strip()][-6:]
        return None, f"{reason}: " + " | ".join(tail)[:600]
    tdir = os.path.join(d, "build", "CMakeFiles", "probe.dir")
    flags = {}
    with open(os.path.join(tdir, "flags.make")) as f:
        for line in f:
            m = re.match(r"(CXX_DEFINES|CXX_INCLUDES|CXX_FLAGS)\s*=\s*(.*)", line)
            if m:
                flags[m.group(1)] = m.group(2)
    with open(os.path.join(tdir, "link.txt")) as f:
        link = f.read().strip()
    bdir = os.path.join(d, "build")
    parts = shlex.split(link)
    k = parts.index("probe") if "probe" in parts else len(parts) - 1
    libs = []
    for p in parts[k + 1:]:
        if not p.startswith("-") and not os.path.isabs(p):
            p = os.path.normpath(os.path.join(bdir, p))
        libs.append(p)
    cflags = shlex.split(flags.get("CXX_DEFINES", "")) + shlex.split(flags.get("CXX_INCLUDES", ""))
    extra = [x for x in shlex.split(flags.get("CXX_FLAGS", "")) if x.startswith(("-f", "-pthread", "-m"))]
    return {"mode": "cmake package (find_package(gradiens CONFIG) + gradiens::torch_compat)",
            "cflags": cflags + extra, "libs": libs}, ""


def from_build_tree(build_dir, compat_include):
    """Fallback: compile and link like the build tree's own test targets."""
    ninja = os.path.join(build_dir, "build.ninja")
    if not os.path.exists(ninja):
        raise SystemExit(f"error: {build_dir} has neither a usable gradiensConfig.cmake nor build.ninja")
    text = open(ninja).read()
    m = re.search(r"^build (tests/[^:]+): CXX_EXECUTABLE_LINKER.*\n((?:  .*\n)+)", text, re.M)
    if not m:
        raise SystemExit("error: no test executable in build.ninja to copy flags from")
    target = m.group(1)
    body = m.group(2)
    lm = re.search(r"LINK_LIBRARIES = (.*)", body)
    libs = []
    for p in shlex.split(lm.group(1)):
        if not p.startswith("-") and not os.path.isabs(p):
            p = os.path.normpath(os.path.join(build_dir, p))
        libs.append(p)
    objdir = re.search(r"OBJECT_DIR = (.*)", body).group(1)
    cm = re.search(r"^build " + re.escape(objdir) + r"/[^\n]*\n((?:  .*\n)+)", text, re.M)
    cflags = []
    for key in ("DEFINES", "INCLUDES"):
        km = re.search(rf"  {key} = (.*)", cm.group(1)) if cm else None
        if km:
            cflags += shlex.split(km.group(1))
    fm = re.search(r"  FLAGS = (.*)", cm.group(1)) if cm else None
    if fm:
        cflags += [x for x in shlex.split(fm.group(1)) if x.startswith(("-fopenmp", "-pthread", "-m"))]
    if not compat_include:
        raise SystemExit("error: the build tree exports no gradiens::torch_compat; pass --compat-include DIR "
                         "(a folder holding torch/torch.h) to measure through a stand-in")
    cflags = ["-I" + os.path.abspath(compat_include)] + cflags
    libs = libs + ["-lgtest_main", "-lgtest", "-pthread"]
    return {"mode": f"build tree flags (copied from {target}) + stand-in compat headers {os.path.abspath(compat_include)}",
            "cflags": cflags, "libs": libs}


def toolchain(args, work):
    if not args.compat_include:
        tc, why = probe_cmake(args.build, work)
        if tc:
            tc["libs"] = tc["libs"] + ["-pthread"]
            return tc
        log(f"cmake package not usable: {why}")
        raise SystemExit("error: the gradiens build tree does not export gradiens::torch_compat "
                         f"({why}); pass --compat-include DIR to measure through a stand-in header folder")
    tc = from_build_tree(args.build, args.compat_include)
    return tc


def include_dirs(cflags):
    dirs = []
    it = iter(range(len(cflags)))
    for i in it:
        f = cflags[i]
        for pre in ("-I", "-isystem", "-idirafter"):
            if f == pre and i + 1 < len(cflags):
                dirs.append(cflags[i + 1])
            elif f.startswith(pre) and len(f) > len(pre):
                dirs.append(f[len(pre):])
    return [d for d in dirs if os.path.isdir(d)]


def fingerprint(tc, src_root, extra_files):
    h = hashlib.sha256()
    # HARNESS_VERSION stands for the build logic: bump it when compiling/removal changes,
    # so that edits to the reporting alone keep the cached binaries
    h.update(HARNESS_VERSION.encode())
    for fn in tuple(extra_files):
        with open(fn, "rb") as f:
            h.update(f.read())
    h.update(json.dumps(tc, sort_keys=True).encode())
    for lib in tc["libs"]:
        if os.path.isfile(lib):
            st = os.stat(lib)
            h.update(f"{lib}:{st.st_size}:{st.st_mtime_ns}".encode())
    for d in include_dirs(tc["cflags"]):
        if d.startswith("/usr/"):
            continue
        for root, dirs, files in os.walk(d):
            dirs[:] = sorted(x for x in dirs if not x.startswith((".", "build")) and x not in ("tests", "bench", "fuzz", "examples"))
            for fn in sorted(files):
                if fn.endswith((".h", ".hpp", ".inl", ".cuh")) or "." not in fn:
                    p = os.path.join(root, fn)
                    try:
                        st = os.stat(p)
                    except OSError:
                        continue
                    h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def make_stubs(src_root, tc, stub_dir):
    """Libtorch header names the tests include that the compat headers lack:
    each becomes a stub that includes <torch/torch.h>."""
    names = set()
    for root, _, files in os.walk(os.path.join(src_root, "test")):
        for fn in files:
            if fn.endswith((".cpp", ".h")):
                for m in re.finditer(r'^\s*#\s*include\s*[<"]((?:torch|ATen|c10|caffe2)/[^>"]+)[>"]',
                                     open(os.path.join(root, fn), errors="replace").read(), re.M):
                    names.add(m.group(1))
    dirs = include_dirs(tc["cflags"])
    stubbed = []
    shutil.rmtree(stub_dir, ignore_errors=True)
    for name in sorted(names):
        if any(os.path.exists(os.path.join(d, name)) for d in dirs):
            continue
        p = os.path.join(stub_dir, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("#pragma once\n#include <torch/torch.h>\n" if name != "torch/torch.h" else "#pragma once\n")
        stubbed.append(name)
    return stubbed


# --------------------------------------------------------------------------
# One test file: iterate compile -> remove what fails -> compile ...

class FileJob:
    def __init__(self, stem, args, tc, src_root, work, stub_dir, fp, exclusions):
        self.stem, self.args, self.tc = stem, args, tc
        self.src_root, self.stub_dir, self.fp = src_root, stub_dir, fp
        self.dir = os.path.join(work, stem)
        self.tree = os.path.join(self.dir, "tree")
        self.bin = os.path.join(self.dir, stem + ".bin")
        self.state_path = os.path.join(self.dir, "state.json")
        self.exclusions = exclusions
        self.log_lines = []

    def rel(self):
        return os.path.join("test", "cpp", "api", self.stem + ".cpp")

    def prepare_tree(self):
        shutil.rmtree(self.tree, ignore_errors=True)
        for root, _, files in os.walk(os.path.join(self.src_root, "test")):
            for fn in files:
                if fn.endswith((".h", ".hpp")) or os.path.join(root, fn).endswith(self.rel()) \
                        or fn == "support.cpp":
                    s = os.path.join(root, fn)
                    d = os.path.join(self.tree, os.path.relpath(s, self.src_root))
                    os.makedirs(os.path.dirname(d), exist_ok=True)
                    shutil.copyfile(s, d)
        tu = os.path.join(self.dir, "tu.cpp")
        parts = [f'#include "{self.rel()}"']
        if os.path.exists(os.path.join(self.tree, "test/cpp/api/support.cpp")):
            parts.append('#include "test/cpp/api/support.cpp"')
        with open(tu, "w") as f:
            f.write("\n".join(parts) + "\n")
        return tu

    def compile_cmd(self, tu, syntax_only):
        cmd = ["nice", "-n", "5", "g++", "-std=c++20", "-w", "-fmax-errors=0",
               "-fdiagnostics-plain-output", "-ftemplate-backtrace-limit=0"]
        cmd += self.tc["cflags"]
        # the stubs come before the system folders: a libtorch installed under /usr/include must not be picked up
        cmd += ["-I" + self.tree, "-I" + self.stub_dir]
        if syntax_only:
            cmd += ["-fsyntax-only", tu]
        else:
            cmd += ["-O1", tu, "-o", self.bin] + self.tc["libs"]
            if getattr(self, "allow_unresolved", False):
                cmd += ["-Wl,--unresolved-symbols=ignore-all"]
        return cmd

    def build(self):
        """Returns dict test -> removal record, helpers removed, file error."""
        os.makedirs(self.dir, exist_ok=True)
        tu = self.prepare_tree()
        files = {}

        def sf(path):
            path = os.path.realpath(path)
            if path not in files:
                files[path] = SourceFile(path)
            return files[path]

        main = sf(os.path.join(self.tree, self.rel()))
        tree_real = os.path.realpath(self.tree)
        removed = {}       # test -> {"error", "key", "via"}
        helpers = {}       # helper name -> {"error", "key", "file"}
        file_error = None
        env = dict(os.environ, LC_ALL="C", LANG="C")

        def in_tree(path):
            return os.path.realpath(os.path.join(self.dir, path)).startswith(tree_real + os.sep)

        def attribute(g):
            cands = []
            cands += [l for l in reversed(g["macros"]) if in_tree(l[0])][:1]
            cands += [l for l in reversed(g["chain"]) if l[1] and in_tree(l[0])][:1]
            if in_tree(g["loc"][0]):
                cands.append(g["loc"])
            for path, line in cands:
                f = sf(os.path.join(self.dir, path))
                d = f.decl_at_line(line)
                if d is not None:
                    return f, d
            m = TESTBODY.search(g["func"])
            if m:
                name = f"{m.group(1)}.{m.group(2)}"
                for d in main.decls:
                    if d.kind == "test" and d.name == name:
                        return main, d
            # a type local to a test body named in the message or the instantiation chain
            for d in main.decls:
                if d.kind == "test" and d.name.replace(".", "_") + "_Test::TestBody" in g.get("blob", ""):
                    return main, d
            return None, None

        def record(f, d, msg):
            key = normalize(msg.replace(" [found by bisection]", ""))
            via = None
            if d.kind == "test" and f is main:
                for h in helpers:
                    if re.search(r"'(?:[\w:]*::)?" + re.escape(h) + r"(?:<[^']*>)?'", msg) or \
                            re.search(r"\b" + re.escape(h) + r"\b", msg):
                        via = h
                        break
                rec = {"error": msg, "key": key}
                if via:
                    rec["via"] = via
                    rec["key"] = helpers[via]["key"]
                    rec["error"] = f"uses removed helper {via} ({msg})"
                removed[d.name] = rec
            else:
                name = d.name
                if f is not main:
                    name = f"{d.name} ({os.path.relpath(f.path, tree_real)})"
                base = d.name
                for h, hv in helpers.items():
                    if re.search(r"\b" + re.escape(h) + r"\b", msg):
                        key = hv["key"]
                        msg = f"uses removed helper {h} ({msg})"
                        break
                helpers[base] = {"error": msg, "key": key, "where": name}

        # compile, remove, repeat
        iterations = 0
        unresolved = []
        self.allow_unresolved = False
        syntax_only = True
        link_iters = 0
        while True:
            iterations += 1
            cmd = self.compile_cmd(tu, syntax_only)
            t0 = time.time()
            rc, out = run(cmd, cwd=self.dir, env=env, timeout=3600)
            with open(os.path.join(self.dir, f"compile-{iterations:02d}.log"), "w") as f:
                f.write(" ".join(shlex.quote(c) for c in cmd) + "\n\n" + out)
            groups = parse_diagnostics(out)
            errors = [g for g in groups]
            self.log_lines.append(f"iteration {iterations} ({'syntax' if syntax_only else 'build'}): rc={rc}, "
                                  f"{len(errors)} errors, {time.time() - t0:.0f}s")
            if rc == 0:
                if syntax_only:
                    syntax_only = False
                    continue
                break
            victims = {}
            unattributed = []
            if not errors and not syntax_only:
                link = parse_link_errors(out)
                if not link:
                    # e.g. a gradiens library being relinked right now: wait and retry
                    retries = getattr(self, "build_retries", 0)
                    if retries < 3:
                        self.build_retries = retries + 1
                        self.log_lines.append("build failed without diagnostics; retrying in 60s")
                        time.sleep(60)
                        continue
                    file_error = "build failed: " + (out.strip().splitlines() or ["?"])[-1][:300]
                    break
                link_iters += 1
                for e in link:
                    m = TESTBODY.search(e["func"])
                    target = None
                    if m:
                        name = f"{m.group(1)}.{m.group(2)}"
                        target = next((d for d in main.decls if d.kind == "test" and d.name == name), None)
                    else:
                        fname = re.sub(r"\(.*$", "", e["func"]).split("::")[-1]
                        target = next((d for d in main.decls if d.name == fname), None)
                    if target is None:
                        # a symbol a library header uses but the built library lacks (headers newer
                        # than the build?): link anyway, the tests reaching it crash on their own
                        unresolved.append(e["msg"] + f" (in {e['func'] or '?'})")
                        continue
                    victims.setdefault((main.path, target.start), (main, target, e["msg"]))
                if unresolved and not victims:
                    if self.allow_unresolved:
                        file_error = "still not linking: " + unresolved[0]
                        break
                    self.allow_unresolved = True
                    continue
            for g in errors:
                if g["fatal"] and "No such file or directory" in g["msg"] and in_tree(g["loc"][0]):
                    # a header of the test tree that was not supplied: drop the #include, and
                    # whatever needed it fails to compile on its own names
                    f = sf(os.path.join(self.dir, g["loc"][0]))
                    a = f.offset(g["loc"][1])
                    b = f.text.find("\n", a)
                    hdr = g["msg"].split(":")[0].strip()
                    d = Decl(a, b if b >= 0 else len(f.text), "include", f"missing header {hdr}")
                    victims[(f.path, a)] = (f, d, f"header {hdr} not supplied")
                    continue
                f, d = attribute(g)
                if d is None:
                    unattributed.append(g)
                    continue
                key = (f.path, d.start)
                if key not in victims or (uninformative(victims[key][2]) and not uninformative(g["msg"])):
                    victims[key] = (f, d, g["msg"])
            if file_error:
                break
            if unattributed and not victims:
                # nothing in g++'s report points into the test sources (e.g. a template instantiated
                # through an inherited constructor): find the tests that trigger it by bisection
                g = unattributed[0]
                culprits = self.bisect(main, g, env)
                if not culprits:
                    file_error = f"{g['loc'][0]}:{g['loc'][1]}: {g['msg']} (outside any test)"
                    break
                for d in culprits:
                    victims[(main.path, d.start)] = (main, d, g["msg"] + " [found by bisection]")
            # an #include line (or anything that is not a declaration) cannot be removed
            for f, d, msg in list(victims.values()):
                seg = f.text[d.start:d.end]
                if re.match(r"\s*#\s*include", seg) and d.kind != "include":
                    file_error = msg
            if file_error:
                break
            # blank from the end so offsets stay valid
            for f, d, msg in sorted(victims.values(), key=lambda v: (v[1].kind == "test", v[0].path, v[1].start)):
                record(f, d, msg)
            for path in {v[0].path for v in victims.values()}:
                f = files[path]
                for _, d, _ in sorted((v for v in victims.values() if v[0].path == path),
                                      key=lambda v: -v[1].start):
                    f.blank(d)
            if iterations >= MAX_COMPILE_ITERATIONS or link_iters > MAX_LINK_ITERATIONS:
                file_error = f"still not compiling after {iterations} iterations: " + (
                    errors[0]["msg"] if errors else "link errors")
                break
        return {"removed": removed, "helpers": helpers, "file_error": file_error,
                "iterations": iterations, "log": self.log_lines,
                "unresolved": sorted(set(unresolved)) if self.allow_unresolved else []}

    def bisect(self, main, g, env, budget=14):
        """Tests of main whose presence makes diagnostic g appear; [] when it appears with
        no test at all (or the search runs out of budget)."""
        sig = (os.path.realpath(os.path.join(self.dir, g["loc"][0])), g["loc"][1], g["msg"][:80])
        orig = main.text
        tu = os.path.join(self.dir, "tu.cpp")
        tests = [d for d in main.decls if d.kind == "test" and main.san[d.start:d.end].strip()]
        calls = [0]

        def present(keep):
            calls[0] += 1
            t = list(orig)
            for d in tests:
                if d not in keep:
                    for k in range(d.start, d.end):
                        if t[k] != "\n":
                            t[k] = " "
            with open(main.path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write("".join(t))
            try:
                _, out = run(self.compile_cmd(tu, True), cwd=self.dir, env=env, timeout=3600)
            finally:
                with open(main.path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(orig)
            for h in parse_diagnostics(out):
                if (os.path.realpath(os.path.join(self.dir, h["loc"][0])), h["loc"][1], h["msg"][:80]) == sig:
                    return True
            return False

        def search(cands):
            if len(cands) == 1:
                return cands
            if calls[0] + 2 > budget:
                return None
            a, b = cands[:len(cands) // 2], cands[len(cands) // 2:]
            ra, rb = present(a), present(b)
            if not ra and not rb:
                return cands  # only together: blame them all
            found = []
            for part, hit in ((a, ra), (b, rb)):
                if hit:
                    r = search(part)
                    if r is None:
                        return None
                    found += r
            return found

        if not tests or present([]):
            self.log_lines.append(f"bisection: {g['msg'][:80]} appears without any test")
            return []
        found = search(tests)
        self.log_lines.append(f"bisection ({calls[0]} compiles): {g['msg'][:80]} -> "
                              + (", ".join(d.name for d in found) if found else "gave up"))
        return found or []

    def run_tests(self, expected):
        """Runs the binary; returns test -> {"status", "message"}."""
        results = {}
        rundir = os.path.join(self.dir, "run")
        shutil.rmtree(rundir, ignore_errors=True)
        os.makedirs(rundir)
        rc, listing = run([self.bin, "--gtest_list_tests"], cwd=rundir, timeout=60)
        registered = []
        suite = None
        for line in listing.splitlines():
            if not line.strip() or line.startswith(("Running main", "CUDA")):
                continue
            if not line.startswith(" "):
                suite = line.split()[0].rstrip(".")
            else:
                registered.append(f"{suite}.{line.split()[0]}")
        todo = [t for t in registered if t in expected]
        attempt = 0
        while todo and attempt < 40:
            attempt += 1
            flt = ":".join(todo) if len(todo) < 400 else "*"
            neg = [t for t in registered if t not in todo]
            filt = flt + ("-" + ":".join(neg) if neg and flt == "*" else "")
            jpath = os.path.join(rundir, f"out-{attempt}.json")
            cmd = ["timeout", "-k", "5", str(self.args.timeout), self.bin,
                   f"--gtest_filter={filt}", f"--gtest_output=json:{jpath}", "--gtest_color=no"]
            t0 = time.time()
            p = subprocess.run(cmd, cwd=rundir, capture_output=True, text=True, errors="replace")
            out = p.stdout + p.stderr
            with open(os.path.join(self.dir, f"run-{attempt}.log"), "w") as f:
                f.write(out)
            running = None
            buf = []
            for line in out.splitlines():
                m = re.match(r"^\[ RUN      \] (\S+)", line)
                if m:
                    running, buf = m.group(1), []
                    continue
                m = re.match(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+) \(", line)
                if m and m.group(2) == running:
                    st = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[m.group(1)]
                    results[running] = {"status": st, "message": first_failure(buf) if st == "failed" else ""}
                    running = None
                    continue
                if running:
                    buf.append(line)
            if running:  # crashed or hung inside this test
                if p.returncode in (124, 137) and time.time() - t0 >= self.args.timeout - 1:
                    why = f"timeout (binary limit {self.args.timeout}s)"
                else:
                    why = f"crashed (exit {p.returncode})"
                tail = first_failure(buf) or (buf[-1] if buf else "")
                results[running] = {"status": "crashed", "message": (why + (": " + tail if tail else ""))[:400]}
            elif p.returncode not in (0, 1):
                # died outside a test (static init, teardown): whatever did not run is lost
                for t in todo:
                    if t not in results:
                        results[t] = {"status": "crashed", "message": f"binary exited {p.returncode} before the test ran"}
            try:
                with open(jpath) as f:
                    js = json.load(f)
                for s in js.get("testsuites", []):
                    for t in s.get("testsuite", []):
                        name = f"{s['name']}.{t['name']}"
                        if name in results and results[name]["status"] == "failed" and t.get("failures"):
                            results[name]["message"] = clean_failure(t["failures"][0].get("failure", ""))
            except (OSError, ValueError):
                pass
            todo = [t for t in todo if t not in results]
        for t in todo:
            results[t] = {"status": "crashed", "message": "did not run"}
        for t in expected:
            if t not in results and t not in registered:
                results[t] = {"status": "missing", "message": "compiled but not registered in the binary"}
        return results


def failure_key(r):
    """Groups runtime failures: the exception text, or the kind of assertion."""
    msg = r.get("message", "")
    m = re.search(r'C\+\+ exception with description "(.*?)" thrown', msg)
    if m:
        k = re.sub(r"\d+", "N", m.group(1))
        return "exception: " + k[:140]
    if "C++ exception" in msg:
        return "exception: " + re.sub(r"^.*?C\+\+ exception", "C++ exception", msg)[:100]
    if r["status"] == "crashed":
        m = re.match(r"(timeout|crashed \(exit -?\d+\)|binary exited -?\d+|did not run)", msg)
        return m.group(1) if m else "crashed"
    if r["status"] == "missing":
        return "not registered in the binary"
    if re.search(r"throws an exception|Actual: it throws|Actual: it doesn't throw|to throw|did not throw|ThrowsWith|THROWS", msg):
        return "assertion failed (exception expected / not expected / wrong type)"
    if re.search(r"did not contain|does not contain|Error message", msg):
        return "assertion failed (exception message differs)"
    m = re.search(r"Expected equality of these values|Value of: |Expected: |Actual: |Which is: ", msg)
    return "assertion failed (values differ)" if m else "assertion failed: " + re.sub(r"^\S+:\d+: ", "", msg)[:80]


def clean_failure(text):
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        return ""
    if re.match(r"^\S+:\d+$", lines[0]) or lines[0].endswith("Failure"):
        loc = lines[0].split("/")[-1]
        return (loc + ": " + " | ".join(l.strip() for l in lines[1:4]))[:400]
    return " | ".join(l.strip() for l in lines[:3])[:400]


def first_failure(buf):
    for i, line in enumerate(buf):
        if re.search(r"(Failure|error:)$", line) or "C++ exception" in line or "Expected" in line or "unknown file" in line:
            return clean_failure("\n".join(buf[i:i + 5]))
    return " | ".join(l.strip() for l in buf[:3])[:400]


# --------------------------------------------------------------------------

def read_exclusions(path):
    ex = {}
    if os.path.exists(path):
        for line in open(path):
            body = line.split("#", 1)
            name = body[0].strip()
            if name:
                ex[name] = body[1].strip() if len(body) > 1 else ""
    return ex


def process_file(stem, args, tc, src_root, work, stub_dir, fp, exclusions):
    path = os.path.join(src_root, "test", "cpp", "api", stem + ".cpp")
    rec = {"file": stem + ".cpp", "tests": {}}
    if not os.path.exists(path):
        rec["missing"] = True
        return rec
    text = open(path, errors="replace").read()
    tests = list_tests(text)
    job = FileJob(stem, args, tc, src_root, work, stub_dir, fp, exclusions)
    cached = None
    if os.path.exists(job.state_path) and os.path.exists(job.bin) and not args.rebuild:
        try:
            cached = json.load(open(job.state_path))
            if cached.get("fingerprint") != fp or cached.get("source") != hashlib.sha256(text.encode()).hexdigest():
                cached = None
        except ValueError:
            cached = None
    if cached:
        build = cached["build"]
        log(f"{stem}: binary up to date")
    else:
        log(f"{stem}: compiling ({len(tests)} tests)")
        t0 = time.time()
        build = job.build()
        build["seconds"] = round(time.time() - t0)
        if not build["file_error"]:
            json.dump({"fingerprint": fp, "source": hashlib.sha256(text.encode()).hexdigest(), "build": build},
                      open(job.state_path, "w"), indent=1)
        elif os.path.exists(job.state_path):
            os.remove(job.state_path)
        log(f"{stem}: {build['iterations']} compile passes, {len(build['removed'])} tests removed, "
            f"{len(build['helpers'])} helpers removed, {build['seconds']}s"
            + (f", FILE ERROR: {build['file_error'][:200]}" if build["file_error"] else ""))
    rec["build"] = {k: build[k] for k in ("iterations", "file_error", "helpers", "log", "unresolved") if k in build}
    names = [t for t, _ in tests]
    cpu = []
    excluded = []
    for t in names:
        if "CUDA" in t:
            rec["tests"][t] = {"status": "cuda"}
        elif t.split(".", 1)[1].startswith("DISABLED_"):
            rec["tests"][t] = {"status": "disabled"}
        elif t in exclusions or f"{stem}.{t}" in exclusions:
            rec["tests"][t] = {"status": "excluded", "message": exclusions.get(t, exclusions.get(f"{stem}.{t}", ""))}
            excluded.append(t)
        else:
            cpu.append(t)
    ran = {}
    compiled = [t for t in cpu if t not in build["removed"]]
    if build["file_error"]:
        for t in cpu:
            r = build["removed"].get(t, {"error": "file does not compile: " + build["file_error"],
                                         "key": normalize(build["file_error"].split(": ", 2)[-1])})
            rec["tests"][t] = {"status": "no_compile", **r}
        return rec
    ex_compiled = [t for t in excluded if t not in build["removed"]]
    if compiled or ex_compiled:
        ran = job.run_tests(set(compiled) | set(ex_compiled))
    for t in excluded:
        if t in build["removed"]:
            rec["tests"][t]["outcome"] = "does not compile: " + build["removed"][t].get("error", "")[:160]
        elif t in ran:
            o = ran[t]
            rec["tests"][t]["outcome"] = o["status"] + (": " + o["message"][:160] if o.get("message") else "")
    for t in cpu:
        if t in build["removed"]:
            rec["tests"][t] = {"status": "no_compile", **build["removed"][t]}
        else:
            rec["tests"][t] = ran.get(t, {"status": "missing", "message": "no result"})
    # excluded tests that compiled still get a note of how they fared, for the lead
    return rec


def summarize(files):
    rows = []
    tot = {"total": 0, "cuda": 0, "excluded": 0, "disabled": 0, "cpu": 0, "compiled": 0, "passed": 0}
    for rec in files:
        c = {"total": 0, "cuda": 0, "excluded": 0, "disabled": 0, "cpu": 0, "compiled": 0, "passed": 0}
        for t, r in rec["tests"].items():
            c["total"] += 1
            st = r["status"]
            if st in ("cuda", "excluded", "disabled"):
                c[st] += 1
                continue
            c["cpu"] += 1
            if st != "no_compile":
                c["compiled"] += 1
            if st == "passed":
                c["passed"] += 1
        rows.append((rec["file"], c))
        for k in tot:
            tot[k] += c[k]
    return rows, tot


def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"


def blocked_key(rec, r):
    """The normalized first error a non-compiling test is blocked on (recomputed from the
    recorded messages, so that --report-only picks up changes to normalize())."""
    via = r.get("via")
    if via:
        h = rec.get("build", {}).get("helpers", {}).get(via)
        if h and not h["error"].startswith("uses removed helper"):
            return normalize(h["error"])
        return r.get("key") or "?"
    e = r.get("error", "")
    if not e or e.startswith(("file does not compile", "uses removed helper")):
        return r.get("key") or normalize(e or "?")
    return normalize(e.replace(" [found by bisection]", ""))


def write_report(out, files, tc, stubbed, meta):
    rows, tot = summarize(files)
    blocked = {}
    for rec in files:
        for t, r in rec["tests"].items():
            if r["status"] == "no_compile":
                k = blocked_key(rec, r)
                b = blocked.setdefault(k, {"count": 0, "tests": [], "via": set()})
                b["count"] += 1
                b["tests"].append(f"{rec['file'][:-4]}:{t}")
                if r.get("via"):
                    b["via"].add(r["via"])
    blocked_rows = sorted(blocked.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    results = {
        "meta": meta, "toolchain_mode": tc["mode"], "stubbed_headers": stubbed,
        "totals": tot,
        "files": files,
        "blocked_on": [{"error": k, "tests": v["count"], "via_helpers": sorted(v["via"]),
                        "examples": v["tests"][:8]} for k, v in blocked_rows],
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=list)
    L = []
    L.append("# libtorch C++ API conformance of gradiens\n")
    L.append(f"- sources: {meta['src']} ({meta.get('sources_note', '')})")
    L.append(f"- gradiens build: {meta['build']}; measured through: {tc['mode']}")
    if stubbed:
        L.append(f"- libtorch headers the compat target does not provide (stubbed to `<torch/torch.h>`): "
                 + ", ".join(f"`{s}`" for s in stubbed))
    if meta.get("stale_headers"):
        L.append(f"- **warning**: {meta['stale_headers']}")
    L.append(f"- run: {meta['date']}, {meta['seconds']}s\n")
    L.append("## Overall\n")
    L.append(f"CPU tests counted: **{tot['cpu']}** (of {tot['total']} TESTs; not counted: {tot['cuda']} CUDA, "
             f"{tot['excluded']} excluded by exclusions.txt, {tot['disabled']} DISABLED_)\n")
    L.append(f"- compile: **{tot['compiled']}** ({pct(tot['compiled'], tot['cpu'])})")
    L.append(f"- pass: **{tot['passed']}** ({pct(tot['passed'], tot['cpu'])}); of those that compile, "
             f"{pct(tot['passed'], tot['compiled'])} pass\n")
    L.append("## Per file\n")
    L.append("| file | tests | cuda | excluded | cpu | compiled | passed | pass % |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, c in rows:
        L.append(f"| {name} | {c['total']} | {c['cuda']} | {c['excluded']} | {c['cpu']} | {c['compiled']} | "
                 f"{c['passed']} | {pct(c['passed'], c['cpu'])} |")
    L.append(f"| **all** | {tot['total']} | {tot['cuda']} | {tot['excluded']} | {tot['cpu']} | {tot['compiled']} | "
             f"{tot['passed']} | {pct(tot['passed'], tot['cpu'])} |\n")
    file_errors = [(r["file"], r["build"]["file_error"]) for r in files if r.get("build", {}).get("file_error")]
    if file_errors:
        L.append("### Files that do not compile at all\n")
        for fn, e in file_errors:
            L.append(f"- {fn}: `{e[:300]}`")
        L.append("")
    unres = [(r["file"], u) for r in files for u in r.get("build", {}).get("unresolved", [])]
    if unres:
        L.append("### Linked with unresolved symbols (declared in gradiens headers, missing from the built libraries)\n")
        L.append("Tests that reach one of these crash; the others run. Usually the headers changed after the build.\n")
        for fn, u in unres[:40]:
            L.append(f"- {fn}: `{u[:240]}`")
        L.append("")
    L.append("## Blocked on (first compile error, normalized; tests blocked)\n")
    L.append("| # | tests | first error | via helpers | e.g. |")
    L.append("|---:|---:|---|---|---|")
    for i, (k, v) in enumerate(blocked_rows, 1):
        L.append(f"| {i} | {v['count']} | `{k.replace('|', '/')}` | {', '.join(sorted(v['via']))} | "
                 f"{', '.join(v['tests'][:2])} |")
    L.append("")
    fails = {}
    for rec in files:
        for t, r in rec["tests"].items():
            if r["status"] in ("failed", "crashed", "missing"):
                k = failure_key(r)
                b = fails.setdefault(k, [])
                b.append(f"{rec['file'][:-4]}:{t}")
    if fails:
        L.append("## Failing on (compiled tests that do not pass, grouped by what they hit)\n")
        L.append("| # | tests | failure | e.g. |")
        L.append("|---:|---:|---|---|")
        for i, (k, v) in enumerate(sorted(fails.items(), key=lambda kv: (-len(kv[1]), kv[0])), 1):
            L.append(f"| {i} | {len(v)} | `{k.replace('|', '/').replace('`', chr(39))}` | {', '.join(v[:3])} |")
        L.append("")
    L.append("## Removed helpers (file-scope declarations that did not compile)\n")
    for rec in files:
        for h, hv in rec.get("build", {}).get("helpers", {}).items():
            L.append(f"- {rec['file']}: `{hv.get('where', h)}`: `{hv['error'][:200]}`")
    L.append("")
    L.append("## Failing tests (compiled, did not pass)\n")
    for rec in files:
        for t, r in rec["tests"].items():
            if r["status"] in ("failed", "crashed", "missing"):
                L.append(f"- {rec['file'][:-4]}: {t} [{r['status']}]: `{r.get('message', '')[:300].replace('`', chr(39))}`")
    L.append("")
    L.append("## Tests that do not compile (first error)\n")
    for rec in files:
        for t, r in rec["tests"].items():
            if r["status"] == "no_compile":
                L.append(f"- {rec['file'][:-4]}: {t}: `{r.get('error', '')[:240].replace('`', chr(39))}`")
    L.append("")
    L.append("## Excluded tests (exclusions.txt) and how they fared\n")
    for rec in files:
        for t, r in rec["tests"].items():
            if r["status"] == "excluded":
                L.append(f"- {rec['file'][:-4]}: {t}: {r.get('message', '')}"
                         + (f" -- here: {r['outcome']}" if r.get("outcome") else ""))
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    return tot, rows, blocked_rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("src", help="folder holding PyTorch's test/cpp/api tree (test/cpp/api/*.cpp)")
    ap.add_argument("build", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"), help="gradiens build directory")
    ap.add_argument("out", nargs="?", default="ltapi-out", help="output directory")
    ap.add_argument("--files", default=",".join(DEFAULT_FILES), help="test files (stems), comma separated")
    ap.add_argument("--jobs", type=int, default=2, help="test files compiled at once (default 2)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one run of a test binary may take")
    ap.add_argument("--compat-include", default="",
                    help="measure through this folder of stand-in headers (holding torch/torch.h) instead of "
                         "the gradiens::torch_compat target, compiling with the build tree's own flags")
    ap.add_argument("--exclusions", default=os.path.join(HERE, "exclusions.txt"))
    ap.add_argument("--rebuild", action="store_true", help="ignore cached binaries")
    ap.add_argument("--sources-note", default="", help="free text recorded in the report (where the sources came from)")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite report.md from OUT/results.json (reapplying exclusions.txt) without building or running")
    args = ap.parse_args()
    if args.report_only:
        return report_only(args)
    args.build = os.path.abspath(args.build)
    out = os.path.abspath(args.out)
    src_root = os.path.abspath(args.src)
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    tc = toolchain(args, work)
    log(f"toolchain: {tc['mode']}")
    stub_dir = os.path.join(work, "stubs")
    stubbed = make_stubs(src_root, tc, stub_dir)
    exclusions = read_exclusions(args.exclusions)
    # exclusions only change how results are counted, never what is built
    fp = fingerprint(tc, src_root, [])
    stems = [s.strip().removesuffix(".cpp") for s in args.files.split(",") if s.strip()]
    # largest first so the long compiles overlap
    def size(s):
        p = os.path.join(src_root, "test", "cpp", "api", s + ".cpp")
        return os.path.getsize(p) if os.path.exists(p) else 0
    order = sorted(stems, key=lambda s: -size(s))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = {ex.submit(process_file, s, args, tc, src_root, work, stub_dir, fp, exclusions): s for s in order}
        for fut in concurrent.futures.as_completed(futs):
            s = futs[fut]
            try:
                results[s] = fut.result()
            except Exception as e:  # keep going: one broken file must not hide the others
                import traceback
                traceback.print_exc()
                results[s] = {"file": s + ".cpp", "tests": {}, "build": {"file_error": f"harness error: {e}"}}
    files = [results[s] for s in stems if not results[s].get("missing")]
    missing = [s for s in stems if results[s].get("missing")]
    if missing:
        log("missing test files (not measured): " + ", ".join(missing))
    meta = {"src": src_root, "build": args.build, "date": time.strftime("%Y-%m-%d %H:%M"),
            "stale_headers": stale_headers(tc),
            "seconds": round(time.time() - t0), "missing_files": missing,
            "sources_note": args.sources_note or read_sources_note(src_root)}
    tot, rows, blocked = write_report(out, files, tc, stubbed, meta)
    log(f"CPU tests {tot['cpu']}, compiled {tot['compiled']} ({pct(tot['compiled'], tot['cpu'])}), "
        f"passed {tot['passed']} ({pct(tot['passed'], tot['cpu'])})")
    log(f"report: {os.path.join(out, 'report.md')}")


def report_only(args):
    out = os.path.abspath(args.out)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    exclusions = read_exclusions(args.exclusions)
    for rec in res["files"]:
        stem = rec["file"][:-4]
        for t, r in rec["tests"].items():
            listed = t in exclusions or f"{stem}.{t}" in exclusions
            if r["status"] == "excluded" and not listed:
                o = r.get("outcome", "")
                if o.startswith("does not compile: "):
                    rec["tests"][t] = {"status": "no_compile", "error": o.split(": ", 1)[1],
                                       "key": normalize(o.split(": ", 1)[1])}
                elif o:
                    st, _, msg = o.partition(": ")
                    rec["tests"][t] = {"status": st, "message": msg}
                else:
                    rec["tests"][t] = {"status": "missing", "message": "excluded when measured: rerun to measure"}
            elif listed and r["status"] not in ("excluded", "cuda", "disabled"):
                outcome = (r["status"] + (": " + r.get("message", "")[:160] if r.get("message") else "")
                           if r["status"] != "no_compile" else "does not compile: " + r.get("error", "")[:160])
                rec["tests"][t] = {"status": "excluded", "outcome": outcome,
                                   "message": exclusions.get(t, exclusions.get(f"{stem}.{t}", ""))}
    tc = {"mode": res.get("toolchain_mode", "?")}
    tot, _, _ = write_report(out, res["files"], tc, res.get("stubbed_headers", []), res["meta"])
    log(f"CPU tests {tot['cpu']}, compiled {tot['compiled']} ({pct(tot['compiled'], tot['cpu'])}), "
        f"passed {tot['passed']} ({pct(tot['passed'], tot['cpu'])})")


def stale_headers(tc):
    """A sentence when gradiens headers are newer than its built libraries."""
    libs = [l for l in tc["libs"] if os.path.isfile(l) and "gradiens" in os.path.basename(l)]
    if not libs:
        return ""
    oldest_lib = min(os.stat(l).st_mtime for l in libs)
    newer = []
    for d in include_dirs(tc["cflags"]):
        if d.startswith("/usr/"):
            continue
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build")) and x not in ("tests", "bench", "fuzz", "examples")]
            for fn in files:
                if fn.endswith(".h") and os.stat(os.path.join(root, fn)).st_mtime > oldest_lib:
                    newer.append(os.path.relpath(os.path.join(root, fn), d))
    if not newer:
        return ""
    return (f"{len(newer)} gradiens header(s) changed after the libraries were built "
            f"(e.g. {', '.join(sorted(newer)[:4])}): rebuild gradiens for a clean measurement")


def read_sources_note(src_root):
    p = os.path.join(src_root, "SOURCES.md")
    if not os.path.exists(p):
        p = os.path.join(os.path.dirname(src_root), "SOURCES.md")
    if os.path.exists(p):
        for line in open(p):
            if line.startswith("version:") or line.lower().startswith("- version"):
                return line.split(":", 1)[1].strip()
    return "see SOURCES.md beside the sources"


if __name__ == "__main__":
    main()
