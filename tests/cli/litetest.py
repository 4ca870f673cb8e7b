"""Shared helpers for lite's end-to-end CLI tests (run by ctest with /usr/bin/python3).

Each test module drives the built `lite` binary as a user would and checks exit codes, stdout and
stderr, and files written. Artifacts are loaded back with Debian's torch where a test needs it.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
LITE = os.environ.get("LITE_BIN", str(REPO / "build" / "apps" / "lite"))
DATA = REPO / "data"
SHARED = pathlib.Path(os.environ.get("LITE_SHARED_DIR", str(REPO.parent / "shared")))
TRACES = SHARED / "data" / "traces"
PYTHON = "/usr/bin/python3"  # Debian's python with torch; the python3 first on PATH may lack it

# Every verb that times checks the machine's load and fails its speed gates on an oversubscribed machine
# (lib/lite/measure/machine_load.hpp). The suite must not pass or fail by what else runs beside it, so every lite
# it starts sees a quiet machine (LITE_TEST_LOAD: runnable threads of other processes) unless a test simulates
# load (test_noisy_speed.py); the real /proc reading has its unit test (tests/unit/profile/test_machine_load.cpp).
os.environ.setdefault("LITE_TEST_LOAD", "0")


# The documented error line (README.md "Exit codes"): `lite SUB: error: SUBJECT: PROBLEM; FIX`, where SUBJECT
# names what to change: a flag (or flags: "--json, --csv"), an argument placeholder (MODEL, TRACE), or a file
# or word the user typed (a path, optionally path:LINE), or, in a data-parallel job, the rank that reports
# (`rank 1`). No control characters: lite prints values escaped.
_FLAG = r"--?[A-Za-z0-9][A-Za-z0-9-]*"
_SUBJECT = rf"(?:{_FLAG}(?:, {_FLAG})*|[A-Z][A-Z_]*|rank \d+|[^\s:;]+(?::\d+)?)"
ERROR_LINE = re.compile(rf"^lite(?: [a-z-]+)?: error: (?P<subject>{_SUBJECT}): (?P<problem>.+?); (?P<fix>\S.*)$")


def error_line_problems(stderr):
    """Why `stderr` is not one documented error line (None when it is)."""
    text = stderr[:-1] if stderr.endswith("\n") else stderr
    if "\n" in text:
        return "more than one line"
    if re.search(r"[\x00-\x1f\x7f]", text):
        return "an unescaped control character"
    if not ERROR_LINE.match(text):
        return "not 'lite SUB: error: FILE-OR-FLAG: PROBLEM; FIX'"
    return None


# A line libtorch prints on its own: glog's banner and prefix ("W20261130 12:00:00.123456  4242 file.cpp:17] "),
# or c10's own warning prefix ("[W Resize.cpp:17] ") when libtorch is built without glog. lite keeps them off
# stderr unless --verbose (they become report notes), so every CLI test checks that none got through.
TORCH_LOG_LINE = re.compile(r"Logging before InitGoogleLogging|^[IWEF]\d{4,8} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] |"
                            r"^\[[IWEF] \S+\.(cpp|h):\d+\]", re.MULTILINE)


def assert_no_torch_log(stderr, args):
    match = TORCH_LOG_LINE.search(stderr or "")
    if match:
        line = stderr[stderr.rfind("\n", 0, match.start()) + 1:].split("\n", 1)[0]
        raise AssertionError(f"libtorch logged on stderr of 'lite {' '.join(map(str, args))}': {line!r}")


def run_lite(*args, stdin=None, timeout=900, env=None, torch_log_allowed=False):
    """Runs lite with args; returns subprocess.CompletedProcess with text stdout/stderr. Fails when a libtorch
    log line reached stderr (unless torch_log_allowed, for --verbose)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    r = subprocess.run([LITE, *map(str, args)], input=stdin, capture_output=True, text=True,
                       timeout=timeout, env=full_env)
    if not torch_log_allowed:
        assert_no_torch_log(r.stderr, args)
    return r


def wait_measured(p, timeout):
    """Waits for Popen p, killing it after `timeout` s; returns (exit code or -signal, peak RSS of that one process
    in MiB). The peak is os.wait4's rusage of this child (ru_maxrss, KiB on Linux): getrusage(RUSAGE_CHILDREN)
    would report the largest of every child this process has waited for."""
    import threading
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss / 1024


def run_lite_measured(*args, timeout=300):
    """Runs lite like run_lite; returns (CompletedProcess, peak resident memory of that one process in MiB). The
    peak is os.wait4's rusage of this child (ru_maxrss, KiB on Linux): getrusage(RUSAGE_CHILDREN) would report the
    largest of every child this test process has waited for, fixture scripts included. `lite` execs lite-torch in
    the same process, so the figure covers the verb."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([LITE, *map(str, args)], stdout=out, stderr=err)
        _, peak_mib = wait_measured(p, timeout)
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(p.args, p.returncode, out.read().decode(errors="replace"),
                                        err.read().decode(errors="replace"))
    assert_no_torch_log(r.stderr, args)
    return r, peak_mib


def signal_lite_on_terminal(args, needle, signum, delay=0.0, timeout=120):
    """Starts lite with stderr on a pseudo-terminal, waits until `needle` (bytes) appears there, waits `delay` s,
    sends `signum` and waits for the end. Returns (returncode, stdout bytes, terminal text up to the signal)."""
    import pty
    import time
    master, slave = pty.openpty()
    p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + timeout
    try:
        while needle not in seen and time.monotonic() < deadline:
            try:
                seen += os.read(master, 65536)
            except OSError:  # the slave closed: the command ended
                break
        time.sleep(delay)
        p.send_signal(signum)
        stdout, _ = p.communicate(timeout=60)
    finally:
        os.close(master)
    return p.returncode, stdout, seen.decode(errors="replace")


def run_lite_on_terminal(*args, timeout=300):
    """Runs lite with stderr on a pseudo-terminal (where the progress display and the plan line appear) and stdout
    on a pipe; returns CompletedProcess with text stdout and the terminal's text as stderr."""
    import pty
    import threading
    master, slave = pty.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the slave closed: EIO on Linux
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        p = subprocess.run([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=slave, timeout=timeout)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(errors="replace"),
                                       b"".join(chunks).decode(errors="replace"))


def run_lite_json(*args, **kwargs):
    """Runs lite with --json appended; asserts exit 0 and returns the parsed document."""
    r = run_lite(*args, "--json", **kwargs)
    if r.returncode != 0:
        raise AssertionError(f"lite {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def lite_json_result(*args, **kwargs):
    """Runs lite with --json appended; returns (exit code, parsed JSON or None, stderr) for any exit."""
    r = run_lite(*map(str, args), "--json", **kwargs)
    doc = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, doc, r.stderr


def chosen_candidate(doc):
    """The candidate a quantize report chose."""
    return next(c for c in doc["result"]["candidates"] if c["chosen"])


class LiteTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="lite_cli_"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def require_traces(self):
        if not TRACES.is_dir():
            self.skipTest(f"shared traces not found at {TRACES} (../shared is absent on this machine)")
        return TRACES

    def assert_bad_input(self, result, *needles):
        """Exit 2, exactly one line on stderr in the documented form (error_line_problems) that mentions every
        needle, nothing on stdout."""
        self.assertEqual(result.returncode, 2, f"expected exit 2, got {result.returncode}: {result.stderr}")
        lines = [l for l in result.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, f"expected a one-line error, got: {result.stderr!r}")
        problem = error_line_problems(result.stderr)
        self.assertIsNone(problem, f"the error line is {problem}: {result.stderr!r}")
        for n in needles:
            self.assertIn(str(n), lines[0])
        self.assertEqual(result.stdout.strip(), "", "a failed command must not print a result")

    def assert_bf16_written_or_refused_for_kernels(self, result, out):
        """`lite quantize --mode bf16` under ONEDNN_MAX_CPU_ISA=AVX2: where bf16 runs emulated it writes `out`; where
        oneDNN then has no bf16 kernel it is refused in one line naming the missing kernels and the variable, and
        writes nothing."""
        if result.returncode == 0:
            self.assertTrue(pathlib.Path(out).exists())
            return
        self.assert_bad_input(result, "bf16", "--mode", "fails on this CPU", "(ISA avx2) have no native bf16",
                              "unset ONEDNN_MAX_CPU_ISA")
        self.assertFalse(pathlib.Path(out).exists())

    def assert_no_new_files(self, folder, before):
        after = sorted(p.name for p in pathlib.Path(folder).iterdir())
        self.assertEqual(after, before, "a failed command must not write files (also no temporaries)")

    def assert_rejected(self, sub, *args, needles=(), stdin=None, watch=(), max_rss_mib=None):
        """Runs `lite SUB ARGS...` and checks the project's bad-input rule: exit 2, exactly one line on stderr,
        `lite SUB: error: FILE-OR-FLAG: PROBLEM; FIX`, mentioning every needle, nothing on stdout, and nothing written: no file added,
        removed or changed anywhere under self.tmp or under the folders in `watch` (an output folder elsewhere;
        a watched folder that does not exist must not be created). With `max_rss_mib`, also that the command's peak
        resident memory stayed under it (run_lite_measured; a hostile input must not cost what it claims).
        Returns the CompletedProcess."""
        folders = [self.tmp, *(pathlib.Path(f) for f in watch)]
        before = [snapshot(f) for f in folders]
        if max_rss_mib is None:
            r = run_lite(sub, *args, stdin=stdin)
        else:
            r, peak_mib = run_lite_measured(sub, *args)
            self.assertLess(peak_mib, max_rss_mib, f"lite {sub} peaked at {peak_mib:.0f} MiB: {r.stderr}")
        self.assert_bad_input(r, *needles)
        self.assertTrue(r.stderr.startswith(f"lite {sub}: error: "),
                        f"expected 'lite {sub}: error: ...', got: {r.stderr!r}")
        for folder, was in zip(folders, before):
            self.assertEqual(snapshot(folder), was,
                             f"a failed command must not write under {folder} (also no temporaries)")
        return r

    def assert_same_artifact_twice(self, sub, *args, output, codes=(0,)):
        """Runs `lite SUB ARGS...` (which writes `output`) twice, the same command line both times, and checks the
        two artifacts are bit-identical (issue 14: same command + same seed = same bytes). On a difference it
        names the archive members that differ. Returns the artifact's bytes."""
        import zipfile
        runs = []
        for attempt in range(2):
            r = run_lite(sub, *args)
            self.assertIn(r.returncode, codes, f"run {attempt + 1}: {r.stderr}{r.stdout[-2000:]}")  # findings: stdout
            runs.append(pathlib.Path(output).read_bytes())
        if runs[0] != runs[1]:
            import io
            members = [{i.filename: z.read(i) for i in z.infolist()}
                       for z in (zipfile.ZipFile(io.BytesIO(b)) for b in runs)]
            differ = sorted(n for n in set(members[0]) | set(members[1]) if members[0].get(n) != members[1].get(n))
            self.fail(f"lite {sub}: the same command wrote different artifacts; members that differ: {differ}")
        return runs[0]

    def assert_verb_page_documents_every_flag(self, sub):
        """Every flag in `lite SUB --help` appears in backticks (`--flag` or `--flag ARG`) on the verb's reference
        page, docs/SUB.md (README links to it). Returns the page's text."""
        page = REPO / "docs" / f"{sub}.md"
        text = page.read_text()
        self.assertIn(f"# lite {sub}", text)
        r = run_lite(sub, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        # whole flags only: not the "--target" of a "--target-*" in the help text
        flags = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w*-])", r.stdout))
        flags = sorted(flags - {"--help", "-h"})
        # `--output` must not count as documented because `--output-format` is
        missing = [f for f in flags if not re.search(rf"`{re.escape(f)}(?![\w-])", text)]
        self.assertEqual(missing, [], f"flags in 'lite {sub} --help' but not in {page.relative_to(REPO)}")
        return text


def snapshot(folder):
    """Every path under `folder` with its size and modification time; None when the folder does not exist."""
    folder = pathlib.Path(folder)
    if not folder.exists():
        return None
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*"))


def _catches_sigint(pid, exe_name):
    """True once process `pid` runs `exe_name` and has a SIGINT handler (SigCgt bit 1 in /proc/PID/status)."""
    try:
        if exe_name and not os.readlink(f"/proc/{pid}/exe").endswith(exe_name):
            return False
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << 1))
    except OSError:
        pass
    return False


def interrupt_lite(*args, after_s=3.0, timeout=120, exe_name="lite-torch"):
    """Starts lite, sends SIGINT (Ctrl-C) `after_s` seconds after it has installed its handler (in `exe_name`,
    the process `lite` execs for model verbs: on a loaded machine start-up alone can take seconds), returns
    (exit code, stdout, stderr)."""
    import signal
    import time
    p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while not _catches_sigint(p.pid, exe_name) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(after_s)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    assert_no_torch_log(err, args)
    return p.returncode, out, err


def hardswish_net(activation):
    """Conv2d(3, 24) then `activation` (seeded, in eval mode): with torch.nn.Hardswish, PyTorch 1.13's
    optimize_for_inference computes other outputs than the model (relative error about 0.4); with torch.nn.ReLU it
    agrees. The model the frozen-float baseline's fallback is tested on in quantize, prune and lite run."""
    import torch  # here, not at the top: the other helpers need no torch
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 24, 3, padding=1), activation, nn.Conv2d(24, 8, 1), nn.Flatten(),
                         nn.Linear(8 * 8 * 8, 64)).eval()
