#!/usr/bin/env python3
"""Every key Slurm's configuration parser knows, per major release, read from the source.

    python bench/slurm_conf_keys_scan.py /path/to/SchedMD-slurm.git > keys.json

For each major release 14.11 .. 25.05 it reads the first release tag (slurm-XX-YY-0-1) and the
last maintenance tag in the snapshot (slurm-XX-YY-N-1), and collects
the keys of every s_p_options_t array (parse_config.c's table of known keys: a key absent from the
array is "Parsing error at unrecognized key") in the file that parses slurm.conf
(src/common/read_config.c: the top-level slurm_conf_options and the NodeName, PartitionName,
FrontendName, SlurmctldHost, DownNodes, NodeSet line options), cgroup.conf
(src/slurmd/common/xcgroup_read_config.c, later src/common and src/interfaces cgroup.c) and gres.conf (gres.c). The output (JSON) gives, for every
key, the releases whose parser knows it; hpcdoctor/knowledge/slurm_conf_keys.toml is written from it
by --toml.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Dict, List, Tuple

MAJORS = ["14.11", "15.08", "16.05", "17.02", "17.11", "18.08", "19.05", "20.02", "20.11", "21.08",
          "22.05", "23.02", "23.11", "24.05", "24.11", "25.05"]
FILES = {
    "slurm.conf": ["src/common/read_config.c"],
    "cgroup.conf": ["src/slurmd/common/xcgroup_read_config.c", "src/common/xcgroup_read_config.c", "src/common/cgroup.c", "src/interfaces/cgroup.c"],
    "gres.conf": ["src/common/gres.c", "src/interfaces/gres.c"],
}
ARRAY = re.compile(r"s_p_options_t\s+(\w+)\s*\[\s*\]\s*=\s*\{")
KEY = re.compile(r'\{\s*"([A-Za-z][\w.]*)"\s*,\s*S_P_')


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def arrays(text: str) -> List[Tuple[str, List[str]]]:
    out = []
    for m in ARRAY.finditer(text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append((m.group(1), KEY.findall(text[m.end():i])))
    return out


def scan(repo: str) -> Dict:
    tags: Dict[str, Dict[str, str]] = {}
    keys: Dict[Tuple[str, str], Dict] = {}
    all_tags = git(repo, "tag", "--list").split()
    for major in MAJORS:
        prefix = f"slurm-{major.replace('.', '-')}-"
        releases = sorted((t for t in all_tags if re.fullmatch(re.escape(prefix) + r"\d+-\d+", t)),
                          key=lambda t: [int(x) for x in t[len(prefix):].split("-")])
        first, last = f"{prefix}0-1", releases[-1]
        for tag in dict.fromkeys((first, last)):
            commit = git(repo, "rev-list", "-n1", tag).strip()
            tags.setdefault(major, {"tag": tag, "commit": commit})
            tags[major].update(last_tag=tag, last_commit=commit)
            for conf, paths in FILES.items():
                for path in paths:
                    try:
                        text = git(repo, "show", f"{commit}:{path}")
                    except subprocess.CalledProcessError:
                        continue
                    for array, names in arrays(text):
                        for name in names:
                            e = keys.setdefault((conf, name.lower()), {
                                "file": conf, "name": name, "arrays": set(), "known": [], "tags": []})
                            e["name"] = name  # the newest spelling
                            e["arrays"].add(array)
                            e["where"] = f"{path} ({array})"
                            if tag not in e["tags"]:
                                e["tags"].append(tag)
                            if major not in e["known"]:
                                e["known"].append(major)
    for e in keys.values():
        e["arrays"] = sorted(e["arrays"])
    return {"majors": MAJORS, "tags": tags,
            "keys": sorted(keys.values(), key=lambda e: (e["file"], e["name"].lower()))}


def ranges(known: List[str]) -> List[Tuple[str, str]]:
    idx = [MAJORS.index(m) for m in known]
    out, start = [], idx[0]
    for a, b in zip(idx, idx[1:] + [None]):
        if b is None or b != a + 1:
            out.append((MAJORS[start], MAJORS[a]))
            start = b
    return out


def toml(data: Dict, read: str) -> str:
    lines = [
        "# Every key Slurm's configuration parser knows (slurm.conf and its line options, cgroup.conf,",
        "# gres.conf), with the first Slurm release whose parser knows it and, where dropped, the first",
        "# that no longer does. Read from SchedMD/slurm's source at the first release tag (X-Y-0-1) and the",
        "# last maintenance tag of each major release 14.11 .. 25.05 (tags below): the keys of every s_p_options_t array of",
        "# src/common/read_config.c, xcgroup_read_config.c / cgroup.c (src/slurmd/common, src/common, later src/interfaces) and",
        "# gres.c. parse_config.c's _parse_next_key answers \"Parsing error at unrecognized key: K\" for a key",
        "# none of the arrays holds (matched case-insensitively, xstrcasecmp). A key present at 14.11 is",
        "# \"14.11 or earlier\": older releases were not read. since_tag: the key is not in the major release's",
        "# first tag, only in its last maintenance tag read (added in a maintenance release of it). removed:",
        "# the first major release whose X-Y-0-1 tag no longer knows it. source: where the newest tag that",
        "# knows it holds it, and the first tag that does. Written by bench/slurm_conf_keys_scan.py --toml.",
        "",
        'title = "Keys Slurm\'s configuration parser knows, per release"',
        'source = "SchedMD/slurm tags slurm-14-11-0-1 .. slurm-25-05-8-1 (the first and last tag of each major release): src/common/read_config.c, '
        'src/slurmd/common/xcgroup_read_config.c, src/common/xcgroup_read_config.c, src/common/cgroup.c, src/interfaces/cgroup.c, src/common/gres.c, '
        'src/interfaces/gres.c (the s_p_options_t arrays)"',
        f'read = "{read}"',
        f'releases = [{", ".join(json.dumps(m) for m in data["majors"])}]',
        "",
    ]
    for major in data["majors"]:
        t = data["tags"][major]
        lines += ["[[tag]]", f'release = "{major}"', f'tag = "{t["tag"]}"', f'commit = "{t["commit"]}"',
                  f'last_tag = "{t["last_tag"]}"', f'last_commit = "{t["last_commit"]}"', ""]
    last = data["majors"][-1]
    for e in data["keys"]:
        rs = ranges(e["known"])
        lines += ["[[key]]", f'file = "{e["file"]}"', f'name = "{e["name"]}"', f'since = "{rs[0][0]}"']
        if rs[-1][1] != last:
            lines.append(f'removed = "{data["majors"][data["majors"].index(rs[-1][1]) + 1]}"')
        if len(rs) > 1:
            lines.append("known = [" + ", ".join(f'["{a}", "{b}"]' for a, b in rs) + "]")
        first_tag = data["tags"][rs[0][0]]["tag"]
        if first_tag not in e["tags"]:
            # known only at the major release's last maintenance tag: added in a maintenance release
            lines.append(f'since_tag = "{data["tags"][rs[0][0]]["last_tag"]}"')
        lines.append(f'source = "{e["where"]}; first in {e["tags"][0]}"')
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    repo = sys.argv[1]
    data = scan(repo)
    if "--toml" in sys.argv:
        print(toml(data, sys.argv[sys.argv.index("--toml") + 1]), end="")
    else:
        print(json.dumps(data, indent=1))
