"""lite run RECIPE.json: every shipped recipe end to end (with small budgets), a gate that cannot pass (exit 1,
named, artifact still written with a failed provenance), invalid recipes (exit 2, the key path, nothing written),
Ctrl-C (exit 130, no final artifact), the CI example script, and min_speedup's float baseline falling back to
freezing alone (with a note) where optimize_for_inference miscomputes the model.

Timing gates (min_speedup, max_p99_ms, max_cache_p99_ms) depend on the machine: the tests check that they were
measured against their bound, never that they passed."""
import json
import os
import pathlib
import signal
import subprocess
import time
import unittest
import xml.etree.ElementTree as ElementTree

import torch

from litetest import DATA, LITE, REPO, LiteTestCase, hardswish_net, run_lite

RECIPES = REPO / "recipes"
FMNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")
TIMING_GATES = {"min_speedup", "max_p99_ms", "max_cache_p99_ms"}


def is_timing_gate(name):
    """A recipe gate on timing, or a step's own speed gate (slower, or timed on a busy machine)."""
    return name in TIMING_GATES or name.endswith(": speed")


def provenance(path):
    extra = {"lite.json": ""}
    module = torch.jit.load(str(path), _extra_files=extra)
    return module, json.loads(extra["lite.json"])


def small_variant(name, folder, steps=None, evaluate=None, gates=None):
    """The shipped recipe NAME with its paths made absolute (it is written to another folder) and smaller budgets:
    `steps` maps a step index to keys to override, `evaluate` and `gates` replace keys."""
    doc = json.loads((RECIPES / name).read_text())

    def absolute(p):
        return p if p.startswith("@") or os.path.isabs(p) else str((RECIPES / p).resolve())

    doc["model"] = absolute(doc["model"])
    doc["data"] = {k: absolute(v) for k, v in doc.get("data", {}).items()}
    for i, changes in (steps or {}).items():
        (verb, options), = doc["steps"][i].items()
        options.update(changes)
    doc.setdefault("evaluate", {}).update(evaluate or {})
    doc.setdefault("gates", {}).update(gates or {})
    path = pathlib.Path(folder) / name
    path.write_text(json.dumps(doc, indent=2))
    return path


def check_junit(test, path, result):
    """The --junit file against the run's own JSON result: the JUnit schema's required elements and attributes, one
    test case per gate (a step's own failed gate included) and per step whose own gates passed, a <failure> with
    the measured value and the bound for each failed gate, and counts that add up."""
    root = ElementTree.parse(path).getroot()
    test.assertEqual(root.tag, "testsuites")
    suites = root.findall("testsuite")
    test.assertEqual(len(suites), 1)
    suite = suites[0]
    for attribute in ("name", "tests", "failures", "errors", "time"):
        test.assertIn(attribute, suite.attrib)
    cases = suite.findall("testcase")
    passing_steps = [s["step"] for s in result["steps"] if s["gates"]["passed"]]
    test.assertEqual([c.get("name") for c in cases],
                     [g["gate"] for g in result["gates"]] + [f"{s}: own gates" for s in passing_steps])
    test.assertEqual(int(suite.get("tests")), len(cases))
    test.assertEqual(int(root.get("tests")), len(cases))
    failed = {g["gate"]: g for g in result["gates"] if not g["passed"]}
    test.assertEqual(int(suite.get("failures")), len(failed))
    for case in cases:
        test.assertIn("classname", case.attrib)
        failures = case.findall("failure")
        test.assertEqual(len(failures), 1 if case.get("name") in failed else 0, case.get("name"))
        if failures and failed[case.get("name")]["comparison"]:
            message = failures[0].get("message")
            test.assertIn("measured", message)
            test.assertIn(failed[case.get("name")]["comparison"], message)


class ShippedRecipes(LiteTestCase):
    def setUp(self):
        super().setUp()
        if not FMNIST.is_dir():
            self.skipTest(f"{FMNIST} is absent (Debian package dataset-fashion-mnist)")

    def run_recipe(self, recipe):
        out = self.tmp / "out" / "model.pt"
        out.parent.mkdir()
        md = self.tmp / "summary.md"
        junit = self.tmp / "gates.xml"
        r = run_lite("run", recipe, "-o", out, "--json", "--report-md", md, "--junit", junit, timeout=600)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        doc = json.loads(r.stdout)
        result = doc["result"]
        self.assertEqual(doc["command"], "run")
        self.assertEqual(doc["schema_version"], 1)
        for key in ("libtorch_version", "quantized_engine", "lite_version", "git_commit", "cpu_model", "logical_cores"):
            self.assertIn(key, doc["environment"])
        self.assertEqual(result["recipe"], json.loads(pathlib.Path(recipe).read_text()))
        failed = {g["gate"] for g in result["gates"] if not g["passed"]}
        self.assertEqual(failed, set(result["failed_gates"]))
        self.assertEqual(r.returncode, 1 if failed else 0)
        # A gate that is not about timing must pass on any machine; a timing gate must have been measured.
        self.assertEqual({g for g in failed if not is_timing_gate(g)}, set(), result["gates"])
        for g in result["gates"]:
            if ": " in g["gate"]:  # a step's own gate: its figures are in the step's report
                self.assertEqual(g["detail"], "the step's own gate (see its report)")
                continue
            self.assertIsNotNone(g["value"], g)
            self.assertIn(g["comparison"], ("<=", ">="))
        self.assertEqual([s["step"] for s in result["steps"]],
                         [f"steps[{i}].{next(iter(s))}" for i, s in enumerate(result["recipe"]["steps"])])
        summary = md.read_text()
        self.assertIn("lite run `", summary)
        for g in result["gates"]:
            self.assertIn(g["gate"], summary)
        check_junit(self, junit, result)
        return r, result, out

    def check_final_artifact(self, result, out):
        module, lite_json = provenance(out)
        self.assertEqual(lite_json["transform"], "run")
        details = lite_json["details"]
        self.assertEqual(details["status"], "passed" if result["passed"] else "failed")
        self.assertEqual(details["recipe"], result["recipe"])
        self.assertEqual([g["gate"] for g in details["gates"]], [g["gate"] for g in result["gates"]])
        # the run's own command line, as every verb's artifact records its own (RunContext, not an option)
        self.assertTrue(lite_json["command_line"].startswith("lite run "), lite_json["command_line"])
        x = torch.load(str(DATA / "fmnist_eval.pt"))["x"][:4]
        self.assertEqual(tuple(module(x).shape), (4, 10))
        return lite_json

    def test_emergency_int8(self):
        recipe = small_variant("emergency-int8.json", self.tmp,
                               steps={0: {"calib_samples": 128, "duration_s": 0.3}},
                               evaluate={"duration_s": 0.5, "warmup": 5})
        r, result, out = self.run_recipe(recipe)
        self.assertEqual({g["gate"] for g in result["gates"] if ": " not in g["gate"]},
                         {"max_accuracy_drop", "min_agreement", "min_speedup", "max_size"})
        lite_json = self.check_final_artifact(result, out)
        # the chain stays traceable: the quantize step's own provenance is kept under history
        self.assertIn("quantize", json.dumps(lite_json.get("history")))
        self.assertTrue((self.tmp / "out" / "model.work" / "step0-quantize.pt").is_file())
        self.assertTrue((self.tmp / "out" / "model.work" / "original.frozen.pt").is_file())

    def test_prune_recover_int8(self):
        recipe = small_variant("prune-recover-int8.json", self.tmp,
                               steps={0: {"duration_s": 0.2},
                                      1: {"samples": 2048, "epochs": 1, "latency_iterations": 5},
                                      2: {"calib_samples": 128, "duration_s": 0.3}},
                               evaluate={"duration_s": 0.5, "warmup": 5},
                               # a quarter of the training: the bounds of this variant are looser
                               gates={"max_accuracy_drop": 8.0, "min_agreement": 85.0})
        r, result, out = self.run_recipe(recipe)
        steps = result["steps"]
        self.assertEqual([s["verb"] for s in steps], ["prune", "distill", "quantize"])
        # each step read the previous step's artifact; distill's teacher is the original
        self.assertEqual(steps[1]["options"]["student"], steps[0]["artifact"])
        self.assertEqual(pathlib.Path(steps[1]["options"]["teacher"]), (REPO / "data" / "fmnist_cnn.pt").resolve())
        self.assertEqual(steps[2]["options"]["model"], steps[1]["artifact"])
        self.check_final_artifact(result, out)

    def test_cache_sizing(self):
        recipe = small_variant("cache-sizing.json", self.tmp,
                               steps={0: {"calib_samples": 128, "duration_s": 0.2},
                                      1: {"duration_s": 0.3}, 2: {"duration_s": 0.3}},
                               evaluate={"duration_s": 0.3, "warmup": 5})
        r, result, out = self.run_recipe(recipe)
        cache = result["steps"][3]
        self.assertEqual(cache["options"]["miss_latency_from"],
                         [result["steps"][1]["report_file"], result["steps"][2]["report_file"]])
        hit = next(g for g in result["gates"] if g["gate"] == "min_hit_ratio")
        self.assertTrue(0 < hit["value"] <= 1)
        self.assertIn("10%", hit["detail"])


class GatesAndErrors(LiteTestCase):
    def write(self, doc, name="r.json"):
        path = self.tmp / name
        path.write_text(json.dumps(doc))
        return path

    def dynamic_recipe(self, **gates):
        """A quick recipe: dynamic int8 (no calibration, so quick; slower than frozen float here, so allowed)."""
        return {"lite_recipe": 1, "name": "quick", "model": str(DATA / "fmnist_cnn.pt"),
                "data": {"eval": str(DATA / "fmnist_eval.pt")},
                "steps": [{"quantize": {"mode": "dynamic", "threads": 1, "batches": [1], "duration_s": 0.2,
                                        "eval": "@data.eval", "allow_slower": True}}],
                "evaluate": {"threads": 1, "duration_s": 0.2, "warmup": 3}, "gates": gates}

    def test_a_gate_that_cannot_pass_exits_1_names_it_and_still_writes_the_artifact(self):
        recipe = self.write(self.dynamic_recipe(max_size=1, max_accuracy_drop=100))
        out = self.tmp / "m.pt"
        work = self.tmp / "work"
        junit = self.tmp / "gates.xml"
        r = run_lite("run", recipe, "-o", out, "--work-dir", work, "--junit", junit, timeout=300)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(sorted(p.name for p in work.iterdir()),
                         ["original.frozen.pt", "step0-quantize.json", "step0-quantize.pt"])
        root = ElementTree.parse(junit).getroot()
        failures = root.findall("testsuite/testcase/failure")
        self.assertEqual(len(failures), 1)
        self.assertTrue(failures[0].get("message").startswith("max_size: measured "), failures[0].get("message"))
        self.assertIn("bound <= 1 B", failures[0].get("message"))
        self.assertEqual(root.get("failures"), "1")
        self.assertIn("max_size", r.stdout)
        self.assertIn("FAIL", r.stdout)
        self.assertIn("FAILED (max_size)", r.stdout)
        _, lite_json = provenance(out)
        self.assertEqual(lite_json["details"]["status"], "failed")
        self.assertEqual(lite_json["details"]["failed_gates"], ["max_size"])

    def test_invalid_recipes_exit_2_with_the_key_path_and_write_nothing(self):
        def recipe_with(change):
            doc = self.dynamic_recipe()
            change(doc)
            return doc

        cases = {
            "unknown step": (lambda d: d["steps"].append({"quantise": {}}), ["steps[1]", "did you mean 'quantize'"]),
            "unknown key": (lambda d: d["steps"][0]["quantize"].update(calib_metod="mse"),
                            ["steps[0].quantize.calib_metod", "did you mean 'calib_method'", "valid keys:"]),
            "wrong type": (lambda d: d["steps"][0]["quantize"].update(calib_samples="many"),
                           ["steps[0].quantize.calib_samples", "expected an integer"]),
            "bad value": (lambda d: d["steps"][0]["quantize"].update(threads=-1), ["steps[0].quantize.threads"]),
            "missing model": (lambda d: d.pop("model"), ["r.json: model", "is required"]),
            "missing model file": (lambda d: d.update(model="nope.pt"), ["nope.pt", "no such model file"]),
            "missing step file": (lambda d: d["steps"][0]["quantize"].update(calib="calib.pt"),
                                  ["calib.pt", "no such file"]),
            "later artifact": (lambda d: d["steps"][0]["quantize"].update(model="@steps[1]"),
                               ["steps[0].quantize.model", "has not run yet"]),
            "profile writes no model": (lambda d: d["steps"].insert(0, {"profile": {}}) or
                                        d["steps"][1]["quantize"].update(model="@steps[0]"),
                                        ["steps[1].quantize.model", "writes none"]),
            "unknown gate": (lambda d: d["gates"].update(min_speedp=2), ["gates.min_speedp", "did you mean 'min_speedup'"]),
            "evaluate option": (lambda d: d["evaluate"].update(duration_s=-1), ["evaluate.duration_s"]),
            "input shape string": (lambda d: d["evaluate"].update(inputs=["1x0x28"]),
                                   ["evaluate.inputs", "'1x0x28'", "1x3x224x224"]),
        }
        for name, (change, needles) in cases.items():
            with self.subTest(name):
                recipe = self.write(recipe_with(change))
                self.assert_rejected("run", recipe, "-o", self.tmp / "out.pt", needles=needles)

    def test_invalid_json_and_missing_recipe(self):
        bad = self.tmp / "bad.json"
        bad.write_text("{\"lite_recipe\": 1,")
        self.assert_rejected("run", bad, needles=["bad.json", "not valid JSON"])
        self.assert_rejected("run", self.tmp / "none.json", needles=["none.json"])

    def test_hostile_recipes_exit_2_with_one_line(self):
        """A recipe nested 100k deep once overflowed the stack; a repeated key silently kept the last value; a
        device or FIFO given as the recipe must be refused, not read forever."""
        text = json.dumps(self.dynamic_recipe())
        deep = self.tmp / "deep.json"
        deep.write_text(text[:-1] + ', "notes": ' + "[" * 100000 + "]" * 100000 + "}")
        self.assert_rejected("run", deep, "-o", self.tmp / "out.pt", needles=["deep.json", "deeper than 256 levels"])
        twice = self.tmp / "twice.json"
        twice.write_text(text.replace('"mode": "dynamic"', '"mode": "static", "mode": "dynamic"'))
        self.assert_rejected("run", twice, "-o", self.tmp / "out.pt",
                             needles=["twice.json", "'mode' twice in steps[0].quantize"])
        self.assert_rejected("run", self.tmp, needles=["is a folder"])
        fifo = self.tmp / "fifo.json"
        os.mkfifo(fifo)
        for recipe in (fifo, "/dev/zero"):
            with self.subTest(recipe=recipe):
                self.assert_bad_input(run_lite("run", recipe, timeout=60), recipe, "is not a regular file")

    def test_output_may_not_be_an_input(self):
        recipe = self.write(self.dynamic_recipe())
        self.assert_rejected("run", recipe, "-o", DATA / "fmnist_cnn.pt", needles=["-o"], watch=[DATA])

    def test_bad_junit_paths_are_refused_before_any_work(self):
        recipe = self.write(self.dynamic_recipe())
        out = self.tmp / "m.pt"
        cases = [("the recipe itself", recipe, ["--junit"]),
                 ("the model", DATA / "fmnist_cnn.pt", ["--junit"]),
                 ("the artifact", out, ["--junit"]),
                 ("a folder", self.tmp, ["--junit"]),
                 ("a missing folder", self.tmp / "nowhere" / "gates.xml", ["--junit", "nowhere"])]
        for name, path, needles in cases:
            with self.subTest(case=name):
                self.assert_rejected("run", recipe, "-o", out, "--junit", path, needles=needles, watch=[DATA])
                self.assertFalse(out.exists())

    def test_ctrl_c_exits_130_and_writes_no_final_artifact(self):
        doc = self.dynamic_recipe()
        doc["evaluate"]["duration_s"] = 30  # long enough to be interrupted in the evaluation
        recipe = self.write(doc)
        out = self.tmp / "m.pt"
        p = subprocess.Popen([LITE, "run", str(recipe), "-o", str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while not (self.tmp / "m.work" / "original.frozen.pt").exists() and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, err)
        self.assertFalse(out.exists())
        self.assertEqual([f for f in self.tmp.iterdir() if f.name.startswith("m.pt")], [])

    def test_ctrl_c_late_in_a_quantize_step_exits_130(self):
        # issue 38: a SIGINT as the quantize step writes its artifact used to run on to a full report and exit 1
        out, work = self.tmp / "late.pt", self.tmp / "late.work"
        p = subprocess.Popen([LITE, "run", str(RECIPES / "emergency-int8.json"), "-o", str(out), "--work-dir",
                              str(work), "--allow-noisy"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 300
        while not (work / "step0-quantize.pt").exists() and p.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        self.assertIsNone(p.poll(), "the run ended before its quantize step wrote an artifact")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted", err)
        self.assertFalse(out.exists())

    def test_options_as_data_dump_config_and_config(self):
        # --dump-config prints the options (the recipe among them) and runs nothing; fed back with --config it gives
        # the same options, a flag on the command line overrides the file, and an unknown key is refused by name.
        recipe = RECIPES / "emergency-int8.json"
        r = run_lite("run", recipe, "-o", self.tmp / "x.pt", "--dump-config")
        self.assertEqual(r.returncode, 0, r.stderr)
        dumped = json.loads(r.stdout)
        self.assertEqual(dumped["recipe"], str(recipe))
        self.assertEqual(dumped["output"], str(self.tmp / "x.pt"))
        self.assertEqual(set(dumped), {"recipe", "output", "work_dir", "report_md", "junit", "allow_noisy"})
        self.assertEqual(list(self.tmp.iterdir()), [])
        config = self.tmp / "run.json"
        config.write_text(json.dumps(dumped))
        again = run_lite("run", "--config", config, "--allow-noisy", "--dump-config")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(json.loads(again.stdout), dict(dumped, allow_noisy=True))
        config.write_text(json.dumps(dict(dumped, recipes="typo.json")))
        self.assert_rejected("run", "--config", config, needles=["recipes", "recipe"])
        self.assert_rejected("run", needles=["RECIPE", "is required"])

    def test_verb_page_documents_every_flag(self):
        text = self.assert_verb_page_documents_every_flag("run")
        for recipe in ("emergency-int8.json", "prune-recover-int8.json", "cache-sizing.json"):
            self.assertIn(recipe, (RECIPES / "README.md").read_text())
        self.assertIn("recipes/README.md", text)


class CiExample(LiteTestCase):
    def test_ci_script_publishes_the_summary_and_fails_on_a_gate(self):
        doc = GatesAndErrors.dynamic_recipe(None, max_accuracy_drop=100)
        summary = self.tmp / "step_summary.md"
        summary.write_text("earlier steps\n")
        env = dict(os.environ, LITE=LITE, GITHUB_STEP_SUMMARY=str(summary), LITE_GATE_OUT=str(self.tmp / "gate"))
        script = REPO / "scripts" / "ci" / "lite-gate.sh"
        passing = self.tmp / "pass.json"
        passing.write_text(json.dumps(doc))
        r = subprocess.run([str(script), str(passing)], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        text = summary.read_text()
        self.assertTrue(text.startswith("earlier steps\n"))  # appended, not replaced
        self.assertIn("PASSED", text)
        doc["gates"]["max_size"] = 1
        failing = self.tmp / "fail.json"
        failing.write_text(json.dumps(doc))
        r = subprocess.run([str(script), str(failing)], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAILED", summary.read_text())
        self.assertIn("max_size", r.stderr)
        junit = ElementTree.parse(self.tmp / "gate" / "fail.junit.xml").getroot()
        self.assertEqual([c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None],
                         ["max_size"])


class SpeedupBaseline(LiteTestCase):
    NOTE = ("min_speedup: the frozen float baseline is torch::jit::freeze alone: torch::jit::optimize_for_inference "
            "changed this model's outputs")

    def run_with(self, activation):
        """A one-step prune recipe gated on min_speedup for Conv2d(3, 24) + `activation`: with nn.Hardswish,
        PyTorch 1.13's optimize_for_inference computes other outputs than the model (litetest.hardswish_net)."""
        model = self.tmp / "net.pt"
        torch.jit.script(hardswish_net(activation)).save(str(model))
        recipe = self.tmp / "recipe.json"
        recipe.write_text(json.dumps({
            "lite_recipe": 1, "name": "baseline", "model": str(model),
            "steps": [{"prune": {"ratio": 0.25, "inputs": ["1x3x8x8"], "batches": [1], "iterations": 3, "warmup": 1,
                                 "agreement_floor": 100}}],  # a random net: the speedup baseline is the point
            "evaluate": {"inputs": [{"shape": [1, 3, 8, 8]}], "batch": 1, "iterations": 5, "warmup": 1},
            "gates": {"min_speedup": 0.01}}))
        r = run_lite("run", recipe, "-o", self.tmp / "out.pt", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["result"]["notes"]

    def test_a_miscompiled_baseline_falls_back_to_freezing_alone_and_says_so(self):
        notes = self.run_with(torch.nn.Hardswish())
        self.assertTrue(any(n.startswith(self.NOTE) for n in notes), notes)

    def test_an_agreeing_baseline_keeps_optimize_for_inference(self):
        notes = self.run_with(torch.nn.ReLU())
        self.assertFalse(any(n.startswith(self.NOTE) for n in notes), notes)


if __name__ == "__main__":
    unittest.main()
