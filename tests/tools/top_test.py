#!/usr/bin/env python3
"""kron top end to end (docs/tools.md "kron top").

  top_test.py screen   the full screen in a pseudo-terminal: `kron top -- kserver` read with pyte (a terminal
                       emulator): threads, scopes and histograms appear and update; the keys sort, filter,
                       pause, show totals and quit; a terminal too small says so, and recovers when resized;
                       the last frame stays with a note when the program ends.
                       With KRON_TOP_SCREENSHOT=FILE.png the screen is also drawn into that PNG (docs/images/).
  top_test.py board    plain and JSON frames of a board that two programs write (kron run --board): both
                       named with their rates; a stopped writer's rate (and --sched on-CPU share) is 0 while
                       the other's goes on; the
                       board removed while watching ends the watch with its last frame and a note.

The deadlines below only keep a broken kron top from hanging the suite; nothing is asserted about time.
"""
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

try:
    import pyte
except ImportError:  # deps/test-packages.txt installs it (Debian's python3-pyte)
    sys.exit("FAIL: python3-pyte is missing (deps/test-packages.txt; scripts/install-deps.sh installs it)")

KRON = os.environ["KRON"]
SERVER = os.environ["KRON_KSERVER"]
COLS, ROWS = 120, 46
LIMIT = 120  # seconds: a hang guard, never a timing assertion


def fail(msg):
    sys.exit("FAIL: " + msg)


class Pty:
    """A command in a pseudo-terminal of COLS x ROWS, its screen kept by pyte."""

    def __init__(self, argv, cwd):
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            # xterm-color: xterm's colours and scrolling, without REP (CSI b, repeat a character), which
            # ncurses uses on TERM=xterm and pyte 0.8 does not implement.
            os.environ["TERM"] = "xterm-color"
            os.chdir(cwd)
            os.execv(argv[0], argv)
        self.open = True
        self.status = None

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while self.open and time.monotonic() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the other side closed
                data = b""
            if not data:
                self.open = False
                break
            self.stream.feed(data)

    def text(self):
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, pred, what):
        end = time.monotonic() + LIMIT
        while time.monotonic() < end:
            self.pump(0.1)
            if pred(self.text()):
                return self.text()
            if not self.open:
                break
        fail(f"{what}: not on the screen\n{self.text()}")

    def resize(self, rows, cols):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))  # SIGWINCH to kron top
        self.screen.resize(rows, cols)

    def key(self, k):
        os.write(self.fd, k.encode())

    def wait_exit(self):
        end = time.monotonic() + LIMIT
        while time.monotonic() < end:
            self.pump(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
        os.kill(self.pid, signal.SIGKILL)
        fail(f"kron top did not end\n{self.text()}")


def section(text, title):
    """The lines of a table: from its header line (starting with `title`) to the next blank line."""
    lines = text.split("\n")
    for i, l in enumerate(lines):
        if l.startswith(title):
            out = []
            for m in lines[i + 1:]:
                if not m.strip():
                    break
                out.append(m)
            return out
    return []


def scope_rows(text):
    """{name: (count/s, count, mean, p50, p99, max)} of the scopes table (names may hold one space)."""
    rows = {}
    for l in section(text, "scope "):
        m = re.match(r"(\S+(?: \S+)?)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", l)
        if m:
            rows[m.group(1)] = m.groups()[1:]
    return rows


def num(s):
    mult = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(s[:-1]) * mult[s[-1]] if s[-1] in mult else float(s)


def save_png(screen, path):
    """The pyte screen drawn into a PNG (DejaVu Sans Mono, Debian's fonts-dejavu-core)."""
    from PIL import Image, ImageDraw, ImageFont
    base = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono"
    font, bold = ImageFont.truetype(base + ".ttf", 14), ImageFont.truetype(base + "-Bold.ttf", 14)
    cw, ch = 9, 18
    bg, fg = (24, 26, 30), (210, 214, 220)
    colors = {"red": (235, 80, 70), "default": fg}
    img = Image.new("RGB", (COLS * cw + 16, ROWS * ch + 16), bg)
    d = ImageDraw.Draw(img)
    for y in range(ROWS):
        row = screen.buffer[y]
        for x in range(COLS):
            c = row[x]
            f, b = colors.get(c.fg, fg), bg
            if c.reverse:
                f, b = bg, fg
            px, py = 8 + x * cw, 8 + y * ch
            if b != bg:
                d.rectangle([px, py, px + cw - 1, py + ch - 1], fill=b)
            if c.data.strip():
                d.text((px, py), c.data, font=bold if c.bold else font, fill=f)
            if c.underscore:
                d.line([px, py + ch - 2, px + cw - 1, py + ch - 2], fill=f)
    img.save(path)


def test_screen(tmp):
    os.symlink(SERVER, os.path.join(tmp, "kserver"))  # the screen shows ./kserver, as a user types it
    argv = [KRON, "top", "--interval", "0.3", "-o", "s.trace", "--", "./kserver", "-t", "3", "-n", "150000", "--slow",
            "--scopes"]
    t = Pty(argv, tmp)
    # Threads (pid, tid, node, phase, samples/s, state), scopes, histograms: all there.
    thread_row = re.compile(r"^\s+\d+\s+\d+\s+\d+\s+[12]\s+[\d.]+[kMG]?\s+active\b", re.M)
    first = t.wait_for(lambda s: len(thread_row.findall(s)) >= 3 and "serve get" in s and
                       re.search(r"^get\s+[12]\s+\d", s, re.M) and re.search(r"^\s+3\s+\d+", s, re.M),
                       "three thread rows, the scope serve get, the histogram get and virtual counter 3")
    # They update: the header's elapsed time, the scopes' counts and the histogram's count change.
    def hist_count(s):
        m = re.search(r"^get\s+([12])\s+(\S+)", s, re.M)
        return m and (m.group(1), m.group(2))
    elapsed = lambda s: re.search(r"^kron top .* ([\d.]+) s$", s, re.M).group(1)
    t0, h0 = elapsed(first), hist_count(first)
    later = t.wait_for(lambda s: elapsed(s) != t0 and hist_count(s) != h0, "a later frame (elapsed, histogram)")
    assert "sorted by count/s" in later, later
    # Keys: sort by name, by p99; filter; totals; pause; quit.
    t.key("n")
    s = t.wait_for(lambda s: "sorted by name" in s and len(scope_rows(s)) == 3, "sorted by name")
    names = list(scope_rows(s))
    assert names == sorted(names) == ["serve get", "serve put", "serve scan"], names
    t.key("9")
    s = t.wait_for(lambda s: "sorted by p99" in s and len(scope_rows(s)) == 3, "sorted by p99")
    p99 = [num(r[4]) for r in scope_rows(s).values()]
    assert p99 == sorted(p99, reverse=True), (p99, s)
    t.key("/")
    for c in "scan\n":
        t.key(c)
    s = t.wait_for(lambda s: 'filter "scan"' in s and list(scope_rows(s)) == ["serve scan"], "the filter scan")
    t.key("/")
    t.key("\x1b")
    t.key("t")
    s = t.wait_for(lambda s: "whole watch" in s and len(scope_rows(s)) == 3, "the whole watch's totals")
    totals = {k: num(v[1]) for k, v in scope_rows(s).items()}
    s = t.wait_for(lambda s: "whole watch" in s and len(scope_rows(s)) == 3 and
                   all(num(v[1]) >= totals[k] for k, v in scope_rows(s).items()) and
                   any(num(v[1]) > totals[k] for k, v in scope_rows(s).items()), "totals that grow")
    t.key("t")
    t.key("c")
    t.key("p")
    t.wait_for(lambda s: "PAUSED" in s, "PAUSED")
    t.key("p")
    t.wait_for(lambda s: "PAUSED" not in s and "last refresh" in s, "the watch going on")
    # A terminal too small says so; resized back, the frames come back.
    t.resize(6, 30)
    t.wait_for(lambda s: "terminal too small" in s, "the too-small terminal's line")
    t.resize(ROWS, COLS)
    t.wait_for(lambda s: "terminal too small" not in s and "serve get" in s, "the frame after the resize")
    shot = t.text()
    if os.environ.get("KRON_TOP_SCREENSHOT"):
        save_png(t.screen, os.environ["KRON_TOP_SCREENSHOT"])
    save_png(t.screen, os.path.join(tmp, "top.png"))  # the PNG is made on every run (PIL and the font work)
    # The program ends: the last frame stays, with a note, until q.
    end = t.wait_for(lambda s: "exited with status 0" in s, "the note that kserver ended")
    assert "serve get" in end and "get" in end, end
    t.key("q")
    rc = t.wait_exit()
    if rc != 0:
        fail(f"kron top exited with {rc}\n{t.text()}")
    info = json.loads(subprocess.run([KRON, "info", "--json", os.path.join(tmp, "s.trace")], check=True,
                                     capture_output=True, text=True).stdout)
    samples = info.get("samples") or info.get("header", {}).get("samples")
    assert samples and samples > 0, info
    with open(os.path.join(tmp, "s.trace.out")) as f:
        assert "kserver: 300000 requests" in f.read(), "the program's output is not in s.trace.out"
    print(f"kron top screen: threads, scopes, histograms updated; keys sort/filter/totals/pause/quit; "
          f"{samples} samples recorded\n{shot}")


def run_json(args):
    out = subprocess.run([KRON, "top"] + args, check=True, capture_output=True, text=True, timeout=LIMIT).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def test_board(tmp):
    board = f"top-test-{os.getpid()}"
    subprocess.run([KRON, "board", "create", board, "--buffer", "64M"], check=True, stdout=subprocess.DEVNULL)
    other = os.path.join(tmp, "kworker")  # the same server under another name: two programs
    shutil.copy(SERVER, other)
    procs = []
    try:
        for prog in (SERVER, other):
            procs.append(subprocess.Popen([KRON, "run", "--board", board, "--", prog, "-t", "2", "-n", "400000",
                                           "--slow", "--scopes"], stdout=subprocess.DEVNULL))
        # Both programs attached (their threads hold lanes) before the frame is taken.
        def programs(frame):
            return {p["program"].split()[0]: p for p in frame["processes"] if not p["ended"]}
        end = time.monotonic() + LIMIT
        while True:
            f = run_json(["--board", board, "--once", "--json", "--interval", "0.5"])[0]
            ps = programs(f)
            if len(ps) == 2 and all(p["samples_per_s"] > 0 for p in ps.values()):
                break
            if time.monotonic() > end:
                fail(f"no frame names both programs with their rates: {f}")
        assert set(ps) == {SERVER, other}, ps
        assert f["read_only"] and f["format"] == "kron-top", f
        # The plain frame names both, each with its samples/s.
        text = subprocess.run([KRON, "top", "--board", board, "--once", "--width", "160"], check=True,
                              capture_output=True, text=True, timeout=LIMIT).stdout
        for prog in (SERVER, other):
            m = re.search(r"^\s+(\d+)\s+\d+\s+\d+\s+(\S+)\s+" + re.escape(prog), text, re.M)
            assert m, (prog, text)
        assert "(read-only)" in text and "serve get" in text, text
        # A stopped writer: its rate is 0, the other's goes on.
        os.kill(procs[1].pid, 0)
        stopped = [p["pid"] for p in f["processes"] if p["program"].startswith(other)][0]
        os.kill(stopped, signal.SIGSTOP)
        try:
            f = run_json(["--board", board, "--once", "--json", "--sched", "--interval", "0.5"])[0]
            ps = programs(f)
            assert ps[other]["samples_per_s"] == 0 and ps[SERVER]["samples_per_s"] > 0, ps
            assert all(t["samples_per_s"] == 0 for t in f["threads"] if t["pid"] == stopped), f["threads"]
            # --sched: a stopped thread spent no time on a CPU; the running ones some (E431).
            cpu = {t["tid"]: t["oncpu"] for t in f["threads"] if t["state"] == "active"}
            assert all(cpu[t["tid"]] == 0 for t in f["threads"] if t["pid"] == stopped and t["tid"] in cpu), cpu
            assert any(cpu.get(t["tid"]) for t in f["threads"] if t["pid"] != stopped), (cpu, f["threads"])
        finally:
            os.kill(stopped, signal.SIGCONT)
        # The board removed while watching: the last frame stays, with a note; kron top ends by itself.
        watch = subprocess.Popen([KRON, "top", "--board", board, "--interval", "0.2"], stdout=subprocess.PIPE,
                                 text=True)
        time.sleep(0.5)  # (not an assertion: lets a frame or two be printed first)
        subprocess.run([KRON, "board", "rm", board], check=True, stdout=subprocess.DEVNULL)
        out, _ = watch.communicate(timeout=LIMIT)
        assert watch.returncode == 0, watch.returncode
        assert re.search(r"board top-test-\d+ was removed", out.split("kron top - ")[-1]), out[-2000:]
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run([KRON, "board", "rm", board], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"kron top --board: two programs named with their rates; a stopped writer at 0; the board removed")


def main():
    tmp = tempfile.mkdtemp(prefix="kron-top-")
    try:
        {"screen": test_screen, "board": test_board}[sys.argv[1]](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
