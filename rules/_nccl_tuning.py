"""What NCCL's tuning lines say it chose (knowledge/messages/nccl.toml tuning-algo-proto), against the
NCCL_ALGO and NCCL_PROTO the run set: the environment, the paste's own export lines, or the user's
words (prose:nccl-algo-proto-said)."""

from __future__ import annotations

from typing import Optional, Set

from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_read

# NVIDIA/nccl src/include/nccl_common.h @ v2.21.5-1: the numbers the tuning line prints.
ALGORITHMS = ("Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT")
PROTOCOLS = ("LL", "LL128", "Simple")
_RING = 1
_TUNING = "nccl:tuning-algo-proto"
_SAID = "prose:nccl-algo-proto-said"


def allowed(value: Optional[str], names: tuple) -> Optional[Set[str]]:
    """The names a NCCL_ALGO/NCCL_PROTO value lets NCCL use (a list, or ^ and the names it
    excludes), lower-cased; None where the value is unset or names none NCCL knows."""
    if not value:
        return None
    text = value.strip()
    exclude = text.startswith("^")
    listed = {v.strip().lower() for v in text.lstrip("^").split(",") if v.strip()}
    known = {n.lower() for n in names}
    if not listed <= known:
        return None
    return known - listed if exclude else listed


def setting(f: FactView, var: str) -> Optional[str]:
    """NCCL_ALGO or NCCL_PROTO as the run set it: the environment (or the paste's export lines),
    else the last value the user's words give."""
    env = f.get("env.vars") or {}
    if env.get(var):
        return str(env[var])
    key = {"NCCL_ALGO": ("algo",), "NCCL_PROTO": ("proto", "proto_only")}[var]
    said = None
    for s in ticket_read(f):
        if s.get("id") == _SAID:
            said = next((s[k] for k in key if s.get(k)), said)
    return said


def ring_outside_proto(f: FactView) -> Optional[dict]:
    """The first tuning line where NCCL ran Ring with a protocol NCCL_PROTO excludes, while NCCL_ALGO
    (where set) does not list Ring: only NCCL's fallback to Ring chooses it then."""
    proto_set, algo_set = setting(f, "NCCL_PROTO"), setting(f, "NCCL_ALGO")
    protos = allowed(proto_set, PROTOCOLS)
    if not protos:
        return None
    algos = allowed(algo_set, ALGORITHMS)
    if algos is not None and "ring" in algos:
        return None  # Ring may be chosen as itself: NCCL_PROTO then holds
    for s in ticket_read(f):
        if s.get("id") != _TUNING:
            continue
        algo, proto = int(s.get("algo", -1)), int(s.get("proto", -1))
        if algo == _RING and 0 <= proto < len(PROTOCOLS) and PROTOCOLS[proto].lower() not in protos:
            return {**s, "protocol": PROTOCOLS[proto], "nccl_proto": proto_set, "nccl_algo": algo_set}
    return None
