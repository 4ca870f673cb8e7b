"""Options as data: for every subcommand, --dump-config prints the effective options as JSON, feeding that file
back through --config reproduces them, flags given beside --config override the file, and a bad config file is
one error line naming the file and the key."""
import json
import os
import unittest

from litetest import DATA, LiteTestCase, run_lite

MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"

# Each subcommand with a command line that sets several options away from their defaults.
COMMAND_LINES = {
    "profile": [MODEL, "--input", "1x1x28x28", "--batch", "8", "--iterations", "50", "--ops", "--top", "5",
                "--eval", EVAL, "--qps", "100,200", "--requests", "20"],
    "quantize": [MODEL, "--mode", "static", "--calib", EVAL, "--batch", "1,32", "--tolerance", "0.5",
                 "--skip", "features.0", "--no-calib-json", "-o", "out.pt"],
    "prune": [MODEL, "--ratio", "0.3", "--ratio", "features.4=0.5", "--criterion", "l2", "--round-to", "8",
              "--exclude", "features.0", "--eval", EVAL, "--tolerance", "2", "--batch", "1,8", "-o", "p.pt"],
    "distill": ["--teacher", MODEL, "--student", "s.pt", "--data", EVAL, "--epochs", "2", "--lr", "0.002",
                "--temperature", "2", "--alpha", "0.5", "--optimizer", "sgd", "-o", "d.pt"],
    "cache-sim": [DATA / "inference_requests.csv", "--bytes", "--policy", "lru,s3fifo:small=0.2", "--sizes", "1%,10%",
                  "--hit-latency", "0.2", "--miss-latency-from", "a.json,b.json", "--target-p99", "5", "--mrc"],
}


def dump(sub, *args):
    r = run_lite(sub, *args, "--dump-config")
    if r.returncode != 0:
        raise AssertionError(f"lite {sub} --dump-config exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


class ConfigRoundTrip(LiteTestCase):
    def test_dump_config_fed_back_reproduces_the_options(self):
        for sub, args in COMMAND_LINES.items():
            with self.subTest(sub=sub):
                first = dump(sub, *args)
                path = self.tmp / f"{sub}.json"
                path.write_text(json.dumps(first))
                self.assertEqual(dump(sub, "--config", path), first)

    def test_flags_override_the_config_file(self):
        path = self.tmp / "q.json"
        path.write_text(json.dumps(dump("quantize", *COMMAND_LINES["quantize"])))
        both = dump("quantize", "--config", path, "--mode", "fp16", "--batch", "4")
        self.assertEqual(both["mode"], "fp16")
        self.assertEqual(both["batches"], [4])
        self.assertEqual(both["tolerance"], 0.5)  # from the file

    def test_dump_config_writes_nothing_and_runs_nothing(self):
        r = run_lite("quantize", MODEL, "-o", self.tmp / "x.pt", "--dump-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(list(self.tmp.iterdir()), [])

    def test_bad_config_files(self):
        unknown = self.tmp / "unknown.json"
        unknown.write_text(json.dumps({"models": [str(MODEL)], "iteratons": 3}))
        self.assert_rejected("profile", "--config", unknown,
                             needles=["unknown.json", "iteratons", "did you mean 'iterations'"])
        wrong_type = self.tmp / "type.json"
        wrong_type.write_text(json.dumps({"model": str(MODEL), "batches": "1,32"}))
        self.assert_rejected("quantize", "--config", wrong_type, needles=["type.json", "batches", "expected"])
        broken = self.tmp / "broken.json"
        broken.write_text("{not json")
        self.assert_rejected("quantize", "--config", broken, needles=["broken.json", "not valid JSON"])
        self.assert_rejected("quantize", "--config", self.tmp / "none.json", needles=["none.json", "cannot open"])



class HostileConfigFiles(LiteTestCase):
    """--config files that once crashed lite (nested 100k deep: a stack overflow), silently kept the last of a
    repeated key, exited 3 (a folder) or could hang it (a device, a FIFO): each is exit 2 with one line naming the
    file, and nothing written. Through cache-sim, which the torch-free `lite` runs itself."""
    TRACE = DATA / "inference_requests.csv"

    def assert_config_rejected(self, config, needles, timeout=None):
        plot = self.tmp / "plot.svg"
        args = ("cache-sim", self.TRACE, "--config", config, "--plot", plot)
        if timeout is None:
            self.assert_rejected(*args, needles=needles)
        else:  # a reader that waits on a FIFO or reads /dev/zero must fail the test, not hang it
            self.assert_bad_input(run_lite(*args, timeout=timeout), *needles)
        self.assertFalse(plot.exists())

    def test_a_config_nested_100k_deep_is_refused(self):
        deep = self.tmp / "deep.json"
        deep.write_text('{"sizes": "1%", "policies": ' + "[" * 100000 + "]" * 100000 + "}")
        self.assert_config_rejected(deep, ["deep.json", "deeper than 256 levels", "policies[0][0][0]"])
        just_deep_enough = self.tmp / "ok.json"
        just_deep_enough.write_text('{"sizes": "1%", "policies": ["lru"], "x": ' + "[" * 255 + "]" * 255 + "}")
        self.assert_config_rejected(just_deep_enough, ["ok.json", "unknown option 'x'"])  # read, then checked

    def test_a_key_given_twice_is_refused(self):
        twice = self.tmp / "twice.json"
        twice.write_text('{"sizes": "1%", "policies": ["lru"], "sizes": "10%"}')
        self.assert_config_rejected(twice, ["twice.json", "has the key 'sizes' twice in the top-level object"])
        long_key = "k" * 5000
        twice.write_text(json.dumps({long_key: 1})[:-1] + f', "{long_key}": 2}}')
        r = self.assert_rejected("cache-sim", self.TRACE, "--config", twice, needles=["k" * 40 + "...'"])
        self.assertLess(len(r.stderr), 400)

    def test_a_config_that_is_not_a_regular_file_is_refused(self):
        self.assert_config_rejected(self.tmp, [str(self.tmp), "is a folder, not a config file"])
        fifo = self.tmp / "fifo.json"
        os.mkfifo(fifo)
        self.assert_config_rejected(fifo, ["fifo.json", "is not a regular file"], timeout=60)
        for device in ("/dev/zero", "/dev/urandom"):
            with self.subTest(device=device):
                self.assert_config_rejected(device, [device, "is not a regular file"], timeout=60)


if __name__ == "__main__":
    unittest.main()
