"""Micro-benchmarks, only when asked (--bench quick|full): run by the target interpreter through
the benchmark payload, under what is left of the run's budget, with progress on stderr.

The payload prints one JSON line per figure as it measures it; this check keeps every line it
read, so a payload killed at the deadline, by the OOM killer or by a crash in torch still leaves
its finished figures, and the measurement it was in is named as the one cut."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import hpcdoctor
from hpcdoctor.checks.torch_stack import target_python
from hpcdoctor import jsonbound
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot, run_process

NAME = "bench"
PROVIDES = ("bench",)
EXCLUSIVE = True  # runs after the other checks, alone
# The payloads ship inside the hpcdoctor package, wherever the checks folder is mapped from.
PAYLOAD = Path(hpcdoctor.__file__).resolve().parent / "payload" / "bench_probe.py"
# Kept back from the run's deadline: after the payload is stopped, the report is still written.
REPORT_RESERVE_S = 0.6
# The payload aims to end this long before it is killed, so it is killed only when it hangs.
KILL_GRACE_S = 0.4
# Measured on every node, GPU or not: what a payload that never said its plan leaves unmeasured.
DEFAULT_PLAN = [["cpu.other_load", ["cpu", "other_load"]], ["cpu.fp32", ["cpu", "fp32"]], ["cpu.bf16", ["cpu", "bf16"]],
                ["cpu.fp32_bf16_fastmath", ["cpu", "fp32_bf16_fastmath"]], ["allreduce", ["allreduce"]]]


def timeout(options: Any) -> float:
    # The runner also stops at the run's deadline; this check stops its payload before that.
    return float(options.budget)


def _progress() -> Callable[[str], None]:
    """Where the payload's progress goes: plain lines in a job log, a live status on a terminal."""
    if not sys.stderr.isatty():
        def plain(line: str) -> None:
            if line.startswith("hpcdoctor bench:"):
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
        return plain
    from rich.console import Console
    from rich.markup import escape

    con = Console(stderr=True, highlight=False)
    status = con.status("hpcdoctor: benchmarks")
    status.start()

    def live(line: str) -> None:
        if line.startswith("hpcdoctor bench-status:"):
            status.update(escape("benchmarking: " + line.split(":", 1)[1].strip()))
        elif line.startswith("hpcdoctor bench:"):
            con.print(f"[dim]{escape(line)}[/]")
    live.stop = status.stop  # type: ignore[attr-defined]
    return live


def run_bench(python: str, tier: str, budget: float, kill_after: float) -> Dict[str, Any]:
    from hpcdoctor.probes.nvml_watch import Watch

    argv = [python, str(PAYLOAD), "--tier", tier, "--budget", f"{budget:.2f}"]
    show = _progress()
    watch = Watch()
    watching = watch.start()

    def on_line(line: str) -> None:
        watch.line(line)
        show(line)
    try:
        res = run_process(argv, timeout=kill_after, on_stderr_line=on_line)
    finally:
        during = watch.stop() if watching else {}
        stop = getattr(show, "stop", None)
        if stop:
            stop()
    if res.rc in (126, 127):
        raise Missing(f"{python} cannot be run: {res.stderr.strip()}")
    doc = assemble(res.stdout, res.rc, res.stderr, kill_after)
    doc["target_python"] = python
    attach_conditions(doc, during, None if watching else watch.error)
    return doc


def attach_conditions(doc: Dict[str, Any], during: Dict[int, Dict[str, Any]], error: Optional[str]) -> None:
    """Each measured GPU's conditions during its measurements (clocks, power, other processes),
    or why they could not be read: a figure is judged beside them."""
    for g in doc.get("gpus") or []:
        if not isinstance(g, dict):
            continue
        if g.get("index") in during:
            g["during"] = during[g["index"]]
        elif error and doc.get("device_kind") == "cuda":
            g["during"] = {"unknown": error}


def _why_ended(rc: int, stderr: str, kill_after: float) -> str:
    if rc == 124:
        return f"the payload was stopped at its {kill_after:.1f} s deadline"
    if rc == -signal.SIGKILL:
        return "the payload was killed by SIGKILL (the kernel's out-of-memory killer, or another process)"
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        extra = " (a crash inside torch or a library it loaded)" if name in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGABRT") else ""
        return f"the payload died of {name}{extra}"
    tail = [ln for ln in stderr.strip().splitlines() if not ln.startswith("hpcdoctor bench")]
    return f"the payload exited with status {rc}" + (f": {tail[-1][:300]}" if tail else "")


def _put(doc: Dict[str, Any], path: List[Any], value: Any) -> None:
    """Set doc at path; "gpus" is kept as {index: entry} until the end."""
    node: Any = doc
    for key in path[:-1]:
        if key == "gpus" and node is doc:
            node = node.setdefault("_gpus", {})
            continue
        nxt = node.get(key)
        if not isinstance(nxt, dict):
            nxt = node[key] = {}
        node = nxt
    last = path[-1]
    if path == ["gpus"]:
        doc.setdefault("_gpus", {})
    else:
        node[last] = value


def _get(doc: Dict[str, Any], path: List[Any]) -> Any:
    node: Any = doc
    for key in path:
        if key == "gpus" and node is doc:
            key = "_gpus"
        node = node.get(key) if isinstance(node, dict) else None
    return node


def assemble(stdout: str, rc: int, stderr: str = "", kill_after: float = 0.0) -> Dict[str, Any]:
    """The bench facts from the payload's JSON lines, however it ended: every figure it printed,
    and for every planned measurement without one the reason (cut, or not reached)."""
    doc: Dict[str, Any] = {}
    plan: Optional[List[List[Any]]] = None
    started: Optional[str] = None
    done = set()
    ended = False
    for line in stdout.splitlines():
        try:
            rec = jsonbound.loads(line)
        except ValueError:
            continue  # the last line of a killed payload can be cut short
        if not isinstance(rec, dict):
            continue
        if "plan" in rec:
            plan = rec["plan"]
        elif "start" in rec:
            started = rec["start"]
        elif "at" in rec and isinstance(rec["at"], list) and rec["at"]:
            _put(doc, rec["at"], rec.get("value"))
            if rec.get("name"):
                done.add(rec["name"])
        elif rec.get("end"):
            ended = True
            doc["elapsed_s"] = rec.get("elapsed_s")
    if not ended:
        why = _why_ended(rc, stderr, kill_after)
        if started and started not in done:
            doc["cut"] = started
            doc["stopped"] = f"{why}, during {started}"
        elif not doc.get("torch") and not doc.get("stopped"):
            doc["stopped"] = f"{why}, before torch was imported"
        else:
            doc["stopped"] = doc.get("stopped") or why
        for name, path in (plan if plan is not None else DEFAULT_PLAN):
            if name in done:
                continue
            if name == started:
                reason = f"cut: {why}"
            else:
                reason = f"not reached: {why}" + (f" during {started}" if started and started not in done else "")
            _put(doc, path, {"skipped": reason})
    gpus = doc.pop("_gpus", None)
    if gpus is not None or "torch" in doc:
        doc["gpus"] = [dict(v, index=k) if isinstance(v, dict) else {"index": k} for k, v in sorted((gpus or {}).items())]
    return doc


def not_measured(bench: Dict[str, Any]) -> Dict[str, str]:
    """{measurement: reason} for every figure the run did not produce (for reports and tests)."""
    out: Dict[str, str] = {}
    for g in bench.get("gpus") or []:
        for dtype, v in (g.get("gemm") or {}).items():
            if isinstance(v, dict) and "skipped" in v:
                out[f"gpu{g.get('index')}.gemm.{dtype}"] = v["skipped"]
        mem = g.get("memory")
        if isinstance(mem, dict) and "skipped" in mem:
            out[f"gpu{g.get('index')}.memory"] = mem["skipped"]
    for case, v in (bench.get("cpu") or {}).items():
        if isinstance(v, dict) and "skipped" in v:
            out[f"cpu.{case}"] = v["skipped"]
    ar = bench.get("allreduce")
    if isinstance(ar, dict) and "skipped" in ar:
        out["allreduce"] = ar["skipped"]
    return out


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    tier = ctx.options.bench
    if root.mode == "replay":
        # A recording made with --bench carries its figures; replaying them needs no flag.
        try:
            return {"bench": root.probe("bench", lambda: {})}
        except Missing:
            return {}
    if not tier:
        return {}
    python = target_python(ctx.options)
    if python is None:
        return {"bench": Unknown("no python3 on PATH (pass --python)")}
    kill_after = ctx.remaining() - REPORT_RESERVE_S
    budget = kill_after - KILL_GRACE_S
    if budget < 0.1:
        spent = ctx.options.budget - ctx.remaining()
        reason = (f"not measured: the {ctx.options.budget:g} s budget was spent by the other probes "
                  f"({spent:.1f} s) before the benchmarks")
        doc: Dict[str, Any] = {"stopped": reason}
        for _, path in DEFAULT_PLAN:
            _put(doc, path, {"skipped": reason})
        return {"bench": root.probe("bench", lambda: doc)}
    started = time.monotonic()
    try:
        doc = root.probe("bench", lambda: run_bench(python, tier, budget, kill_after))
    except Missing as exc:
        return {"bench": Unknown(str(exc))}
    if isinstance(doc, dict):
        doc.setdefault("wall_s", round(time.monotonic() - started, 3))
    return {"bench": doc}
