"""Which machine each pasted piece describes: the identities a piece carries (the host name of
the shell prompt it was printed under, GPU models and their count, the NVIDIA driver, the CPU
model), compared across every piece of one paste and of several --from files, so that two
machines' outputs are refused rather than merged into a diagnosis that belongs to neither
(issue 13, issue 19).

No tool output hpcdoctor reads prints the host name (nvidia-smi -q, collect_env, lscpu do not);
a prompt such as "root@4u8g-gen-0078:/sgl-workspace# python -m sglang.check_env" pasted above one
does. A host name that is docker's default (the container's 12-hex-digit id) is not compared: a
container and the machine it runs on answer to different names. NCCL's log lines carry a host
too ("host:pid:tid [dev] NCCL INFO"), but a multi-node job's log names every node of one job:
they are not a second machine's report and are not compared.

An identity a piece does not state is not compared; names that nvidia-smi's table truncates
("NVIDIA A100-SXM4...") match any name they begin."""

from __future__ import annotations

import bisect
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from hpcdoctor.parse.collect_env import ARGV as COLLECT_ENV_ARGV
from hpcdoctor.parse.collect_env import SGLANG_ARGV


def identity(piece) -> Dict[str, Any]:
    """{"host": str, "gpus": [names], "driver": str, "cpu": str} for what this piece states; parse errors
    leave the piece without an identity (it is then compared on nothing)."""
    from hpcdoctor.parse import MAX_GPUS, collect_env, lscpu, nvsmi_table, nvsmi_xml

    argv = tuple(piece.kind.argv) or ("file", str(piece.kind.file))
    out: Dict[str, Any] = {}
    host = getattr(piece, "host", None)
    if host and not re.fullmatch(r"[0-9a-f]{12}", host):
        out["host"] = host
    try:
        if argv in (tuple(COLLECT_ENV_ARGV), tuple(SGLANG_ARGV)):
            parsed = collect_env.parse_collect_env(piece.text)
            t = parsed["torch"]
            if t.get("gpu_models") and not str(t.get("hip") or ""):
                out["gpus"] = list(t["gpu_models"])
            if t.get("driver_version"):
                out["driver"] = str(t["driver_version"])
            cpu = lscpu.parse_lscpu(parsed.get("lscpu") or "").get("Model name")
            if cpu:
                out["cpu"] = cpu
        elif argv == ("nvidia-smi", "-q"):
            # Only the names and the driver are compared: read them off their lines rather than
            # building every GPU's record (a pasted 1,200-GPU report took 4 s of the budget).
            names = _Q_NAME.findall(piece.text)
            if len(names) > MAX_GPUS:
                raise ValueError("more GPUs than any node holds")
            if names:
                out["gpus"] = names
            m = _Q_DRIVER.search(piece.text)
            if m:
                out["driver"] = m.group(1)
        elif argv in (("nvidia-smi", "-q", "-x"), ("nvidia-smi",)):
            mod = nvsmi_xml if argv == ("nvidia-smi", "-q", "-x") else nvsmi_table
            parsed = mod.parse(piece.text)
            names = [g["name"] if isinstance(g["name"], str) else _truncated(g["name"]) for g in parsed["gpus"]]
            if names and all(names):
                out["gpus"] = names
            driver = parsed.get("driver_version")
            if isinstance(driver, str):
                out["driver"] = driver
        elif argv == ("lscpu",):
            cpu = lscpu.parse_lscpu(piece.text).get("Model name")
            if cpu:
                out["cpu"] = cpu
        elif argv == ("file", "/proc/cpuinfo"):
            m = re.search(r"^model name\s*:\s*(.+)$", piece.text, re.M)
            if m:
                out["cpu"] = m.group(1)
    except (ValueError, KeyError, TypeError):
        return {k: v for k, v in out.items() if k == "host"}
    return out


_Q_NAME = re.compile(r"^[ \t]{1,8}Product Name[ \t]*:[ \t]*(\S[^\n]{0,200}?)[ \t]*$", re.M)
_Q_DRIVER = re.compile(r"^Driver Version[ \t]*:[ \t]*(\S{1,40})[ \t]*$", re.M)


def _truncated(unknown) -> Optional[str]:
    m = re.search(r"truncated in the table: (.+)$", str(getattr(unknown, "reason", unknown)))
    return m.group(1) if m else None


def _norm(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().rstrip(".").strip().lower()


def _matched(names: List[str], others: List[str]) -> bool:
    """Whether each name equals, begins or is begun by one of ``others`` (sorted, distinct).
    A name that begins x sorts at x's place; a prefix of x is one of x's own prefixes. So each
    name costs a search and one set look-up per prefix length, not a pass over the other list:
    comparing every pair was quadratic (two pasted lists of 150 KB took 74 s, issue 27)."""
    have = set(others)
    for x in names:
        k = bisect.bisect_left(others, x)
        if k < len(others) and others[k].startswith(x):
            continue
        if not any(x[:n] in have for n in range(1, len(x) + 1)):
            return False
    return True


def _same_gpus(a: List[str], b: List[str]) -> bool:
    if len(a) != len(b):
        return False
    # Names are cut at a length no product name reaches, so each prefix search stays short.
    na = sorted({_norm(x)[:_NAME_CHARS] for x in a})
    nb = sorted({_norm(y)[:_NAME_CHARS] for y in b})
    return na == nb or (_matched(na, nb) and _matched(nb, na))


_NAME_CHARS = 96


def disagreement(pieces: Sequence[Tuple[str, Any]]) -> Optional[str]:
    """One sentence naming the first identity two pieces state differently, or None.
    ``pieces``: (label, piece) in the order read."""
    seen: Dict[str, Tuple[str, Any]] = {}
    for label, piece in pieces:
        ident = identity(piece)
        where = f"{label} {piece.kind.name} (line {piece.line})"
        for key, value in ident.items():
            if key not in seen:
                seen[key] = (where, value)
                continue
            first, before = seen[key]
            same = _same_gpus(before, value) if key == "gpus" else _norm(before) == _norm(value)
            if not same:
                return f"{first} and {where} describe different machines: {_say(key, before)} against {_say(key, value)}"
    return None


def _say(key: str, value: Any) -> str:
    if key == "gpus":
        names = sorted(set(value))
        return f"{len(value)} GPU(s) {', '.join(names)}"
    return {"driver": "NVIDIA driver ", "cpu": "CPU ", "host": "host "}[key] + str(value)
