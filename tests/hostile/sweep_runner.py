"""How one hostile case is run and judged (tests/hostile/sweep.py builds the cases).

A case is a lite command line with what must happen: its exit code, for exit 2 the one documented error line naming
the case's needles, nothing on stdout, no file added, removed or changed in its work folder or the fixtures, peak
resident memory under its bound and an end within its time. A signal case sends a signal once its needle shows on
the terminal (or after a delay) and must end with the signal's code within 2 s, leaving nothing behind.
"""
import dataclasses
import os
import pathlib
import pty
import select
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
from litetest import LITE, error_line_problems, snapshot, wait_measured  # noqa: E402


@dataclasses.dataclass
class Case:
    item: int                     # the item (1-5) the case belongs to
    name: str
    argv: list                    # after `lite`; "{W}" in an argument is the case's own work folder
    codes: tuple = (2,)           # exit codes that hold
    needles: tuple = ()           # text the error line must contain (exit 2 only); "{W}" as in argv
    env: dict = dataclasses.field(default_factory=dict)
    max_rss_mib: float = 800.0
    timeout_s: float = 120.0
    signum: int = 0               # a signal case: send this ...
    signal_on: bytes = b""        # ... once this shows on the terminal (stderr on a pty) ...
    signal_after_s: float = 0.0   # ... and this many seconds later (from the start without signal_on)
    may_leave: tuple = ()         # paths in the work folder a failed run may leave (a resumable work folder)
    terminal_needle: bytes = b""  # the terminal must show this (a case about what lite announces)
    check: object = None          # callable(stdout) -> problem or None, for cases that must succeed


@dataclasses.dataclass
class Outcome:
    case: Case
    problems: list
    code: int
    seconds: float
    rss_mib: float


def expand(value, work):
    return str(value).replace("{W}", str(work))


def _running(p):
    """Whether p has not exited, without reaping it (wait4 collects its exit code and peak memory later)."""
    return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def _read_terminal(master, until, deadline):
    seen = b""
    while time.monotonic() < deadline and (not until or until not in seen):
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def run_case(case, work):
    """Runs one case in its own work folder; returns its Outcome."""
    argv = [LITE, *(expand(a, work) for a in case.argv)]
    env = dict(os.environ, **case.env)
    on_terminal = bool(case.signum or case.terminal_needle)
    master = slave = None
    if on_terminal:
        master, slave = pty.openpty()
    before = snapshot(work)
    start = time.monotonic()
    p = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=slave if on_terminal else subprocess.PIPE)
    terminal, sent_at = b"", None
    stdout_chunks, stderr_chunks = [], []
    readers = [threading.Thread(target=lambda: stdout_chunks.append(p.stdout.read()))]
    if not on_terminal:
        readers.append(threading.Thread(target=lambda: stderr_chunks.append(p.stderr.read())))
    for t in readers:
        t.start()
    if on_terminal:
        os.close(slave)
        if case.signal_on or case.terminal_needle:
            terminal = _read_terminal(master, case.signal_on or case.terminal_needle, start + case.timeout_s)
            wait_until = time.monotonic() + case.signal_after_s
        else:
            wait_until = start + case.signal_after_s
        terminal += _read_terminal(master, b"\0never", wait_until)
        if case.signum and _running(p):
            sent_at = time.monotonic()
            p.send_signal(case.signum)
        elif case.signum:
            terminal += b"\n(the sweep: the command ended before its signal was sent; the case needs a longer run)"
    code, rss = wait_measured(p, max(0.0, case.timeout_s - (time.monotonic() - start)))
    timed_out = code == -signal.SIGKILL
    ended = time.monotonic()
    for t in readers:
        t.join()
    if on_terminal:
        terminal += _read_terminal(master, b"", time.monotonic() + 0.5)
        os.close(master)
    stdout = b"".join(stdout_chunks).decode(errors="replace")
    stderr = b"".join(stderr_chunks).decode(errors="replace") if not on_terminal else terminal.decode(errors="replace")
    problems = judge(case, work, code, stdout, stderr, rss, timed_out, sent_at, ended, terminal)
    if code != 0:
        changed = {entry[0] for entry in set(snapshot(work)) ^ set(before)}
        changed = sorted(c for c in changed if not c.startswith(case.may_leave or ("\0",)))
        if changed:
            problems.append(f"a failed command wrote or changed {changed}")
    return Outcome(case, problems, code, ended - start, rss)


def judge(case, work, code, stdout, stderr, rss, timed_out, sent_at, ended, terminal):
    problems = []
    if timed_out:
        return [f"still running after {case.timeout_s:.0f} s (killed)"]
    if code not in case.codes:
        problems.append(f"exit {code}, expected {'/'.join(map(str, case.codes))}: {stderr.strip()[-300:]!r}")
    if rss > case.max_rss_mib:
        problems.append(f"peak RSS {rss:.0f} MiB above {case.max_rss_mib:.0f}")
    if sent_at is not None and ended - sent_at > 2.0:
        problems.append(f"ended {ended - sent_at:.1f} s after the signal (bound 2 s)")
    if case.terminal_needle and case.terminal_needle not in terminal:
        problems.append(f"the terminal never showed {case.terminal_needle!r}")
    if code == 2 and not case.signum:
        problems += _error_line_problems(case, work, stdout, stderr)
    if code == 0 and case.check:
        problem = case.check(stdout)
        if problem:
            problems.append(problem)
    return problems


def _error_line_problems(case, work, stdout, stderr):
    problems = []
    lines = [l for l in stderr.splitlines() if l.strip()]
    verb = case.argv[0]
    if len(lines) != 1:
        return [f"{len(lines)} lines on stderr, expected one: {stderr.strip()[-400:]!r}"]
    form = error_line_problems(stderr)
    if form:
        problems.append(f"the error line is {form}: {lines[0]!r}")
    if not lines[0].startswith(f"lite {verb}: error: "):
        problems.append(f"the error line does not start 'lite {verb}: error: ': {lines[0]!r}")
    for n in case.needles:
        if expand(n, work) not in lines[0]:
            problems.append(f"the error line does not name {expand(n, work)!r}: {lines[0]!r}")
    if stdout.strip():
        problems.append(f"printed a result: {stdout.strip()[:200]!r}")
    return problems
