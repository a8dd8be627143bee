"""Worst-case paste reading times (issue 19): each generated hostile paste goes through
`hpcdoctor check --from` in a fresh process; printed: its size, wall time and the child's peak RSS.

    python bench/paste_scaling.py [--scale 1.0] [--only NAME]

The inputs are those the adversarial trial found quadratic, plus a 16 MiB paste of each kind:
one long line of repeated GPU words (a symptom pattern backtracking), short JSON lines
(`_json_end` and the offset sums in recognition), many short report-like lines, and a 16 MiB
nvidia-smi table. Linear reading means time grows with size, not with its square: compare the
half-size and full-size rows.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MiB = 1024 * 1024


def repeated_words(size: int) -> str:
    return ("NVIDIA " * (size // 7)) + "\n"


def json_lines(size: int) -> str:
    line = '{"gpu_data": [], "k": 1}\n'
    return line * (size // len(line))


def short_lines(size: int) -> str:
    line = "PyTorch version: 2.1.0\nGPU 0: NVIDIA A100\n"
    return line * (size // len(line))


def open_json(size: int) -> str:
    line = "{\n"
    return line * (size // len(line))


def rocm_sections(size: int) -> str:
    head = "======================= ROCm System Management Interface =======================\n"
    line = "============================ Numa Nodes ============================\n"
    return head + line * (size // len(line))


def long_prose_line(size: int) -> str:
    word = "The NVIDIA driver on your system is too old with CUDA capability sm_ "
    return word * (size // len(word)) + "\n"


def _numbered(line: str, size: int) -> str:
    """``line`` repeated with its {n} numbered, up to ``size`` characters: distinct lines, so no
    cache of a line's reading helps."""
    out, n, total = [], 0, 0
    while total < size:
        s = line.format(n=n)
        out.append(s)
        total += len(s)
        n += 1
    return "".join(out)


def error_line_words(size: int) -> str:
    # Distinct lines that hold every needle of errorlines.toml's conventions and match none: each
    # form tries its anchored pattern on its needle's lines (at most 2048 distinct lines a needle).
    line = "{n} x.cc: error: E: ERROR: FATAL:   level=error panic: ): error ld: : *** Error in \n"
    return _numbered(line, size)


def log_line_words(size: int) -> str:
    # Distinct lines that hold the needles of the loggers', MPI runtimes' and strerror-in-parentheses
    # conventions (errorlines.toml, errno.toml) out of their place, so every form tries its pattern on
    # every line its needle finds, and none matches.
    line = ("{n} x ] [error] | ERROR    | - ERROR - [ERROR] ERROR ~ Abort( MPICH ERROR [Rank aborting job: "
            "PMIX ERROR: Headers are BUG: Killed Terminated (Read only file system) .py: .cc: "
            "*** Process received signal *** *** An error occurred\n")
    return _numbered(line, size)


def python_error_words(size: int) -> str:
    # Distinct lines that hold Python's error words out of place (a built-in's name without its
    # ": message", a timestamp and a rank's tag before nothing), and a traceback header on every
    # tenth line with no exception line below it: the in-line reader tries every line holding
    # "error", and each header's search for its last line stops at the next header.
    line = ("{n} [rank0]: 6-10-2022 08:49:15 ValueError RuntimeError( OSError, **_KeyError error "
            "torch.cuda.Error\n") * 9 + "Traceback (most recent call last):\n"
    out = _numbered(line, size)
    return out[:out.rfind("\n", 0, size) + 1]   # ten lines a step: cut back under the size asked


def translated_lines(size: int) -> str:
    # Distinct lines in zh_CN that each hold a translated GNU ld format and glibc texts
    # (knowledge/message_translations.toml): every line is rewritten into English before the
    # catalogues read it (triage/translated.py, at most 2048 lines a reading), then read again.
    line = ("{n} /usr/bin/ld: 找不到 -lfoo{n}: 没有那个文件或目录 当搜索用于 /lib/i386-linux-gnu/libfoo{n}.so "
            "时跳过不兼容的 -lfoo{n}\n")
    sample = line.format(n=0)
    return _numbered(line, int(size * len(sample) / len(sample.encode("utf-8"))))   # the size asked, in bytes


def long_error_line(size: int) -> str:
    word = "a.cc:1: error"
    return word * (size // len(word)) + "\n"


GENERATORS = {
    "repeated-words-line": repeated_words,
    "json-lines": json_lines,
    "open-json-lines": open_json,
    "report-lines": short_lines,
    "rocm-sections": rocm_sections,
    "long-prose-line": long_prose_line,
    "error-line-words": error_line_words,
    "long-error-line": long_error_line,
    "log-line-words": log_line_words,
    "python-error-words": python_error_words,
    "translated-lines": translated_lines,
}


def run(path: Path, timeout: float) -> tuple:
    beside = Path(sys.executable).with_name("hpcdoctor")
    cmd = [str(beside) if beside.exists() else "hpcdoctor", "check", "--from", str(path), "--format", "json"]
    t0 = time.monotonic()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=null, env=dict(os.environ, NO_COLOR="1"))
    rc = None
    while rc is None:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            rc = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() - t0 > timeout:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            rc = "timeout"
            break
        time.sleep(0.02)
    proc.returncode = rc if isinstance(rc, int) else -9
    return rc, time.monotonic() - t0, usage.ru_maxrss / 1024  # this child's own peak, in MiB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.112,0.68,4,16", help="sizes in MiB, comma-separated")
    ap.add_argument("--only", action="append", help="generator name (repeatable)")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"{'input':22} {'MiB':>6} {'rc':>7} {'wall s':>8} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, gen in GENERATORS.items():
            if args.only and name not in args.only:
                continue
            for mib in sizes:
                path = Path(tmp) / f"{name}.txt"
                path.write_text(gen(int(mib * MiB) - 256))
                rc, wall, peak = run(path, args.timeout)
                print(f"{name:22} {path.stat().st_size / MiB:6.2f} {rc!s:>7} {wall:8.2f} {peak:9.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
