"""Triage from pasted text: recognise each tool's output in what a user pasted (several may follow
one another in one file, cut short, with Windows line ends), and lay the pieces out as a snapshot
so that the ordinary checks and rules run on them unchanged.

Nothing is invented: a piece is stored as the output of the command that produces it, and facts
that no piece carries stay Unknown.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from hpcdoctor.parse.collect_env import ARGV as COLLECT_ENV_ARGV
from hpcdoctor.sysroot import ReplaySysRoot, SnapshotError

MAX_PASTE_BYTES = 16 * 1024 * 1024


@dataclass
class Kind:
    name: str
    start: "re.Pattern[str]"
    argv: List[str]                     # the command whose output this is
    per_device: bool = False            # one block per device: adjacent blocks are one output


KINDS = [
    Kind("collect_env", re.compile(r"^(Collecting environment information|PyTorch version: )"),
         list(COLLECT_ENV_ARGV)),
    Kind("nvidia-smi -q", re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$"), ["nvidia-smi", "-q"]),
    Kind("nvidia-smi -q -x", re.compile(r"^(<\?xml.*\?>\s*)?<(nvidia_smi_log|!DOCTYPE nvidia_smi_log)"), ["nvidia-smi", "-q", "-x"]),
    Kind("nvidia-smi", re.compile(r"^\|\s*NVIDIA-SMI \d"), ["nvidia-smi"]),
    Kind("nvidia-smi topo -m", re.compile(r"^\s*GPU0[\s\S]*(CPU Affinity|NUMA Affinity)"), ["nvidia-smi", "topo", "-m"]),
    Kind("lscpu", re.compile(r"^Architecture:\s+\S+"), ["lscpu"]),
    Kind("numactl -H", re.compile(r"^available: \d+ nodes"), ["numactl", "-H"]),
    Kind("ibstat", re.compile(r"^CA '[^']+'"), ["ibstat"], per_device=True),
    Kind("ibstatus", re.compile(r"^Infiniband device '[^']+' port"), ["ibstatus"], per_device=True),
    Kind("fi_info", re.compile(r"^provider: \S+"), ["fi_info", "-p", "cxi"], per_device=True),
    Kind("amd-smi static --json", re.compile(r'^\s*[\[{]\s*("gpu_data"|$)'), ["amd-smi", "static", "--json"]),
    Kind("rocm-smi", re.compile(r"^=+\s*(ROCm System Management Interface|Concise Info)\s*=+"), ["rocm-smi"],
         per_device=True),
    Kind("amd-smi static", re.compile(r"^(GPU|CPU): \d+\s*$"), ["amd-smi", "static"], per_device=True),
]


@dataclass
class Piece:
    kind: Kind
    text: str
    line: int


@dataclass
class Recognition:
    pieces: List[Piece] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def summary(self) -> List[str]:
        return [f"{p.kind.name} (line {p.line})" for p in self.pieces]


def _json_end(text: str, offset: int) -> int:
    try:
        _, end = json.JSONDecoder().raw_decode(text[offset:].lstrip())
        return offset + (len(text[offset:]) - len(text[offset:].lstrip())) + end
    except ValueError:
        return len(text)


def _is_json_kind(lines: List[str], i: int) -> Optional[str]:
    """A JSON document starting at line i: amd-smi (gpu_data / asic) or rocm-smi (card0)."""
    head = "\n".join(lines[i:i + 40])
    if '"card0"' in head or '"card1"' in head:
        return "rocm-smi --json"
    if '"gpu_data"' in head or '"asic"' in head:
        return "amd-smi static --json"
    return None


def recognise(text: str) -> Recognition:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = text.split("\n")
    starts: List[Tuple[int, Kind]] = []
    i = 0
    inside_until = -1
    while i < len(lines):
        line = lines[i]
        if i < inside_until:
            i += 1
            continue
        kind = next((k for k in KINDS if k.start.match(line)), None)
        if kind and kind.name == "amd-smi static --json":
            which = _is_json_kind(lines, i)
            if which is None:
                kind = None
            elif which == "rocm-smi --json":
                kind = Kind("rocm-smi --json", kind.start, ["rocm-smi", "--showallinfo", "--json"])
        if kind is None and line.startswith("\t") and re.match(r"^\tGPU0\b", line):
            kind = next(k for k in KINDS if k.name == "nvidia-smi topo -m")
        if kind and kind.name == "nvidia-smi topo -m" and not re.search(r"GPU0", line):
            kind = None
        if kind and kind.per_device and starts and starts[-1][1].name == kind.name:
            kind = None  # the next device's block of the same output
        if kind:
            starts.append((i, kind))
            # Skip what belongs to this piece: nested headers (collect_env's lscpu, XML, JSON).
            if kind.name == "collect_env":
                inside_until = _collect_env_end(lines, i)
            elif kind.name == "nvidia-smi -q -x":
                inside_until = next((j + 1 for j in range(i, len(lines)) if "</nvidia_smi_log>" in lines[j]), len(lines))
            elif kind.argv[-1] == "--json":
                offset = sum(len(l) + 1 for l in lines[:i])
                end = _json_end(text, offset)
                inside_until = text[:end].count("\n") + 1
        i += 1
    # rocm-smi -a and the concise table share a banner: tell them apart by their lines.
    for n, (start, kind) in enumerate(starts):
        if kind.name == "rocm-smi":
            end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
            if any(re.match(r"^GPU\[\d+\]", l) for l in lines[start:end]):
                starts[n] = (start, Kind("rocm-smi -a", kind.start, ["rocm-smi", "-a"]))
    rec = Recognition()
    first = starts[0][0] if starts else len(lines)
    before = "\n".join(lines[:first]).strip()
    if before and not re.fullmatch(r"(?s).*Permission needed.*", before):
        rec.notes.append(f"lines 1-{first}: not recognised ({before.splitlines()[0][:60]!r}...)")
    for n, (start, kind) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        rec.pieces.append(Piece(kind, "\n".join(lines[start:end]).rstrip() + "\n", start + 1))
    return rec


def _collect_env_end(lines: List[str], i: int) -> int:
    """collect_env ends after its library list ([pip3] / [conda] lines), or at the end."""
    j = i
    in_libs = False
    while j < len(lines):
        line = lines[j]
        if line.startswith("Versions of relevant libraries"):
            in_libs = True
        elif in_libs and line.strip() and not re.match(r"^\[(pip\d?|conda)\]", line):
            return j
        j += 1
    return len(lines)


def _gpu_names(chosen) -> List[Tuple[str, List[str]]]:
    """GPU model lists each pasted piece states, to catch pastes from two machines."""
    from hpcdoctor.parse import collect_env, nvsmi_q, nvsmi_xml

    found = []
    for argv, piece in chosen.items():
        try:
            if argv == tuple(COLLECT_ENV_ARGV):
                names = collect_env.parse_collect_env(piece.text)["torch"].get("gpu_models") or []
            elif argv == ("nvidia-smi", "-q"):
                names = [g["name"] for g in nvsmi_q.parse(piece.text)["gpus"] if isinstance(g["name"], str)]
            elif argv == ("nvidia-smi", "-q", "-x"):
                names = [g["name"] for g in nvsmi_xml.parse(piece.text)["gpus"] if isinstance(g["name"], str)]
            else:
                continue
        except ValueError:
            continue
        if names:
            found.append((piece.kind.name, names))
    return found


def _machines_disagree(chosen) -> Optional[str]:
    lists = _gpu_names(chosen)
    models = {kind: sorted(set(names)) for kind, names in lists}
    if len({tuple(v) for v in models.values()}) > 1:
        return "; ".join(f"{k}: {', '.join(v)}" for k, v in models.items())
    return None


def read_text(path: str) -> str:
    """A paste from a file or '-' (standard input), refused when binary or empty."""
    import sys

    if path == "-":
        data = sys.stdin.buffer.read(MAX_PASTE_BYTES + 1)
    else:
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_PASTE_BYTES + 1)
        except OSError as exc:
            raise SnapshotError(f"{path}: {exc.strerror or exc}") from None
    label = "standard input" if path == "-" else path
    if len(data) > MAX_PASTE_BYTES:
        raise SnapshotError(f"{label}: larger than any paste ({MAX_PASTE_BYTES >> 20} MiB)")
    if b"\x00" in data[:65536]:
        raise SnapshotError(f"{label}: a binary file, not a snapshot or pasted text")
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise SnapshotError(f"{label}: empty")
    return text


@contextmanager
def open_paste(paths: Sequence[str]) -> Iterator[Tuple[ReplaySysRoot, List[str], List[str]]]:
    """A snapshot built from pasted texts: (root, recognised pieces, notes). Raises SnapshotError
    when nothing in them is recognised."""
    recognised: List[str] = []
    notes: List[str] = []
    chosen = {}
    for path in paths:
        rec = recognise(read_text(path))
        label = "stdin" if path == "-" else Path(path).name
        notes.extend(f"{label}: {n}" for n in rec.notes)
        for piece, text in zip(rec.pieces, rec.summary()):
            recognised.append(f"{label}: {text}")
            key = tuple(piece.kind.argv)
            if key in chosen:
                notes.append(f"{label}: a second {piece.kind.name} at line {piece.line} was ignored "
                             "(two machines in one paste? paste one node at a time)")
                continue
            chosen[key] = piece
    if not chosen:
        what = "; ".join(recognised) or "no known tool output"
        raise SnapshotError(f"nothing hpcdoctor can read in {', '.join(paths)} (recognised: {what}); paste the "
                            "output of python -m torch.utils.collect_env, nvidia-smi -q, lscpu, numactl -H, ...")
    conflict = _machines_disagree(chosen)
    if conflict:
        raise SnapshotError(f"the pasted outputs describe different machines ({conflict}): "
                            f"recognised {'; '.join(recognised)}; paste one node's outputs at a time")
    # collect_env carries an lscpu: use it when no separate lscpu was pasted.
    ce = chosen.get(tuple(COLLECT_ENV_ARGV))
    if ce and ("lscpu",) not in chosen:
        m = re.search(r"^CPU:\n(.*?)(?:\n\n|\nVersions of relevant libraries)", ce.text, re.S | re.M)
        if m and "Architecture:" in m.group(1):
            chosen[("lscpu",)] = Piece(next(k for k in KINDS if k.name == "lscpu"), m.group(1) + "\n", ce.line)
    tmp = Path(tempfile.mkdtemp(prefix="hpcdoctor-paste-"))
    try:
        (tmp / "cmd").mkdir()
        index = []
        for n, (argv, piece) in enumerate(chosen.items()):
            (tmp / "cmd" / f"{n}.txt").write_text(piece.text, encoding="utf-8")
            index.append({"argv": list(argv), "rc": 0, "stdout": f"{n}.txt", "stderr": ""})
        (tmp / "cmd" / "index.json").write_text(json.dumps(index), encoding="utf-8")
        yield ReplaySysRoot(tmp, label=", ".join(paths)), recognised, notes
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
