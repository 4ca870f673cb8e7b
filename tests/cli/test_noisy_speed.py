"""Speed claims say when they cannot be trusted (issue 24, item 9): on an oversubscribed machine quantize's speed
gate and lite run's min_speedup / max_p99_ms fail with the load named, unless --allow-noisy; prune and profile mark
their speedups untrusted with a finding; a quiet machine gets no such note.

The load is simulated: LITE_TEST_LOAD=N stands for N runnable threads of other processes (lib/lite/profile/
machine_load.hpp), so these tests neither load the CPU nor depend on what else runs. litetest sets it to 0 for
every other test; here LOADED is more runnable threads than any machine has cores, and every command times with
one intra-op thread, so QUIET (0) always fits."""
import json
import os
from unittest import mock

from litetest import DATA, LiteTestCase, lite_json_result, run_lite

MODEL = DATA / "fmnist_cnn.pt"
EVAL = DATA / "fmnist_eval.pt"
LOADED = {"LITE_TEST_LOAD": "100000"}
QUIET = {"LITE_TEST_LOAD": "0"}
ONE_THREAD_FAST = ("--threads", "1", "--batch", "1", "--iterations", "5", "--warmup", "2")
UNTRUSTED = "(untrusted: the machine was oversubscribed"  # "; implausible: ..." may follow on a busy machine
LOAD_WORDS = "1 intra-op thread + 100000 runnable threads of other processes >"


def load_findings(doc):
    return [f for f in doc["findings"] if "oversubscribed machine" in f["what"]]


class Quantize(LiteTestCase):
    def quantize(self, env, *extra):
        out = self.tmp / "q.pt"
        # dynamic needs no calibration; it may be slower than frozen float here, which --allow-slower accepts, so
        # the speed gate can fail only for the load.
        args = ("quantize", MODEL, "--mode", "dynamic", "--eval", EVAL, "-o", out, "--allow-slower",
                *ONE_THREAD_FAST, *extra)
        code, doc, err = lite_json_result(*args, env=env)
        text = run_lite(*args, env=env)
        return code, doc, err, text

    def test_oversubscribed_fails_the_speed_gate_naming_the_load(self):
        code, doc, err, text = self.quantize(LOADED)
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["result"]["gates"]["failed"], ["speed"])
        found = load_findings(doc)
        self.assertEqual(len(found), 1, doc["findings"])
        self.assertEqual(found[0]["severity"], "warning")
        self.assertIn(LOAD_WORDS, found[0]["what"])
        self.assertIn("LITE_TEST_LOAD", found[0]["what"])
        self.assertIn("speed gate fails", found[0]["what"])
        load = doc["result"]["machine_load"]
        self.assertTrue(load["oversubscribed"])
        self.assertEqual(load["other_runnable_threads"], 100000)
        self.assertEqual(load["intra_op_threads"], 1)
        self.assertEqual(text.returncode, 1, text.stderr)
        self.assertIn(UNTRUSTED, text.stdout)
        self.assertIn("--allow-noisy", text.stdout)  # the finding names the flag that accepts the timing

    def test_allow_noisy_passes_the_speed_gate_and_keeps_the_note(self):
        code, doc, err, text = self.quantize(LOADED, "--allow-noisy")
        self.assertEqual(code, 0, err)
        self.assertTrue(doc["result"]["gates"]["passed"])
        self.assertTrue(doc["result"]["allow_noisy"])
        found = load_findings(doc)
        self.assertEqual(len(found), 1, doc["findings"])
        self.assertEqual(found[0]["severity"], "info")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(UNTRUSTED, text.stdout)

    def test_a_quiet_machine_gets_no_note(self):
        code, doc, err, text = self.quantize(QUIET)
        self.assertEqual(code, 0, err)
        self.assertEqual(load_findings(doc), [])
        self.assertFalse(doc["result"]["machine_load"]["oversubscribed"])
        self.assertEqual(doc["result"]["machine_load"]["source"], "LITE_TEST_LOAD")
        self.assertNotIn("untrusted", text.stdout)

    def test_allow_noisy_is_an_option_key(self):
        r = run_lite("quantize", MODEL, "--allow-noisy", "--dump-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIs(json.loads(r.stdout)["allow_noisy"], True)

    def test_a_bad_simulated_load_is_refused_naming_the_variable(self):
        with mock.patch.dict(os.environ, {"LITE_TEST_LOAD": "lots"}):
            self.assert_rejected("quantize", MODEL, "--mode", "dynamic", "-o", self.tmp / "q.pt", *ONE_THREAD_FAST,
                                 needles=("LITE_TEST_LOAD", "whole number"))


class Prune(LiteTestCase):
    def prune(self, env):
        out = self.tmp / "p.pt"
        args = ("prune", MODEL, "--ratio", "0.5", "--eval", EVAL, "-o", out, "--agreement-floor", "100",
                *ONE_THREAD_FAST)
        code, doc, err = lite_json_result(*args, env=env)
        self.assertEqual(code, 0, err)  # prune has no speed gate: the load is reported, not judged
        text = run_lite(*args, env=env)
        self.assertEqual(text.returncode, 0, text.stderr)
        return doc, text.stdout

    def test_oversubscribed_latency_is_marked_untrusted_with_a_finding(self):
        doc, text = self.prune(LOADED)
        found = load_findings(doc)
        self.assertEqual(len(found), 1, doc["findings"])
        self.assertIn("latency comparison", found[0]["what"])
        self.assertIn(LOAD_WORDS, found[0]["what"])
        self.assertTrue(doc["result"]["machine_load"]["oversubscribed"])
        self.assertIn(UNTRUSTED, text)

    def test_a_quiet_machine_gets_no_note(self):
        doc, text = self.prune(QUIET)
        self.assertEqual(load_findings(doc), [])
        self.assertNotIn("untrusted", text)


class ProfileCompare(LiteTestCase):
    def compare(self, env):
        args = ("profile", MODEL, MODEL, "--threads", "1", "--iterations", "5", "--warmup", "2")
        code, doc, err = lite_json_result(*args, env=env)
        self.assertEqual(code, 0, err)
        text = run_lite(*args, env=env)
        self.assertEqual(text.returncode, 0, text.stderr)
        return doc, text.stdout

    def test_oversubscribed_speedup_is_untrusted(self):
        doc, text = self.compare(LOADED)
        self.assertEqual(len(load_findings(doc)), 1, doc["findings"])
        self.assertFalse(doc["result"]["comparison"]["speedup_trusted"])
        self.assertIn(UNTRUSTED, text)

    def test_a_quiet_machine_gets_no_note(self):
        doc, text = self.compare(QUIET)
        self.assertEqual(load_findings(doc), [])
        self.assertTrue(doc["result"]["comparison"]["speedup_trusted"])
        self.assertNotIn("untrusted", text)


class Run(LiteTestCase):
    def recipe(self):
        """Dynamic int8 (quick), gates that any quiet machine passes: only the load can fail them."""
        doc = {"lite_recipe": 1, "name": "noisy", "model": str(MODEL), "data": {"eval": str(EVAL)},
               "steps": [{"quantize": {"mode": "dynamic", "threads": 1, "batches": [1], "iterations": 5, "warmup": 2,
                                       "eval": "@data.eval", "allow_slower": True}}],
               "evaluate": {"threads": 1, "iterations": 20, "warmup": 2},
               "gates": {"min_speedup": 0.001, "max_p99_ms": 100000}}
        path = self.tmp / "r.json"
        path.write_text(json.dumps(doc))
        return path

    def run_recipe(self, env, *extra):
        code, doc, err = lite_json_result("run", self.recipe(), "-o", self.tmp / "m.pt", *extra, env=env,
                                          timeout=600)
        gates = {g["gate"]: g for g in doc["result"]["gates"]} if doc else {}
        return code, doc, err, gates

    def test_oversubscribed_fails_the_speed_gates_with_the_reason(self):
        code, doc, err, gates = self.run_recipe(LOADED)
        self.assertEqual(code, 1, err)
        self.assertEqual(set(doc["result"]["failed_gates"]),
                         {"min_speedup", "max_p99_ms", "steps[0].quantize: speed"})
        for name in ("min_speedup", "max_p99_ms"):
            self.assertFalse(gates[name]["passed"])
            self.assertIsNotNone(gates[name]["value"])
            self.assertIn("untrusted: timed on an oversubscribed machine", gates[name]["detail"])
        found = load_findings(doc)
        self.assertEqual(len(found), 1, doc["findings"])
        self.assertIn(LOAD_WORDS, found[0]["what"])

    def test_allow_noisy_passes_them_and_reaches_the_quantize_step(self):
        code, doc, err, gates = self.run_recipe(LOADED, "--allow-noisy")
        self.assertEqual(code, 0, err)
        for name in ("min_speedup", "max_p99_ms"):
            self.assertTrue(gates[name]["passed"])
            self.assertIn("accepted with", gates[name]["detail"])
        self.assertIs(doc["result"]["steps"][0]["options"]["allow_noisy"], True)
        self.assertEqual(load_findings(doc)[0]["severity"], "info")

    def test_a_quiet_machine_gets_no_note(self):
        code, doc, err, gates = self.run_recipe(QUIET)
        self.assertEqual(code, 0, err)
        self.assertEqual(load_findings(doc), [])
        for g in gates.values():
            self.assertNotIn("untrusted", g["detail"])
