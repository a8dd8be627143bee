"""GPU health: memory errors, links, clocks, power, modes, and the driver itself."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, facts_or_ticket, told_evidence


def _subject(g) -> str:
    return f"GPU {g.get('index')}"


def _gpus(f: FactView):
    """The GPUs, or MissingFact when the GPU facts are Unknown (the rule is then skipped)."""
    gpus = f["gpus"]
    return gpus if isinstance(gpus, list) else []


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@rule("GPU001", "gpu-driver-unusable", "error", "GPUs present but the driver cannot be used", impact=10)
def gpu_driver_unusable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        GPUs on the PCI bus that neither NVML nor the vendor tool can talk to: no driver loaded, a
        driver/library version mismatch after an update without reboot, a fallen-off device. In a
        pasted ticket, the messages that say so: nvidia-smi's "couldn't communicate with the NVIDIA
        driver", "No devices were found" and "couldn't find libnvidia-ml.so library", NVML's
        "Driver/library version mismatch", "Driver Not Loaded" and "NVML Shared Library Not Found",
        CUDA's error 803 (display driver / CUDA driver mismatch), and torch's "CUDA unknown error"
        at start-up (CUDA's 999 from the device count: the unified-memory module's state).

    Why it matters:
        Every GPU job on the node fails or silently runs on the CPU. A driver/library mismatch is
        the classic state after a driver upgrade on a node that was not rebooted.

    How to fix:
        Take the node out of service and tell the administrators the exact message; a node with a
        version mismatch needs a reboot (or the old kernel module unloaded and the new one loaded).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html
        - 004_3c12714629749d50.txt (node health checks before jobs)
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (nvmlReturn_t)
        - https://github.com/pop-os/default-settings/pull/64 (CUDA's unknown error after a resume)
        - https://github.com/pytorch/pytorch/issues/49081 (/dev/nvidia-uvm missing)
    """
    found = False
    for vendor in ("nvidia", "amd"):
        on_bus = f.get(f"{vendor}.pci_devices")
        error = f.get(f"{vendor}.error")
        if isinstance(on_bus, int) and on_bus > 0 and error:
            found = True
            yield Hit(
                message=f"{on_bus} {vendor.upper()} GPU(s) on the PCI bus, but: {error}",
                fix="# drain the node and report the message to the administrators (a driver/library mismatch needs a reboot)",
                evidence={f"{vendor}.pci_devices": on_bus, f"{vendor}.error": error},
            )
    if not found:
        yield from _driver_unusable_told(f)


# What a pasted nvidia-smi, NVML or CUDA message says of the driver, by catalogue entry: the state
# it names and the commands that confirm and end it.
_NOT_LOADED = ("the NVIDIA kernel driver is not loaded (or /dev/nvidia* is missing where the command ran)",
               "lsmod | grep -w nvidia   # empty: the kernel module is not loaded\n"
               "sudo modprobe nvidia && nvidia-smi   # administrators; if it fails, dmesg says why (a new kernel without the driver rebuilt: dkms status)")
_MISMATCH = ("the NVIDIA kernel module loaded now is not the version of the driver libraries (a driver updated without a "
             "reboot, or a container carrying its own libcuda)",
             "cat /proc/driver/nvidia/version   # the kernel module loaded now; the libraries are the installed driver's\n"
             "sudo reboot   # administrators: loads the installed driver's module")
_NO_LIBRARY = ("no NVIDIA driver libraries (libnvidia-ml, libcuda) where the command ran: no driver installed there, or a "
               "container started without the NVIDIA runtime",
               "ldconfig -p | grep -E 'libnvidia-ml|libcuda'   # empty: no driver libraries here\n"
               "docker run --rm --gpus all IMAGE nvidia-smi   # a container sees the host driver only through the NVIDIA runtime")
_NO_DEVICE = ("NVML reports no usable GPU although the driver answers: the driver failed to initialise every GPU",
              "journalctl -k -b | grep -i NVRM   # RmInitAdapter failed and similar lines: why the driver gave up on the GPU")
# torch's "CUDA unknown error" is CUDA's 999 at initialisation (device count), where it means the
# driver's state, not a program's bug: the unified-memory module broken by a suspend and resume
# (System76 reload it on resume, pop-os/default-settings#64) or /dev/nvidia-uvm missing in a
# container (pytorch/pytorch#49081); torch's own text adds a CUDA_VISIBLE_DEVICES changed late.
_INIT_UNKNOWN = ("CUDA could not initialise the GPU (CUDA's unknown error, 999, at start-up): the driver's unified-memory "
                 "module (nvidia_uvm) lost its state, typically after a suspend and resume, or /dev/nvidia-uvm is missing "
                 "where the program ran; less often CUDA_VISIBLE_DEVICES was changed after the program started",
                 "ls -l /dev/nvidia-uvm   # missing: sudo nvidia-modprobe -c 0 -u\n"
                 "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm   # administrators, with no CUDA program running; "
                 "or reboot")
# The NVIDIA driver's kernel notices (knowledge/messages/nvrm.toml): another kernel driver bound the
# GPUs first (the driver's own advice: unload it), or the driver could not initialise a GPU it had.
_HELD_BY_OTHER = ("another kernel driver (nouveau, nvidiafb, rivafb, vfio-pci or a driver_override) took the NVIDIA "
                  "GPUs before the nvidia module, which then has no GPU to drive",
                  "lspci -nnk -d 10de:   # 'Kernel driver in use' of each NVIDIA device: nvidia is the one wanted\n"
                  "lsmod | grep -E '^(nouveau|nvidiafb|rivafb|vfio_pci) '   # the module holding them\n"
                  "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf "
                  "&& sudo update-initramfs -u && sudo reboot   # administrators (dracut -f on RHEL)")
_INIT_FAILED = ("the NVIDIA driver probed the GPU but failed to initialise it (RmInitAdapter failed): firmware or GSP "
                "start, PCI BAR/resource assignment, or a GPU in a bad state; nvidia-smi then finds no devices",
                "journalctl -k -b | grep -iE 'NVRM|BAR|AER'   # the lines before RmInitAdapter failed say which step\n"
                "sudo nvidia-bug-report.sh   # administrators: the report NVIDIA asks for")
_TOLD_DRIVER = {
    "nvrm:probe-routine-not-called": _HELD_BY_OTHER,
    "nvrm:rm-init-adapter-failed": _INIT_FAILED, "nvrm:rm-init-adapter-failed-minor": _INIT_FAILED,
    "torch:cuda-unknown-error": _INIT_UNKNOWN,
    "nvidia_smi:couldnt-communicate": _NOT_LOADED, "nvml:NVML_ERROR_DRIVER_NOT_LOADED": _NOT_LOADED,
    "nvml:NVML_ERROR_LIB_RM_VERSION_MISMATCH": _MISMATCH, "cuda:cudaErrorSystemDriverMismatch": _MISMATCH,
    "cuda_driver:CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": _MISMATCH,
    "nvidia_smi:nvml-library-not-found": _NO_LIBRARY, "nvml:NVML_ERROR_LIBRARY_NOT_FOUND": _NO_LIBRARY,
    "nvidia_smi:no-devices-found": _NO_DEVICE,
}


def _nvidia_gpu_shown(f: FactView) -> bool:
    """Whether anything but "No devices were found" shows an NVIDIA GPU on the machine: one on
    the PCI bus or listed, a GPU named in the ticket, or a kernel line of the driver about one."""
    on_bus = f.get("nvidia.pci_devices")
    if (isinstance(on_bus, int) and on_bus > 0) or cuda_gpus(f) or f.get("ticket.gpus_named"):
        return True
    return any(str(s.get("id", "")).startswith(("nvrm:", "xid:")) for s in f.get("ticket.symptoms") or [])


def _driver_unusable_told(f: FactView):
    """A pasted nvidia-smi, NVML or CUDA message that says the driver cannot be used: the first
    one, with what it means. Only the messages above: torch's "Found no NVIDIA driver on your
    system" is also true of a machine without a GPU, where it is no fault."""
    for s in catalogued(f, "gpu-driver-unusable"):
        if s["id"] not in _TOLD_DRIVER:
            continue
        if s["id"] == "nvidia_smi:no-devices-found" and not _nvidia_gpu_shown(f):
            continue  # also what a node without an NVIDIA GPU answers (a container run with --nv on a CPU node)
        said, fix = _TOLD_DRIVER[s["id"]]
        yield Hit(message=f"{said} (line {s.get('line')}: \"{str(s.get('text', '')).strip()[:120]}\")",
                  fix=fix, evidence=told_evidence(s))
        return


@rule("GPU002", "ecc-uncorrectable-errors", "error", "uncorrectable ECC errors on a GPU", impact=10,
      also={"warning": "the errors are only in the lifetime count, none since the driver loaded"})
def ecc_uncorrectable_errors(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose volatile (since the last driver load) uncorrectable ECC error count is above
        zero; or, at warning level, whose lifetime (aggregate) count is. In a pasted log, Xid 48
        (double bit ECC error) or 140 (ECC unrecovered error), or CUDA's "uncorrectable ECC error
        encountered" (cudaErrorECCUncorrectable, 214).

    Why it matters:
        An uncorrectable error means data in GPU memory was corrupted and the application that
        owned it was killed or computed garbage (Xid 48/63/64/94/95). Until the GPU is reset, pages
        stay suspect; recurring aggregate errors point to failing memory.

    How to fix:
        Drain the node; administrators reset the GPU (nvidia-smi -r, when idle) so pending page
        retirement or row remapping takes effect, then run DCGM diagnostics (dcgmi diag -r 3). A
        GPU that keeps accumulating errors goes back to the vendor.

    References:
        - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html
        - 004_3c12714629749d50.txt (GPU failures and health checks in large training runs)
    """
    yield from _facts_or_told(f, "ecc-uncorrectable-errors", lambda: list(_ecc_from_facts(f)), _ecc_told)


def _ecc_told(s):
    what = f"Xid {s.get('code')} ({s.get('means', '')[:60]})" if s.get("family") == "xid" else s.get("key")
    return Hit(message=f"an uncorrectable ECC error was reported ({what}, line {s.get('line')}): data in GPU memory "
                       "was corrupted and the GPU needs a reset",
               fix="nvidia-smi -q -d ECC,ROW_REMAPPER   # on the node: which GPU, and whether a remap is pending\n"
                   "dcgmi diag -r 3   # admins, after draining the node and resetting the GPU",
               evidence=told_evidence(s))


def _facts_or_told(f: FactView, symbol, from_facts, told):
    """What the gathered GPU facts establish; where they are unknown or establish nothing, the
    pasted message (catalogued as feeding ``symbol``) that says the same. Unknown facts with no
    such message stay unknown: the rule is skipped."""
    return facts_or_ticket(from_facts, (told(s) for s in catalogued(f, symbol)[:1]))


def _ecc_from_facts(f: FactView):
    for g in _gpus(f):
        vol, agg = _int(g.get("ecc_uncorrectable_volatile")), _int(g.get("ecc_uncorrectable_aggregate"))
        if vol:
            yield Hit(message=f"{vol} uncorrectable ECC error(s) since the driver loaded", subject=_subject(g),
                      fix="dcgmi diag -r 3   # admins, after draining the node and resetting the GPU",
                      evidence={"ecc_uncorrectable_volatile": vol, "ecc_uncorrectable_aggregate": agg})
        elif agg:
            yield Hit(message=f"{agg} uncorrectable ECC error(s) over the GPU's lifetime", subject=_subject(g),
                      fix="nvidia-smi -q -d ECC   # watch the count; if it grows, admins run dcgmi diag -r 3 and replace the GPU",
                      evidence={"ecc_uncorrectable_aggregate": agg}, severity="warning")


@rule("GPU003", "row-remap-pending", "error", "memory row remapping or page retirement awaits a GPU reset", impact=9,
      also={"warning": "a pasted Xid 63 tells of a remap that the next GPU reset applies"})
def row_remap_pending(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU with a row remap pending or failed (Ampere and later), or retired pages pending
        (Volta and Turing). In a pasted kernel log, Xid 63 ("Row Remapper: New row marked for
        remapping, reset gpu to activate", or a new retired page): a warning, since NVIDIA's Xid
        catalog asks no immediate action and the remap may have been applied by a reset since.

    Why it matters:
        The faulty memory row stays in use until the GPU is reset, so the error that caused it can
        recur; a failed remap means the GPU ran out of spare rows and needs replacing.

    How to fix:
        Drain the node; administrators reset the GPU when no process uses it (nvidia-smi -r -i N,
        or reboot). A remapping failure, or more than a handful of remapped rows, is an RMA case.

    References:
        - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 63)
    """
    yield from _facts_or_told(f, "row-remap-pending", lambda: list(_remap_from_facts(f)), _remap_told)


def _remap_told(s):
    return Hit(message=f"the kernel log shows Xid {s.get('code')} (line {s.get('line')}: a memory row marked for remapping "
                       "or a page for retirement): it takes effect at the next GPU reset",
               fix="nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT   # on the node: still pending?\n"
                   "sudo nvidia-smi -r -i 0   # admins, the GPU of the Xid's PCI address (nvidia-smi -L), once drained and idle; or reboot",
               evidence=told_evidence(s), severity="warning")


def _remap_from_facts(f: FactView):
    for g in _gpus(f):
        rows = g.get("remapped_rows") if isinstance(g.get("remapped_rows"), dict) else {}
        if rows.get("failed"):
            yield Hit(message="row remapping failed: the GPU has no spare memory rows left", subject=_subject(g),
                      fix="# drain the node; the GPU needs replacement (RMA)", evidence={"remapped_rows": rows})
        elif rows.get("pending"):
            yield Hit(message=f"a memory row remap is pending ({rows.get('uncorrectable')} uncorrectable remapped rows); "
                              "it takes effect only after a GPU reset", subject=_subject(g),
                      fix="nvidia-smi -r -i %s   # admins reset the GPU once the node is drained and it is idle; or reboot" % g.get("index"),
                      evidence={"remapped_rows": rows})
        elif g.get("retired_pages_pending") is True:
            yield Hit(message="retired memory pages are pending; they take effect only after a GPU reset",
                      subject=_subject(g), fix="nvidia-smi -r -i %s   # admins reset the GPU once the node is drained and it is idle; or reboot" % g.get("index"),
                      evidence={"retired_pages_pending": True, "retired_pages": g.get("retired_pages")})


@rule("GPU004", "ecc-disabled", "warning", "ECC disabled on a data-centre GPU", impact=6)
def ecc_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A data-centre GPU (by hpcdoctor's GPU table, not by guessing from the name) with ECC
        currently disabled (or disabled from the next reboot). GeForce and workstation cards, whose
        normal state is ECC off, and GPUs the table does not know are not judged.

    Why it matters:
        Without ECC, bit flips in GPU memory corrupt results silently; in long training runs that
        shows up as loss spikes or NaNs nobody can reproduce.

    How to fix:
        Administrators enable it unless the partition is configured without ECC on purpose: on
        NVIDIA nvidia-smi -e 1, effective after a reset; on AMD through the amdgpu RAS settings
        (amdgpu.ras_enable, ras_mask) and a reboot.

    References:
        - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html
    """
    for g in _gpus(f):
        # ECC off is the normal state of GeForce and most workstation cards: only a GPU the table
        # knows as a data-centre part is held to it, and an unknown one is not claimed.
        known = f.gpu_known(g.get("name"))
        if not known or known.get("segment") != "datacenter":
            continue
        if g.get("ecc_enabled") is False or g.get("ecc_pending") is False:
            fix = ("nvidia-smi -i %s -e 1   # administrators, then reset the GPU" % g.get("index") if g.get("vendor") != "amd"
                   else "# administrators: enable memory (UMC) ECC through the amdgpu RAS settings and reboot")
            yield Hit(message=f"ECC is {'off' if g.get('ecc_enabled') is False else 'set to turn off at the next reset'}",
                      subject=_subject(g), fix=fix,
                      evidence={"ecc_enabled": g.get("ecc_enabled"), "ecc_pending": g.get("ecc_pending")})


@rule("GPU005", "pcie-link-degraded", "warning", "GPU PCIe link below its maximum", impact=7)
def pcie_link_degraded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose PCIe link runs narrower than its maximum width, or at a lower generation than
        its maximum while the GPU is busy.

    Why it matters:
        Host-to-device copies, and NCCL traffic that crosses PCIe, slow in proportion: x8 halves the
        bandwidth of x16, gen 3 halves gen 4. A link that trained down usually means a bad riser,
        slot or cable. Idle GPUs lower their link generation to save power, so generation alone is
        not judged while the GPU is idle; GH200's GPU attaches over NVLink-C2C and its PCIe link is
        x1 by design, so it is not judged at all.

    How to fix:
        Run a host-to-device bandwidth test (hpcdoctor check --bench quick) to confirm; the
        administrators reseat the card or replace the riser and check the slot's BIOS settings.

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    for g in _gpus(f):
        known = f.gpu_known(g.get("name"))
        if known and known.get("c2c"):
            continue
        width, wmax = _int(g.get("pcie_width")), _int(g.get("pcie_width_max"))
        gen, gmax = _int(g.get("pcie_gen")), _int(g.get("pcie_gen_max"))
        events = g.get("clock_event_reasons") if isinstance(g.get("clock_event_reasons"), list) else None
        idle = events is None or "gpu_idle" in events
        problems = []
        if width and wmax and width < wmax:
            problems.append(f"x{width} of x{wmax}")
        if gen and gmax and gen < gmax and not idle:
            problems.append(f"gen {gen} of gen {gmax} while busy")
        if problems:
            yield Hit(message="PCIe link at " + " and ".join(problems), subject=_subject(g),
                      fix="hpcdoctor check --bench quick   # confirms the slow link; admins: reseat the GPU or replace the riser",
                      evidence={"pcie_width": width, "pcie_width_max": wmax, "pcie_gen": gen, "pcie_gen_max": gmax})


@rule("GPU006", "gpu-throttled", "warning", "GPU clocks held back by heat or power delivery", impact=8)
def gpu_throttled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose active clock event (throttle) reasons include a hardware slowdown, thermal
        slowdown (hardware or software) or power-brake slowdown. Idle, application clock settings,
        the software power cap and sync boost are normal and ignored. An active reason hpcdoctor
        does not know (one a newer driver added, such as NVML's board limit or reliability
        reasons) is reported as such, not passed.

    Why it matters:
        A throttled GPU runs at a fraction of its clocks; in a multi-GPU job every collective waits
        for it, so one hot GPU slows the whole job.

    How to fix:
        Administrators check cooling (fans, inlet temperature, airflow), the power supplies and the
        power-brake signal; nvidia-smi -q -d PERFORMANCE,TEMPERATURE shows the live state.

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html
    """
    table = knowledge.load("thresholds")["clock_events"]
    harmful, benign = set(table["harmful"]), set(table["benign"])
    for g in _gpus(f):
        events = g.get("clock_event_reasons")
        if not isinstance(events, list):
            continue
        bad = [e for e in events if e in harmful]
        unknown = [e for e in events if e not in harmful and e not in benign]
        if bad:
            yield Hit(message=f"clocks held back by {', '.join(bad)} (temperature {g.get('temperature_c')} C)",
                      subject=_subject(g), fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE   # admins: check cooling and power delivery",
                      evidence={"clock_event_reasons": events, "temperature_c": g.get("temperature_c")})
        elif unknown:
            yield Hit(message=f"clocks held back by {', '.join(unknown)}, a reason hpcdoctor does not know: "
                              f"it may be harmless or a fault (temperature {g.get('temperature_c')} C)",
                      subject=_subject(g),
                      fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER   # read what the driver says of this reason",
                      evidence={"clock_event_reasons": events, "unclassified": unknown,
                                "temperature_c": g.get("temperature_c")})


@rule("GPU007", "power-limit-reduced", "warning", "GPU power limit below its default", impact=6)
def power_limit_reduced(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose enforced power limit is below its default limit.

    Why it matters:
        Compute-bound work (GEMMs, training) scales with the power it may draw: an H100 capped at
        500 W of 700 W loses a sizeable share of its throughput.

    How to fix:
        If it was not set on purpose by the site, administrators restore the default
        (nvidia-smi -i N -pl DEFAULT_WATTS, or remove the power capping policy).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
    """
    frac = knowledge.load("thresholds")["power"]["reduced_fraction"]
    for g in _gpus(f):
        lim, dflt = g.get("power_limit_w"), g.get("power_default_limit_w")
        if isinstance(lim, (int, float)) and isinstance(dflt, (int, float)) and dflt > 0 and lim < dflt * frac:
            yield Hit(message=f"power limit {lim:.0f} W of a default {dflt:.0f} W", subject=_subject(g),
                      fix=f"nvidia-smi -i {g.get('index')} -pl {dflt:.0f}   # admins, unless capped on purpose",
                      evidence={"power_limit_w": lim, "power_default_limit_w": dflt})


@rule("GPU008", "persistence-mode-off", "advice", "GPU persistence mode off", impact=3)
def persistence_mode_off(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An NVIDIA GPU with persistence mode disabled on Linux.

    Why it matters:
        Without it the driver tears the GPU state down whenever no process uses it and rebuilds it
        at the next start: each job pays seconds of initialisation, and short pre-job checks or
        ranks that start at different times see the GPU come and go.

    How to fix:
        Administrators run the nvidia-persistenced daemon (preferred) or nvidia-smi -pm 1.

    References:
        - https://docs.nvidia.com/deploy/driver-persistence/index.html
    """
    for g in _gpus(f):
        if g.get("vendor") == "nvidia" and g.get("persistence_mode") is False:
            yield Hit(message="persistence mode is off: the driver re-initialises the GPU for every job",
                      subject=_subject(g), fix="systemctl enable --now nvidia-persistenced   # admins",
                      evidence={"persistence_mode": False})


@rule("GPU009", "mig-enabled", "advice", "MIG partitioning enabled", impact=4)
def mig_enabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU with Multi-Instance GPU mode enabled (or pending).

    Why it matters:
        A process sees only the MIG slice it was given, with a fraction of the SMs and memory, and
        NCCL cannot run collectives across MIG instances: multi-GPU training on MIG slices fails or
        falls back to slow paths.

    How to fix:
        Use MIG only for small, independent jobs; for training ask for a full GPU (a non-MIG
        partition or GRES), or administrators disable MIG (nvidia-smi -mig 0).

    References:
        - https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
    """
    for g in _gpus(f):
        if g.get("mig_enabled") is True or g.get("mig_pending") is True:
            n = g.get("mig_devices")
            yield Hit(message="MIG is enabled" + (f" with {n} instance(s)" if n else "")
                      + ": processes see a slice, and NCCL cannot span instances",
                      subject=_subject(g), fix="# request a full (non-MIG) GPU for multi-GPU training",
                      evidence={"mig_enabled": g.get("mig_enabled"), "mig_devices": n})


@rule("GPU010", "compute-mode-restricted", "warning", "GPU compute mode restricts processes", impact=6,
      also={"error": "the compute mode is Prohibited"})
def compute_mode_restricted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU in compute mode Prohibited (no process may use it), or Exclusive_Process while
        several ranks on the node are set to share GPUs. In a pasted ticket, CUDA's error 46, "all
        CUDA-capable devices are busy or unavailable" (since CUDA 11 "CUDA-capable device(s) is/are
        busy or unavailable").

    Why it matters:
        Prohibited makes the GPU unusable; Exclusive_Process lets only one process create a
        context, so a second rank (or a DataLoader worker that touches CUDA) fails with "all
        CUDA-capable devices are busy or unavailable".

    How to fix:
        Give each rank its own GPU (srun --gpus-per-task=1) or ask the administrators to set the
        Default mode (nvidia-smi -c DEFAULT).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html
    """
    yield from _facts_or_told(f, "compute-mode-restricted", lambda: list(_compute_mode_from_facts(f)), _busy_told)


def _busy_told(s):
    return Hit(message=f"CUDA found every GPU busy or unavailable (line {s.get('line')}: \"{str(s.get('text', '')).strip()[:120]}\"): "
                       "a GPU in Exclusive_Process mode already used by another process, or in Prohibited mode",
               fix="nvidia-smi --query-gpu=index,compute_mode --format=csv   # Exclusive_Process or Prohibited?\n"
                   "nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv   # the process that holds it",
               evidence=told_evidence(s))


def _compute_mode_from_facts(f: FactView):
    from hpcdoctor.rules._common import local_ranks

    gpus = _gpus(f)
    ranks = local_ranks(f)
    for g in gpus:
        mode = g.get("compute_mode")
        if mode == "Prohibited":
            yield Hit(message="compute mode Prohibited: no process can use this GPU", subject=_subject(g),
                      fix="nvidia-smi -i %s -c DEFAULT   # admins" % g.get("index"), evidence={"compute_mode": mode},
                      severity="error")
        elif mode in ("Exclusive_Process", "Exclusive_Thread") and ranks > len(gpus):
            yield Hit(message=f"compute mode {mode} with {ranks} local ranks for {len(gpus)} GPU(s): ranks cannot share it",
                      subject=_subject(g), fix="srun --gpus-per-task=1 python train.py   # one rank per GPU",
                      evidence={"compute_mode": mode, "local_ranks": ranks})


def _gib(text: str) -> float:
    """A size as torch's format_size() prints it ("0 bytes", "1.50 KiB", "530.00 MiB", "11.17 GiB")."""
    value, unit = text.split()
    return float(value) / {"bytes": 2**30, "KiB": 2**20, "MiB": 2**10, "GiB": 1}[unit]


# One entry of the proc_info that reportProcessMemoryInfo() (c10/cuda/CUDACachingAllocator.cpp)
# builds from NVML: "Process <pid> has <size> memory in use. " for another process, "Including
# non-PyTorch memory, this process has <size> memory in use. " for the pid equal to getpid().
_PROC_ENTRY = re.compile(r"(?:Process (\d{1,10})|(this process)) has (\d{1,12}(?:\.\d{1,4})? (?:bytes|[KMG]iB)) memory in use")


def _oom_held_by_others(s: dict):
    """(GiB held by other processes, [(pid, size text)], how it was told, this process's size) from one pasted
    out-of-memory message, or None when the message cannot tell.

    Old form (torch < 2.1): capacity - free - reserved by PyTorch. New form (2.1+): the processes
    NVML listed when it did; without "this process" among them the job runs in another PID
    namespace (a container: NVML gives host pids, getpid() the container's) and one listed pid is
    the job itself, so the largest that could be it (at least what PyTorch reserved) is left out.
    Without any NVML entry only "this process" and the capacity: the rest is held outside it.
    With neither (no NVML: some containers, Windows, every ROCm build) the split between this
    process's CUDA context and others is unknown: None."""
    total, free = _gib(s["total"]), _gib(s["free"])
    if total <= 0:  # no card size, no share of it
        return None
    if s["id"] == "torch:cuda-oom":
        return total - free - _gib(s["reserved"]), [], "reserved", s["reserved"]
    entries = [(pid, size) for pid, me, size in _PROC_ENTRY.findall(s.get("procs") or "")
               if _gib(size) <= total]  # a figure above the card is no reading (NVML: not available)
    mine = [size for pid, size in entries if not pid]
    others = [(pid, size) for pid, size in entries if pid]
    if others and mine:
        return sum(_gib(size) for _, size in others), others, "listed", mine[0]
    if others:
        torch_own = _gib(s["allocated"]) + _gib(s["unallocated"]) if s.get("allocated") and s.get("unallocated") else 0.0
        could_be_me = [e for e in others if _gib(e[1]) >= torch_own] or others
        me = max(could_be_me, key=lambda e: _gib(e[1]))
        rest = [e for e in others if e is not me]
        return sum(_gib(size) for _, size in rest), rest, "namespace", me[1]
    if mine:
        return total - free - _gib(mine[0]), [], "unlisted", mine[0]
    return None


def _held_by_others_in_ticket(f, frac: float):
    """torch's out-of-memory message states the card's capacity, what was free and (old form) what
    this process reserved or (new form, through NVML) what each process held on the card."""
    for s in f.get("ticket.symptoms") or []:
        if s["id"] not in ("torch:cuda-oom", "torch:cuda-oom-v2"):
            continue
        told = _oom_held_by_others(s)
        if told is None:
            continue
        held, pids, how, mine = told
        if held <= _gib(s["total"]) * max(frac, 0.25):
            continue
        hip = s.get("vendor") == "HIP"
        where = f"GPU {s['gpu']} ({s['total']})"
        named = ", ".join(f"pid {pid} {size}" for pid, size in pids[:8])
        if how == "reserved":
            said = f"this process reserved only {s['reserved']}, {s['free']} was free: about {held:.1f} GiB were held by other processes"
        elif how == "listed":
            said = f"{len(pids)} other process(es) held {held:.1f} GiB ({named}), this process {mine}"
        elif how == "namespace":
            said = (f"other processes held at least {held:.1f} GiB ({named}; the largest listed pid, taken for this job "
                    f"seen from outside its container, is left out)")
        else:
            said = (f"this process had {mine} in use and {s['free']} was free: "
                    f"about {held:.1f} GiB were held outside it, by no listed compute process (another container, "
                    f"a graphics process or the driver)")
        pid_list = ",".join(pid for pid, _ in pids[:8])
        if hip:
            fix = ("rocm-smi --showpids   # or: amd-smi process -- which processes hold memory on the GPUs now\n"
                   "# yours (a leftover run, a stuck DataLoader worker)? end it; someone else's: ask the administrators\n"
                   "# or run on a GPU that is free: HIP_VISIBLE_DEVICES=1 python ... (the index of a free GPU)")
        else:
            who = f"ps -o pid=,user=,etime=,args= -p {pid_list}   # " if pid_list else "# "
            fix = ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # which processes hold memory on the GPUs now\n"
                   f"{who}yours (a leftover run, a stuck DataLoader worker)? end it; someone else's: ask the administrators\n"
                   "# or run on a GPU that is free: CUDA_VISIBLE_DEVICES=1 python ... (the index of a free GPU)")
        yield Hit(message=f"out of memory on {where}: {said} (line {s['line']})",
                  subject=f"GPU {s['gpu']}", fix=fix,
                  evidence={"ticket.line": s["line"], "ticket.text": s["text"][:160], "held_by_others_gib": round(held, 2),
                            "other_processes": [{"pid": int(pid), "memory": size} for pid, size in pids],
                            "told_by": how})
        return


@rule("GPU011", "gpu-memory-in-use", "warning", "GPU memory held by other processes at start", impact=7)
def gpu_memory_in_use(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU on which processes already run, or more than a few percent of the memory is in use,
        before the job starts. In a pasted ticket, torch's out-of-memory message ("CUDA out of
        memory" or ROCm's "HIP out of memory") where over a quarter of the card was held by other
        processes: before torch 2.1 the capacity minus what was free and what this process
        reserved; since 2.1 the processes NVML listed beside "this process" (the largest listed
        pid is taken for the job itself when it runs in a container and is not named "this
        process"), or the capacity minus what was free and what this process had in use. A
        message without NVML's figures (no NVML, Windows, ROCm builds) cannot tell and is left
        alone.

    Why it matters:
        A leftover process from an earlier job (a zombie rank, a stuck DataLoader) or another
        user's job holds memory and compute: the new job runs out of memory or runs slow, and
        benchmarks measure the intruder.

    How to fix:
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv (rocm-smi --showpids or
        amd-smi process on AMD) shows the processes; end your own leftovers, otherwise ask the
        administrators to clean the node (Slurm epilog), or run on a free GPU
        (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
        - https://github.com/pytorch/pytorch/blob/001074d25084fdb87a799823e395a50f5ec044d3/c10/cuda/CUDACachingAllocator.cpp
    """
    frac = knowledge.load("thresholds")["gpu_memory"]["in_use_fraction"]
    pasted = list(_held_by_others_in_ticket(f, frac))
    if pasted:  # a pasted ticket has no GPU listing to read beside it
        yield from pasted
        return
    for g in _gpus(f):
        procs = g.get("processes") if isinstance(g.get("processes"), list) else []
        used, total = _int(g.get("memory_used_mib")), _int(g.get("memory_total_mib"))
        busy = used is not None and total and used > total * frac
        if procs or busy:
            pids = ", ".join(str(p.get("pid")) for p in procs[:8])
            yield Hit(message=(f"{len(procs)} process(es) on the GPU (pid {pids})" if procs else "no process listed")
                      + (f", {used} MiB of {total} MiB in use" if used is not None and total else ""),
                      subject=_subject(g), fix="nvidia-smi   # end leftover processes of yours, or ask admins to clean the node",
                      evidence={"processes": procs, "memory_used_mib": used, "memory_total_mib": total})
