"""GPU health: the PCIe link, clocks held back, the power limit, persistence and MIG (GPU005-GPU009)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, facts_or_ticket, first_stated, told_evidence, told_text
from hpcdoctor.rules._gpu import as_int, gpu_list, subject


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
    for g in gpu_list(f):
        known = f.gpu_known(g.get("name"))
        if known and known.get("c2c"):
            continue
        width, wmax = as_int(g.get("pcie_width")), as_int(g.get("pcie_width_max"))
        gen, gmax = as_int(g.get("pcie_gen")), as_int(g.get("pcie_gen_max"))
        events = g.get("clock_event_reasons") if isinstance(g.get("clock_event_reasons"), list) else None
        idle = events is None or "gpu_idle" in events
        problems = []
        if width and wmax and width < wmax:
            problems.append(f"x{width} of x{wmax}")
        if gen and gmax and gen < gmax and not idle:
            problems.append(f"gen {gen} of gen {gmax} while busy")
        if problems:
            yield Hit(message="PCIe link at " + " and ".join(problems), subject=subject(g),
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
        reasons) is reported as such, not passed. In a pasted ticket, nvidia-smi -q's lines that
        show such a reason Active, DCGM reporting a thermal or other non-benign clocks event
        (DCGM_FR_CLOCKS_EVENT_THERMAL, _VIOLATION; not its power one, which the software power cap
        also raises, nor its thermal-violation totals, reported down to 0.0 seconds), Xid 54
        (clocks reduced because the board's auxiliary power is not connected), or the user saying
        the GPU overheats or is throttling (not a question, a hedge or advice).

    Why it matters:
        A throttled GPU runs at a fraction of its clocks; in a multi-GPU job every collective waits
        for it, so one hot GPU slows the whole job.

    How to fix:
        Administrators check cooling (fans, inlet temperature, airflow), the power supplies and the
        power-brake signal; nvidia-smi -q -d PERFORMANCE,TEMPERATURE shows the live state.

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html
    """
    yield from facts_or_ticket(lambda: list(_throttled_from_facts(f)), _throttled_told(f))


def _throttled_from_facts(f: FactView) -> Iterator[Hit]:
    table = knowledge.load("thresholds")["clock_events"]
    harmful, benign = set(table["harmful"]), set(table["benign"])
    for g in gpu_list(f):
        events = g.get("clock_event_reasons")
        if not isinstance(events, list):
            continue
        bad = [e for e in events if e in harmful]
        unknown = [e for e in events if e not in harmful and e not in benign]
        if bad:
            yield Hit(message=f"clocks held back by {', '.join(bad)} (temperature {g.get('temperature_c')} C)",
                      subject=subject(g), fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE   # admins: check cooling and power delivery",
                      evidence={"clock_event_reasons": events, "temperature_c": g.get("temperature_c")})
        elif unknown:
            yield Hit(message=f"clocks held back by {', '.join(unknown)}, a reason hpcdoctor does not know: "
                              f"it may be harmless or a fault (temperature {g.get('temperature_c')} C)",
                      subject=subject(g),
                      fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER   # read what the driver says of this reason",
                      evidence={"clock_event_reasons": events, "unclassified": unknown,
                                "temperature_c": g.get("temperature_c")})


def _throttled_told(f: FactView) -> Iterator[Hit]:
    """nvidia-smi -q's Active slowdown lines pasted alone, or the user saying the GPU overheats or
    throttles (knowledge/messages/faq_nvidia.toml)."""
    s = first_stated(f, "gpu-throttled")
    if s is None:
        return
    if s.get("reason"):
        what = f"nvidia-smi shows {s['reason']} active"
    elif s.get("family") == "xid":
        what = f"Xid {s.get('code')} says the GPU runs at reduced clocks: its auxiliary power is not connected"
    elif s.get("family") == "dcgm_diag":
        what = f"DCGM's diagnostic reports {s.get('key')} ({s.get('means')})"
    else:
        what = "the user says the GPU overheats or throttles"
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): NVML's slowdown reasons hold the clocks "
                      "back when the temperature is too high, the power brake is asserted or the power draw is too high",
              fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE   # which slowdown is Active, and the temperature against "
                  "GPU Slowdown Temp\n# admins: check the fans, inlet temperature, airflow and power delivery",
              evidence=told_evidence(s))


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
    for g in gpu_list(f):
        lim, dflt = g.get("power_limit_w"), g.get("power_default_limit_w")
        if isinstance(lim, (int, float)) and isinstance(dflt, (int, float)) and dflt > 0 and lim < dflt * frac:
            yield Hit(message=f"power limit {lim:.0f} W of a default {dflt:.0f} W", subject=subject(g),
                      fix=f"nvidia-smi -i {g.get('index')} -pl {dflt:.0f}   # admins, unless capped on purpose",
                      evidence={"power_limit_w": lim, "power_default_limit_w": dflt})


@rule("GPU008", "persistence-mode-off", "advice", "GPU persistence mode off", impact=3,
      also={"error": "the NVIDIA container hook timed out waiting for the driver: the container did not start"})
def persistence_mode_off(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An NVIDIA GPU with persistence mode disabled on Linux. In a pasted ticket, DCGM's
        diagnostic saying so ("Persistence mode for GPU N is disabled.", DCGM_FR_PERSISTENCE_MODE),
        or the user saying nvidia-smi is slow or takes seconds to answer, the start-up cost
        NVIDIA's Driver Persistence guide gives for a GPU no client keeps initialised. An error
        where nvidia-container-cli timed out waiting for the driver ("initialization error: driver
        error: timed out", "driver rpc error: timed out"): the container did not start, and
        NVIDIA's maintainers answer it with persistence mode.

    Why it matters:
        Without it the driver tears the GPU state down whenever no process uses it and rebuilds it
        at the next start: each job pays seconds of initialisation, and short pre-job checks or
        ranks that start at different times see the GPU come and go.

    How to fix:
        Administrators run the nvidia-persistenced daemon (preferred) or nvidia-smi -pm 1.

    References:
        - https://docs.nvidia.com/deploy/driver-persistence/index.html
        - https://docs.nvidia.com/deploy/driver-persistence/overview.html (1-3 s of start-up per GPU)
        - https://github.com/NVIDIA/nvidia-container-toolkit/issues/202 (driver rpc error: timed out; persistence mode)
    """
    yield from facts_or_ticket(lambda: list(_persistence_from_facts(f)), _persistence_told(f))


def _persistence_from_facts(f: FactView) -> Iterator[Hit]:
    for g in gpu_list(f):
        if g.get("vendor") == "nvidia" and g.get("persistence_mode") is False:
            yield Hit(message="persistence mode is off: the driver re-initialises the GPU for every job",
                      subject=subject(g), fix="systemctl enable --now nvidia-persistenced   # admins",
                      evidence={"persistence_mode": False})


def _persistence_told(f: FactView) -> Iterator[Hit]:
    """DCGM's diagnostic reporting persistence mode disabled (knowledge/messages/dcgm_diag.toml), or the
    user saying nvidia-smi is slow to answer (knowledge/messages/faq_nvidia.toml)."""
    s = first_stated(f, "persistence-mode-off")
    if s is None:
        return
    if s.get("family") == "container":
        if s.get("error") != "timed out":
            return  # "failed to process request": the driver answered with a failure, which persistence does not explain
        # nvidia-container-cli's helper waits 10 s for the driver (libnvidia-container src/rpc.c): a GPU no
        # client keeps initialised is set up anew at every container start, and several GPUs outlast that
        yield Hit(message=f"the NVIDIA container hook timed out waiting for the driver (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the container did not start. NVIDIA's maintainers' answer is persistence "
                          "mode: without it the driver initialises every GPU anew for each container, and that can "
                          "outlast the hook's 10 s limit",
                  fix="nvidia-smi --query-gpu=index,persistence_mode --format=csv   # Disabled: the cause\n"
                      "sudo systemctl enable --now nvidia-persistenced   # admins; then start the container again\n"
                      "sudo dmesg | grep -iE 'NVRM|Xid' | tail   # if it still times out with persistence on: a GPU in a bad state",
                  evidence=told_evidence(s), severity="error")
        return
    if s.get("family") == "dcgm_diag":
        yield Hit(message=f"DCGM's diagnostic reports persistence mode disabled (line {s.get('line')}: \"{told_text(s)}\"): "
                          "the driver tears the GPU's state down whenever no process uses it and rebuilds it for the next",
                  fix="nvidia-smi --query-gpu=index,persistence_mode --format=csv   # Disabled on the GPUs DCGM named\n"
                      "sudo systemctl enable --now nvidia-persistenced   # admins",
                  evidence=told_evidence(s))
        return
    yield Hit(message=f"the user says nvidia-smi is slow (line {s.get('line')}: \"{told_text(s)}\"): the usual cause "
                      "(NVIDIA's Driver Persistence guide) is persistence mode off, so the driver initialises every "
                      "GPU for each client, 1-3 s per GPU",
              fix="nvidia-smi --query-gpu=index,persistence_mode --format=csv   # Disabled: the cause\n"
                  "sudo systemctl enable --now nvidia-persistenced   # admins",
              evidence=told_evidence(s))


@rule("GPU009", "mig-enabled", "advice", "MIG partitioning enabled", impact=4)
def mig_enabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU with Multi-Instance GPU mode enabled (or pending).

        In a pasted ticket: nvidia-smi's MIG device lines and MIG section, a MIG UUID, a GPU named
        with its MIG profile (A100-SXM4-80GB-MIG-3g.40gb), nvidia-smi refusing a setting on a
        MIG-enabled device, or the user saying the GPU is partitioned with MIG: a CUDA process
        enumerates a single MIG device, so torch.cuda.device_count() is 1 and a second device
        index fails (device >= 0 && device < num_gpus).

    Why it matters:
        A process sees only the MIG slice it was given, with a fraction of the SMs and memory, and
        NCCL cannot run collectives across MIG instances: multi-GPU training on MIG slices fails or
        falls back to slow paths.

    How to fix:
        Use MIG only for small, independent jobs; for training ask for a full GPU (a non-MIG
        partition or GRES), or administrators disable MIG (nvidia-smi -mig 0).

    References:
        - https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
        - https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html (device enumeration)
        - https://github.com/pytorch/pytorch/issues/130181 (one MIG slice per process; CUDA_VISIBLE_DEVICES=MIG-...)
    """
    yield from facts_or_ticket(lambda: list(_mig_from_facts(f)), _mig_told(f))


def _mig_from_facts(f: FactView):
    for g in gpu_list(f):
        if g.get("mig_enabled") is True or g.get("mig_pending") is True:
            n = g.get("mig_devices")
            yield Hit(message="MIG is enabled" + (f" with {n} instance(s)" if n else "")
                      + ": processes see a slice, and NCCL cannot span instances",
                      subject=subject(g), fix="# request a full (non-MIG) GPU for multi-GPU training",
                      evidence={"mig_enabled": g.get("mig_enabled"), "mig_devices": n})


def _mig_told(f: FactView):
    """A pasted line that shows or says MIG (knowledge/messages/mig.toml, prose.toml mig-said)."""
    for s in catalogued(f, "mig-enabled"):
        if s.get("id") == "mig:mig-mode-pending" and s.get("state") != "enable":
            continue  # a pending disable: MIG is on its way out
        said = str(s.get("matched") or s.get("text", "")).strip()[:120]  # the MIG words, not a long title around them
        yield Hit(message=f"the GPU is partitioned with MIG (line {s.get('line')}: \"{said}\"): "
                          "a CUDA process enumerates one MIG device, so it sees one GPU of that slice's size, and NCCL "
                          "cannot span MIG instances",
                  fix="nvidia-smi -L   # the MIG devices (MIG-... UUIDs) under each GPU: one per process, "
                      "in CUDA_VISIBLE_DEVICES\n"
                      "# for multi-GPU training request full (non-MIG) GPUs from the scheduler",
                  evidence=told_evidence(s))
        return
