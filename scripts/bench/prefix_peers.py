"""The peers' own code driven by a Mooncake trace, for scripts/bench/prefix_cache section 5 ("Against the peer's
own code"): SGLang's RadixCache (python/sglang/srt/mem_cache/radix_cache.py) replayed as `lite cache-sim TRACE
--engine sglang` replays it, so the two counts can be compared.

Nothing of SGLang is kept in lite's repository. `--sglang-src DIR` (or $LITE_SGLANG_SRC) names a checkout, a bare
mirror (read with `git show HEAD:PATH`) or any directory holding the files at their repository paths; at run time
two files are copied out of it into a temporary package and imported unchanged:

  python/sglang/srt/mem_cache/radix_cache.py   RadixKey, TreeNode, RadixCache: match, split, insert, lock, evict
  python/sglang/srt/mem_cache/evict_policy.py  LRUStrategy (the priority evict() sorts leaves by)

Every other module radix_cache.py imports is replaced by a stand-in written here, because it pulls in GPU or
server machinery or is needed only by features this replay leaves off:
  sglang.srt.mem_cache.base_prefix_cache  the real one imports the allocator, memory pools, the metrics collector
                                          and the runtime context; the stand-in holds only the parameter and
                                          result records radix_cache.py names (MatchPrefixParams, InsertParams,
                                          EvictParams, MatchResult, InsertResult, EvictResult) and an empty base
  sglang.srt.mem_cache.cache_init_params  CacheInitParams with the fields RadixCache.__init__ reads
  sglang.srt.mem_cache.utils              convert_to_bigram_key (EAGLE only; off)
  sglang.srt.mem_cache.hicache_storage    get_hash_str, hash_str_to_int64 (KV events only; off)
  sglang.srt.disaggregation.kv_events     the KV event records (KV events off)
The allocator and req_to_token pool are plain objects (free() counts, rows are aranges), and `time` inside
radix_cache.py is a counter: lite's engine stamps by operation (one admission, one finish), and so does this
driver, so last_access_time orders the same events in both.

Mapping the trace: one radix-tree token per 512-token block, keyed by its hash id (page_size 1), so SGLang's own
_key_match_page_size1, _split_node and leaf eviction run on block runs; a token count is blocks x 512 (the last
block partial). Output tokens fill blocks with fresh keys no prompt matches, as in lite. The event loop is lite's
(replay_engine.cpp): FCFS admission at arrival, a request waits while its blocks do not fit beside the locked
ones, runs output_length x 20 ms, then finishes. Per request, in order:
  admit:  match_prefix(prompt) -> the hit; inc_lock_ref(last node); evict(the shortfall) when the prompt's new
          blocks plus its output room exceed the pool; cache_unfinished_req(req) (SGLang's own: insert the prompt,
          re-match, move the lock to the prompt's last node);
  finish: cache_finished_req(req) (SGLang's own: insert prompt + output, dec_lock_ref).
"""
import collections
import heapq
import pathlib
import subprocess
import sys
import tempfile
import time

SGLANG_FILES = ["python/sglang/srt/mem_cache/radix_cache.py", "python/sglang/srt/mem_cache/evict_policy.py"]
HOW_TO_GET = ("SGLang's source is not given: pass --sglang-src DIR (or set LITE_SGLANG_SRC) to a checkout of "
              "github.com/sgl-project/sglang (git clone --depth 1 https://github.com/sgl-project/sglang), or a "
              "directory holding " + " and ".join(SGLANG_FILES))

STAND_INS = {
    "sglang/srt/mem_cache/base_prefix_cache.py": '''
import dataclasses
from typing import Any, NamedTuple, Optional
import torch

@dataclasses.dataclass
class MatchPrefixParams:
    key: Any
    cow_mamba: bool = False
    req: Any = None

@dataclasses.dataclass
class InsertParams:
    key: Any = None
    value: Optional[torch.Tensor] = None
    chunked: bool = False
    priority: int = 0

@dataclasses.dataclass
class InsertResult:
    prefix_len: int

@dataclasses.dataclass
class EvictParams:
    num_tokens: int = 0

@dataclasses.dataclass
class EvictResult:
    num_tokens_evicted: int = 0

class MatchResult(NamedTuple):
    device_indices: torch.Tensor
    last_device_node: Any
    last_host_node: Any

class BasePrefixCache:
    def update_eviction_metrics(self, num_evicted, start_time):
        pass
''',
    "sglang/srt/mem_cache/cache_init_params.py": '''
import dataclasses
from typing import Any

@dataclasses.dataclass
class CacheInitParams:
    disable: bool
    req_to_token_pool: Any
    token_to_kv_pool_allocator: Any
    page_size: int
    is_eagle: bool = False
    eviction_policy: str = "lru"
    disable_finished_insert: bool = False
    enable_metrics: bool = False
    enable_kv_cache_events: bool = False
''',
    "sglang/srt/mem_cache/utils.py": "def convert_to_bigram_key(ids):\n    raise NotImplementedError\n",
    "sglang/srt/mem_cache/hicache_storage.py":
        "def get_hash_str(*a, **k):\n    raise NotImplementedError\n\n"
        "def hash_str_to_int64(*a, **k):\n    raise NotImplementedError\n",
    "sglang/srt/disaggregation/kv_events.py":
        "MEDIUM_GPU = 'GPU'\nAllBlocksCleared = BlockRemoved = BlockStored = None\n",
}


def source_text(src, path):
    """A file of the peer's source: from a bare mirror or .git with `git show HEAD:path`, else from the tree."""
    src = pathlib.Path(src)
    if (src / path).is_file():
        return (src / path).read_text()
    git_dir = src / ".git" if (src / ".git").exists() else src
    r = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{src}: no {path} in it (git show: {r.stderr.strip()}); pass a checkout of SGLang")
    return r.stdout


def source_commit(src):
    src = pathlib.Path(src)
    git_dir = src / ".git" if (src / ".git").exists() else src
    r = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.strip()
    note = src / "PEER_SOURCE.txt"  # a directory of files copied from known commits says which
    return note.read_text().strip() if note.is_file() else "unknown (not a git directory)"


def load_sglang(src):
    """Imports SGLang's radix_cache module from `src` with the stand-ins above; returns the module."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lite_sglang_"))
    for path in SGLANG_FILES:
        dest = tmp / path.removeprefix("python/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(source_text(src, path))
    for path, text in STAND_INS.items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text)
    for d in (tmp / "sglang", tmp / "sglang/srt", tmp / "sglang/srt/mem_cache", tmp / "sglang/srt/disaggregation"):
        (d / "__init__.py").touch()
    sys.path.insert(0, str(tmp))
    import sglang.srt.mem_cache.radix_cache as rc  # noqa: E402  (the peer's file, unchanged)
    return rc


class Clock:
    """radix_cache.py's `time`: monotonic() is the driver's operation count, as lite's engine stamps."""
    now = 0.0

    def monotonic(self):
        return self.now

    def perf_counter(self):
        return time.perf_counter()


class Allocator:
    device = "cpu"

    def __init__(self):
        self.freed = 0

    def free(self, indices):
        self.freed += len(indices)


class Rows:
    """req_to_token_pool: a request's row of KV slot ids (any distinct values do; only lengths are read)."""

    def __init__(self, torch):
        self.torch = torch
        self.req_to_token = self

    def __getitem__(self, index):
        _, cols = index
        return self.torch.arange(cols.stop)

    def write(self, *args):
        pass


class Req:
    """The fields of schedule_batch.Req that cache_unfinished_req and cache_finished_req read."""

    def __init__(self, prompt, output, last_node, hit):
        self.origin_input_ids = self.fill_ids = prompt
        self.output_ids = output
        self.req_pool_idx = 0
        self.extra_key = None
        self.priority = 0
        self.last_node = last_node
        self.cache_protected_len = hit
        self.prefix_indices = None

    def pop_committed_kv_cache(self):
        return len(self.origin_input_ids) + len(self.output_ids)


def read_requests(path):
    import json
    with open(path) as f:
        return [(r["timestamp"], r["input_length"], r["output_length"], r["hash_ids"]) for r in map(json.loads, f)]


def generated_blocks(n_in, n_out, n_blocks, block_tokens):
    kv = n_in + (n_out - 1 if n_out else 0)  # the last sampled token's KV is never computed
    return -(-kv // block_tokens) - n_blocks


def sglang_replay(rc, requests, capacity, block_tokens=512, decode_ms=20.0):
    """The trace through SGLang's RadixCache in lite's event loop; returns lite's counts."""
    import torch
    clock, alloc = Clock(), Allocator()
    rc.time = clock
    tree = rc.RadixCache(rc.CacheInitParams(disable=False, req_to_token_pool=Rows(torch),
                                            token_to_kv_pool_allocator=alloc, page_size=1))
    P = sys.modules["sglang.srt.mem_cache.base_prefix_cache"]
    out = collections.Counter()
    running, held, fresh = [], 0, 1 << 62  # (finish_ms, request, Req); output room; output block keys
    ops = 0
    last_admission = float("-inf")

    def finish_until(t):
        nonlocal held, ops
        while running and running[0][0] <= t:
            _, r, req = heapq.heappop(running)
            ops += 1
            clock.now = ops
            held -= len(req.output_ids)
            tree.cache_finished_req(req)

    def path_unlocked(node):
        n = 0
        while node is not tree.root_node:
            n += len(node.key) if node.lock_ref == 0 else 0
            node = node.parent
        return n

    for r, (arrival, n_in, n_out, ids) in enumerate(requests):
        now = max(arrival, last_admission)
        finish_until(now)
        gen = generated_blocks(n_in, n_out, len(ids), block_tokens)
        if len(ids) + gen > capacity:
            out["too_large"] += 1
            continue
        while True:
            clock.now = ops + 0.5  # the match precedes the admission, which may not happen (lite: clock_ + 0.5)
            m = tree.match_prefix(P.MatchPrefixParams(key=rc.RadixKey(ids)))
            k, node = len(m.device_indices), m.last_device_node
            new = len(ids) - k + gen
            if tree.protected_size() + held + path_unlocked(node) + new <= capacity:
                break
            if not running:
                raise SystemExit(f"request {r} fits no empty pool")
            now = max(now, running[0][0])
            finish_until(now)
        ops += 1
        clock.now = ops
        last_admission = now
        if now > arrival:
            out["waited"] += 1
        hit = min(k * block_tokens, n_in, max(n_in - 1, 0))
        out["hit_tokens"] += hit
        out["hit_blocks"] += -(-hit // block_tokens)
        tree.inc_lock_ref(node)
        short = tree.protected_size() + tree.evictable_size() + held + new - capacity
        if short > 0:
            out["evicted_blocks"] += tree.evict(P.EvictParams(num_tokens=short)).num_tokens_evicted
        req = Req(list(ids), list(range(fresh, fresh + gen)), node, k)
        fresh += gen
        tree.cache_unfinished_req(req)
        held += gen
        heapq.heappush(running, (now + n_out * decode_ms, r, req))
    finish_until(float("inf"))
    out["cached_blocks"] = tree.evictable_size() + tree.protected_size()
    return out


def compare_sglang(lite_run, trace, src, capacities):
    """Section 5's SGLang table: lite's engine against the peer's RadixCache, counts and end-to-end seconds."""
    if not src:
        print("\n## Against SGLang's own RadixCache\n" + HOW_TO_GET)
        return True
    rc = load_sglang(src)
    print(f"\n## Against SGLang's own RadixCache ({src}: {source_commit(src).splitlines()[0]})")
    print("equal: hit tokens, hit blocks, waits, evicted blocks, cached blocks at the end and too-large requests")
    print("| capacity (blocks) | lite hit tokens | SGLang hit tokens | lite evicted | SGLang evicted | lite waited | "
          "SGLang waited | equal | lite s | SGLang s | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    all_equal = True
    for capacity in capacities:
        doc, wall = lite_run(trace, "--engine", "sglang", "--sizes", capacity, "--threads", 1)
        row = doc["records"][0]
        start = time.monotonic()
        peer = sglang_replay(rc, read_requests(trace), capacity)
        peer_wall = time.monotonic() - start
        e = row["engine"]
        equal = (peer["hit_tokens"], peer["hit_blocks"], peer["waited"], peer["evicted_blocks"],
                 peer["cached_blocks"], peer["too_large"]) == (
            row["hit_tokens"], row["hit_blocks"], e["waited_requests"], e["evicted_blocks"], row["cached_blocks"],
            e["too_large_requests"])
        all_equal &= equal
        print(f"| {capacity:,} | {row['hit_tokens']:,} | {peer['hit_tokens']:,} | {e['evicted_blocks']:,} | "
              f"{peer['evicted_blocks']:,} | {e['waited_requests']:,} | {peer['waited']:,} | "
              f"{'yes' if equal else 'NO'} | {wall:.3f} | {peer_wall:.2f} | {peer_wall / wall:.0f}x |", flush=True)
    return all_equal
