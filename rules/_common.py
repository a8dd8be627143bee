"""Small helpers shared by rule modules (not rules themselves: the loader skips _modules)."""

from __future__ import annotations

import re
import shlex
from typing import Optional

from hpcdoctor import knowledge
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import version_of  # noqa: F401  (the rules' name for it)


def parse_threads(value: Optional[str]) -> Optional[int]:
    """OMP_NUM_THREADS may be a nested list ("8,2"); the first level is this process's team."""
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)\s*(?:,|$)", value)
    return int(m.group(1)) if m else None


def local_ranks(f: FactView) -> int:
    """Ranks sharing this node, from the scheduler or the launcher; 1 when nothing says."""
    for path in ("scheduler.tasks_per_node", "scheduler.launcher_local_world_size"):
        n = f.get(path)
        if isinstance(n, int) and n > 0:
            return n
    return 1


def in_slurm_step_or_job(f: FactView) -> bool:
    return f.get("scheduler.kind") == "slurm"


def ticket_symptoms(f: FactView) -> dict:
    """The messages found in a pasted ticket (knowledge/messages/), by id, first match each;
    empty on a live node or a snapshot."""
    found = {}
    for s in f.get("ticket.symptoms") or []:
        found.setdefault(s["id"], s)
    return found


def first_symptom(f: FactView, *ids: str) -> Optional[dict]:
    """The first pasted message, in line order, that is any of ``ids``; None when none is."""
    return next((s for s in f.get("ticket.symptoms") or [] if s["id"] in ids), None)


# The CUDA driver's own PTX JIT compiler failing (CUresult 218 and 222, the runtime's names for them,
# cudarc's and RustaCUDA's for 218): a ptxas log beside one of them is the driver's JIT speaking, not a
# toolkit's ptxas (knowledge/messages/cuda_driver.toml, cuda.toml, cuda_rust.toml).
DRIVER_JIT_FAILED = ("cuda_driver:CUDA_ERROR_INVALID_PTX", "cuda_driver:CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                     "cuda:cudaErrorInvalidPtx", "cuda:cudaErrorUnsupportedPtxVersion", "cuda_rust:InvalidPtx")


def major_minor(version: str) -> str:
    """'9.2.148' -> '9.2' (the first two numbers of a version as printed); the text itself when it holds fewer."""
    parts = re.findall(r"\d+", version)
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def ticket_read(f: FactView) -> list:
    """Every message read in a pasted ticket, in line order (all matches, any entry); empty on a live
    node or a snapshot."""
    return [s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict)]


def ticket_all(f: FactView, sid: str) -> list:
    """Every match of one symptom (catalogue entries with all = true: listings, one line each)."""
    return [s for s in f.get("ticket.symptoms") or [] if s["id"] == sid]


def ticket_evidence(s: dict) -> dict:
    return {"ticket.line": s.get("line"), "ticket.text": str(s.get("text", ""))[:160]}


_NO_SPACE = "no space left on device"
# glibc's strerror texts (knowledge/glibc.toml): a pasted error is a cause only when it is one whole.
STRERROR = frozenset(e.lower() for e in knowledge.load("glibc")["strerror"]["texts"])


def nccl_shm_cause(f: FactView) -> Optional[dict]:
    """What NCCL's shared-memory failure in a pasted ticket comes from, for the two rules that
    answer it (shm-too-small, nccl-shm-unusable), so that one cause gets one finding:
    {"kind": "size" | "access" | "attach", "error": str or None, "symptom": the line that says it,
    "size": the bytes NCCL asked for, where a line says}.
    "size": /dev/shm ran out (No space left on device), or NCCL's segment or file could not be
    sized and nothing names another errno (its troubleshooting page gives that as the line printed
    when shared memory is insufficient). "access": another errno (Permission denied, Read-only
    file system...): a larger /dev/shm would not help. "attach": only the peer's side failed, opening
    or mapping a segment another rank created (its "segment" path too). None when no such line was pasted."""
    attach = first_symptom(f, "nccl:shm-attach-failed")
    calls = [s for s in ticket_read(f)
             if s["id"] in ("nccl:shm-syscall-failed", "nccl:shm-create-file-failed", "nccl:shm-extend-failed", "nccl:shm-segment-failed")]
    if attach is not None and not calls:
        # Attaching to a segment a peer created (src/misc/shmutils.cc: open O_RDWR without O_CREAT, then
        # mmap): not a /dev/shm too small or unwritable. Its errno is on the line from NCCL 2.22; before,
        # NCCL printed it on the line above ("Call to open failed : <error>", 2.12-2.15).
        err = (attach.get("error") or "").strip()
        if not err:
            above = next((t for t in ticket_read(f) if t.get("id") == "nccl:nccl-warn"
                          and isinstance(t.get("line"), int) and isinstance(attach.get("line"), int)
                          and attach["line"] - 3 <= t["line"] < attach["line"]
                          and str(t.get("message", "")).startswith("Call to open failed")), None)
            err = str(above["message"]).split(":", 1)[1].strip() if above else ""
        return {"kind": "attach", "error": err if err.lower() in STRERROR else None, "symptom": attach,
                "size": int(attach["size"]) if str(attach.get("size") or "").isdigit() else None,
                "segment": attach.get("segment")}
    if not calls:
        return None
    errors = []
    for s in calls:
        err = s.get("error") or s.get("nospace") or s.get("denied")
        if err and err.strip().lower() in STRERROR:
            errors.append((err.strip(), s))
    sizes = [int(s["size"]) for s in calls if s.get("size")]
    size = sizes[0] if sizes else None
    for err, s in errors:
        if err.lower() == _NO_SPACE:
            return {"kind": "size", "error": err, "symptom": s, "size": size}
    if errors:
        err, s = errors[0]
        return {"kind": "access", "error": err, "symptom": s, "size": size}
    sized = [s for s in calls if s["id"] in ("nccl:shm-segment-failed", "nccl:shm-extend-failed")]
    return {"kind": "size", "error": None, "symptom": sized[0], "size": size} if sized else None


# Kernel-log lines since boot that a rule may take from the node itself: the GPU's own condition (Xids,
# the driver's NVRM notices, amdgpu's ring timeouts), the host memory's (EDAC) and the CPU's
# uncorrected machine checks (kernel_hwerr.toml, read by rules/machine_checks.py).
# An Xid blamed on an application (gpu-xid-application-fault) is left to pastes: on a shared node
# it is another job's bug, not this job's.
_FROM_KERNEL_LOG = frozenset({"gpu-fallen-off-bus", "gpu-xid-reset-required", "ecc-uncorrectable-errors", "nvlink-errors",
                              "row-remap-pending", "host-dram-ecc-errors", "gpu-hardware-faulty",
                              "amdgpu-job-timeout-too-short", "secure-boot-blocks-nvidia-module",
                              "host-machine-check-uncorrected"})


def catalogued(f: FactView, symbol: str) -> list:
    """The messages whose catalogue entry (hpcdoctor/knowledge/messages/) feeds the rule
    ``symbol``, one per entry: those pasted in a ticket, in line order, then (for the GPU's own
    condition, and the host memory's) the Xids and EDAC reports of the node's kernel log since boot."""
    seen, out = set(), []
    logged = f.get("kernel_log.messages") if symbol in _FROM_KERNEL_LOG else None
    for s in list(f.get("ticket.symptoms") or []) + list(logged or []):
        if isinstance(s, dict) and symbol in (s.get("rules") or []) and s.get("id") not in seen:
            seen.add(s.get("id"))
            out.append(s)
    return out


def nccl_p2p_failures(f: FactView) -> list:
    """NCCL's own P2P failures (nccl-p2p-unusable's lines): CUDA IPC's open counts only with 217,
    cudaErrorPeerAccessUnsupported; its other codes are not about the pair's P2P."""
    return [s for s in catalogued(f, "nccl-p2p-unusable")
            if s.get("id") != "nccl:cuda-ipc-open-failed" or str(s.get("code")) == "217"]


# torch raises HIP's errors as "RuntimeError: HIP error: <text>" (torch.AcceleratorError from 2.9):
# the hipified C10_CUDA_CHECK. A library's own HIP check prints the bare words (rocALUTION).
_TORCH_HIP_RAISE = re.compile(r"(?:Error|Exception): HIP error")


def torch_hip_invalid_function(f: FactView) -> Optional[dict]:
    """HIP's invalid device function (hip:hipErrorInvalidDeviceFunction) as torch raises it, pasted:
    the first such line, or None."""
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "hip:hipErrorInvalidDeviceFunction"
                 and _TORCH_HIP_RAISE.search(str(s.get("text", "")))), None)


def torch_import_frame_before(f: FactView, s: dict) -> bool:
    """Whether the pasted traceback that ends in message ``s`` runs through torch's own import: a
    torch/__init__.py frame or its "from torch._C import *" (torch.toml torch-import-frame,
    torch-c-import) on one of the 12 lines above it. A
    library that torch's import cannot load is torch-import-failed; one that another package
    (mmcv, TensorFlow) cannot load is not torch's."""
    line = s.get("line")
    if not isinstance(line, int):
        return False
    return any(t.get("id") in _TORCH_IMPORT_LINES and isinstance(t.get("line"), int) and line - 12 <= t["line"] <= line
               for t in f.get("ticket.symptoms") or [])


# The two traceback lines that only torch's own import prints: its frame, and the source line under
# it that loads torch._C (what is left to read when a terminal wrapped the frame's path).
_TORCH_IMPORT_LINES = frozenset({"torch:torch-import-frame", "torch:torch-c-import"})


def shell_command(s: dict) -> str:
    """The command a shell's "command not found" (knowledge/messages/shell.toml) names: each shell's
    wording captures it in a group of its own (bash's, dash's, zsh's, fish's); "" where none does."""
    return next((str(s[k]) for k in ("command", "dash", "zsh", "fish") if s.get(k)), "")


def told_text(s: dict) -> str:
    """The pasted line a finding quotes in its message: stripped, its first 120 characters. A line the
    user wrapped whole in quotes or backticks loses them: the finding puts its own quotes around it."""
    text = str(s.get("text", "")).strip()
    if len(text) > 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    # A long line whose message stands past the first 120 characters (a Lua or Java error prefixed with
    # the chain of files that re-raised it) is quoted from just before the message, not from its start:
    # the quote is there to show what was read.
    matched = str(s.get("matched") or "").strip()[:40]
    at = text.find(matched) if matched and len(text) > 120 else -1
    if at > 100:
        return "..." + text[at - 20:at + 100]
    return text[:120]


def site_words_just_above(f: FactView, refused: dict) -> bool:
    """Whether a Slurm client error line no catalogue knows (slurm:unlisted) stands one or two lines
    above a refusal: a site job_submit filter's own words ("Number of nodes must be specified"), whose
    reason the refusal's code only carries. slurm-request-exceeds-node stays silent there and
    slurm-submit-filter-rejected answers: one test, so that the two rules never both or neither fire."""
    at = refused.get("line")
    return isinstance(at, int) and any(s.get("id") == "slurm:unlisted" and isinstance(s.get("line"), int)
                                       and at - 2 <= s["line"] < at for s in f.get("ticket.symptoms") or [])


def qstat_unfolded(s: dict) -> str:
    """A PBS qstat -f attribute line quoted whole where qstat folded it: prt_attr (openpbs
    src/cmds/qstat.c) breaks a value too long for 78 columns with "\\n\\t" in the middle of a token
    and adds nothing else, so "(R: 88 A: 5" / "<tab>0 T: 50)" is "(R: 88 A: 50 T: 50)"; the catalogue's
    window joined the two lines with one space, which is taken out again here."""
    text, matched = str(s.get("text", "")).strip(), str(s.get("matched") or "")
    if not matched or matched in text:
        return told_text(s)
    for k in range(len(matched) - 1, 0, -1):
        if matched[k] == " " and text.endswith(matched[:k]):
            return (text + matched[k + 1:])[:160]
    return told_text(s)


# Words before a user's sentence about a symptom that make it something other than a report of it: a
# negation, a hedge or advice ("no GPU thermal throttling", "maybe the GPU is overheating", "to
# prevent the GPU from overheating").
_NOT_A_REPORT = re.compile(r"(?i)\b(?:no|not|never|without|prevent|avoid|if|whether|maybe|perhaps|might|may|could|"
                           r"possibly|probably|likely|suspect|check|monitor)\b"
                           # the same in Chinese: maybe, whether, if, not, is it, prevent, avoid
                           r"|可能|是否|如果|没有|不是|会不会|防止|避免")


def stated(s: dict) -> bool:
    """Whether a user's sentence read by a catalogue entry (faq_*.toml) reports its symptom: no
    negation, hedge or advice before the matched words in their sentence (at most 60 characters)."""
    text, matched = str(s.get("text", "")), str(s.get("matched", ""))
    at = text.find(matched[:40]) if matched else -1
    before = re.split(r"[.;!?]\s", text[max(0, at - 60):at] if at > 0 else "")[-1]
    return not _NOT_A_REPORT.search(before)


def first_catalogued(f: FactView, symbol: str, skip: tuple = ()) -> Optional[dict]:
    """The first message feeding ``symbol`` (catalogued) whose id is not in ``skip``, or None."""
    return next((s for s in catalogued(f, symbol) if s.get("id") not in skip), None)


def first_stated(f: FactView, symbol: str) -> Optional[dict]:
    """The first message feeding ``symbol`` (catalogued) that reports its symptom (stated), or None."""
    return next((s for s in catalogued(f, symbol) if stated(s)), None)


def told_evidence(s: dict) -> dict:
    """What a finding read from a catalogued message shows: its line, text and catalogue entry."""
    where = "kernel_log" if s.get("source") else "ticket"
    out = {f"{where}.line": s.get("line"), f"{where}.text": str(s.get("text", ""))[:160], "message": s.get("id")}
    if s.get("retold"):
        out["ticket.retold"] = True  # a number retyped in prose (messages.py Form.retold): engine.py caps it
    return out


# NCCL WARN lines (knowledge/messages/nccl.toml) whose cause a rule of its own answers
# (nccl-socket-ifname, nccl-duplicate-gpu, nccl-roce-gid, nccl-ib-memlock, nccl-topo-file): with one of them
# pasted, the generic "unhandled system error" finding has nothing to add.
_NAMED_NCCL_CAUSES = frozenset((
    "nccl:bootstrap-no-socket-interface", "nccl:net-socket-no-interface", "nccl:ib-no-ip-interface",
    "nccl:net-socket-no-listening-interface", "nccl:net-no-interface-same-subnet", "nccl:duplicate-gpu",
    "nccl:multi-rank-same-gpu", "nccl:xml-mismatch",
    "nccl:ib-modify-qp-failed", "nccl:xml-topology-file-unreadable", "nccl:xml-graph-file-unreadable",
    "nccl:xml-wrong-version", "nccl:xml-parse-error", "nccl:xml-attribute-missing",
    # nccl-version-mismatch and nccl-collective-mismatch (rules/nccl_ranks.py)
    "nccl:version-mismatch-ranks", "nccl:version-mismatch-remote", "nccl:collective-mismatch-detected",
    "nccl:ib-collective-mismatch", "nccl:message-truncated", "nccl:socket-message-truncated",
    # nccl-peer-unreachable (rules/nccl_peers.py)
    "nccl:socket-connect-failed", "nccl:socket-connect-retries-exceeded", "nccl:socket-poll-connect-failed",
    "nccl:socket-accept-retries-exceeded",
    # nccl-p2p-unusable (rules/nccl_peers.py)
    "nccl:cuda-failure-peer-access", "nccl:p2p-peer-failed", "nccl:p2p-disabled-nvlink"))


def nccl_named_cause(f: FactView) -> Optional[dict]:
    """The first pasted NCCL line whose cause another rule answers, or None."""
    for s in f.get("ticket.symptoms") or []:
        sid = s["id"]
        error = (s.get("error") or "").strip().lower()
        if (sid in _NAMED_NCCL_CAUSES
                or (sid == "nccl:ib-completion-error" and s.get("status") == "12")
                or (sid in ("nccl:ib-reg-mr-failed", "nccl:ib-create-qp-failed", "nccl:ib-create-cq-failed")
                    and error == "cannot allocate memory")
                or (sid == "nccl:ib-reg-mr-failed" and not error)):
            return s
    return None


def cuda_gpus(f: FactView):
    return [g for g in f.gpus() if g.get("vendor") == "nvidia"]


def facts_or_ticket(from_facts, from_ticket):
    """What the gathered facts establish; where they establish nothing, or are unknown, what the
    pasted messages say. Unknown facts with no message stay unknown (the rule is skipped)."""
    try:
        hits = from_facts()
    except MissingFact:
        hits = list(from_ticket)
        if not hits:
            raise
        return hits
    return hits or list(from_ticket)


def gpu_of_ticket(f: FactView):
    """The NVIDIA GPU a ticket is about, {name, cc}: from the pasted tool outputs, else the GPUs its
    text names (hpcdoctor.triage.paste.find_gpu_names) when they all have one compute capability; None
    when unknown or when the names disagree (no guess)."""
    listed = [g for g in cuda_gpus(f) if isinstance(g.get("compute_capability"), str)]
    if listed:
        low = min(listed, key=lambda g: version_of(g["compute_capability"]))
        return {"name": low.get("name"), "cc": low["compute_capability"]}
    if f.gpus():
        return None
    named = f.get("ticket.gpus_named") or []
    if named and len({g["cc"] for g in named}) == 1 and named[0]["cc"]:
        return {"name": named[0]["gpu"], "cc": named[0]["cc"]}
    return None


def gpu_candidates_of_ticket(f: FactView):
    """Where gpu_of_ticket has no answer because the text names one GPU by a name two GPUs share
    (a bare "TITAN X"), that name and its compute capabilities, {name, ccs}; else None. A rule may
    answer from it only where every candidate gives the same verdict."""
    # a GPU a tool output lists, or one named with its own capability, is gpu_of_ticket's or leaves
    # which one ran unknown
    if f.gpus() or f.get("ticket.gpus_named"):
        return None
    shared = f.get("ticket.gpus_named_shared") or []
    if len({g["gpu"] for g in shared}) == 1:
        return {"name": shared[0]["gpu"], "ccs": list(shared[0]["ccs"])}
    return None


_XID_PCI = re.compile(r"^(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.([0-7]))?$")


def xid_gpu_id(s: dict) -> Optional[str]:
    """The GPU an Xid line names, as nvidia-smi -i takes it: its PCI bus id domain:bus:device.function
    (nvidia-smi(1), -i: "the GPU's PCI bus ID (as domain:bus:device.function in hex)"; NVML's
    nvmlDeviceGetHandleByPciBusId_v2 reads it as x:x:x.x, hexadecimal numbers of any width, so the
    driver's 4-digit domain serves as nvidia-smi's 8-digit one); the driver's "Xid (PCI:0000:55:00)"
    omits the function, which is 0 for a GPU. None where the line names none."""
    m = _XID_PCI.match(str(s.get("pci") or "").strip())
    return f"{m.group(1)}.{m.group(2) or '0'}" if m else None


def xid_reset_line(s: dict, comment: str) -> str:
    """The nvidia-smi reset of the GPU an Xid names, by its PCI bus id where the line gives one."""
    gpu = xid_gpu_id(s)
    if gpu:
        return f"sudo nvidia-smi -r -i {gpu}   # {comment}"
    return f"sudo nvidia-smi -r -i 0   # the GPU index of the Xid's PCI address (nvidia-smi -L); {comment}"


def path_var_line(var: str, path: Optional[str], named: str, placeholder: str, unnamed: str) -> str:
    """A fix's first line: VAR set once, to the path the paste (or the node) names, quoted for the
    shell, else to a placeholder the user replaces; the commands below it read "$VAR"."""
    if path:
        return f"{var}={shlex.quote(path)}   # {named}"
    return f"{var}={placeholder}   # {unnamed}"


def torch_shown(f: FactView) -> bool:
    """Whether what was read shows torch at all: the node's torch, a pasted line of one of torch's
    own families (torch.toml, torch_allocator.toml...), or an entry about torch by name (the user
    importing or naming it). A HIP or CUDA runtime message alone does not say which program ran."""
    if f.get("torch"):
        return True
    for s in f.get("ticket.symptoms") or []:
        family, _, key = str(s.get("id") or "").partition(":")
        if family.startswith("torch") or "torch" in key:
            return True
    return False


# What shows a HIP program that is not torch: ggml's own start-up line (llama.cpp's HIP build), the
# user running HIP's sample programs.
_HIP_PROGRAM_NOT_TORCH = ("ggml:cuda-init-found-devices", "prose:hip-sample-said")


def hip_program_not_torch(f: FactView) -> Optional[dict]:
    """The line that shows the HIP program is not torch (and nothing read shows torch), or None."""
    if torch_shown(f):
        return None
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _HIP_PROGRAM_NOT_TORCH), None)


def nvidia_gpus_only(f: FactView) -> list:
    """The NVIDIA GPUs of the node or the ticket, where no AMD GPU is listed or named; else []."""
    listed = f.gpus()
    if listed:
        return [g.get("name") for g in listed] if all(g.get("vendor") == "nvidia" for g in listed) else []
    return [g.get("gpu") for g in f.get("ticket.gpus_named") or []]


# What a line says of the machine or the run (a catalogue entry's `claims`, knowledge/schema/messages.json):
# the user says the machine has no NVIDIA GPU (a CPU node) or that the program runs on the CPU; a
# framework found no GPU it could use (none there, or no driver to reach one).
NO_GPU_ON_MACHINE = "no-nvidia-gpu-on-machine"
RUNS_WITHOUT_GPU = "program-runs-without-gpu"
NO_GPU_REACHABLE = "no-gpu-reachable"


def said_no_gpu(f: FactView, *claims: str, mac: bool = False) -> Optional[dict]:
    """The first pasted line whose catalogue entry claims one of CLAIMS (default: the user's two), or None.
    MAC: a user's Mac counts too. A Mac is no claim of its own: an older MacBook Pro has an NVIDIA GPU
    (a GT 750M, set AK's gpujpeg#4), so a rule says whether it answers for a Mac."""
    wanted = set(claims or (NO_GPU_ON_MACHINE, RUNS_WITHOUT_GPU))
    return next((s for s in f.get("ticket.symptoms") or [] if wanted & set(s.get("claims") or ())
                 or (mac and s.get("id") == "prose:apple-mac")), None)

