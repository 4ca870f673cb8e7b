"""The CLI's own surface: help, version, unknown subcommands, planned subcommands."""
import json
import pathlib
import re
import unittest


from litetest import DATA, LITE, LiteTestCase, interrupt_lite, run_lite


class CliBasics(LiteTestCase):
    def test_help_lists_every_verb_and_each_runs_its_own_help(self):
        """`lite --help` lists the verb list (lib/lite/verbs/verbs.cpp) in order, and `lite VERB --help` answers
        for each: its setup is registered in the executable that runs it (apps/lite/cmd_<verb>.cpp)."""
        r = run_lite("--help", env={"COLUMNS": "100"})
        self.assertEqual(r.returncode, 0)
        names = verb_names()
        self.assertEqual(names, ["profile", "quantize", "prune", "distill", "optimize", "cache-sim", "run"], r.stdout)
        for name in names:
            with self.subTest(verb=name):
                h = run_lite(name, "--help")
                self.assertEqual(h.returncode, 0, h.stderr)
                self.assertIn(f"lite {name}", h.stdout)
                self.assertEqual(h.stderr, "")

    def test_help_lists_one_line_per_subcommand(self):
        r = run_lite("--help", env={"COLUMNS": "100"})
        self.assertEqual(r.returncode, 0)
        lines = [l for l in r.stdout.splitlines() if l.strip().startswith("cache-sim")]
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertIn("recommend a size", lines[0])
        # the subcommand's own paragraph belongs to 'lite cache-sim --help', not to the overview
        self.assertNotIn("exact LRU curve, smallest size", r.stdout)
        self.assertIn("exact LRU curve, smallest size", " ".join(run_lite("cache-sim", "--help").stdout.split()))

    def test_torch_free_work_never_loads_libtorch(self):
        """`lite` itself does not link libtorch (cache-sim and --help start like a small program; --version asks
        lite-torch for libtorch's facts); the verbs that load models run in lite-torch beside it."""
        import subprocess
        linked = subprocess.run(["ldd", LITE], capture_output=True, text=True).stdout
        self.assertNotIn("libtorch", linked)
        helper = pathlib.Path(LITE).parent / "lite-torch"
        self.assertIn("libtorch", subprocess.run(["ldd", helper], capture_output=True, text=True).stdout)
        r = run_lite("profile", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--iterations", r.stdout)

    def test_version_names_lite_libtorch_and_build_type(self):
        r = run_lite("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"lite \d+\.\d+\.\d+")
        self.assertRegex(r.stdout, r"libtorch: 1\.13")
        self.assertRegex(r.stdout, r"(Release|Debug|RelWithDebInfo|MinSizeRel) build")

    def test_unknown_subcommand_suggests_the_closest(self):
        r = run_lite("quantise", "model.pt")
        self.assert_bad_input(r, "quantise", "did you mean 'quantize'", "run 'lite --help'")
        self.assertTrue(r.stderr.startswith("lite: error: quantise: "), r.stderr)

    def test_no_subcommand_is_a_usage_error(self):
        r = run_lite()
        self.assert_bad_input(r, "subcommand", "run 'lite --help'")
        self.assertTrue(r.stderr.startswith("lite: error: "), r.stderr)

    def test_parse_errors_have_the_documented_form(self):
        """CLI11's own errors (unknown flag, extra positional, a flag without its value, a non-number, an
        'excludes' pair) get the same one-line `lite SUB: error: ...` form as every other bad input."""
        trace = self.tmp / "t.txt"
        trace.write_text("1\n2\n")
        cases = [
            ("cache-sim", [trace, "extra.txt"], ["extra.txt"]),
            ("cache-sim", [trace, "--bogus"], ["--bogus"]),
            ("cache-sim", [trace, "--threads", "many"], ["--threads", "many"]),
            ("cache-sim", [trace, "--sizes"], ["--sizes"]),
            ("quantize", [DATA / "fmnist_cnn.pt", "--bogus"], ["--bogus"]),
            ("profile", [DATA / "fmnist_cnn.pt", "--iterations", "5", "--duration", "1"],
             ["--iterations: cannot be combined with --duration"]),
        ]
        for sub, args, needles in cases:
            with self.subTest(sub=sub, args=args):
                self.assert_rejected(sub, *args, needles=[*needles, f"run 'lite {sub} --help'"], watch=[DATA])


    def test_an_unknown_flag_suggests_the_flag_meant(self):
        trace = self.tmp / "t.txt"
        trace.write_text("1\n2\n")
        cases = [("quantize", [DATA / "fmnist_cnn.pt", "--calibration", "x.pt"], "--calibration", "--calib"),
                 ("profile", [DATA / "fmnist_cnn.pt", "--input-files", "x.pt"], "--input-files", "--input-file"),
                 ("profile", [DATA / "fmnist_cnn.pt", "--iteratons", "3"], "--iteratons", "--iterations"),
                 ("cache-sim", [trace, "--thread", "2"], "--thread", "--threads"),
                 ("cache-sim", [trace, "--polcy", "lru"], "--polcy", "--policy")]
        for sub, args, given, meant in cases:
            with self.subTest(given):
                self.assert_rejected(sub, *args, needles=[f"{given}: not a flag of 'lite {sub}' (did you mean {meant}?)"],
                                     watch=[DATA])
        r = run_lite("cache-sim", trace, "--zzzzzz")  # nothing close: no guess
        self.assert_bad_input(r, "--zzzzzz: not a flag")
        self.assertNotIn("did you mean", r.stderr)

    def test_values_with_control_characters_are_printed_escaped(self):
        """A newline (or another control character) inside an argument shows as an escape in the one error line,
        not as a line break that cuts the message or a byte that moves the terminal's cursor."""
        trace = self.tmp / "t.txt"
        trace.write_text("1\n2\n")
        cases = [
            ("cache-sim", [self.tmp / "no\nsuch.csv"], ["no\\nsuch.csv", "cannot open"]),
            ("cache-sim", [trace, "--policy", "lru\nfifo"], ["unknown policy 'lru\\nfifo'"]),
            ("cache-sim", [trace, "--sizes", "10\tx"], ["'10\\tx'"]),
            ("cache-sim", [trace, "--threads", "1\n2"], ["--threads", "'1\\n2'"]),
            ("cache-sim", [trace, "--bogus\x1b[2J"], ["--bogus\\x1b[2J"]),
            ("quantize", [DATA / "fmnist_cnn.pt", "--mode", "static\nX"], ["'static\\nX'"]),
        ]
        for sub, args, needles in cases:
            with self.subTest(sub=sub, args=args):
                self.assert_rejected(sub, *args, needles=needles, watch=[DATA])

    def test_error_line_rule_rejects_what_it_should(self):
        """The form check every bad-input test runs (litetest.error_line_problems) can fail."""
        from litetest import error_line_problems
        self.assertIsNone(error_line_problems("lite cache-sim: error: --sizes: '0' is not positive; give 1 or more\n"))
        self.assertIsNone(error_line_problems("lite cache-sim: error: /tmp/t.csv:3: field 'size': bad; fix it\n"))
        for bad in ["lite profile: error: --top: must be at least 1, got 0\n",  # no fix
                    "lite quantize: error: unknown engine 'x' known: a, b\n",  # no flag or file
                    "lite cache-sim: error: /tmp/a\nb: no such file; check the path\n",  # cut by a newline
                    "lite cache-sim: error: --policy: unknown policy 'a\x1bb'; known: lru\n"]:  # raw escape byte
            self.assertIsNotNone(error_line_problems(bad), bad)



OPENBLAS_OPENMP = pathlib.Path("/usr/lib/x86_64-linux-gnu/openblas-openmp")
OPENBLAS_PTHREAD = pathlib.Path("/usr/lib/x86_64-linux-gnu/openblas-pthread")


class OpenBlasBuild(LiteTestCase):
    """lite points lite-torch at OpenBLAS's OpenMP build (apps/lite/blas_environment.hpp); a user's own
    LD_LIBRARY_PATH naming an OpenBLAS folder wins, and profile then says what the pthread build costs."""

    def test_version_names_the_openmp_build(self):
        self.assertTrue((OPENBLAS_OPENMP / "libblas.so.3").exists(), "scripts/setup.sh installs libopenblas0-openmp")
        r = run_lite("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"BLAS: {OPENBLAS_OPENMP}/", r.stdout)

    def test_the_users_library_path_wins_and_profile_warns_of_the_pthread_build(self):
        self.assertTrue((OPENBLAS_PTHREAD / "libblas.so.3").exists(), "scripts/setup.sh installs libopenblas0-pthread")
        env = {"LD_LIBRARY_PATH": str(OPENBLAS_PTHREAD)}
        r = run_lite("--version", env=env)
        self.assertIn(f"BLAS: {OPENBLAS_PTHREAD}/", r.stdout)
        model = DATA / "fmnist_cnn.pt"
        args = ["profile", model, "--warmup", "2", "--iterations", "5", "--json"]
        doc = json.loads(run_lite(*args, "--threads", "2", env=env).stdout)
        pthread_findings = [f for f in doc["findings"] if "pthread build" in f["what"]]
        self.assertEqual(len(pthread_findings), 1, doc["findings"])
        self.assertIn("libopenblas0-openmp", pthread_findings[0]["advice"])
        one_thread = json.loads(run_lite(*args, "--threads", "1", env=env).stdout)
        self.assertFalse([f for f in one_thread["findings"] if "pthread build" in f["what"]])
        default_build = json.loads(run_lite(*args, "--threads", "2").stdout)
        self.assertFalse([f for f in default_build["findings"] if "pthread build" in f["what"]])

def verb_names():
    """The verbs `lite --help` lists, in order (CLI11 heads the table "Subcommands:")."""
    listed = run_lite("--help", env={"COLUMNS": "100"}).stdout.split("ubcommands:", 1)[-1].splitlines()
    return [line.split()[0] for line in listed if re.match(r"  \S", line)]  # not a wrapped summary's next line


def flag_descriptions(help_text):
    """{flag: its description, wrapped lines joined} of a `lite VERB --help` (apps/lite/help_format.cpp's layout: the
    flag at column 2, its description to the right or on the lines below, indented)."""
    described, flag = {}, None
    for line in help_text.splitlines():
        m = re.match(r"  (-[\w-]*(?:,--[\w-]+)?)(.*)", line)
        if m:
            flag = m.group(1).split(",")[-1]
            described[flag] = m.group(2)
        elif flag and line.startswith("    "):
            described[flag] += " " + line.strip()
        else:
            flag = None
    return {f: re.sub(r"\s+", " ", d).strip() for f, d in described.items()}


def shown_defaults(help_text):
    """{flag: the value of its "(default VALUE)"}, for the flags whose default is a plain value."""
    found = {}
    for flag, desc in flag_descriptions(help_text).items():
        m = re.search(r"\(default ([^\s)]+)\)", desc)
        if m:
            found[flag] = m.group(1)
    return found


def same_value(shown, value):
    """Whether a default as --help shows it ("1,64", "0.001", "auto") is the JSON value of --dump-config."""
    values = value if isinstance(value, list) else [value]
    parts = shown.split(",") if isinstance(value, list) else [shown]
    if len(parts) != len(values):
        return False
    for part, v in zip(parts, values):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            try:
                if float(part) != float(v):
                    return False
            except ValueError:
                return False
        elif str(v) != part:
            return False
    return True


class HelpText(LiteTestCase):
    """`lite VERB --help` fits a terminal and shows the defaults the code holds (apps/lite/help_format.cpp)."""

    MAX_LINES = 72  # at 100 columns; the longest help (cache-sim) is 69 lines: details belong in docs/VERB.md

    def test_help_lines_fit_the_terminal_width_and_stay_short(self):
        for columns in (100, 80):
            for verb in [None, *verb_names()]:
                with self.subTest(verb=verb, columns=columns):
                    r = run_lite(*([verb] if verb else []), "--help", env={"COLUMNS": str(columns)})
                    self.assertEqual(r.returncode, 0, r.stderr)
                    lines = r.stdout.splitlines()
                    too_wide = [line for line in lines if len(line) > columns]
                    self.assertEqual(too_wide, [], f"lines over {columns} columns")
                    if columns == 100:
                        self.assertLessEqual(len(lines), self.MAX_LINES, r.stdout)
                    self.assertNotIn("\n\n\n", r.stdout)

    def test_help_is_wrapped_to_100_columns_when_not_a_terminal(self):
        """Without $COLUMNS and with stdout a pipe, the width is 100: wrapped, not one line per flag."""
        r = run_lite("cache-sim", "--help", env={"COLUMNS": ""})
        widths = [len(line) for line in r.stdout.splitlines()]
        self.assertLessEqual(max(widths), 100, r.stdout)
        self.assertGreater(max(widths), 90, "the text should use the width it has")

    def test_shown_defaults_are_the_options_structs_defaults(self):
        """Every "(default VALUE)" in --help is the value --dump-config prints for the flag's key (the options
        struct's default), so help cannot drift from the code; and the flags named here show theirs at all."""
        expected = {"quantize": {"--calib-samples": "256", "--batch": "1,64", "--mode": "auto", "--calib-method": "mse",
                                 "--agreement-floor": "5", "--warmup": "5", "--eval-batch": "64"},
                    "prune": {"--criterion": "l1", "--batch": "1,32", "--sensitivity-ratios": "0.1,0.3,0.5",
                              "--global-floor": "0.1", "--data-samples": "256"},
                    "profile": {"--warmup": "20", "--duration": "2", "--top": "15", "--op-iterations": "20"},
                    "distill": {"--epochs": "3", "--lr": "0.001", "--optimizer": "adam", "--eval-batch": "256",
                                "--teacher-cache-mb": "1024", "--timeout": "300"},
                    "cache-sim": {"--virtual-nodes": "160", "--route": "ketama", "--sizes": "auto",
                                  "--max-node-load": "1.5"}}
        # a flag's key is its name with '_' for '-', else the key the verb binds it to (name_flag in apps/lite)
        renamed = {"--batch": "batches", "--duration": "duration_s", "--timeout": "timeout_s",
                   "--hit-latency": "hit_latency_ms", "--criterion": "prune_criterion"}
        for verb, flags in expected.items():
            with self.subTest(verb=verb):
                shown = shown_defaults(run_lite(verb, "--help", env={"COLUMNS": "100"}).stdout)
                for flag, value in flags.items():
                    self.assertEqual(shown.get(flag), value, f"lite {verb} --help: {flag}")
                dumped = run_lite(verb, "--dump-config")
                self.assertEqual(dumped.returncode, 0, dumped.stderr)
                config = json.loads(dumped.stdout)
                checked = 0
                for flag, value in shown.items():
                    key = next((k for k in (flag[2:].replace("-", "_"), renamed.get(flag)) if k in config), None)
                    if key is not None:
                        checked += 1
                        self.assertTrue(same_value(value, config[key]),
                                        f"lite {verb} --help shows {flag} (default {value}), the options hold "
                                        f"{key} = {config[key]!r}")
                self.assertGreaterEqual(checked, len(flags), shown)

    def test_no_benchmark_figures_in_help(self):
        """Speedups measured on one machine belong in docs/quantize.md (with the machine named), not in --help."""
        r = run_lite("quantize", "--help", env={"COLUMNS": "100"})
        self.assertNotRegex(r.stdout, r"\d\.\d+x|EPYC|Zen")


class CtrlC(LiteTestCase):
    """SIGINT during long work: exit 130, one line saying so, no result printed, no file left behind."""

    def test_profile_interrupted(self):
        rc, out, err = interrupt_lite("profile", DATA / "fmnist_cnn.pt", "--duration", "60")
        self.assertEqual(rc, 130, err)
        self.assertIn("interrupted", err)
        self.assertEqual(out.strip(), "")

    def test_quantize_interrupted_writes_nothing(self):
        out_path = self.tmp / "model.int8.pt"
        rc, out, err = interrupt_lite("quantize", DATA / "fmnist_cnn.pt", "--mode", "static", "--calib",
                                      DATA / "fmnist_eval.pt", "--duration", "30", "-o", out_path, after_s=6)
        self.assertEqual(rc, 130, err)
        self.assertIn("interrupted", err)
        self.assertEqual(list(self.tmp.iterdir()), [], "an interrupted quantize must leave no file")


if __name__ == "__main__":
    unittest.main()
