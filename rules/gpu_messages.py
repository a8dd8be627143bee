"""GPU conditions a pasted message states: CUDA's fabric and forward-compatibility errors, a GPU
lost from the bus, and the kernel's Xid reports, read through the message catalogues
(hpcdoctor/knowledge/messages/). A live node or a snapshot has no pasted messages: these rules
then find nothing."""

from __future__ import annotations

from typing import Dict, Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued as _told, first_symptom, told_evidence as _evidence, xid_reset_line


def _said(s: Dict) -> str:
    return f"line {s.get('line')}: \"{str(s.get('text', '')).strip()[:140]}\""


def _xid(s: Dict) -> str:
    return f"Xid {s.get('code')}" if s.get("family") == "xid" else str(s.get("key"))


@rule("GPU012", "nvidia-fabric-manager", "error", "CUDA waits for the GPU fabric: Fabric Manager not running", impact=10)
def nvidia_fabric_manager(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA's "system not yet initialized" (cudaErrorSystemNotReady, error
        802, or CUDA_ERROR_SYSTEM_NOT_READY from the driver API) or, from CUDA 13,
        cudaErrorFabricNotReady (919): CUDA refuses all work until the node's GPU fabric is set up.

    Why it matters:
        CUDA's header says 802 means the system is not ready for any CUDA work until "all required
        driver daemons are actively running". On NVSwitch systems (HGX and DGX A100, H100, H200,
        B200) that daemon is NVIDIA Fabric Manager: without it, or with one whose version differs
        from the driver's, every GPU of the node is unusable, whatever the job.

    How to fix:
        The administrators start Fabric Manager (systemctl enable --now nvidia-fabricmanager) with
        the package of exactly the driver's version, and check its log; until then the node is
        drained. A job cannot work around it.

    References:
        - https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide
        - https://docs.nvidia.com/nim/large-language-models/troubleshooting/cuda-driver.md (Error 802)
        - https://github.com/pytorch/pytorch/issues/35710 (cuda runtime error (802) on an NVSwitch system)
    """
    for s in _told(f, "nvidia-fabric-manager"):
        yield Hit(message=f"CUDA says the system is not yet initialized ({s.get('key')}, {_said(s)}): on an "
                          "NVSwitch system CUDA waits for NVIDIA Fabric Manager, which is not running or not "
                          "of the driver's version",
                  fix="systemctl status nvidia-fabricmanager --no-pager   # must be active, its version the driver's\n"
                      "nvidia-smi --query-gpu=driver_version --format=csv,noheader; nv-fabricmanager --version\n"
                      "sudo systemctl enable --now nvidia-fabricmanager   # administrators: install the matching package first",
                  evidence=_evidence(s))
        return


_COMPAT_OK = ("datacenter",)


@rule("GPU013", "cuda-forward-compat-unsupported", "error",
      "CUDA forward compatibility used on a GPU that does not support it", impact=10)
def cuda_forward_compat_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA error 804, "forward compatibility was attempted on non supported
        HW" (cudaErrorCompatNotSupportedOnDevice, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE): the
        process loaded the CUDA forward-compatibility driver (the cuda-compat package, as NGC and
        other CUDA images ship it under /usr/local/cuda/compat) on a GPU that cannot use it.

    Why it matters:
        NVIDIA supports forward compatibility only on data-center GPUs, select NGC Server Ready RTX
        SKUs and Jetson boards. On a GeForce or workstation card the compat libcuda refuses to start
        and CUDA sees no GPU at all (torch.cuda.is_available() is False).

    How to fix:
        Stop loading the compat library: take its directory out of LD_LIBRARY_PATH (or use an image
        without it), so that the host driver's own libcuda is used, and run a build of the software
        whose CUDA that driver supports (nvidia-smi shows the highest). Where a data-center GPU is
        named, the unsupported device is another visible one: CUDA's header says to make only
        supported GPUs visible with CUDA_VISIBLE_DEVICES.

    References:
        - https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html
        - https://github.com/gpustack/gpustack/issues/1254 (Error 804 on a 535 driver)
    """
    told = _told(f, "cuda-forward-compat-unsupported")
    if not told:
        return
    s = told[0]
    names = [g.get("name") for g in f.gpus() if g.get("name")] or [g.get("gpu") for g in f.get("ticket.gpus_named") or []]
    segments = {n: (f.gpu_known(n) or {}).get("segment") for n in names if n}
    datacenter = [n for n, seg in segments.items() if seg in _COMPAT_OK]
    other = [n for n, seg in segments.items() if seg and seg not in _COMPAT_OK]
    drop = ("export LD_LIBRARY_PATH=$(printf %s \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v '/compat' | paste -sd: -)"
            "   # the host driver's libcuda instead of cuda-compat's\n")
    driver = "nvidia-smi | head -4   # the CUDA version this driver supports: run a build of that CUDA or older"
    if other or not datacenter:
        gpu = f" on {', '.join(other)} ({', '.join(sorted({segments[n] for n in other}))})" if other else ""
        yield Hit(message=f"CUDA forward compatibility (cuda-compat's libcuda) was loaded{gpu}, which NVIDIA supports "
                          f"on data-center GPUs only ({_said(s)})",
                  fix="printf %s \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep compat   # where the compat libcuda comes from\n"
                      + drop + driver,
                  evidence={**_evidence(s), "gpus": names})
    else:
        yield Hit(message=f"CUDA forward compatibility was refused although {', '.join(datacenter)} supports it "
                          f"({_said(s)}): another visible device does not",
                  fix="nvidia-smi -L   # find the data-center GPUs\n"
                      "export CUDA_VISIBLE_DEVICES=0   # the index of a supported GPU, as CUDA's header says",
                  evidence={**_evidence(s), "gpus": names})


@rule("GPU014", "gpu-fallen-off-bus", "error", "a GPU fell off the bus or is lost", impact=10,
      also={"info": "a laptop's discrete GPU under a GPU switcher (Bumblebee, bbswitch, primus, optimus-manager), "
                    "which powers the card off: the driver's words for a card it finds powered off"})
def gpu_fallen_off_bus(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket or kernel log, a GPU the driver lost on PCIe: Xid 79 ("GPU has fallen off
        the bus"), the driver's "NVRM: GPU ... has fallen off the bus", NVML's "GPU is lost"
        (NVML_ERROR_GPU_IS_LOST) or nvidia-smi's "GPU is lost. Reboot the system to recover this GPU".

    Why it matters:
        The GPU no longer answers on its PCIe link: every process on it is dead and none can start
        until the node is rebooted (NVIDIA's Xid catalog: immediate action RESTART_BM). NVIDIA names
        PCIe link failures as the usual cause, and failing GPU hardware or power as others; it
        recurs on the same slot when the hardware is at fault.

    How to fix:
        Drain the node and reboot it; look in the kernel log for the PCIe errors (AER) around the
        event, and if the GPU falls off again, have the vendor check the card, its riser and power.

        On a laptop whose discrete GPU a switcher powers off and on (Bumblebee's optirun, bbswitch,
        primusrun, optimus-manager; knowledge/messages/gpu_switchers.toml), the driver says the
        same of a card it finds without power: an info that names the switcher, not a drain.

    References:
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 79)
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (NVML_ERROR_GPU_IS_LOST)
        - https://github.com/Askannz/optimus-manager/issues/41 (fallen off the bus after switching with bbswitch)
    """
    # A user's own words that a GPU fell off (prose.toml) only where no driver or tool line says it.
    told = sorted(_told(f, "gpu-fallen-off-bus"), key=lambda s: s.get("family") == "prose")
    if not told:
        return
    s = told[0]
    where = f" ({s['pci']})" if s.get("pci") else ""
    switcher = first_symptom(f, "gpu_switchers:switcher-command", "gpu_switchers:bbswitch-power")
    if switcher is not None:
        tool = switcher.get("tool") or "bbswitch"
        yield Hit(message=f"a GPU{where} is said to have fallen off the bus ({_xid(s)}, {_said(s)}) on a laptop whose "
                          f"discrete GPU a switcher powers off and on ({tool}, line {switcher.get('line')}): the driver "
                          "says this of a card it finds without power, which is the switcher's doing, not a GPU lost on a "
                          "node's PCIe",
                  severity="info",
                  fix="cat /proc/acpi/bbswitch 2>/dev/null   # ON or OFF: the card's power as bbswitch set it\n"
                      "journalctl -k -b | grep -iE 'bbswitch|fallen off'   # whether the card was switched off just before",
                  evidence={**_evidence(s), "switcher.line": switcher.get("line")})
        return
    yield Hit(message=f"a GPU{where} fell off the bus or is lost ({_xid(s)}, {_said(s)}): "
                      "it stays unusable until the node is rebooted",
              fix="scontrol update nodename=$(hostname -s) state=drain reason=\"GPU fell off the bus\"   # Slurm; or your scheduler's drain\n"
                  "journalctl -k -b | grep -iE 'AER|pcieport|fallen off|NVRM: Xid'   # the PCIe errors around the event\n"
                  "sudo reboot   # administrators; a GPU that falls off again goes to the vendor",
              evidence={**_evidence(s), "events": [x.get("id") for x in told]})


@rule("GPU015", "gpu-xid-reset-required", "error", "an Xid after which NVIDIA says to reset the GPU", impact=9)
def gpu_xid_reset_required(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log (dmesg, journalctl -k, /var/log/messages), an Xid whose immediate
        action in NVIDIA's Xid catalog is RESET_GPU: Xid 46, 62, 95, 109, 119 and 120 (GSP
        timeouts and errors), 136, 143, 155, 158 and others. Xid 79 (gpu-fallen-off-bus), 48 and 140
        (ecc-uncorrectable-errors), 63 (row-remap-pending) and 64 (gpu-hardware-faulty) have their own rules.
        The same state in the driver's other words (knowledge/messages/nvrm.toml): its GSP firmware
        unresponsive, its heartbeat timed out, crashed (CrashCat), halted in its debugger, a fatal
        GSP interrupt or an uncorrected ECC error in GSP's own memory, the PMU halted, and "The GPU
        likely needs to be reset"; NVML's and DCGM's "GPU requires reset" (NVML_ERROR_RESET_REQUIRED,
        DCGM_ST_RESET_REQUIRED), DCGM's recovery actions GPU_RESET and DRAIN_AND_RESET (a GPU at
        reduced capacity after a fault) and its uncontained-error (Xid 95)
        report; nvidia-smi's own "did not complete reset successfully ... Please reboot".

    Why it matters:
        After such an event the GPU is in a state the driver cannot recover while it runs: jobs on
        it fail or hang until it is reset, and NVIDIA directs investigation (CONTACT_SUPPORT,
        INVESTIGATE_SW) if it recurs after the reset.

    How to fix:
        Drain the node, reset the GPU once no process uses it (nvidia-smi -r), or reboot the node
        where a reset is refused; run DCGM diagnostics before returning it to service, and report an
        Xid that comes back.

    References:
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    """
    told = _told(f, "gpu-xid-reset-required")
    if not told:
        return
    codes = ", ".join(_reset_said(s) for s in told[:6])
    s = told[0]
    said = ("the kernel log shows {}: NVIDIA's Xid catalog says to reset the GPU" if all(x.get("family") == "xid" for x in told)
            else "{}: NVIDIA's driver and tools say the GPU must be reset")
    yield Hit(message=f"{said.format(codes)} ({_said(s)})",
              fix="scontrol update nodename=$(hostname -s) state=drain reason=\"Xid needing a GPU reset\"   # Slurm; or your scheduler's drain\n"
                  "nvidia-smi --query-compute-apps=pid --format=csv,noheader   # must be empty before the reset\n"
                  + xid_reset_line(s, "reboot if refused") + "\n"
                  "dcgmi diag -r 3   # before the node returns to service",
              evidence={**_evidence(s), "xids": [x.get("code") for x in told if x.get("family") == "xid"],
                        "events": [x.get("id") for x in told]})


def _reset_said(s: Dict) -> str:
    means = f" ({s.get('means', '')[:60]})" if s.get("means") else ""
    if s.get("family") == "xid":
        return f"Xid {s.get('code')}{means}"
    # a notice's meaning up to its first colon: what happened, not the advice after it
    means = f" ({str(s.get('means')).split(':')[0].split(' (')[0][:80]})" if s.get("means") else ""
    who = {"nvrm": "the driver's notice", "nvml": "NVML's", "dcgm": "DCGM's", "dcgm_diag": "DCGM's",
           "nvidia_smi": "nvidia-smi's"}.get(str(s.get("family")), str(s.get("family")))
    return f"{who} {s.get('key')}{means}"


@rule("GPU016", "gpu-xid-application-fault", "warning", "an Xid NVIDIA attributes to the application", impact=6)
def gpu_xid_application_fault(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, an Xid that NVIDIA's Xid catalog answers with RESTART_APP and
        investigates in the application (CHECK_APP/CUDA, or the Xid 13 and 31 workflows): a
        graphics engine exception (13), a GPU memory page fault (31), a corrupted or illegal push
        buffer stream (11, 25, 32), a class error (69) or corrupted data sent to the GPU (80).

    Why it matters:
        These are, in NVIDIA's words, typically application bugs (an out-of-bounds access, an
        illegal instruction or address): the node needs no action, and draining it or resetting the
        GPU does not help. The program that faulted must be fixed; a driver or hardware bug is
        possible only when the tools below find nothing.

    How to fix:
        Run the failing program under compute-sanitizer (memcheck) or with CUDA_LAUNCH_BLOCKING=1 to
        find the faulting kernel, as NVIDIA's catalog recommends.

    References:
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 13, 31)
        - https://docs.nvidia.com/compute-sanitizer/ComputeSanitizer/index.html
    """
    told = _told(f, "gpu-xid-application-fault")
    if not told:
        return
    s = told[0]
    codes = ", ".join(f"Xid {x.get('code')}" for x in told[:6])
    yield Hit(message=f"{codes} in the kernel log: NVIDIA's Xid catalog attributes these to the application, "
                      f"not the node ({_said(s)})",
              fix="CUDA_LAUNCH_BLOCKING=1 compute-sanitizer --tool memcheck python train.py   # your failing command: names the faulting kernel",
              evidence={**_evidence(s), "xids": [x.get("code") for x in told]})
