"""Triage from pasted text: recognise each tool's output in what a user pasted (several may follow
one another in one file, cut short, with Windows line ends), and lay the pieces out as a snapshot
so that the ordinary checks and rules run on them unchanged.

Nothing is invented: a piece is stored as the output of the command that produces it (or, for
/proc/cpuinfo, as that file), and facts that no piece carries stay Unknown.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from hpcdoctor.parse.collect_env import ARGV as COLLECT_ENV_ARGV
from hpcdoctor.parse.collect_env import SGLANG_ARGV, normalise_colons
from hpcdoctor.triage.machines import disagreement
from hpcdoctor.snapshot.bundle import remove_tree
from hpcdoctor.sysroot import MAX_READ_BYTES, ReplaySysRoot, SnapshotError, read_capped
from hpcdoctor.triage.messages import find_messages, find_unlisted_errors
from hpcdoctor.triage.scan import ASCII_LOWER, lines_holding, lower, window_at

MAX_PASTE_BYTES = 16 * 1024 * 1024
# What one paste may make hpcdoctor read and print (issue 27: 16 MiB of alternating ibstat and
# ibv_devinfo lines made 1.3 M pieces, 762 MB and 180 MB of output). A real paste holds a few
# tool outputs; past these the rest is left out with one note saying so.
MAX_PIECES = 64
MAX_NOTES = 32
MAX_LINES_PER_SYMPTOM = 50


class PasteOverBudget(SnapshotError):
    pass


def _in_time(deadline: Optional[float], what: str) -> None:
    """Reading a paste is pure Python holding the interpreter: it counts against --budget and
    checks the clock as it goes, rather than being stopped from outside."""
    if deadline is not None and time.monotonic() > deadline:
        raise PasteOverBudget(f"reading the paste did not finish within the budget ({what}); "
                              "paste less, or give a larger --budget")


@dataclass
class Kind:
    name: str
    start: "re.Pattern[str]"
    argv: List[str]                     # the command whose output this is
    per_device: bool = False            # one block per device: adjacent blocks are one output
    file: Optional[str] = None          # or the file whose content this is (argv is then empty)


KINDS = [
    Kind("collect_env", re.compile(r"^\s*(Collecting environment information|PyTorch version\s*(?::\s|\s+\d)|"
                                   r"Versions of relevant libraries:?\s*$)"),
         list(COLLECT_ENV_ARGV)),
    Kind("sglang check_env", re.compile(r"^Python: \d+\.\d+"), list(SGLANG_ARGV)),
    Kind("nvidia-smi -q", re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$"), ["nvidia-smi", "-q"]),
    Kind("nvidia-smi -q -x", re.compile(r"^(<\?xml.*\?>\s*)?<(nvidia_smi_log|!DOCTYPE nvidia_smi_log)"), ["nvidia-smi", "-q", "-x"]),
    Kind("nvidia-smi", re.compile(r"^\|\s*NVIDIA-SMI \d"), ["nvidia-smi"]),
    Kind("nvidia-smi topo -m", re.compile(r"^\s*GPU0[\s\S]*(CPU Affinity|NUMA Affinity)"), ["nvidia-smi", "topo", "-m"]),
    Kind("lscpu", re.compile(r"^Architecture:\s+\S+"), ["lscpu"]),
    Kind("/proc/cpuinfo", re.compile(r"^processor\s*:\s*\d+\s*$"), [], per_device=True, file="/proc/cpuinfo"),
    Kind("numactl -H", re.compile(r"^available: \d+ nodes"), ["numactl", "-H"]),
    Kind("ibstat", re.compile(r"^CA '[^']+'"), ["ibstat"], per_device=True),
    Kind("ibstatus", re.compile(r"^Infiniband device '[^']+' port"), ["ibstatus"], per_device=True),
    Kind("ibv_devinfo", re.compile(r"^hca_id:\s*\S+"), ["ibv_devinfo"], per_device=True),
    Kind("fi_info", re.compile(r"^provider: \S+"), ["fi_info", "-p", "cxi"], per_device=True),
    Kind("amd-smi static --json", re.compile(r'^\s*[\[{]\s*("gpu_data"|$)'), ["amd-smi", "static", "--json"]),
    Kind("rocm-smi", re.compile(r"^\s*=+\s*(ROCm System Management Interface|Concise Info)\s*=+"), ["rocm-smi"],
         per_device=True),
    # --showtopo's and --showtoponuma's sections, pasted without the banner above them.
    Kind("rocm-smi section", re.compile(r"^\s*=+\s*(Weight between two GPUs|Numa Nodes)\s*=+"), ["rocm-smi"]),
    Kind("amd-smi static", re.compile(r"^(GPU|CPU): \d+\s*$"), ["amd-smi", "static"], per_device=True),
]


# One match per line tells whether any kind may start there: most lines start none, and trying
# each kind's pattern on every line of a 16 MiB paste cost seconds.
# The first alternative that matches names the kind, as trying KINDS in order would.
_ANY_START = re.compile("|".join(f"(?P<k{n}>{k.start.pattern})" for n, k in enumerate(KINDS)))


@dataclass
class Piece:
    kind: Kind
    text: str
    line: int
    host: Optional[str] = None  # the host name of the shell prompt right above it, if any


# A shell prompt with the command after it: "user@host:~/dir$ cmd", "(env) user@host:/# cmd"
# (Debian/Ubuntu's default PS1) or "[user@host dir]$ cmd" (Red Hat's). The host it names is the
# machine that ran the command whose output follows.
_PROMPT = re.compile(r"^\s{0,4}(?:\([^()\n]{1,60}\)\s{1,4})?(?:[A-Za-z0-9_][\w.-]{0,31}@(?P<host>[A-Za-z0-9][\w.-]{0,62}):[^\n$#]{0,200}"
                     r"|\[[A-Za-z0-9_][\w.-]{0,31}@(?P<host2>[A-Za-z0-9][\w.-]{0,62}) [^\]\n]{0,200}\])[$#] ?\S")


def _prompt_host(lines: List[str], start: int) -> Optional[str]:
    """The host of the prompt on the nearest non-blank line above line ``start`` (two at most)."""
    for j in range(start - 1, max(start - 3, -1), -1):
        if lines[j].strip():
            m = _PROMPT.match(lines[j])
            return (m.group("host") or m.group("host2")) if m else None
    return None


@dataclass
class Recognition:
    pieces: List[Piece] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def summary(self) -> List[str]:
        return [f"{p.kind.name} (line {p.line})" for p in self.pieces]


_SPACE = re.compile(r"\s*")


def _json_end(text: str, offset: int) -> int:
    """Where the JSON document starting at offset ends (the end of the text when it does not).
    Decoded in place: slicing the rest of the text at every start made many short documents
    quadratic (issue 19)."""
    try:
        _, end = json.JSONDecoder().raw_decode(text, _SPACE.match(text, offset).end())
        return end
    except (ValueError, RecursionError):
        return len(text)


def _is_json_kind(head: str) -> Optional[str]:
    """A JSON document whose first 40 lines are head: amd-smi (gpu_data / asic) or rocm-smi (card0)."""
    if '"card0"' in head or '"card1"' in head:
        return "rocm-smi --json"
    if '"gpu_data"' in head or '"asic"' in head:
        return "amd-smi static --json"
    return None


def recognise(text: str, deadline: Optional[float] = None) -> Recognition:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = normalise_colons(text)
    if "\n>" in text or text.startswith(">"):
        # A Markdown quote ("> " before each line of a pasted report) is not part of the output.
        text = re.sub(r"(?m)^[ \t]{0,3}> ?", "", text)
    lines = text.split("\n")
    # Where each line starts in the text, for JSON documents that span lines.
    line_at = list(itertools.accumulate((len(l) + 1 for l in lines), initial=0))
    cut_line = None
    if lines[-1].strip() and not lines[-1].rstrip().endswith(("}", "]", ">", "=", "+", "|")):
        # No line end after a text line: the paste may stop inside it, and a value read from it
        # ("Nvidia driver version: 5", "PyTorch version: 2.1") would be wrong, not just short.
        # Leaving out a whole last line costs one fact; JSON, XML and table ends are kept.
        cut_line = (len(lines), lines[-1])
        lines[-1] = ""
    starts: List[Tuple[int, Kind]] = []
    rocm_seen = {"between": False, "only_banners": True}
    json_markers = [m.start() for m in re.finditer(r'"(?:card\d|gpu_data|asic)"', text)]
    i = 0
    inside_until = -1
    cut_at = None
    while i < len(lines):
        line = lines[i]
        if i & 0x1fff == 0:
            _in_time(deadline, f"recognising line {i + 1}")
        if i < inside_until:
            i += 1
            continue
        m = _ANY_START.match(line)
        kind = KINDS[int(m.lastgroup[1:])] if m else None
        if kind and kind.name == "amd-smi static --json":
            # Only where a marker lies in the next 40 lines (found once in the whole text): a
            # paste of many "{" lines would otherwise look ahead at every one of them.
            k = bisect.bisect_left(json_markers, line_at[i])
            near = k < len(json_markers) and json_markers[k] < line_at[min(i + 40, len(lines))]
            which = _is_json_kind(text[line_at[i]:line_at[min(i + 40, len(lines))]]) if near else None
            if which is None:
                kind = None
            elif which == "rocm-smi --json":
                kind = Kind("rocm-smi --json", kind.start, ["rocm-smi", "--showallinfo", "--json"])
        if kind is None and line.startswith("\t") and re.match(r"^\tGPU0\b", line):
            kind = next(k for k in KINDS if k.name == "nvidia-smi topo -m")
        if kind and kind.name == "nvidia-smi topo -m" and not re.search(r"GPU0", line):
            kind = None
        if kind and kind.name == "sglang check_env" and not any(
                re.match(r"^(CUDA|ROCM) available: ", l) for l in lines[i + 1:i + 4]):
            kind = None
        if kind and kind.per_device and starts and starts[-1][1].name == kind.name and not (
                kind.name == "rocm-smi" and "ROCm System Management Interface" in line):
            kind = None  # the next device's block of the same output (each rocm-smi run has one banner)
        if kind and kind.name == "rocm-smi section" and starts and _continues_rocm_output(rocm_seen, line,
                                                                                       starts[-1][1]):
            kind = None
        # What the lines since the last start held, kept as they go by (rescanning them at every
        # section heading was quadratic).
        if kind:
            rocm_seen = {"between": False, "only_banners": True}
        rocm_seen["between"] = rocm_seen["between"] or "between two GPUs" in line
        rocm_seen["only_banners"] = rocm_seen["only_banners"] and bool(not line.strip() or _BANNER_LINE.match(line))
        if kind and len(starts) >= MAX_PIECES:
            cut_at = i
            break
        if kind:
            starts.append((i, kind))
            # Skip what belongs to this piece: nested headers (collect_env's lscpu, XML, JSON).
            if kind.name == "collect_env":
                inside_until = _collect_env_end(lines, i)
            elif kind.name == "sglang check_env":
                inside_until = next((j + 1 for j in range(i, len(lines)) if lines[j].startswith("ulimit soft:")), len(lines))
            elif kind.name == "nvidia-smi -q -x":
                inside_until = next((j + 1 for j in range(i, len(lines)) if "</nvidia_smi_log>" in lines[j]), len(lines))
            elif kind.argv[-1:] == ["--json"]:
                end = _json_end(text, line_at[i])
                inside_until = bisect.bisect_right(line_at, end)
        i += 1
    if cut_at is not None:
        lines = lines[:cut_at]
    # rocm-smi's outputs share a banner: tell them apart by their sections and lines.
    for n, (start, kind) in enumerate(starts):
        if kind.argv == ["rocm-smi"]:
            end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
            body = lines[start:end]
            device_lines = [l for l in body if re.match(r"^GPU\[\d+\]", l)]
            if any(re.search(r"(Weight|Hops|Link Type) between two GPUs", l) for l in body):
                starts[n] = (start, Kind("rocm-smi --showtopo", kind.start, ["rocm-smi", "--showtopo"]))
            elif device_lines and all("(Topology)" in l for l in device_lines):
                starts[n] = (start, Kind("rocm-smi --showtoponuma", kind.start, ["rocm-smi", "--showtoponuma"]))
            elif device_lines:
                starts[n] = (start, Kind("rocm-smi -a", kind.start, ["rocm-smi", "-a"]))
    rec = Recognition()
    if cut_at is not None:
        rec.notes.append(f"line {cut_at + 1}: more than {MAX_PIECES} tool outputs; the rest of the paste was not read")
    if cut_line and cut_at is None:
        rec.notes.append(f"line {cut_line[0]}: cut off mid-line ({cut_line[1].strip()[:40]!r}...), left out")
    first = starts[0][0] if starts else len(lines)
    before = "\n".join(lines[:first]).strip()
    if before and not re.fullmatch(r"(?s).*Permission needed.*", before):
        rec.notes.append(f"lines 1-{first}: not recognised ({before.splitlines()[0][:60]!r}...)")
    for n, (start, kind) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        rec.pieces.append(Piece(kind, "\n".join(lines[start:end]).rstrip() + "\n", start + 1, _prompt_host(lines, start)))
    return rec


_BANNER_LINE = re.compile(r"^\s*=+.*=+\s*$")


def _continues_rocm_output(seen: Dict[str, bool], line: str, previous: Kind) -> bool:
    """Whether a --showtopo/--showtoponuma section heading belongs to the rocm-smi output above it
    (``seen`` tells what the lines since its start held): right under its banner, or --showtopo's
    next matrices and its NUMA part; not a concise table's."""
    if previous.argv != ["rocm-smi"]:
        return False
    if "Numa Nodes" not in line or seen["between"]:
        return True
    return seen["only_banners"]


_VLLM_TAIL = re.compile(r"^(=+\s*$|\s*vLLM Info|\s*Environment Variables|(ROCM|Neuron SDK|vLLM) Version\s*:|vLLM Build Flags:|"
                        r"CUDA Archs:|\[conda\].*ROCM Version:)")
_ENV_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _collect_env_end(lines: List[str], i: int) -> int:
    """collect_env ends after its library list ([pip3] / [conda] lines), or at the end. vLLM's
    copy goes on with its version, build flags, GPU topology (any tool's text) and environment."""
    indent = len(lines[i]) - len(lines[i].lstrip())
    j = i
    state = "head"
    versions = 0
    while j < len(lines):
        line = lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j]
        # A report cut before its library list ends where the next one starts: two machines'
        # reports must stay two pieces for the machine guard, not be read as one.
        if state == "head" and j > i:
            if re.match(r"^\s*Collecting environment information", line):
                return j
            if re.match(r"^\s*PyTorch version\s*[:：]?\s*\d", line):
                versions += 1
                if versions > 1 or (versions == 1 and not re.match(r"^\s*Collecting", lines[i]) and j > i):
                    return j
        if state == "head" and re.match(r"^(=+\s*)?Versions of relevant libraries", line.strip()):
            state = "libs"
        elif state == "libs" and line.strip() and not re.match(r"^(\[(pip\d?|conda)\]|=+$)", line):
            if not _VLLM_TAIL.match(line):
                return j
            state = "vllm"
        if state == "vllm":
            if line.startswith("GPU Topology:"):
                state = "topo"
            elif line.strip() and not (_VLLM_TAIL.match(line) or _ENV_LINE.match(line) or line.startswith("  ")):
                return j
        elif state == "topo" and (_ENV_LINE.match(line) or re.match(r"^=+$", line.strip())):
            state = "vllm"
        j += 1
    return len(lines)


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


def find_symptoms(text: str, deadline: Optional[float] = None) -> List[Dict[str, Any]]:
    """Known error and log messages in a paste (knowledge/symptoms.toml), with their line.

    Linear in the paste: each entry's needle is looked up in the whole text (str.find), and its
    pattern, whose quantifiers are bounded, runs only on the window around a line holding it."""
    from hpcdoctor import knowledge

    table = knowledge.load("symptoms")["symptoms"]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    low = lower(text)
    found: List[Dict[str, Any]] = []
    for sid, entry in table.items():
        _in_time(deadline, f"looking for message {sid}")
        rx = re.compile(entry["pattern"])
        listed = 0
        for line_no, start, end in lines_holding(text, low, entry["needle"].translate(ASCII_LOWER)):
            if listed >= MAX_LINES_PER_SYMPTOM:
                break
            # A listing (all = true) is matched line by line; a message with the lines around it.
            # A message printed on one line (`line = true`) is matched on its line alone: building the
            # window for every line that holds a short needle cost seconds on a 16 MiB paste.
            m = rx.search(text[start:end][:4096] if entry.get("all") or entry.get("line") else window_at(text, start, end)[0])
            if m:
                found.append({"id": sid, "line": line_no, "text": text[start:end].strip()[:300], "means": entry["means"],
                              **{k: v[:300] for k, v in m.groupdict().items() if v is not None}})
                listed += 1
                if not entry.get("all"):
                    break
    found.sort(key=lambda s: s["line"])
    return found


# GPU product names written in a ticket's prose ("16 GB T4 GPU", "GPU NVIDIA TITAN RTX", "I have a
# RTX 3090", "GPU is NVIDIA T1000"): only whole product names, a brand line (RTX/GTX/TITAN/Quadro)
# with its model number, or a bare model ("T4", "V100S") with NVIDIA/Tesla before it or "GPU" after
# it. Each is resolved by the token matcher (hpcdoctor.knowledge.gpus.lookup); a name it does not resolve to
# one compute capability is left out, never guessed. Quantifiers are bounded (issue 19).
_GPU_IN_PROSE = re.compile(
    r"(?<![\w.-])(?P<name>"
    r"(?:NVIDIA[ \t]{1,3})?(?:GeForce[ \t]{1,3})?(?:RTX|GTX)[ \t]{0,2}A?\d{3,4}(?:[ \t]{0,2}(?:Ti|SUPER|Super)(?![\w]))?"
    r"|(?:NVIDIA[ \t]{1,3})?TITAN[ \t]{1,3}(?:RTX|Xp|X|V)(?![\w])"
    r"|(?:NVIDIA[ \t]{1,3})?Quadro[ \t]{1,3}(?:RTX[ \t]{1,3})?[A-Z]{0,2}\d{3,4}(?![\w])"
    r"|(?:NVIDIA[ \t]{1,3}(?:Tesla[ \t]{1,3})?|Tesla[ \t]{1,3})[A-Z]{1,2}\d{1,4}[A-Z]{0,2}(?:-[A-Za-z0-9]{1,10}){0,3}(?![\w-])"
    r"|[A-Z]{1,2}\d{1,4}[A-Z]?(?=[ \t]{1,3}GPUs?\b))")


# Every alternative of _GPU_IN_PROSE holds one of these words: lines without any are not tried
# (the whole pattern over 16 MiB of other lines took 4 s; issue 27).
_GPU_WORDS = re.compile(r"RTX|GTX|TITAN|Quadro|NVIDIA|Tesla|GPU")


def _gpu_candidates(text: str, deadline: Optional[float]) -> Iterator["re.Match[str]"]:
    """_GPU_IN_PROSE's matches, tried from the line of the next GPU word on, about 64 KB at a time
    (ended at a line end, else at a blank), the clock checked between pieces."""
    pos = 0
    while True:
        _in_time(deadline, "looking for GPU names")
        w = _GPU_WORDS.search(text, pos)
        if w is None:
            return
        start = max(text.rfind("\n", 0, w.start()) + 1, pos)
        end = text.find("\n", w.end() + _SEGMENT)
        if end == -1 or end - w.end() > 2 * _SEGMENT:  # one long line: end at a blank, or cut
            blank = text.find(" ", w.end() + _SEGMENT, w.end() + 2 * _SEGMENT)
            end = min(len(text), w.end() + 2 * _SEGMENT) if blank == -1 else blank
        for m in _GPU_IN_PROSE.finditer(text, start, end):
            yield m
            pos = m.end()
        pos = max(pos, end)


_SEGMENT = 1 << 16


def find_gpu_names(text: str, deadline: Optional[float] = None) -> List[Dict[str, Any]]:
    """NVIDIA GPUs named in a paste's prose (see _GPU_IN_PROSE), one entry per distinct name, each
    with the compute capability the GPU table gives it (the fact ticket.gpus_named). Rules read
    them only where no tool output names the node's GPUs."""
    from hpcdoctor.knowledge import gpus

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found: Dict[str, Dict[str, Any]] = {}
    for m in _gpu_candidates(text, deadline):
        name = re.sub(r"[ \t]{1,3}", " ", m.group("name"))
        if name in found or len(found) >= 32:
            continue
        entry = gpus.lookup(name)
        if not entry or entry.get("vendor", "nvidia") != "nvidia" or not entry.get("cc"):
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        found[name] = {"gpu": name, "cc": str(entry["cc"]), "line": text.count("\n", 0, m.start()) + 1,
                       "text": text[start:len(text) if end == -1 else end].strip()[:300]}
    return list(found.values())


def describe(symptom: Dict[str, Any]) -> str:
    """One line of the reply's "read" list for a catalogued message or an unlisted error line."""
    if symptom["id"] == "unlisted-error" or symptom.get("unlisted"):
        return f"line {symptom['line']}: not in hpcdoctor's catalogue: {symptom['text'][:160]}"
    code = f" ({symptom['code']})" if symptom.get("code") not in (None, "") else ""
    return f"line {symptom['line']}: {symptom['family']} {symptom['key']}{code}: {symptom['means']}"


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
    for path in paths:
        text = read_text(path)
        _in_time(deadline, f"reading {path}")
        rec = recognise(text, deadline)
        label = "stdin" if path == "-" else Path(path).name
        found = find_symptoms(text, deadline) + find_messages(text)
        _in_time(deadline, f"looking for catalogued messages in {path}")
        found += find_unlisted_errors(text, found)
        found.sort(key=lambda s: s["line"])
        symptoms.extend(found)
        named = find_gpu_names(text, deadline)
        gpus_named.extend(dict(g, file=label) for g in named)
        notes.extend(f"{label}: {n}" for n in rec.notes)
        for piece, summary in zip(rec.pieces, rec.summary()):
            recognised.append(f"{label}: {summary}")
            size = len(piece.text.encode("utf-8"))
            if size > MAX_READ_BYTES:
                notes.append(f"{label}: the {piece.kind.name} at line {piece.line} is {size / 2**20:.1f} MiB; "
                             f"only its first {MAX_READ_BYTES >> 20} MiB were read")
            key = tuple(piece.kind.argv) or ("file", str(piece.kind.file))
            every.append((label, piece))
            if key in chosen:
                notes.append(f"{label}: a second {piece.kind.name} at line {piece.line}, of the same machine, was not read")
                continue
            chosen[key] = piece
        lines: Dict[str, List[int]] = {}
        for s in found:  # a listing (every NCCL WARN of a log) is one entry, not one per line
            if ":" not in s["id"] and s["id"] != "unlisted-error":
                lines.setdefault(s["id"], []).append(s["line"])
        for sid, at in lines.items():
            where = f"line {at[0]}" if len(at) == 1 else f"{len(at)} lines from {at[0]}"
            recognised.append(f"{label}: message {sid} ({where})")
        recognised.extend(f"{label}: {describe(s)}" for s in found if ":" in s["id"] or s["id"] == "unlisted-error")
        if not rec.pieces:
            # Where no tool output names the GPUs, say which name in the text was taken for one.
            recognised.extend(f"{label}: GPU named in the text: {g['gpu']} (line {g['line']})" for g in named)
    # Whatever was read is answered, with the rules it could not judge: a GPU named in prose, an
    # intent, an error line no catalogue knows. Only a paste where nothing at all was read is refused.
    if not chosen and not symptoms and not gpus_named:
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
        (tmp / "probes" / "ticket.json").write_text(json.dumps({"symptoms": symptoms, "gpus_named": gpus_named}),
                                                     encoding="utf-8")
        if listed_env:
            (tmp / "probes" / "env_listed.json").write_text(json.dumps(listed_env), encoding="utf-8")
        yield ReplaySysRoot(tmp, label=", ".join(paths)), recognised, notes
    finally:
        remove_tree(str(tmp))
