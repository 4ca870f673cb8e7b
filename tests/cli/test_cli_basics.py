"""The CLI's own surface: help, version, unknown subcommands, planned subcommands."""
import unittest

from litetest import DATA, LiteTestCase, interrupt_lite, run_lite


class CliBasics(LiteTestCase):
    def test_help_lists_all_five_subcommands(self):
        r = run_lite("--help")
        self.assertEqual(r.returncode, 0)
        for name in ["profile", "quantize", "prune", "distill", "cache-sim"]:
            self.assertIn(name, r.stdout)

    def test_version_names_lite_libtorch_and_build_type(self):
        r = run_lite("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"lite \d+\.\d+\.\d+")
        self.assertRegex(r.stdout, r"libtorch 1\.13")
        self.assertIn("Release", r.stdout)

    def test_unknown_subcommand_suggests_the_closest(self):
        r = run_lite("quantise", "model.pt")
        self.assert_bad_input(r, "quantise", "did you mean 'quantize'", "run 'lite --help'")
        self.assertTrue(r.stderr.startswith("lite: error: quantise: "), r.stderr)

    def test_planned_subcommands_say_so_and_exit_2(self):
        for name in ["distill"]:  # prune is built (issue 9)
            with self.subTest(name=name):
                self.assert_rejected(name, "model.pt", needles=[f"lite {name}", "not part of this build"])

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
             ["--duration", "excludes", "--iterations"]),
        ]
        for sub, args, needles in cases:
            with self.subTest(sub=sub, args=args):
                self.assert_rejected(sub, *args, needles=[*needles, f"run 'lite {sub} --help'"], watch=[DATA])


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
