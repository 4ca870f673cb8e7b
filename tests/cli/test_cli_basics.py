"""The CLI's own surface: help, version, unknown subcommands, planned subcommands."""
import pathlib
import unittest


from litetest import DATA, LITE, LiteTestCase, interrupt_lite, run_lite


class CliBasics(LiteTestCase):
    def test_help_lists_every_verb_and_each_runs_its_own_help(self):
        """`lite --help` lists the verb list (lib/lite/recipe/verbs.cpp) in order, and `lite VERB --help` answers
        for each: its setup is registered in the executable that runs it (apps/lite/setups_*.cpp)."""
        r = run_lite("--help")
        self.assertEqual(r.returncode, 0)
        listed = r.stdout.split("ubcommands:", 1)[-1].splitlines()  # CLI11 heads the table "Subcommands:"
        names = [line.split()[0] for line in listed if line.startswith("  ") and line.split()]
        self.assertEqual(names, ["profile", "quantize", "prune", "distill", "optimize", "cache-sim", "run"], r.stdout)
        for name in names:
            with self.subTest(verb=name):
                h = run_lite(name, "--help")
                self.assertEqual(h.returncode, 0, h.stderr)
                self.assertIn(f"lite {name}", h.stdout)
                self.assertEqual(h.stderr, "")

    def test_help_lists_one_line_per_subcommand(self):
        r = run_lite("--help")
        self.assertEqual(r.returncode, 0)
        lines = [l for l in r.stdout.splitlines() if l.strip().startswith("cache-sim")]
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertIn("recommend a size", lines[0])
        # the subcommand's own paragraph belongs to 'lite cache-sim --help', not to the overview
        self.assertNotIn("byte miss ratio and request latency", r.stdout)
        self.assertIn("byte miss ratio and request latency", run_lite("cache-sim", "--help").stdout)

    def test_torch_free_work_never_loads_libtorch(self):
        """`lite` itself does not link libtorch (cache-sim, --help, --version start like a small program);
        the verbs that load models run in lite-torch beside it."""
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
        self.assertRegex(r.stdout, r"libtorch 1\.13")
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
