"""GPU memory health: uncorrectable ECC errors, pending row remaps and retired pages, ECC off on a
data-centre part (GPU002-GPU004)."""

from __future__ import annotations

from typing import Any, Dict, Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, xid_reset_line
from hpcdoctor.rules._gpu import as_int, facts_or_told, gpu_list, subject


@rule("GPU002", "ecc-uncorrectable-errors", "error", "uncorrectable ECC errors on a GPU", impact=10,
      also={"warning": "the errors are only in the lifetime count, none since the driver loaded"})
def ecc_uncorrectable_errors(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose volatile (since the last driver load) uncorrectable ECC error count is above
        zero; or, at warning level, whose lifetime (aggregate) count is. In a pasted log, Xid 48
        (double bit ECC error), 171 or 172 (the DRAM or SRAM detail NVIDIA's catalogue says the
        driver adds to an Xid 48) or 140 (ECC unrecovered error), or CUDA's "uncorrectable ECC
        error encountered" (cudaErrorECCUncorrectable, 214).

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
    yield from facts_or_told(f, "ecc-uncorrectable-errors", lambda: list(_ecc_from_facts(f)), _ecc_told)


def _xid_name(s: Dict[str, Any]) -> str:
    """The Xid's name for a message: NVIDIA's catalogue wording where it is a short name (without the
    driver's published name the catalogue adds), else the driver's mnemonic: Xid 171's wording is a
    sentence ("Additional to Xid 48 providing more details..."), which cut short reads as nonsense."""
    means = str(s.get("means") or "").split(" (driver's published name")[0]
    return means if 0 < len(means) <= 60 else str(s.get("key") or "")


def _ecc_told(s: Dict[str, Any]) -> Hit:
    what = f"Xid {s.get('code')} ({_xid_name(s)})" if s.get("family") == "xid" else s.get("key")
    return Hit(message=f"an uncorrectable ECC error was reported ({what}, line {s.get('line')}): data in GPU memory "
                       "was corrupted and the GPU needs a reset",
               fix="nvidia-smi -q -d ECC,ROW_REMAPPER   # on the node: which GPU, and whether a remap is pending\n"
                   "dcgmi diag -r 3   # admins, after draining the node and resetting the GPU",
               evidence=told_evidence(s))


def _ecc_from_facts(f: FactView) -> Iterator[Hit]:
    for g in gpu_list(f):
        vol, agg = as_int(g.get("ecc_uncorrectable_volatile")), as_int(g.get("ecc_uncorrectable_aggregate"))
        if vol:
            yield Hit(message=f"{vol} uncorrectable ECC error(s) since the driver loaded", subject=subject(g),
                      fix="dcgmi diag -r 3   # admins, after draining the node and resetting the GPU",
                      evidence={"ecc_uncorrectable_volatile": vol, "ecc_uncorrectable_aggregate": agg})
        elif agg:
            yield Hit(message=f"{agg} uncorrectable ECC error(s) over the GPU's lifetime", subject=subject(g),
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
    yield from facts_or_told(f, "row-remap-pending", lambda: list(_remap_from_facts(f)), _remap_told)


def _remap_told(s: Dict[str, Any]) -> Hit:
    # DCGM's diagnostic says the same of a GPU in its own words (knowledge/messages/dcgm_diag.toml)
    said = (f"the kernel log shows Xid {s.get('code')}" if s.get("family") == "xid"
            else f"DCGM reports {s.get('key')}")
    return Hit(message=f"{said} (line {s.get('line')}: a memory row marked for remapping "
                       "or a page for retirement): it takes effect at the next GPU reset",
               fix="nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT   # on the node: still pending?\n"
                   + xid_reset_line(s, "admins, once drained and idle; or reboot"),
               evidence=told_evidence(s), severity="warning")


def _remap_from_facts(f: FactView) -> Iterator[Hit]:
    for g in gpu_list(f):
        rows = g.get("remapped_rows") if isinstance(g.get("remapped_rows"), dict) else {}
        if rows.get("failed"):
            yield Hit(message="row remapping failed: the GPU has no spare memory rows left", subject=subject(g),
                      fix="# drain the node; the GPU needs replacement (RMA)", evidence={"remapped_rows": rows})
        elif rows.get("pending"):
            yield Hit(message=f"a memory row remap is pending ({rows.get('uncorrectable')} uncorrectable remapped rows); "
                              "it takes effect only after a GPU reset", subject=subject(g),
                      fix="nvidia-smi -r -i %s   # admins reset the GPU once the node is drained and it is idle; or reboot" % g.get("index"),
                      evidence={"remapped_rows": rows})
        elif g.get("retired_pages_pending") is True:
            yield Hit(message="retired memory pages are pending; they take effect only after a GPU reset",
                      subject=subject(g), fix="nvidia-smi -r -i %s   # admins reset the GPU once the node is drained and it is idle; or reboot" % g.get("index"),
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
    for g in gpu_list(f):
        # ECC off is the normal state of GeForce and most workstation cards: only a GPU the table
        # knows as a data-centre part is held to it, and an unknown one is not claimed.
        known = f.gpu_known(g.get("name"))
        if not known or known.get("segment") != "datacenter":
            continue
        if g.get("ecc_enabled") is False or g.get("ecc_pending") is False:
            fix = ("nvidia-smi -i %s -e 1   # administrators, then reset the GPU" % g.get("index") if g.get("vendor") != "amd"
                   else "# administrators: enable memory (UMC) ECC through the amdgpu RAS settings and reboot")
            yield Hit(message=f"ECC is {'off' if g.get('ecc_enabled') is False else 'set to turn off at the next reset'}",
                      subject=subject(g), fix=fix,
                      evidence={"ecc_enabled": g.get("ecc_enabled"), "ecc_pending": g.get("ecc_pending")})
