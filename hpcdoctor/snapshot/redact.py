"""``--redact``: hide host names, serial numbers, GPU UUIDs and user names in a snapshot folder.

Each distinct value gets a stable placeholder (host-1, serial-1, uuid-1, user-1): the same value
maps to the same placeholder in every file, so a redacted snapshot still shows that two GPUs are
distinct or that the same host appears twice.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List

UUID_RE = re.compile(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")


class Redactor:
    def __init__(self) -> None:
        self.mapping: Dict[str, str] = {}
        self.counts: Dict[str, int] = {}

    def add(self, kind: str, value: Any) -> None:
        if not isinstance(value, str):
            return
        value = value.strip()
        # Short or generic values ("0", "N/A", "root"'s uid) would turn into noise everywhere.
        if len(value) < 2 or value.upper() in ("N/A", "NONE", "UNKNOWN") or value in self.mapping:
            return
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.mapping[value] = f"{kind}-{self.counts[kind]}"
        # NVML names a GPU "GPU-<uuid>" (a MIG instance "MIG-<uuid>"); torch's device properties,
        # which the benchmark payload records, print the same 16 bytes without the prefix.
        if kind == "uuid" and value.startswith(("GPU-", "MIG-")) and len(value) > 12:
            self.mapping.setdefault(value[4:], self.mapping[value])

    def apply(self, text: str) -> str:
        text = UUID_RE.sub(lambda m: self._uuid(m.group(0)), text)
        values = [v for v in sorted(self.mapping, key=len, reverse=True) if not v.startswith(("GPU-", "MIG-"))]
        if values:
            # Whole alphanumeric tokens: host "vm" must not turn "kvm" into "khost-1", but a name
            # glued to "_" or "-" (/scratch/gpu042_tmp/bob_7, bob-lab, gpu042-ib) is still a name.
            pattern = re.compile(r"(?<![A-Za-z0-9])(%s)(?![A-Za-z0-9])" % "|".join(re.escape(v) for v in values))
            text = pattern.sub(lambda m: self.mapping[m.group(1)], text)
        return text

    def _uuid(self, value: str) -> str:
        if value not in self.mapping:
            self.counts["uuid"] = self.counts.get("uuid", 0) + 1
            self.mapping[value] = f"GPU-uuid-{self.counts['uuid']}"
        return self.mapping[value]


def sensitive_values(facts: Dict[str, Any], env: Dict[str, str]) -> Redactor:
    r = Redactor()
    r.add("host", (facts.get("system") or {}).get("hostname"))
    for name in ("HOSTNAME", "SLURMD_NODENAME", "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_SUBMIT_HOST",
                 "SLURM_TOPOLOGY_ADDR", "MASTER_ADDR"):
        r.add("host", env.get(name))
    for name in ("SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST"):
        for host in expand_nodelist(env.get(name) or ""):
            r.add("host", host)
    for name in ("USER", "LOGNAME", "SLURM_JOB_USER"):
        r.add("user", env.get(name))
    home = env.get("HOME")
    if home and home.rstrip("/").rsplit("/", 1)[-1] not in ("root", ""):
        r.add("user", home.rstrip("/").rsplit("/", 1)[-1])
    for g in facts.get("gpus") or []:
        if isinstance(g, dict):
            r.add("serial", g.get("serial"))
            r.add("uuid", g.get("uuid"))
    return r


_MAX_HOSTS = 4096  # a node list is the job's, bounded; past this the names are not worth the time


def expand_nodelist(spec: str) -> List[str]:
    """Host names in a Slurm node list: "gpu042-ib,gpu[043-045,047]" gives gpu042-ib and gpu043 to
    gpu047 as listed. Malformed pieces are kept as they are (they are still names to hide)."""
    hosts: List[str] = []
    for piece in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", spec):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", piece)
        if not m:
            hosts.append(piece)
            continue
        prefix, ranges, suffix = m.groups()
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdecimal() or (hi and not hi.isdecimal()):
                hosts.append(piece)
                break
            end = int(hi) if hi else int(lo)
            for n in range(int(lo), min(end, int(lo) + _MAX_HOSTS) + 1):
                hosts.append(f"{prefix}{n:0{len(lo)}d}{suffix}")
        if len(hosts) > _MAX_HOSTS:
            break
    return hosts[:_MAX_HOSTS]


def redact_tree(folder: Path, redactor: Redactor) -> List[str]:
    """Rewrite every text file under folder, and rename files whose names hold a value."""
    changed = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        new = redactor.apply(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(folder)))
    return changed


def record_in_meta(folder: Path, kinds: Iterable[str]) -> None:
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.setdefault("redactions", []).extend(sorted(set(kinds)))
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True))
