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

    def assert_rejected(self, sub, *args, needles=(), stdin=None, watch=()):
        """Runs `lite SUB ARGS...` and checks the project's bad-input rule: exit 2, exactly one line on stderr,
        `lite SUB: error: ...`, mentioning every needle, nothing on stdout, and nothing written: no file added,
        removed or changed anywhere under self.tmp or under the folders in `watch` (an output folder elsewhere;
        a watched folder that does not exist must not be created). Returns the CompletedProcess."""
        folders = [self.tmp, *(pathlib.Path(f) for f in watch)]
        before = [snapshot(f) for f in folders]
        r = run_lite(sub, *args, stdin=stdin)
        self.assert_bad_input(r, *needles)
        self.assertTrue(r.stderr.startswith(f"lite {sub}: error: "),
                        f"expected 'lite {sub}: error: ...', got: {r.stderr!r}")
        for folder, was in zip(folders, before):
            self.assertEqual(snapshot(folder), was,
                             f"a failed command must not write under {folder} (also no temporaries)")
        return r

    def assert_readme_documents_every_flag(self, sub, section=None):
        """Every flag in `lite SUB --help` appears in backticks (`--flag` or `--flag ARG`) in README's `## lite SUB`
        section. Returns the section's text."""
        readme = (REPO / "README.md").read_text()
        heading = section or f"## lite {sub}"
        self.assertIn(heading, readme)
        text = readme.split(heading, 1)[1].split("\n## ", 1)[0]
        r = run_lite(sub, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        # whole flags only: not the "--target" of a "--target-*" in the help text
        flags = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w*-])", r.stdout))
        flags = sorted(flags - {"--help", "-h"})
        # `--output` must not count as documented because `--output-format` is
        missing = [f for f in flags if not re.search(rf"`{re.escape(f)}(?![\w-])", text)]
        self.assertEqual(missing, [], f"flags in 'lite {sub} --help' but not in README's '{heading}' section")
        return text


def snapshot(folder):
    """Every path under `folder` with its size and modification time; None when the folder does not exist."""
    folder = pathlib.Path(folder)
    if not folder.exists():
        return None
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*"))


def interrupt_lite(*args, after_s=3.0, timeout=120):
    """Starts lite, sends SIGINT (Ctrl-C) after `after_s` seconds, returns (exit code, stdout, stderr)."""
    import signal
    import time
    p = subprocess.Popen([LITE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=timeout)
    assert_no_torch_log(err, args)
    return p.returncode, out, err
