"""Ranks of one NCCL communicator that disagree, in NCCL's own words (knowledge/messages/nccl.toml): on
the NCCL version each loaded (the environment of the nodes), and on the collectives they called (the
program, or NCCL settings that differ between ranks)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

VERSION = "nccl-version-mismatch"
COLLECTIVE = "nccl-collective-mismatch"


def nccl_version(code: str) -> Optional[str]:
    """NCCL_VERSION_CODE as X.Y.Z: NCCL's src/nccl.h.in defines NCCL_VERSION(X,Y,Z) as X*1000+Y*100+Z up to
    2.8 and X*10000+Y*100+Z from 2.9 (22304 is 2.23.4, 2708 is 2.7.8); a dotted version passes through."""
    code = str(code or "").strip()
    if re.fullmatch(r"\d{1,3}\.\d{1,3}\.\d{1,3}", code):
        return code
    if not re.fullmatch(r"\d{4,7}", code):
        return None
    n = int(code)
    if n >= 20900:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def _versions(s: dict):
    """The two versions (and whose) a mismatch line names: (rank, version, other rank, other version)."""
    if s.get("local") or s.get("remote"):   # RAS: "... with remote peer P (local: A, remote B)"
        return "this node", nccl_version(s.get("local")) or s.get("local"), \
            f"peer {s.get('peer')}", nccl_version(s.get("remote")) or s.get("remote")
    return (f"rank {s.get('rank')}", nccl_version(s.get("version")), f"rank {s.get('other')}",
            nccl_version(s.get("other_version")))


_VERSION_FIX = (
    "python -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'   # on every node of the job: the "
    "NCCL each rank loads (torch's bundled one unless LD_PRELOAD or LD_LIBRARY_PATH names another)\n"
    "env | grep -E '^(LD_PRELOAD|LD_LIBRARY_PATH)='; ldconfig -p | grep libnccl   # a system libnccl.so.2 found "
    "before the wheel's on some nodes\n"
    "pip list 2>/dev/null | grep -iE '^(torch|nvidia-nccl)'   # the wheels: install the same versions on every node, or "
    "run every rank from the same container image")


@rule("NET035", VERSION, "error", "ranks of one NCCL communicator run different NCCL versions", impact=7)
def nccl_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's "Mismatched NCCL version detected : rank A version X rank B version
        Y" (src/init.cc, NCCL 2.23 on: the ranks exchange their NCCL_VERSION_CODE when the
        communicator is created and stop with ncclInvalidUsage when one differs) and its RAS
        service's "NCCL version mismatch with remote peer P (local: X, remote Y)" (src/ras/ras.cc,
        2.25 on). The version codes are decoded (22304 is 2.23.4).

    Why it matters:
        NCCL's wire protocols and data structures change between releases, so ranks that loaded
        different libraries cannot form a communicator: init_process_group fails with "invalid
        usage" on every rank. It is the environment of the nodes, not the network or the GPUs:
        a different torch wheel or nvidia-nccl package on one node, a container image of another
        date, or an LD_LIBRARY_PATH/LD_PRELOAD that puts a system libnccl before the bundled one.

    How to fix:
        Print torch.cuda.nccl.version() on every node of the job, find which one differs, and
        install the same torch/nvidia-nccl wheels there (or run every rank from one image).

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.23.4-1/src/init.cc (initTransportsRank: "Mismatched NCCL version detected")
        - https://github.com/NVIDIA/nccl/blob/v2.25.1-1/src/ras/ras.cc (NCCL version mismatch with remote peer)
        - https://github.com/NVIDIA/nccl/blob/v2.23.4-1/src/nccl.h.in (NCCL_VERSION: the version code)
    """
    told = catalogued(f, VERSION)
    if not told:
        return
    s = told[0]
    who, mine, other, theirs = _versions(s)
    if not mine or not theirs:
        return
    yield Hit(message=f"{who} runs NCCL {mine} and {other} NCCL {theirs} (line {s.get('line')}: \"{told_text(s)}\"): "
                      "ranks of one communicator must load the same NCCL; the node that differs has another "
                      "torch/nvidia-nccl install, image or LD_LIBRARY_PATH",
              fix=_VERSION_FIX, evidence={**told_evidence(s), "versions": [mine, theirs]})


_COLLECTIVE_FIX = (
    "export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL   # in the job script, then rerun: each rank logs its collectives "
    "(op, count, datatype): the first that differs between ranks is the program's bug\n"
    "env | grep -E '^NCCL_(PROTO|ALGO|BUFFSIZE)='   # on every rank: NCCL's developers name settings that differ "
    "between ranks as the other cause (set them the same everywhere)\n"
    "export TORCH_DISTRIBUTED_DEBUG=DETAIL   # torch: checks that every rank calls the same collective with the same "
    "shapes and names the first one that differs")


@rule("NET036", COLLECTIVE, "warning",
      "ranks of one NCCL communicator called different collectives or sizes: a program bug, not the node", impact=4)
def nccl_collective_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's own reports that two ranks disagree on a collective: "Mismatched
        collective detected, please check your collective calls at and around rank N" (src/init.cc,
        2.4-2.5), the IB transport's "collective mismatch error, local size X remote size Y"
        (src/transport/net_ib.cc, 2.4-2.19), and "Message truncated : received X bytes instead of
        Y" / "message truncated : receiving X bytes instead of Y" (the IB and socket transports):
        a rank received more than it posted for.

    Why it matters:
        Every rank of a communicator must call the same collectives in the same order with the
        same sizes. When one does not (a tensor of another shape on one rank, a collective skipped
        on a branch, a different model configuration), NCCL fails or hangs. NCCL's developers
        answer these reports as program bugs (nccl#296), or as NCCL settings (NCCL_PROTO,
        NCCL_ALGO) or versions that differ between ranks (nccl#1328): nothing on the node is
        broken, so this is a warning with no node fix.

    How to fix:
        Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL (or torch's TORCH_DISTRIBUTED_DEBUG=
        DETAIL) and compare the ranks' collectives; make NCCL_* settings the same on every rank.

    References:
        - https://github.com/NVIDIA/nccl/issues/296 (Mismatched collective detected: tensors of different sizes or order)
        - https://github.com/NVIDIA/nccl/issues/1328 (message truncated: a version or configuration mismatch)
        - https://github.com/NVIDIA/nccl/blob/v2.14.3-1/src/transport/net_ib.cc (collective mismatch error)
        - https://pytorch.org/docs/stable/distributed.html#debugging-torch-distributed-applications
    """
    told = catalogued(f, COLLECTIVE)
    if not told:
        return
    s = told[0]
    sizes = ""
    if s.get("received") and s.get("expected"):
        sizes = f" ({s['received']} bytes arrived where {s['expected']} were posted)"
    elif s.get("local") and s.get("remote"):   # net_ib.cc's sender: its size, then what the receiver posted
        sizes = f" (a send of {s['local']} bytes to a receive of {s['remote']})"
    elif s.get("rank"):
        sizes = f" (at and around rank {s.get('rank')})"
    yield Hit(message=f"NCCL says the ranks disagree on a collective{sizes} (line {s.get('line')}: \"{told_text(s)}\"): "
                      "ranks called different collectives, sizes or order, or run with different NCCL settings; "
                      "a bug in the program or its launch, not a fault of this node",
              fix=_COLLECTIVE_FIX, evidence=told_evidence(s))
