"""Shared helpers for lite's end-to-end CLI tests (run by ctest with /usr/bin/python3).

Each test module drives the built `lite` binary as a user would and checks exit codes, stdout and
stderr, and files written. Artifacts are loaded back with Debian's torch where a test needs it.
"""
import json
import os
import pathlib
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


def run_lite(*args, stdin=None, timeout=900, env=None):
    """Runs lite with args; returns subprocess.CompletedProcess with text stdout/stderr."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([LITE, *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def run_lite_json(*args, **kwargs):
    """Runs lite with --json appended; asserts exit 0 and returns the parsed document."""
    r = run_lite(*args, "--json", **kwargs)
    if r.returncode != 0:
        raise AssertionError(f"lite {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


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
        """Exit 2, exactly one line on stderr that mentions every needle, nothing on stdout."""
        self.assertEqual(result.returncode, 2, f"expected exit 2, got {result.returncode}: {result.stderr}")
        lines = [l for l in result.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, f"expected a one-line error, got: {result.stderr!r}")
        for n in needles:
            self.assertIn(str(n), lines[0])
        self.assertEqual(result.stdout.strip(), "", "a failed command must not print a result")

    def assert_no_new_files(self, folder, before):
        after = sorted(p.name for p in pathlib.Path(folder).iterdir())
        self.assertEqual(after, before, "a failed command must not write files (also no temporaries)")


def interrupt_lite(*args, after_s=3.0, timeout=120):
    """Starts lite, sends SIGINT (Ctrl-C) after `after_s` seconds, returns (exit code, stdout, stderr)."""
    import signal
    import time
    p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err
