#!/usr/bin/python3
"""Self-check of the decoder fixtures (issue 36; not a ctest): for each shape x form x export at size tiny, one
seed, the saved file loads in stock PyTorch, carries max_positions, its prefill and decode-step logits equal the
eager model's, PyTorch's greedy loop (scripts/fixtures/decoder_reference.py) gives the same tokens for all six
files of a shape, and the KV bytes per token measured from the returned cache equal layers x kv_heads x head_dim
x 2 x 4. A batch of two rows is checked too. Exit 1 with the failures listed. Run: /usr/bin/python3 this file.
"""
import pathlib
import sys
import tempfile
import time

import torch

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "fixtures"
sys.path.insert(0, str(FIXTURES))
import decoder_model as dm  # noqa: E402
import decoder_reference as ref  # noqa: E402
import make_decoder  # noqa: E402

SEED, PROMPT, GENERATE = 11, 12, 8
FORMS, EXPORTS = list(dm.FORMS), ["script", "trace"]


def empty_prefill(module, form, ids):
    if form == "stateless":
        return module(ids), None
    return module.prefill(ids) if hasattr(module, "prefill") else module(ids, [])


def logits_diff(module, form, core, ids):
    """Largest logit difference from the eager model: prefill of the batch, then a 1-token step."""
    want, keys, values = core(ids, [], [])
    got, cache = empty_prefill(module, form, ids)
    worst = (got - want).abs().max().item()
    if form != "stateless":
        step = ids[:, :1]
        worst = max(worst, (module(step, cache)[0] - core(step, keys, values)[0]).abs().max().item())
    return worst


def check_file(shape, form, export, core, cfg, workdir, failures):
    module, _ = make_decoder.export(core, cfg, form, export, SEED)
    path = workdir / f"{shape}-{form}-{export}.pt"
    module.save(str(path))
    loaded = torch.jit.load(str(path)).eval()
    name = path.stem
    if ref.form_of(loaded) != form:
        failures.append(f"{name}: read as {ref.form_of(loaded)}")
    if getattr(loaded, "max_positions", None) != cfg.positions:
        failures.append(f"{name}: max_positions {getattr(loaded, 'max_positions', None)}")
    gen = torch.Generator().manual_seed(SEED)
    batch = torch.randint(0, cfg.vocab, (2, PROMPT), generator=gen)
    diff = logits_diff(loaded, form, core, batch)
    if diff > 1e-4:
        failures.append(f"{name}: logits differ from eager by {diff:g}")
    tokens, _, _, cache = ref.generate(loaded, form, batch[:1], GENERATE)
    kv = ref.kv_figures(cache, {}, PROMPT + GENERATE - 1)
    if cache is not None and (kv["kv_bytes_per_token"] != cfg.kv_bytes_per_token()
                              or kv["cache_context"] != [PROMPT + GENERATE - 1]):
        failures.append(f"{name}: KV {kv} against formula {cfg.kv_bytes_per_token()}")
    print(f"{name:24} tokens {tokens} kv {kv['kv_bytes_per_token']} formula {cfg.kv_bytes_per_token()} "
          f"max logit diff {diff:.1e}")
    return tokens


def main():
    started = time.perf_counter()
    torch.set_num_threads(1)
    failures = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        for shape in ["gpt2", "llama"]:
            cfg = dm.preset(shape, "tiny")
            core = dm.build(cfg, SEED)
            seen = {(form, export): check_file(shape, form, export, core, cfg, pathlib.Path(tmp), failures)
                    for form in FORMS for export in EXPORTS}
            if len({tuple(t) for t in seen.values()}) != 1:
                failures.append(f"{shape}: greedy tokens differ between forms/exports: {seen}")
    print(f"{len(FORMS) * len(EXPORTS) * 2} fixtures checked in {time.perf_counter() - started:.1f} s")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
