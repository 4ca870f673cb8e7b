"""Part 3 of scripts/bench/llm (issue 36): int8 weights that speed up decoding, and what they cost in perplexity.

a. Decode speed at batch 1 on the GPT-2-small shape (random weights): lite's int8 artifact (`lite quantize --mode
   MODE`, default dynamic: int8 Linear weights, quantized::linear_dynamic) against frozen float (torch.jit.freeze of
   the same file) and against PyTorch's torch.ao.quantization.quantize_dynamic (engine onednn) applied to the eager
   model with the file's weights, then scripted and saved. All three are TorchScript files timed by one loop,
   scripts/fixtures/decoder_reference.py (PyTorch's greedy loop in Python), same threads, same prompt, the tools
   alternating ROUNDS times, each keeping its best median (a shared machine's noise only ever adds time), on the
   OpenBLAS build lite loads (scripts/bench/llm runs under machine.same_blas_env). Goals: lite int8 >= 1.5x frozen
   float's decode tokens/s, and >= PyTorch's int8.
b. Perplexity on held-out text of a small decoder trained on Debian's fortunes text (make_decoder.py --train-text,
   cached under build/bench/llm/): float, lite int8 (same mode) and PyTorch's quantize_dynamic, all computed by
   decoder_reference.py --perplexity through the saved files. Goal: lite int8 within 1% of float.
"""
import collections
import json
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "scripts" / "fixtures"
PY = "/usr/bin/python3"
TRAIN_TEXT = pathlib.Path("/usr/share/games/fortunes")


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return r.stdout


def eager_from_file(model):
    """The eager KVList module (decoder_model.py) holding the weights of a make_decoder.py TorchScript file,
    checked against the file's logits."""
    import torch
    sys.path.insert(0, str(FIXTURES))
    import decoder_model as dm
    meta = json.loads(model.with_suffix(".json").read_text())
    cfg = dm.Config(meta["shape"], meta["layers"], meta["width"], meta["heads"], meta["kv_heads"], meta["vocab"],
                    meta["max_positions"], meta["ffn"], meta["tied_head"])
    scripted = torch.jit.load(str(model)).eval()
    core = dm.Decoder(cfg)
    core.load_state_dict({k[len("core."):]: v for k, v in scripted.state_dict().items() if k.startswith("core.")})
    eager = dm.KVList(core.eval(), cfg.positions).eval()
    ids = torch.randint(0, cfg.vocab, (1, 9), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        diff = (eager(ids, [])[0] - scripted(ids, [])[0]).abs().max().item()
    if diff > 1e-4:
        sys.exit(f"llm: the eager copy of {model} differs from the file (max logit difference {diff:g})")
    return eager


def pytorch_int8(model, out):
    """PyTorch's own dynamic int8 (every nn.Linear, lm head included; embeddings stay float), scripted and saved."""
    import torch
    torch.backends.quantized.engine = "onednn"
    q = torch.ao.quantization.quantize_dynamic(eager_from_file(model), {torch.nn.Linear}, dtype=torch.qint8)
    torch.jit.script(q).save(str(out))
    return out


def frozen_float(model, out):
    """torch.jit.freeze of the same file (optimize_for_inference's MKLDNN constants cannot be saved)."""
    import torch
    frozen = torch.jit.freeze(torch.jit.load(str(model)).eval())
    frozen._c._register_attribute("max_positions", torch._C.IntType.get(), torch.jit.load(str(model)).max_positions)
    frozen.save(str(out))
    return out


def lite_int8(lite, model, out, args, eval_tokens=None, positions=None):
    """`positions`: the model's max_positions, which the timing run's prompt and generation must fit."""
    prompt, generate = args.prompt_tokens, args.generate
    if positions is not None:
        prompt = min(prompt, positions // 2)
        generate = min(generate, positions - prompt + 1)
    cmd = [lite, "quantize", model, "--mode", args.int8_mode, "-o", out, "--qengine", "onednn", "--threads",
           args.threads, "--prompt-tokens", prompt, "--generate", generate, "--iterations", 3,
           "--warmup", 2, "--allow-slower", "--allow-noisy", "--json"]
    if eval_tokens:
        cmd += ["--eval", eval_tokens]
    # Exit 1 is a failed gate (the artifact is written; e.g. agreement on random weights): timed all the same.
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode not in (0, 1) or not pathlib.Path(out).exists():
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    doc = json.loads(r.stdout)["result"]
    if r.returncode == 1:
        print(f"note: lite quantize {model.name} exited 1, failed gates: {doc['gates']['failed']}", flush=True)
    return doc


def linear_ops(path):
    """The saved file's linear layers as its inlined forward graph calls them: int8 (quantized::linear*) or float
    (aten::linear, aten::matmul with a weight), and how its embedding tables are read."""
    import torch
    kinds = collections.Counter()

    def walk(block):
        for node in block.nodes():
            for sub in node.blocks():
                walk(sub)
            kinds[node.kind()] += 1
    walk(torch.jit.load(str(path)).forward.inlined_graph)
    int8 = sum(n for k, n in kinds.items() if k.startswith("quantized::linear") and "pack" not in k)
    return (f"{int8} quantized::linear* call sites (if-branches counted apart), {kinds['aten::linear']} float "
            f"aten::linear, "
            f"{kinds['aten::embedding']} float aten::embedding, "
            f"{sum(n for k, n in kinds.items() if 'embedding' in k and k != 'aten::embedding')} other embedding ops")


def reference(model, args, *extra):
    return json.loads(run([PY, FIXTURES / "decoder_reference.py", model, "--threads", args.threads, "--qengine",
                           "onednn", *extra]))


def time_tools(files, prompt, args):
    """Best (lowest) median over rounds of TTFT and TPOT p50, the tools alternating; and each tool's tokens."""
    best = {name: [float("inf"), float("inf")] for name in files}
    tokens = {}
    for _ in range(args.rounds):
        for name, path in files.items():
            d = reference(path, args, "--prompt-file", prompt, "--generate", args.generate, "--repeat", args.runs + 1)
            best[name] = [min(best[name][0], d["prefill_ms"]), min(best[name][1], d["decode_ms_p50"])]
            tokens[name] = d["tokens"]
    return best, tokens


def print_speed(best, tokens, files, lite_doc, args):
    print(f"\n3a. Decode at batch 1: {args.shape} {args.size}, prompt {args.prompt_tokens} tokens, {args.generate} "
          f"generated, {args.threads} threads, onednn, best of {args.rounds} rounds of {args.runs} steady "
          f"generations, all timed by decoder_reference.py (PyTorch's greedy loop in Python)")
    print(f"{'':34}{'TTFT p50 ms':>12}{'TPOT p50 ms':>12}{'decode tok/s':>13}{'file MB':>9}{'same tokens':>13}")
    for name, (ttft, tpot) in best.items():
        same = sum(a == b for a, b in zip(tokens[name], tokens["frozen float"]))
        print(f"{name:34}{ttft:12.1f}{tpot:12.2f}{1000 / tpot:13.2f}{files[name].stat().st_size / 1e6:9.1f}"
              f"{f'{same}/{len(tokens[name])}':>13}")
    lite, frozen, torch_q = (best[n][1] for n in (f"lite int8 ({args.int8_mode})", "frozen float",
                                                  "PyTorch quantize_dynamic"))
    print(f"lite int8 / frozen float, decode tokens/s: {frozen / lite:.2f}x (goal >= 1.5x: "
          f"{'met' if frozen / lite >= 1.5 else 'NOT met'})")
    print(f"lite int8 / PyTorch's int8, decode tokens/s: {torch_q / lite:.2f}x (goal >= 1.0: "
          f"{'met' if torch_q / lite >= 1.0 else 'NOT met'})")
    d = lite_doc["decoder"]
    (cand,) = [c for c in d["candidates"] if c["mode"] == args.int8_mode]
    print(f"lite quantize's own timing (lite's loop, {args.threads} threads): frozen float "
          f"{d['frozen_float']['tpot_p50_ms']:.2f} ms/token, {args.int8_mode} {cand['tpot_p50_ms']:.2f} ms/token "
          f"({cand['decode_speedup']:.2f}x)")
    for name, path in files.items():
        print(f"   {name}: {linear_ops(path)}")


def decode_speed(lite, model, prompt, folder, args):
    files = {f"lite int8 ({args.int8_mode})": folder / "lite_int8.pt", "frozen float": folder / "frozen.pt",
             "PyTorch quantize_dynamic": folder / "pytorch_int8.pt"}
    names = list(files)
    lite_doc = lite_int8(lite, model, files[names[0]], args)
    frozen_float(model, files[names[1]])
    pytorch_int8(model, files[names[2]])
    for path in files.values():  # the fixture's config beside each file, as decoder_reference reads it
        path.with_suffix(".json").write_text(model.with_suffix(".json").read_text())
    best, tokens = time_tools(files, prompt, args)
    print_speed(best, tokens, files, lite_doc, args)


def text_packages(files):
    """Debian packages that own the training text's files (dpkg -S), with how many files each."""
    owners = collections.Counter()
    for f in files:
        r = subprocess.run(["dpkg", "-S", f], capture_output=True, text=True)
        owners[r.stdout.split(":", 1)[0] if r.returncode == 0 else "no package"] += 1
    return ", ".join(f"{pkg} ({n} files)" for pkg, n in owners.most_common())


def trained_decoder(args):
    folder = REPO / "build" / "bench" / "llm"
    model = folder / f"fortunes-gpt2-{args.train_size}-{args.train_steps}-seed0.pt"
    if not model.exists() or not model.with_suffix(".json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"training the {args.train_size} decoder on {TRAIN_TEXT} ({args.train_steps} steps; cached as "
              f"{model.relative_to(REPO)})", flush=True)
        run([PY, FIXTURES / "make_decoder.py", "--shape", "gpt2", "--size", args.train_size, "--form", "kv-list",
             "--export", "script", "--seed", 0, "--threads", args.threads, "--train-text", TRAIN_TEXT, "--steps",
             args.train_steps, "--out", model])
    return model, json.loads(model.with_suffix(".json").read_text())


def perplexity_part(lite, folder, args):
    model, meta = trained_decoder(args)
    training = meta["training"]
    heldout = model.with_suffix(".heldout.pt")
    files = {"float": model, f"lite int8 ({args.int8_mode})": folder / "trained_lite_int8.pt",
             "PyTorch quantize_dynamic": folder / "trained_pytorch_int8.pt"}
    lite_int8(lite, model, files[f"lite int8 ({args.int8_mode})"], args, heldout, meta["max_positions"])
    pytorch_int8(model, files["PyTorch quantize_dynamic"])
    print(f"\n3b. Perplexity: a {meta['layers']}-layer, width-{meta['width']} byte-level decoder "
          f"({meta['parameters']:,} parameters) trained {training['steps']} steps on {TRAIN_TEXT} "
          f"({training['train_bytes']:,} bytes; Debian packages {text_packages(training['text'])}); held-out: the "
          f"last 10% of every file, {training['heldout_rows'][0]} rows of {training['heldout_rows'][1]} bytes")
    ppl = {name: reference(path, args, "--perplexity", heldout, "--prompt-tokens", 4, "--generate", 2)["perplexity"]
           for name, path in files.items()}
    for name, value in ppl.items():
        change = 100 * (value / ppl["float"] - 1)
        print(f"   {name:30} perplexity {value:8.4f}  change {change:+7.3f}%")
    change = 100 * abs(ppl[f"lite int8 ({args.int8_mode})"] / ppl["float"] - 1)
    print(f"   lite int8 within 1% of float: {'met' if change <= 1 else 'NOT met'} ({change:.3f}%); "
          f"lite's file: {linear_ops(files[f'lite int8 ({args.int8_mode})'])}")
