"""What the node's container runtimes need of it, read where the node shows it: for Apptainer's
--fakeroot, the user's /etc/subuid entry, whether user namespaces are on and the fakeroot command;
for enroot (pyxis's srun --container-image), the directories it creates first, resolved from
enroot.conf and the environment as enroot resolves them, and whether the user can create them; the
default runtime of docker and containerd (the NVIDIA runtime as the default on a node without a
GPU fails every container); Apptainer's nvliblist.conf beside the driver libraries of the host's
linker cache. Nothing is written or created."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional

from hpcdoctor import knowledge
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "containers"
TIMEOUT = 2.0

_KNOW = knowledge.load("containers")
# apptainer internal/pkg/fakeroot/fakeroot.go @ v1.5.3: validRangeCount, the fewest IDs a mapping may give
SUBUID_MIN = 65536
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,60})\}|\$([A-Za-z_][A-Za-z0-9_]{0,60})")
_ID = re.compile(r"\$\(\s*id\s+-(u|g|un|gn)\s*\)")


def on_path(root: SysRoot, env: Dict[str, str], name: str) -> Optional[str]:
    """The first ``name`` in the environment's PATH, as a shell finds it; None when none."""
    for d in (env.get("PATH") or "").split(":")[:64]:
        if d.startswith("/") and root.exists(f"{d.rstrip('/')}/{name}"):
            return f"{d.rstrip('/')}/{name}"
    return None


def _int(text: Optional[str]) -> Optional[int]:
    m = re.match(r"^\s*(-?\d{1,12})\s*$", text or "")
    return int(m.group(1)) if m else None


def subuid_entry(text: str, name: Optional[str], uid: Optional[int]) -> Dict[str, Any]:
    """The user's ranges in /etc/subuid (subuid(5): name-or-uid:first:count), as Apptainer reads
    them: a line whose first field is the user's name or uid; a line starting with '!' is a mapping
    the administrator disabled (apptainer config fakeroot --disable)."""
    out: Dict[str, Any] = {"listed": False, "disabled": False, "count": 0}
    ids = {str(x) for x in (name, uid) if x is not None}
    for line in text.splitlines()[:65536]:
        line = line.strip()
        disabled = line.startswith("!")
        parts = line.lstrip("!").split(":")
        if len(parts) != 3 or parts[0] not in ids or not parts[2].isdigit():
            continue
        if disabled:
            out["disabled"] = True
            continue
        out["listed"] = True
        out["count"] = max(out["count"], int(parts[2]))
    out["usable"] = out["listed"] and out["count"] >= SUBUID_MIN
    return out


def parse_enroot_conf(text: str) -> Dict[str, str]:
    """enroot.conf's settings (enroot.in config::load: one 'KEY value' per line, '#' comments);
    only the ENROOT_ and XDG_ keys this check resolves."""
    out: Dict[str, str] = {}
    for line in text.splitlines()[:2048]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ") if " " in line else line.partition("\t")
        value = value.strip()
        if re.fullmatch(r"(?:ENROOT_[A-Z_]{1,40}|XDG_[A-Z_]{1,20})", key) and value:
            out[key] = value[:400]
    return out


def expand(value: str, known: Dict[str, str], ids: Dict[str, str]) -> Optional[str]:
    """A configuration value as enroot's `eval echo` would give it, for the forms sites write
    (${VAR}, $VAR, $(id -u), $(id -g), $(id -un)); None for anything else (another command, an
    unset variable), which is then unknown, not guessed."""
    def sub_id(m: "re.Match[str]") -> str:
        return ids.get(m.group(1), "\0")

    out = _ID.sub(sub_id, value)
    out = _VAR.sub(lambda m: known.get(m.group(1) or m.group(2), "\0"), out)
    if "\0" in out or "$" in out or "`" in out:
        return None
    return out


def enroot_paths(env: Dict[str, str], conf: Dict[str, str], ids: Dict[str, str]) -> Dict[str, Dict[str, Any]]:
    """ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH and ENROOT_DATA_PATH as enroot run by this user
    resolves them: the environment first, then enroot.conf, then enroot's default from the XDG
    directories (XDG_RUNTIME_DIR unset is /run)."""
    # an unknown HOME leaves the paths under it unknown (enroot would ask the password database)
    known: Dict[str, str] = {"HOME": env["HOME"]} if env.get("HOME") else {}
    for var, default in _KNOW["enroot"]["xdg_defaults"].items():
        value = env.get(var) or (expand(conf[var], known, ids) if conf.get(var) else expand(default, known, ids))
        if value:
            known[var] = value
    out: Dict[str, Dict[str, Any]] = {}
    for var, default in _KNOW["enroot"]["path_defaults"].items():
        if env.get(var):
            raw, origin = env[var], "environment"
        elif conf.get(var):
            raw, origin = conf[var], "enroot.conf"
        else:
            raw, origin = default, "default"
        out[var] = {"value": raw, "origin": origin, "path": expand(raw, known, ids)}
    return out


def _writable(paths: List[str]) -> List[Dict[str, Any]]:
    """For each path: whether it exists, the nearest existing directory (where mkdir -p starts)
    and whether this user may create entries there (access(2) W_OK|X_OK)."""
    out = []
    for p in paths[:8]:
        q = os.path.normpath(p)
        while q != "/" and not os.path.exists(q):
            q = os.path.dirname(q)
        out.append({"path": p, "exists": os.path.isdir(p), "nearest": q,
                    "writable": os.access(p if os.path.isdir(p) else q, os.W_OK | os.X_OK)})
    return out


def _ids() -> Dict[str, Any]:
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = None
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = None
    return {"uid": uid, "gid": gid, "name": name, "group": group}


def _fakeroot(root: SysRoot, env: Dict[str, str], ids: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {"apptainer": on_path(root, env, "apptainer") or on_path(root, env, "singularity"),
                           "fakeroot_command": on_path(root, env, "fakeroot")}
    out["max_user_namespaces"] = _int(root.read_or("/proc/sys/user/max_user_namespaces"))
    if out["max_user_namespaces"] is None:
        out["max_user_namespaces"] = Unknown("/proc/sys/user/max_user_namespaces not readable")
    # Debian and Ubuntu kernels only; absent elsewhere (then it restricts nothing)
    out["unprivileged_userns_clone"] = _int(root.read_or("/proc/sys/kernel/unprivileged_userns_clone"))
    # Ubuntu 23.10 and later: 1 gives unconfined programs a user namespace without capabilities
    out["apparmor_restrict_unprivileged_userns"] = _int(root.read_or("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
    if isinstance(ids, Unknown):
        out["subuid"] = ids
    else:
        text = root.read_or("/etc/subuid")
        out["subuid"] = subuid_entry(text, ids.get("name"), ids.get("uid")) if text is not None else {
            "listed": False, "disabled": False, "count": 0, "usable": False, "file_missing": True}
    return out


def _enroot(root: SysRoot, env: Dict[str, str], ids: Any) -> Any:
    binary = on_path(root, env, "enroot")
    if binary is None:
        return {"installed": False}
    conf: Dict[str, str] = {}
    read: List[str] = []
    for path in _KNOW["enroot"]["conf"]:
        text = root.read_or(path)
        if text is None:
            continue
        read.append(path)
        conf.update(parse_enroot_conf(text))
        try:
            dropins = sorted(n for n in root.listdir(f"{path}.d") if n.endswith(".conf"))[:32]
        except Missing:
            dropins = []
        for name in dropins:
            conf.update(parse_enroot_conf(root.read_or(f"{path}.d/{name}") or ""))
            read.append(f"{path}.d/{name}")
        break   # enroot reads the one file of its build's sysconfdir
    if isinstance(ids, Unknown):
        return {"installed": True, "binary": binary, "conf_files": read, "paths": ids}
    idmap = {"u": str(ids["uid"]), "g": str(ids["gid"])}
    if ids.get("name"):
        idmap["un"] = ids["name"]
    if ids.get("group"):
        idmap["gn"] = ids["group"]
    paths = enroot_paths(env, conf, idmap)
    resolved = [p["path"] for p in paths.values() if p["path"]]
    try:
        access = {a["path"]: a for a in root.probe("enroot_paths_writable", lambda: _writable(resolved))
                  if isinstance(a, dict) and isinstance(a.get("path"), str)}
    except Missing as exc:
        access = {}
        for p in paths.values():
            p["writable"] = Unknown(f"not probed: {exc}")
    for p in paths.values():
        a = access.get(p["path"] or "")
        if a:
            p.update({"exists": a.get("exists") is True, "nearest": str(a.get("nearest", ""))[:300],
                      "writable": a.get("writable") is True})
        elif "writable" not in p:
            p["writable"] = Unknown("the path could not be resolved from enroot.conf" if not p["path"]
                                    else "not probed")
    return {"installed": True, "binary": binary, "conf_files": read, "paths": paths}


def default_runtime(root: SysRoot) -> Dict[str, Any]:
    """The default runtime docker (/etc/docker/daemon.json "default-runtime") and containerd
    (/etc/containerd/config.toml default_runtime_name) are configured with; None where the file
    sets none or is absent."""
    out: Dict[str, Any] = {"docker": None, "containerd": None}
    text = root.read_or("/etc/docker/daemon.json")
    if text:
        try:
            data = json.loads(text[:1 << 20])
            value = data.get("default-runtime") if isinstance(data, dict) else None
            out["docker"] = value[:80] if isinstance(value, str) else None
        except ValueError:
            out["docker"] = Unknown("/etc/docker/daemon.json is not JSON")
    text = root.read_or("/etc/containerd/config.toml")
    if text:
        m = re.search(r'^[ \t]{0,40}default_runtime_name[ \t]{0,3}=[ \t]{0,3}"([^"\n]{1,80})"', text[:1 << 20], re.M)
        out["containerd"] = m.group(1) if m else None
    return out


def nvliblist_names(text: str) -> List[str]:
    """The names nvliblist.conf lists (one a line, '#' comments)."""
    return [ln.strip()[:200] for ln in text.splitlines()[:1024] if ln.strip() and not ln.strip().startswith("#")]


def ldconfig_names(text: str) -> List[str]:
    """The library names of `ldconfig -p` (its lines "\tlibfoo.so.1 (libc6,x86-64) => /path")."""
    return sorted({m.group(1) for m in re.finditer(r"^\s{1,8}(lib[^\s]{1,120}\.so[0-9.]{0,16})\s", text[:4 << 20], re.M)})


def _nvliblist(root: SysRoot, env: Dict[str, str], apptainer: Optional[str]) -> Any:
    """Apptainer's nvliblist.conf and the driver libraries the host's linker cache holds that
    it does not list (knowledge/containers.toml [nvliblist]: the ones later releases added)."""
    if apptainer is None:
        return {"installed": False}
    for path in _KNOW["nvliblist"]["paths"]:
        text = root.read_or(path)
        if text is not None:
            break
    else:
        return {"installed": True, "file": Unknown("no nvliblist.conf at the places Apptainer installs it")}
    listed = nvliblist_names(text)
    res = root.run(["ldconfig", "-p"], timeout=1.5)
    if not res.ok:
        return {"installed": True, "file": path, "listed": listed, "unlisted": Unknown(f"ldconfig -p: {res.why_failed()}")}
    cache = ldconfig_names(res.stdout)
    unlisted = [{"name": a["name"], "release": a["release"], "host": [c for c in cache if c.startswith(a["name"])][:4]}
                for a in _KNOW["nvliblist"]["added"] if a["name"] not in listed]
    return {"installed": True, "file": path, "listed": listed, "unlisted": [u for u in unlisted if u["host"]]}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    env = root.environ()
    try:
        ids: Any = root.probe("user_ids", _ids)
        if not isinstance(ids, dict) or not isinstance(ids.get("uid"), int) or not isinstance(ids.get("gid"), int):
            ids = Unknown("the recorded user ids are not in the shape this hpcdoctor reads")
    except Missing as exc:
        ids = Unknown(f"user ids not read: {exc}")
    fakeroot = _fakeroot(root, env, ids)
    return {"containers": {"fakeroot": fakeroot, "enroot": _enroot(root, env, ids),
                           "default_runtime": default_runtime(root),
                           "nvliblist": _nvliblist(root, env, fakeroot["apptainer"])}}
