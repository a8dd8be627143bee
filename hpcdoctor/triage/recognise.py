"""Recognising tool outputs in pasted text: each tool's output (several may follow one another in
one file, cut short, with Windows line ends), found by the line it starts with, as pieces that
open_paste lays out as a snapshot."""

from __future__ import annotations

import bisect
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from hpcdoctor.parse.collect_env import ARGV as COLLECT_ENV_ARGV
from hpcdoctor.parse.collect_env import SGLANG_ARGV
from hpcdoctor.parse.pasted_report import normalise_colons
from hpcdoctor.parse.rlimits import PROC_ARGV, SHELL_ARGV, START_PROC, START_SHELL
from hpcdoctor.triage.budget import _in_time

# What one paste may make hpcdoctor read and print (issue 27: 16 MiB of alternating ibstat and
# ibv_devinfo lines made 1.3 M pieces, 762 MB and 180 MB of output). A real paste holds a few
# tool outputs; past these the rest is left out with one note saying so.
MAX_PIECES = 64


@dataclass
class Kind:
    name: str
    start: "re.Pattern[str]"
    argv: List[str]                     # the command whose output this is
    per_device: bool = False            # one block per device: adjacent blocks are one output
    file: Optional[str] = None          # or the file whose content this is (argv is then empty)
    joined: bool = False                # several outputs in one paste are read together (each shows part of the bus)


KINDS = [
    Kind("collect_env", re.compile(r"^\s*(Collecting environment information|PyTorch version\s*(?::\s|\s+\d)|"
                                   r"Versions of relevant libraries:?\s*$)"),
         list(COLLECT_ENV_ARGV)),
    Kind("sglang check_env", re.compile(r"^Python: \d+\.\d+"), list(SGLANG_ARGV)),
    Kind("nvidia-smi -q", re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$"), ["nvidia-smi", "-q"]),
    Kind("nvidia-smi -q -x", re.compile(r"^(<\?xml.*\?>\s*)?<(nvidia_smi_log|!DOCTYPE nvidia_smi_log)"), ["nvidia-smi", "-q", "-x"]),
    Kind("nvidia-smi", re.compile(r"^\|\s*NVIDIA-SMI \d"), ["nvidia-smi"]),
    # The same table pasted from its column headings down, its NVIDIA-SMI banner cut off above.
    Kind("nvidia-smi (cut above)", re.compile(r"^\|?\s{0,4}(?:GPU\s{1,4})?Name\s{1,40}Persistence-M\s{0,4}\|\s{0,4}Bus-Id\s{1,20}Disp\.A\s{0,4}\|"),
         ["nvidia-smi"]),
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
    # lspci's line for a GPU or accelerator (lspci.c show_terse), plain or -nn; the devices before it
    # (bridges, NICs) are not read. Every form (-k, -v, grep) is one output: read by parse.lspci.
    Kind("lspci", re.compile(r"^[ \t]{0,4}(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] (?:VGA compatible controller|"
                             r"3D controller|Display controller|XGA compatible controller|Processing accelerators)"
                             r"(?: \[[0-9a-fA-F]{4}\])?: \S"), ["lspci"], per_device=True, joined=True),
    # lshw's display node (print.cc: "*-display", with " UNCLAIMED" when no driver holds it).
    Kind("lshw", re.compile(r"^[ \t]{0,64}\*-display(?::\d{1,3})?(?: (?:DISABLED|UNCLAIMED)){0,2}[ \t]*$"),
         ["lshw", "-C", "display"], per_device=True, joined=True),
    # A shell's resource-limit listing (bash, zsh or dash ulimit -a; zsh or tcsh limit) and the
    # kernel's /proc/PID/limits, from any line of the five limits parse.rlimits reads (a paste
    # often quotes one line): the following lines of the listing are the same output.
    Kind("ulimit -a", START_SHELL, list(SHELL_ARGV), per_device=True),
    Kind("/proc/PID/limits", START_PROC, list(PROC_ARGV), per_device=True),
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


# amd-smi static indents its sections under each "GPU: N" / "CPU: N" heading (ASIC:, BUS:, SMU:).
_AMD_SMI_FIELD = re.compile(r"^[ \t]{2,}[A-Z][A-Z0-9_ ]{1,40}:")


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
        if kind and kind.name == "amd-smi static" and not (i + 1 < len(lines) and _AMD_SMI_FIELD.match(lines[i + 1])):
            kind = None  # "GPU: 3090" in a user's list of their system, not amd-smi's device heading
        if kind is None and line.startswith("\t") and re.match(r"^\tGPU0\b", line):
            kind = next(k for k in KINDS if k.name == "nvidia-smi topo -m")
        if kind and kind.name == "nvidia-smi (cut above)" and starts and starts[-1][1].argv == ["nvidia-smi"] and i - starts[-1][0] <= 8:
            kind = None  # the column headings under a banner: the same table
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
        rec.notes.append(f"lines 1-{first}: no tool output, read for messages only ({before.splitlines()[0][:60]!r}...)")
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
