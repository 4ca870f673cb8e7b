#!/usr/bin/python3
"""Which CPU a bench ran on, in one line every bench under scripts/bench/ prints (issue 42).

Machines of this project's kind come as Intel Xeon with AMX, AMD EPYC with AVX-512 and AMD EPYC with
AVX2 only. Kernels can be held to AVX2 on any of them with AVX2_ENV (ATen, oneDNN, OpenBLAS); memory
latency and bandwidth cannot be emulated, so a figure that moves with memory names the CPU it ran on.

  import machine; print(machine.describe())     # from a bench in this folder
  scripts/bench/machine.py                      # the same line, for a shell bench
"""
import os
import platform

# The variables that make ATen, oneDNN and OpenBLAS pick their AVX2 kernels on a bigger CPU.
AVX2_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}



def same_blas_env():
    """os.environ with LD_LIBRARY_PATH leading to OpenBLAS's OpenMP build when it is installed, as lite sets it
    before it runs torch (apps/lite/blas_environment.cpp, docs/profile.md "Threads and BLAS"): PyTorch in Python
    then runs its float matmuls on the same BLAS as lite instead of Debian's default pthread build, whose threads
    fight libgomp's above one thread (a GPT-2-small decode step: 134-175 against 65 ms at 2 threads)."""
    env = dict(os.environ)
    folder = f"/usr/lib/{platform.machine()}-linux-gnu/openblas-openmp"
    if os.path.isdir(folder) and "openblas" not in env.get("LD_LIBRARY_PATH", ""):
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (folder, env.get("LD_LIBRARY_PATH", "")) if p)
    return env


# /proc/cpuinfo flag -> the name a reader knows, grouped by family; the first group found is the top ISA.
_FAMILIES = [
    ("AMX", [("amx_tile", "tile"), ("amx_int8", "int8"), ("amx_bf16", "bf16")]),
    ("AVX-512", [("avx512f", "F"), ("avx512_vnni", "VNNI"), ("avx512_bf16", "BF16"), ("avx512_fp16", "FP16")]),
    ("AVX2", [("avx2", "AVX2"), ("fma", "FMA"), ("avx_vnni", "AVX-VNNI")]),
]


def _cpuinfo_field(name):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(name):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_model():
    """The model name from /proc/cpuinfo (e.g. "AMD EPYC"), else what platform knows."""
    return _cpuinfo_field("model name") or platform.processor() or "unknown CPU"


def cpu_flags():
    return set(_cpuinfo_field("flags").split())


def isa(flags=None):
    """The vector ISA families this CPU has, widest first: "AVX-512 (F, VNNI, BF16) + AVX2 (AVX2, FMA)"."""
    flags = cpu_flags() if flags is None else flags
    parts = []
    for family, members in _FAMILIES:
        have = [label for flag, label in members if flag in flags]
        if have:
            parts.append(f"{family} ({', '.join(have)})")
    return " + ".join(parts) if parts else "no AVX2"


def isa_env(env=None):
    """The AVX2-capping variables set in env, as "NAME=value ..." or "" when none is."""
    env = os.environ if env is None else env
    return " ".join(f"{k}={env[k]}" for k in AVX2_ENV if env.get(k))


def avx2_env(base=None):
    """A copy of base (default os.environ) with every AVX2_ENV variable set: a child run on AVX2 kernels."""
    env = dict(os.environ if base is None else base)
    env.update(AVX2_ENV)
    return env


def describe(env=None):
    """One line: CPU model, logical cores, ISA, and which kernels the ISA variables in env allow."""
    capped = isa_env(env)
    if len(capped.split()) == len(AVX2_ENV):
        kernels = f"AVX2 kernels ({capped})"
    elif capped:
        kernels = f"AVX2 variables set: {capped} (the other libraries pick the CPU's best kernels)"
    else:
        kernels = "no AVX2 variable set (every library picks the CPU's best kernels)"
    return f"CPU: {cpu_model()} x {os.cpu_count()} logical cores; ISA: {isa()}; {kernels}"


if __name__ == "__main__":
    print(describe())
