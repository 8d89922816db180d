#!/usr/bin/env python3
"""Documentation that is tested: the fenced blocks of README.md and docs/*.md, run as the docs show them.

Convention (docs/contributing.md "Tested documentation" says the same for doc writers). Every fenced block
has an info string naming what it is:

  sh        shell commands, run; each command must exit 0 (a pipeline: its last command, as in a terminal).
  console   a transcript: `$ COMMAND` lines are run, the lines after one are its expected output (standard
            output and error together, as a terminal shows them). A last line `[N]` expects exit status N
            (cram's convention), else 0. Exact by default; a line `...` stands for any lines.
  synopsis  a command's form with placeholders (`[--buffer SIZE]`, `NAME`): not run, but every kron
            subcommand and option in it must exist (checked against `kron SUB --help`).
  cpp, c    a snippet compiled with the documented flags only (`$(pkg-config --cflags --libs kron-probe)`,
            or `kron` for a snippet of the trace side's headers), at the compiler's default standard and at
            C++20; linked and run when it has a main().
  text, json, sql, cmake, python, fortran, ...   not run (layouts, file contents, schemas). A `text` block must not look like
            a command (a line starting `kron ` or `$ `): use sh, console or synopsis.

Directives, in an HTML comment just before a block (a doc's reader does not see them):
  <!-- doctest: skip REASON -->       not run (REASON required: "needs mpirun on several nodes"). Its kron
                                      subcommands and options are still checked against --help.
  <!-- doctest: output numbers -->    console: numbers (and the time units after them) may differ from the
                                      doc's; words, names and order may not. `unordered`: lines in any
                                      order. Both: `output numbers unordered`.
  <!-- doctest: setup                 hidden commands run before the block (files the block reads),
  COMMANDS -->                        in the same directory.
  <!-- doctest: check                 hidden commands run after the block (that the file it wrote is
  COMMANDS -->                        what the doc says).
  <!-- doctest: prelude               cpp/c: code put before the snippet (declarations it assumes).
  CODE -->
  <!-- doctest: body -->              cpp/c: the snippet is statements, compiled inside a function.
  <!-- doctest: requires perf -->     the block records with perf_event (--sched, task-clock): where perf is
                                      refused (seccomp, perf_event_paranoid 3) it is skipped, and said so.
  <!-- doctest: timeout SECONDS -->   per block, default 60.
Several directives may precede one block, one comment each.

Where commands run: one scratch directory per doc file, shared by its blocks in order (a file one block
writes, the next reads), holding `examples` (the source tree's) and `build` (the build tree), so that both
`kron ...` and `build/kron ...` work as from a checkout's root. kron is the build tree installed into a
temporary prefix (`cmake --install`): its bin first on PATH, PKG_CONFIG_PATH and CMAKE_PREFIX_PATH set,
$PREFIX naming it; boards live in the scratch directory (KRON_SHM_DIR).

Usage: doctest.py --build BUILD --source SOURCE [--only FILE] [--options]
  --options: instead, every option of every `kron SUBCOMMAND --help` must be named in docs/tools.md or
  README.md.
Failures name FILE:LINE of the block (and of the command or output line), what was expected and what came.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

RUN_KINDS = {"sh", "console", "cpp", "c"}
CHECKED_KINDS = RUN_KINDS | {"synopsis"}
PLAIN_KINDS = {"text", "json", "sql", "cmake", "ini", "csv", "diff", "proto", "python", "fortran"}
SHELL_LIKE = {"bash", "shell", "sh-session", "shell-session", "zsh"}


class DocError(Exception):
    pass


class Directive:
    def __init__(self, name, arg, body, line):
        self.name, self.arg, self.body, self.line = name, arg, body, line


class Block:
    def __init__(self, path, line, info, body, directives):
        self.path, self.line, self.info, self.body, self.directives = path, line, info, body, directives
        self.kind = info.split()[0] if info else ""

    def where(self, line=None):
        return f"{self.path}:{line or self.line}"

    def directive(self, name):
        for d in self.directives:
            if d.name == name:
                return d
        return None


# ---- parsing ---------------------------------------------------------------------------------------------
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*doctest:\s*(\w+)\s*(.*)$")
KNOWN_DIRECTIVES = {"skip", "output", "setup", "check", "prelude", "body", "timeout", "requires"}


def parse(path, rel):
    """The fenced blocks of a Markdown file, each with the directives just before it."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, pending, errors = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.match(line)
        if m:
            name, rest = m.group(1), m.group(2)
            start = i
            body = []
            if "-->" in rest:
                arg = rest[: rest.index("-->")].strip()
            else:
                arg = rest.strip()
                i += 1
                while i < len(lines) and "-->" not in lines[i]:
                    body.append(lines[i])
                    i += 1
                if i == len(lines):
                    errors.append(f"{rel}:{start + 1}: doctest directive never closed with -->")
                    break
                tail = lines[i][: lines[i].index("-->")]
                if tail.strip():
                    body.append(tail)
            if name not in KNOWN_DIRECTIVES:
                errors.append(f"{rel}:{start + 1}: unknown doctest directive '{name}' (known: "
                              f"{', '.join(sorted(KNOWN_DIRECTIVES))})")
            pending.append(Directive(name, arg, body, start + 1))
            i += 1
            continue
        m = FENCE.match(line)
        if m:
            indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
            j = i + 1
            while j < len(lines):
                c = FENCE.match(lines[j])
                if c and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) and not c.group(3).strip():
                    break
                j += 1
            if j == len(lines):
                errors.append(f"{rel}:{i + 1}: fenced block never closed")
                break
            body = [(k + 1, lines[k][indent:] if lines[k][:indent].strip() == "" else lines[k])
                    for k in range(i + 1, j)]
            blocks.append(Block(rel, i + 1, info, body, pending))
            pending = []
            i = j + 1
            continue
        if line.strip() and pending:
            errors.append(f"{rel}:{pending[0].line}: doctest directive not just before a fenced block "
                          f"(text at line {i + 1} comes between)")
            pending = []
        i += 1
    if pending:
        errors.append(f"{rel}:{pending[0].line}: doctest directive with no block after it")
    return blocks, errors


def classify(block):
    """Errors in the block's kind and directives (before anything runs)."""
    errs = []
    k = block.kind
    if not k:
        errs.append(f"{block.where()}: fenced block without an info string: say what it is (sh, console, "
                    f"synopsis, cpp, c to be checked; text, json, sql, ... not run; tests/docs/doctest.py)")
    elif k in SHELL_LIKE:
        errs.append(f"{block.where()}: info string '{k}': write sh (commands) or console (a transcript)")
    elif k not in CHECKED_KINDS and k not in PLAIN_KINDS:
        errs.append(f"{block.where()}: unknown info string '{k}' (checked: sh, console, synopsis, cpp, c; "
                    f"not run: {', '.join(sorted(PLAIN_KINDS))})")
    elif k == "text":
        for ln, t in block.body:
            if re.match(r"^(\$ |(\S*/)?kron\s+[a-z])", t):  # at column 0: a diagram's indented lines may name commands
                errs.append(f"{block.where(ln)}: a command in a text block: make the block sh, console or "
                            f"synopsis (or skip it with its reason)")
                break
    skip = block.directive("skip")
    if skip is not None and not skip.arg.strip(" ()"):
        errs.append(f"{block.where(skip.line)}: 'doctest: skip' needs its reason")
    if skip is not None and k not in RUN_KINDS:
        errs.append(f"{block.where(skip.line)}: 'doctest: skip' before a {k or 'plain'} block, which is not run")
    return errs


# ---- kron's subcommands and options, from --help ---------------------------------------------------------
class Help:
    """`kron --help` and every subcommand's, read once: the options each (sub)command takes."""

    def __init__(self, kron):
        self.kron = kron
        self.options = {}  # "board create" -> set of option names ("--perms", "-o")
        self.groups = {}   # "record" -> [["-o", "--output"], ["--buffer"], ...]: the names of one option
        self.texts = {}
        self.walk([])

    def run(self, words):
        p = subprocess.run([self.kron] + words + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        return p.stdout

    def walk(self, words):
        text = self.run(words)
        key = " ".join(words)
        self.texts[key] = text
        opts, subs, section, groups = set(), [], "", []
        for line in text.split("\n"):
            if re.match(r"^[A-Za-z][A-Za-z ]*:\s*$", line):
                section = line.strip().rstrip(":").lower()
                continue
            if section.startswith("subcommand"):
                m = re.match(r"^\s{1,4}([a-z][\w-]*)\s", line + " ")
                if m:
                    subs.append(m.group(1))
                continue
            if section.startswith("positional"):
                continue
            m = re.match(r"^\s{1,4}(-[^\s]+(?:\s*,\s*-[^\s,]+)*)", line)
            if m:
                group = []
                for name in re.split(r"\s*,\s*", m.group(1)):
                    name = re.sub(r"[=\[].*$", "", name)
                    if re.match(r"^--?[A-Za-z0-9][\w-]*$", name):
                        opts.add(name)
                        group.append(name)
                if group:
                    groups.append(group)
        self.options[key] = opts
        self.groups[key] = groups
        for s in subs:
            if s != "help":
                self.walk(words + [s])

    def command_of(self, words):
        """The longest known (sub)command that `words` (after `kron`) starts with, and the words after it."""
        best = None
        for n in range(len(words), 0, -1):
            key = " ".join(words[:n])
            if key in self.options:
                best = (key, words[n:])
                break
        return best




def option_problems(help_, where, text):
    """Each `kron SUB ... --opt` on a command line must name a real subcommand and one of its options."""
    probs = []
    code = re.sub(r"(^|\s)#.*$", "", text)  # a shell comment is prose
    # Shell operators between spaces (a|b inside [--wait|--discard] is a synopsis's alternative, not a pipe).
    for seg in re.split(r"\s(?:\|\||&&|\||&)(?=\s|$)|;|\$\(|`", code):
        m = re.match(r"^\s*(?:\w+=\S+\s+)*(?:\"?\$?\{?[\w./-]*\}?/)?kron\"?((?:\s+\S+)*)\s*$", seg)
        if not m:
            continue
        words = m.group(1).split()
        if not words or words[0] in ("--help", "-h", "--version"):
            continue
        if not re.match(r"^[a-z][\w-]*$", words[0]):
            continue  # a placeholder (kron TOOL) or a path
        found = help_.command_of([w for w in words if not w.startswith("-")][:2])
        if found is None:
            probs.append(f"{where}: `kron {words[0]}`: no such kron subcommand (kron --help)")
            continue
        key, _ = found
        opts = help_.options[key]
        for w in words:
            if w == "--":
                break  # the program's own options follow
            w = w.strip("[]()\"'`,")
            for alt in w.split("|"):
                o = re.split(r"[=\[]", alt)[0]
                if re.match(r"^--[A-Za-z][\w-]*$", o) or re.match(r"^-[A-Za-z]$", o):
                    if o not in opts and o not in ("-h", "--help"):
                        probs.append(f"{where}: `kron {key} {o}`: no such option (kron {key} --help lists "
                                     f"{' '.join(sorted(opts))})")
    return probs


# ---- running ---------------------------------------------------------------------------------------------
def logical_lines(body):
    """(first line number, text) per command: `\\` continuations joined, heredocs kept with their command."""
    out, i = [], 0
    while i < len(body):
        ln, t = body[i]
        parts = [t]
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(body):
            i += 1
            parts.append(body[i][1])
        m = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", parts[-1])
        if m:
            delim = m.group(1)
            while i + 1 < len(body):
                i += 1
                parts.append(body[i][1])
                if body[i][1].strip() == delim:
                    break
        out.append((ln, "\n".join(parts)))
        i += 1
    return out


def run_script(script, cwd, env, timeout):
    """bash -c SCRIPT in its own process group, which is killed whole on a timeout (background jobs too)."""
    p = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return p.returncode, out


def tail(text, n=40):
    lines = text.rstrip("\n").split("\n")
    return "\n".join("    | " + l for l in lines[-n:])


def run_hidden(block, name, cwd, env, timeout):
    d = block.directive(name)
    if d is None:
        return None
    rc, out = run_script("set -e\n" + "\n".join(d.body), cwd, env, timeout)
    if rc != 0:
        return (f"{block.where(d.line)}: the hidden '{name}' commands of the block at line {block.line} "
                f"failed (exit {rc}):\n{tail(out)}")
    return None


def run_sh(block, cwd, env, timeout):
    cmds = [(ln, t) for ln, t in logical_lines(block.body) if t.strip() and not t.strip().startswith("#")]
    script = ["__doc_fail() { echo \"@@doctest-failed $1 $2\"; kill $(jobs -p) 2>/dev/null; exit 97; }"]
    for ln, t in cmds:
        script.append(t)
        if not t.rstrip().endswith("&"):
            script.append(f"__rc=$?; [ $__rc = 0 ] || __doc_fail {ln} $__rc")
    script.append("for __j in $(jobs -p); do wait $__j || __doc_fail background $?; done")
    try:
        rc, out = run_script("\n".join(script), cwd, env, timeout)
    except subprocess.TimeoutExpired:
        return [f"{block.where()}: sh block did not finish within {timeout} s (a long example: "
                f"'doctest: timeout N', or skip it with the reason)"]
    if rc == 0:
        return []
    m = re.search(r"@@doctest-failed (\S+) (\d+)", out)
    out = re.sub(r"@@doctest-failed.*\n?", "", out)
    if m and m.group(1) != "background":
        ln = int(m.group(1))
        cmd = dict(cmds)[ln]
        return [f"{block.where(ln)}: command exited {m.group(2)}: {cmd}\n{tail(out)}"]
    if m:
        return [f"{block.where()}: a command run in the background (&) exited {m.group(2)}\n{tail(out)}"]
    return [f"{block.where()}: sh block exited {rc}\n{tail(out)}"]


NUM = re.compile(r"[0-9][0-9a-fA-F.]*(\s?(ns|us|ms|s)\b)?")


def normalise(line, modes):
    line = line.rstrip()
    if "numbers" in modes:
        line = NUM.sub("#", line)
        line = re.sub(r"\s+", " ", line).strip()
    return line


def match_lines(expected, got, modes):
    """None when `got` matches `expected` (with `...` lines), else (expected index, got index) of the first
    line that differs."""
    exp = [(ln, normalise(t, modes)) for ln, t in expected]
    act = [normalise(t, modes) for t in got]
    if "unordered" in modes:
        rest = list(act)
        wild = any(t == "..." for _, t in exp)
        for k, (ln, t) in enumerate(exp):
            if t == "...":
                continue
            if t in rest:
                rest.remove(t)
            else:
                return (k, None)
        return None if (wild or not rest) else (len(exp), act.index(rest[0]))

    memo = {}

    def m(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(exp):
            r = None if j == len(act) else (i, j)
        elif exp[i][1] == "...":
            r = m(i + 1, j)
            k = j
            while r is not None and k < len(act):
                k += 1
                r2 = m(i + 1, k)
                if r2 is None:
                    r = None
                else:
                    r = r if r[0] >= r2[0] else r2
        elif j < len(act) and exp[i][1] == act[j]:
            r = m(i + 1, j + 1)
        else:
            r = (i, j)
        memo[key] = r
        return r

    sys.setrecursionlimit(100000)
    return m(0, 0)


def console_commands(block):
    cmds, cur = [], None
    i, body = 0, block.body
    while i < len(body):
        ln, t = body[i]
        if t.startswith("$ "):
            parts = [t[2:]]
            while parts[-1].rstrip().endswith("\\") and i + 1 < len(body):
                i += 1
                parts.append(re.sub(r"^> ", "", body[i][1]))
            mm = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", parts[-1])
            if mm:
                while i + 1 < len(body):
                    i += 1
                    parts.append(re.sub(r"^> ", "", body[i][1]))
                    if parts[-1].strip() == mm.group(1):
                        break
            cur = [ln, "\n".join(parts), []]
            cmds.append(cur)
        elif cur is None:
            if t.strip():
                raise DocError(f"{block.where(ln)}: console block: output before any `$ ` command")
        else:
            cur[2].append((ln, t))
        i += 1
    for c in cmds:
        while c[2] and not c[2][-1][1].strip():
            c[2].pop()
    return cmds


def run_console(block, cwd, env, timeout):
    try:
        cmds = console_commands(block)
    except DocError as e:
        return [str(e)]
    d = block.directive("output")
    modes = set(d.arg.split()) if d else set()
    bad = modes - {"numbers", "unordered"}
    if bad:
        return [f"{block.where(d.line)}: unknown output mode {' '.join(sorted(bad))} (numbers, unordered)"]
    tmp = os.path.join(cwd, ".doctest")
    os.makedirs(tmp, exist_ok=True)
    script = []
    for k, (ln, cmd, _) in enumerate(cmds):
        script.append(f"{{\n{cmd}\n}} > {tmp}/out.{k} 2>&1; echo $? > {tmp}/rc.{k}")
    try:
        run_script("\n".join(script), cwd, env, timeout)
    except subprocess.TimeoutExpired:
        return [f"{block.where()}: console block did not finish within {timeout} s"]
    for k, (ln, cmd, expected) in enumerate(cmds):
        try:
            rc = int(open(f"{tmp}/rc.{k}").read())
            out = open(f"{tmp}/out.{k}", encoding="utf-8", errors="replace").read()
        except (OSError, ValueError):
            return [f"{block.where(ln)}: command did not run: {cmd}"]
        want_rc = 0
        if expected and re.match(r"^\[\d+\]$", expected[-1][1].strip()):
            want_rc = int(expected[-1][1].strip()[1:-1])
            expected = expected[:-1]
        got = out.rstrip("\n").split("\n") if out.strip() else []
        where = f"{block.where(ln)}: `{cmd.splitlines()[0]}`"
        if rc != want_rc:
            return [f"{where} exited {rc}, the doc expects {want_rc}\n{tail(out)}"]
        diff = match_lines(expected, got, modes)
        if diff is not None:
            i, j = diff
            exp_line = f"doc line {expected[i][0]}: {expected[i][1]!r}" if i < len(expected) else "(no more lines)"
            got_line = f"{got[j]!r}" if j is not None and j < len(got) else "(no more lines)"
            mode = (f" (output {' '.join(sorted(modes))})" if modes
                    else " (exact; 'doctest: output numbers' lets numbers vary)")
            return [f"{where}: output differs from the doc{mode}\n    expected {exp_line}\n    got      {got_line}\n"
                    f"  whole output:\n{tail(out, 60)}"]
    return []


def run_code(block, cwd, env, timeout):
    lang = block.kind
    code = "\n".join(t for _, t in block.body)
    pre = block.directive("prelude")
    prelude = "\n".join(pre.body) + "\n" if pre else ""
    if block.directive("body"):
        code = "void kron_doc_snippet() {\n" + code + "\n}\n"
    src = prelude + code + "\n"
    has_main = re.search(r"\bint\s+main\s*\(", src) is not None
    includes = re.findall(r"#include\s*<(kron/[^>]+)>", src)
    pkg = "kron-probe" if all(i in ("kron/kron.hpp", "kron/mk.h", "kron/site.h") for i in includes) else "kron"
    tmp = os.path.join(cwd, ".doctest")
    os.makedirs(tmp, exist_ok=True)
    ext = ".cpp" if lang == "cpp" else ".c"
    path = os.path.join(tmp, f"snippet_{block.line}{ext}")
    with open(path, "w") as f:
        f.write(src)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", pkg], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if flags.returncode != 0:
        return [f"{block.where()}: pkg-config --cflags --libs {pkg} failed: {flags.stdout.strip()}"]
    compiler = ["g++"] if lang == "cpp" else ["cc"]
    stds = [[], ["-std=c++20"]] if lang == "cpp" else [[]]
    errs = []
    for std in stds:
        exe = os.path.join(tmp, f"snippet_{block.line}")
        cmd = compiler + std + [path] + ([] if has_main else ["-c"]) + ["-o", exe + ("" if has_main else ".o")] \
            + flags.stdout.split()
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        shown = " ".join(compiler + std) + f" SNIPPET{ext} $(pkg-config --cflags --libs {pkg})"
        if p.returncode != 0:
            errs.append(f"{block.where()}: the {lang} snippet does not compile with `{shown}`"
                        f"{' (the compiler default standard)' if not std else ''}:\n{tail(p.stdout, 25)}\n"
                        f"  (the code compiled, prelude included: {path})")
            break
        if has_main:
            r = subprocess.run([exe], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=timeout)
            if r.returncode != 0:
                errs.append(f"{block.where()}: the {lang} program built with `{shown}` exited {r.returncode}"
                            f"\n{tail(r.stdout)}")
                break
    return errs


def perf_available(cwd, env):
    """Whether kron record --sched works here (perf_event for the program's context switches)."""
    rc, _ = run_script("kron record -q --sched -o .doctest-perf.kron -- true && rm -f .doctest-perf.kron", cwd, env, 30)
    return rc == 0


def make_env(build, source, work):
    prefix = os.path.join(work, "prefix")
    p = subprocess.run(["cmake", "--install", build, "--prefix", prefix], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise DocError(f"cmake --install {build} failed:\n{tail(p.stdout)}")
    env = dict(os.environ)
    env.pop("KRON_BOARD", None)
    env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env.get("PATH", "")
    env["PKG_CONFIG_PATH"] = os.path.join(prefix, "lib", "pkgconfig")
    env["CMAKE_PREFIX_PATH"] = prefix
    env["PREFIX"] = prefix
    env["LC_ALL"] = "C"
    return env, prefix


def scratch_for(work, rel, build, source, env):
    d = os.path.join(work, re.sub(r"[^\w.-]", "_", rel))
    os.makedirs(d, exist_ok=True)
    for name, target in (("examples", os.path.join(source, "examples")), ("build", build)):
        if not os.path.exists(os.path.join(d, name)):
            os.symlink(target, os.path.join(d, name))
    e = dict(env)
    shm = os.path.join(d, ".boards")
    os.makedirs(shm, exist_ok=True)
    e["KRON_SHM_DIR"] = shm
    return d, e


def doc_files(source, only):
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    if only:
        files = [f for f in files if f in only or os.path.basename(f) in only]
    return files


def check_options(source, help_):
    """Every option of every --help is named in docs/tools.md or README.md."""
    docs = ""
    for f in ("docs/tools.md", "README.md"):
        docs += open(os.path.join(source, f), encoding="utf-8").read()
    probs = []

    def named(o):
        if o.startswith("--"):
            return re.search(re.escape(o) + r"(?![\w-])", docs) is not None
        return re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", docs) is not None  # `-x` alone

    for key in sorted(help_.options):
        for group in help_.groups[key]:
            if "--help" in group or any(named(o) for o in group):
                continue  # -o,--output: either name documents it
            cmd = f"kron {key}".strip()
            probs.append(f"{cmd} {','.join(group)}: not documented in docs/tools.md or README.md "
                         f"({cmd} --help: {help_line(help_.texts[key], group[-1])})")
    return probs


def help_line(text, opt):
    for line in text.split("\n"):
        if re.search(re.escape(opt) + r"(?![\w-])", line):
            return line.strip()
    return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--options", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    work = tempfile.mkdtemp(prefix="kron-doctest-")
    failures, counts = [], {"run": 0, "skipped": 0, "checked": 0, "plain": 0}
    perf_ok = None
    try:
        env, prefix = make_env(build, source, work)
        help_ = Help(os.path.join(prefix, "bin", "kron"))
        if a.options:
            failures = check_options(source, help_)
            n = sum(len(v) for v in help_.options.values())
            print(f"doctest --options: {n} options of {len(help_.options)} (sub)commands, "
                  f"{len(failures)} undocumented")
        else:
            for rel in doc_files(source, a.only):
                blocks, errs = parse(os.path.join(source, rel), rel)
                failures += errs
                cwd, fenv = scratch_for(work, rel, build, source, env)
                for b in blocks:
                    errs = classify(b)
                    failures += errs
                    if errs:
                        continue
                    if b.kind in ("sh", "synopsis"):
                        for ln, t in logical_lines(b.body):
                            failures += option_problems(help_, b.where(ln), t.replace("\\\n", " "))
                    elif b.kind == "console":
                        try:
                            for ln, t, _ in console_commands(b):
                                failures += option_problems(help_, b.where(ln), t.split("\n")[0])
                        except DocError:
                            pass
                    if b.kind not in RUN_KINDS:
                        counts["checked" if b.kind == "synopsis" else "plain"] += 1
                        continue
                    if b.directive("skip"):
                        counts["skipped"] += 1
                        continue
                    req = b.directive("requires")
                    if req is not None:
                        if req.arg != "perf":
                            failures.append(f"{b.where(req.line)}: 'doctest: requires {req.arg}': only perf is known")
                            continue
                        if perf_ok is None:
                            perf_ok = perf_available(cwd, fenv)
                        if not perf_ok:
                            print(f"doctest: {b.where()} not run: it needs perf_event, which this machine refuses")
                            counts["skipped"] += 1
                            continue
                    counts["run"] += 1
                    t = b.directive("timeout")
                    timeout = int(t.arg) if t else 60
                    before = len(failures)
                    err = run_hidden(b, "setup", cwd, fenv, timeout)
                    if err:
                        failures.append(err)
                        continue
                    if b.kind == "sh":
                        failures += run_sh(b, cwd, fenv, timeout)
                    elif b.kind == "console":
                        failures += run_console(b, cwd, fenv, timeout)
                    else:
                        failures += run_code(b, cwd, fenv, timeout)
                    if len(failures) == before:
                        err = run_hidden(b, "check", cwd, fenv, timeout)
                        if err:
                            failures.append(err)
            print(f"doctest: {counts['run']} blocks run, {counts['skipped']} skipped with a reason, "
                  f"{counts['checked']} synopses checked, {counts['plain']} not commands")
    except DocError as e:
        failures.append(str(e))
    finally:
        if a.keep:
            print(f"scratch kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    if failures:
        print(f"{len(failures)} doc failure(s): each names FILE:LINE; convention at the top of "
              f"tests/docs/doctest.py and in docs/contributing.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
