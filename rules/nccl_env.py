"""The job's NCCL_ and TORCH_NCCL_ variables, judged against the list their readers define
(knowledge/nccl_env.toml: what NCCL's source and torch's c10d read, release by release)."""

from __future__ import annotations

import re
import shlex
from typing import Any, Dict, Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import nccl_env

# Names that say where a library is installed or which version an image carries (NCCL_HOME, NCCL_ROOT,
# NCCL_VERSION of NVIDIA's CUDA images, NCCL_INCLUDE_DIR of torch's own build): module files and
# containers set them for builds, not as NCCL settings, so one no release reads is no typo.
_LOCATION = re.compile(r"_(HOME|ROOT|DIR|DIRS|PATH|VERSION|PREFIX|LIB|LIBDIR|LIBRARY|LIBRARIES|INCLUDE|INC)$")
# The variables that load a plugin library NCCL's repository does not ship (NCCL_PARAM or ncclGetEnv
# of src/plugin/*.cc at v2.30.7-1).
_PLUGIN_VARS = ("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN", "NCCL_GIN_PLUGIN",
                "NCCL_RMA_PLUGIN")
# The old names ENV001 (nccl-async-error-handling) already answers.
_ANSWERED = frozenset({"NCCL_ASYNC_ERROR_HANDLING"})


def _judged(name: str) -> bool:
    # The table also holds names NCCL reads that belong to others (HOME, CUDA_LAUNCH_BLOCKING,
    # SLURM_JOB_ID): their owners read them whatever NCCL does. torch's own old names are judged.
    return name.startswith(("NCCL_", "TORCH_NCCL_")) or \
        any(e["reader"] == "torch" for e in nccl_env.entries(name))


def _version_of(f: FactView, reader: str) -> Optional[str]:
    value = f.get("torch.nccl") if reader == "nccl" else f.get("torch.version")
    return str(value) if value is not None else None


def _rccl(f: FactView) -> bool:
    """RCCL reads NCCL_ names of its own that NVIDIA's NCCL never did: the table does not judge them."""
    return bool(f.get("torch.hip")) or any(g.get("vendor") == "amd" for g in f.gpus())


def _quoted(value: Any) -> str:
    return shlex.quote(str(value))


def _unread(f: FactView, env: Dict[str, Any], name: str, value: Any) -> Optional[Hit]:
    """A name no scanned release of NCCL or torch reads."""
    if _LOCATION.search(name):
        return None
    # A release newer than the ones read may have added it: unknown, not a finding.
    if any(nccl_env.newer_than_scanned(r, _version_of(f, r)) for r in nccl_env.READERS):
        return None
    n_old, n_new = nccl_env.scanned("nccl")
    t_old, t_new = nccl_env.scanned("torch")
    said = (f"{name}={value} is read by no NCCL release from {n_old} to {n_new} and by no torch.distributed "
            f"from {nccl_env.label('torch', t_old)} to {nccl_env.label('torch', t_new)}: it changes nothing")
    evidence = {f"env.{name}": value}
    if "TIMEOUT" in name:
        seconds = f"seconds={int(value)}" if str(value).isdecimal() else "minutes=60"
        return Hit(message=f"{said}; the collective timeout (the watchdog's Timeout(ms)) is init_process_group's "
                           "timeout argument, which no environment variable sets",
                   fix=f"# in the training script ({name} can be unset: nothing reads it)\nimport datetime\n"
                       f"torch.distributed.init_process_group(backend=\"nccl\", timeout=datetime.timedelta({seconds}))",
                   fix_lang="python", evidence=evidence, subject=name)
    plugins = {k: dict.get(env, k) for k in _PLUGIN_VARS if dict.get(env, k)}
    if plugins:  # a plugin from outside NCCL may define variables of its own
        said += " (unless the plugin the job loads reads it: " + ", ".join(f"{k}={v}" for k, v in plugins.items()) + ")"
    near = nccl_env.closest(name)
    if near:
        return Hit(message=f"{said}; did you mean {near}?",
                   fix=f"unset {name}\nexport {near}={_quoted(value)}", evidence=dict(evidence, closest=near),
                   subject=name, env={near: str(value)})
    return Hit(message=said, fix=f"unset {name}   # or check its spelling: no NCCL or torch reads this name",
               evidence=evidence, subject=name)


def _out_of_range(f: FactView, name: str, value: Any, entries) -> Optional[Hit]:
    """A name the job's releases do not read though others do. None where any entry reads it for the
    job's release, or where a release needed to judge is unknown."""
    verdicts = []
    if any(nccl_env.from_plugin(e) for e in entries):
        return None
    for e in entries:
        v = _version_of(f, e["reader"])
        ok = nccl_env.reads(e, v) if v is not None else None
        if ok is None or ok:
            return None
        verdicts.append((e, v))
    e, v = verdicts[0]
    reader = e["reader"]
    who = "NCCL" if reader == "nccl" else "torch"
    if nccl_env.before_first(e, v):
        return Hit(message=f"{name}={value} is read from {who} {nccl_env.label(reader, e['first'])} on; "
                           f"this job's {who} {v} does not read it",
                   fix=f"unset {name}   # or upgrade {who} to {nccl_env.label(reader, e['first'])} or newer",
                   evidence={f"env.{name}": value, "first": e["first"]}, subject=name)
    new = e.get("renamed_to")
    if new and any(nccl_env.reads(n, v) for n in nccl_env.entries(new) if n["reader"] == reader):
        return Hit(message=f"{name}={value}: torch {v} no longer reads this name; it reads {new} "
                           f"(the new name from torch {nccl_env.label(reader, e['renamed_in'])})",
                   fix=f"export {new}={_quoted(value)}\nunset {name}", evidence={f"env.{name}": value, "renamed_to": new},
                   subject=name, env={new: str(value)})
    return Hit(message=f"{name}={value} was last read by {who} {nccl_env.label(reader, e['last'])}; "
                       f"this job's {who} {v} ignores it",
               fix=f"unset {name}", evidence={f"env.{name}": value, "last": e["last"]}, subject=name)


@rule("ENV014", "nccl-env-not-read", "advice", "an NCCL or torch.distributed variable that nothing reads", impact=4)
def nccl_env_not_read(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An NCCL_* or TORCH_NCCL_* variable in the job's environment (or exported in a pasted
        ticket) that no release of NCCL (every v2 tag) or of torch.distributed (1.13 to 2.14)
        reads: a typo (the closest real name is given) or a myth such as NCCL_TIMEOUT. Also a
        variable that other releases read but the job's own NCCL or torch does not: added later,
        or dropped (NCCL_RINGS after NCCL 2.4.8, torch's ENABLE_NCCL_HEALTH_CHECK after 2.2). The
        old names torch renamed (NCCL_BLOCKING_WAIT ...) are still read, with a deprecation warning,
        up to 2.14: they are not flagged (ENV001 speaks of NCCL_ASYNC_ERROR_HANDLING).

    Why it matters:
        Nothing reads the name, so nothing acts on it: the job runs with the default while its
        author believes the setting holds, and the next hang or timeout is debugged on that
        belief. The collective timeout in particular is set by no variable at all.

    How to fix:
        Set the variable the job's release reads (the finding names it), and unset the other.
        For the collective timeout: init_process_group(backend="nccl", timeout=timedelta(...)).

    References:
        - https://github.com/NVIDIA/nccl (src/, NCCL_PARAM and ncclGetEnv, every v2 release tag)
        - https://github.com/pytorch/pytorch/blob/v2.14.1/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp
        - https://docs.pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group
    """
    env: Dict[str, Any] = f["env.vars"]
    rccl = _rccl(f)
    for name in sorted(dict.keys(env)):
        if not _judged(name) or name in _ANSWERED or (rccl and not name.startswith("TORCH_")):
            continue
        value = dict.__getitem__(env, name)
        entries = nccl_env.entries(name)
        hit = _out_of_range(f, name, value, entries) if entries else _unread(f, env, name, value)
        if hit is not None:
            yield hit
