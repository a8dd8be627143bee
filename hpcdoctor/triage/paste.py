"""Triage from pasted text: recognise each tool's output in what a user pasted (several may follow
one another in one file, cut short, with Windows line ends), and lay the pieces out as a snapshot
so that the ordinary checks and rules run on them unchanged.

Nothing is invented: a piece is stored as the output of the command that produces it (or, for
/proc/cpuinfo, as that file), and facts that no piece carries stay Unknown.
"""

from __future__ import annotations

import json
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from hpcdoctor.parse.collect_env import ARGV as COLLECT_ENV_ARGV
from hpcdoctor.parse.collect_env import SGLANG_ARGV
from hpcdoctor.triage.machines import disagreement
from hpcdoctor.snapshot.bundle import remove_tree
from hpcdoctor.sysroot import MAX_READ_BYTES, ReplaySysRoot, SnapshotError, read_capped
from hpcdoctor.triage.amd_text import find_amd_gpus, find_rocm_versions
from hpcdoctor.triage.budget import PasteOverBudget, _in_time  # noqa: F401  (PasteOverBudget: callers' name for it)
from hpcdoctor.triage.exports import EXPORT_SOURCE, exported
from hpcdoctor.triage.known_text import describe, find_gpu_names, to_describe  # noqa: F401  (re-exported)
from hpcdoctor.triage.messages import find_messages, find_unlisted_errors
from hpcdoctor.triage.recognise import KINDS, Kind, Piece, Recognition, recognise  # noqa: F401  (re-exported)

MAX_PASTE_BYTES = 16 * 1024 * 1024
# What one paste may make hpcdoctor print (issue 27; MAX_PIECES in triage.recognise bounds what it reads).
MAX_NOTES = 32


def _decode(data: bytes) -> Optional[str]:
    """Text in the encodings pastes arrive in: UTF-8 (with or without a BOM), UTF-16 with a BOM
    (PowerShell's ``>`` writes UTF-16LE) or without one (every other byte NUL on ASCII text).
    None for binary data."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    head = data[:65536]
    if b"\x00" not in head:
        return data.decode("utf-8-sig", errors="replace")
    for order, nuls in (("utf-16-le", head[1::2]), ("utf-16-be", head[0::2])):
        if len(nuls) > 16 and nuls.count(0) > 0.9 * len(nuls):
            return data[:len(data) // 2 * 2].decode(order, errors="replace")
    return None


def read_text(path: str) -> str:
    """A paste from a file or '-' (standard input), refused when binary or empty."""
    import sys

    try:
        data = read_capped(sys.stdin.buffer if path == "-" else path, MAX_PASTE_BYTES)
    except OSError as exc:
        raise SnapshotError(f"{path}: {exc.strerror or exc}") from None
    label = "standard input" if path == "-" else path
    if data is None:
        raise SnapshotError(f"{label}: larger than any paste ({MAX_PASTE_BYTES >> 20} MiB)")
    text = _decode(data)
    if text is None:
        raise SnapshotError(f"{label}: a binary file, not a snapshot or pasted text")
    if not text.strip():
        raise SnapshotError(f"{label}: empty")
    return text


_SHOWTOPO = Kind("rocm-smi --showtopo", re.compile(r"$^"), ["rocm-smi", "--showtopo"])  # only found inside reports


def _broken_lines(parsed: Dict[str, Any]) -> List[str]:
    """The values of an environment report left unread because their line was broken."""
    from hpcdoctor.facts import Unknown

    t = parsed.get("torch") or {}
    cut = [k for k, v in t.items() if isinstance(v, Unknown)]
    cut += [f"GPU name {n}" for n, v in enumerate(t.get("gpu_models") or []) if isinstance(v, Unknown)]
    cut += [f"package {name}" for name in t.get("libraries_cut") or []]
    cut += [f"'{line}'" for line in t.get("lines_cut") or []]
    return cut


def _inside_report(piece: Piece) -> Tuple[Dict[Tuple[str, ...], Piece], Optional[Dict[str, Any]], List[str]]:
    """What an environment report carries inside it: outputs of other commands (collect_env's
    lscpu, the ``nvidia-smi topo -m`` or ``rocm-smi --showtopo`` of vLLM's and sglang's reports),
    and the environment variables vLLM's report lists under fixed prefixes (not the job's whole
    environment: kept with those prefixes, so that only what they cover is taken as known), and
    the values left unread because their line was broken."""
    from hpcdoctor.parse.collect_env import VLLM_ENV_HIDDEN, VLLM_ENV_PREFIXES, parse_collect_env

    parsed = parse_collect_env(piece.text)
    outputs: Dict[Tuple[str, ...], Piece] = {}
    lscpu = parsed.get("lscpu") or ""
    if "Architecture:" in lscpu:
        outputs[("lscpu",)] = Piece(next(k for k in KINDS if k.name == "lscpu"), lscpu + "\n", piece.line)
    topo = parsed.get("gpu_topology") or ""
    if "GPU0" in topo and "CPU Affinity" in topo:
        outputs[("nvidia-smi", "topo", "-m")] = Piece(next(k for k in KINDS if k.name == "nvidia-smi topo -m"), topo, piece.line)
    elif re.search(r"(Weight|Hops|Link Type) between two GPUs", topo):
        outputs[tuple(_SHOWTOPO.argv)] = Piece(_SHOWTOPO, topo, piece.line)
    env = None
    if parsed.get("format") == "vllm" and "env_vars" in parsed:
        env = {"source": "vLLM collect_env", "prefixes": list(VLLM_ENV_PREFIXES), "hidden": list(VLLM_ENV_HIDDEN),
               "vars": parsed["env_vars"]}
    return outputs, env, _broken_lines(parsed)


@contextmanager
def open_paste(paths: Sequence[str], deadline: Optional[float] = None
               ) -> Iterator[Tuple[ReplaySysRoot, List[str], List[str]]]:
    """A snapshot built from pasted texts: (root, recognised pieces, notes). Raises SnapshotError
    when nothing in them is recognised, or when reading them runs past ``deadline``
    (time.monotonic())."""
    recognised: List[str] = []
    notes: List[str] = []
    chosen: Dict[Tuple[str, ...], Piece] = {}
    every: List[Tuple[str, Piece]] = []  # every piece of every file, for the machine guard
    symptoms: List[Dict[str, Any]] = []
    gpus_named: List[Dict[str, Any]] = []
    gpus_shared: List[Dict[str, Any]] = []   # names two GPUs share ("TITAN X"): each with both capabilities
    amd_named: List[Dict[str, Any]] = []
    rocm_versions: List[Dict[str, Any]] = []
    exports: Dict[str, Tuple[str, int]] = {}
    for path in paths:
        text = read_text(path)
        _in_time(deadline, f"reading {path}")
        rec = recognise(text, deadline)
        label = "stdin" if path == "-" else Path(path).name
        # A report's own listing of the environment (vLLM's collect_env) is read with the report.
        inside = [(p.line, p.line + p.text.count("\n")) for p in rec.pieces]
        told = {k: v for k, v in exported(text).items() if not any(a <= v[1] <= b for a, b in inside)}
        exports.update(told)
        if told:
            recognised.append(f"{label}: shell line(s) setting "
                              + ", ".join(f"{k} (line {n})" for k, (_, n) in sorted(told.items(), key=lambda kv: kv[1][1])[:8])
                              + (" ..." if len(told) > 8 else ""))
        found = find_messages(text, check=lambda what: _in_time(deadline, what))
        _in_time(deadline, f"looking for catalogued messages in {path}")
        found += find_unlisted_errors(text, found)
        found.sort(key=lambda s: s["line"])
        symptoms.extend(found)
        named = find_gpu_names(text, deadline)
        gpus_named.extend(dict(g, file=label) for g in named if g["cc"])
        gpus_shared.extend(dict(g, file=label) for g in named if not g["cc"])
        amd = find_amd_gpus(text, deadline)
        amd_named.extend(dict(g, file=label) for g in amd)
        rocm_versions.extend(dict(v, file=label) for v in find_rocm_versions(text, deadline))
        notes.extend(f"{label}: {n}" for n in rec.notes)
        for piece, summary in zip(rec.pieces, rec.summary()):
            recognised.append(f"{label}: {summary}")
            size = len(piece.text.encode("utf-8"))
            if size > MAX_READ_BYTES:
                notes.append(f"{label}: the {piece.kind.name} at line {piece.line} is {size / 2**20:.1f} MiB; "
                             f"only its first {MAX_READ_BYTES >> 20} MiB were read")
            key = tuple(piece.kind.argv) or ("file", str(piece.kind.file))
            every.append((label, piece))
            if key in chosen and piece.kind.joined:
                # `lspci | grep -i nvidia` above `lspci -k -s 01:00.0`: the second holds the driver.
                first = chosen[key]
                # The blank line between keeps them two outputs: neither's blocks run into the other's.
                chosen[key] = Piece(first.kind, first.text + "\n" + piece.text, first.line, first.host)
                continue
            if key in chosen:
                notes.append(f"{label}: a second {piece.kind.name} at line {piece.line}, of the same machine, was not read")
                continue
            chosen[key] = piece
        lines: Dict[str, List[int]] = {}
        means: Dict[str, str] = {}
        for s in found:  # a listing (every NCCL WARN of a log) is one entry, not one per line
            if s.get("listing"):
                lines.setdefault(s["id"], []).append(s["line"])
                means.setdefault(s["id"], s.get("means") or "")
        for sid, at in lines.items():
            where = f"line {at[0]}" if len(at) == 1 else f"{len(at)} lines from {at[0]}"
            # What the lines mean, as for a message read once: "ld_undefined:... (5 lines from 1)" alone says nothing.
            recognised.append(f"{label}: message {sid} ({where})" + (f": {means[sid]}" if means[sid] else ""))
        recognised.extend(f"{label}: {describe(s)}" for s in to_describe(found) if not s.get("listing"))
        if not rec.pieces:
            # Where no tool output names the GPUs, say which name in the text was taken for one.
            recognised.extend(f"{label}: GPU named in the text: {g['gpu']} (line {g['line']})" for g in named + amd)
    # Whatever was read is answered, with the rules it could not judge: a GPU named in prose, an
    # intent, an error line no catalogue knows. Only a paste where nothing at all was read is refused.
    if not chosen and not symptoms and not gpus_named and not gpus_shared and not amd_named:
        what = "; ".join(recognised) or "no known tool output"
        raise SnapshotError(f"nothing hpcdoctor can read in {', '.join(paths)} (recognised: {what}); paste the "
                            "output of python -m torch.utils.collect_env, nvidia-smi -q, lscpu, numactl -H, ...")
    _in_time(deadline, "finding the pieces")
    conflict = disagreement(every)
    if conflict:
        raise SnapshotError(f"{conflict}; paste one machine's outputs at a time")
    listed_env = None
    for argv in (tuple(COLLECT_ENV_ARGV), tuple(SGLANG_ARGV)):
        if argv in chosen:
            outputs, env, cut = _inside_report(chosen[argv])
            if cut:
                notes.append(f"the {chosen[argv].kind.name} at line {chosen[argv].line} has {len(cut)} broken line(s) "
                             f"(wrapped or cut); not read: {', '.join(cut[:6])}{' ...' if len(cut) > 6 else ''}")
            for key, piece in outputs.items():
                chosen.setdefault(key, piece)  # what was pasted on its own wins
            listed_env = listed_env or env
    if exports:
        # What the paste's own export lines set is known; nothing else about the job's environment is.
        told_vars = {k: v for k, (v, _) in exports.items()}
        if listed_env:
            listed_env = dict(listed_env, vars={**listed_env["vars"], **told_vars})
        else:
            listed_env = {"source": EXPORT_SOURCE, "prefixes": [], "hidden": [], "vars": told_vars}
    _in_time(deadline, "reading the environment reports")
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES - 1:] = [f"{len(notes) - MAX_NOTES + 1} more notes left out"]
    if len(recognised) > MAX_NOTES * 4:
        recognised[MAX_NOTES * 4 - 1:] = [f"{len(recognised) - MAX_NOTES * 4 + 1} more pieces and messages left out"]
    tmp = Path(tempfile.mkdtemp(prefix="hpcdoctor-paste-"))
    try:
        (tmp / "cmd").mkdir()
        (tmp / "probes").mkdir()
        index = []
        for n, (argv, piece) in enumerate(chosen.items()):
            if piece.kind.file:
                target = tmp / "fs" / piece.kind.file.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(piece.text, encoding="utf-8")
                continue
            (tmp / "cmd" / f"{n}.txt").write_text(piece.text, encoding="utf-8")
            index.append({"argv": list(argv), "rc": 0, "stdout": f"{n}.txt", "stderr": ""})
        (tmp / "cmd" / "index.json").write_text(json.dumps(index), encoding="utf-8")
        (tmp / "probes" / "ticket.json").write_text(json.dumps({"symptoms": symptoms, "gpus_named": gpus_named,
                                                                 "gpus_named_shared": gpus_shared,
                                                                 "amd_gpus_named": amd_named,
                                                                 "rocm_versions": rocm_versions}),
                                                     encoding="utf-8")
        if listed_env:
            (tmp / "probes" / "env_listed.json").write_text(json.dumps(listed_env), encoding="utf-8")
        yield ReplaySysRoot(tmp, label=", ".join(paths)), recognised, notes
    finally:
        remove_tree(str(tmp))
