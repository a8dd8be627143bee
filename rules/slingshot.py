"""HPE Slingshot 11's NIC (Cassini) running out of hardware tag-matching resources, as libfabric's CXI
provider and MPICH report it (knowledge/messages/cxi.toml): the job aborts in hardware match mode
where hybrid or software matching would have carried on."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "slingshot-hw-tag-matching-fails"
_STATED = "cxi:le-exhaustion-fatal"

_FIX = ("export FI_CXI_RX_MATCH_MODE=hybrid   # in the job script before srun: hardware matching, falling back to "
        "software when the NIC's list entries run out (software: never in hardware)\n"
        "export FI_CXI_DEFAULT_CQ_SIZE=131072   # a larger completion queue, as HPE's Cray MPICH notes suggest for "
        "many small messages\n"
        "fi_info -p cxi | head   # the CXI provider and its NICs on this node (libfabric's own tool)")


@rule("NET034", SYMBOL, "error", "Slingshot's hardware tag matching ran out of resources and the job aborted", impact=6,
      also={"warning": "OFI poll failed with UNDELIVERABLE: a peer unreachable, of which failed hardware matching is one cause"})
def slingshot_hw_tag_matching_fails(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the CXI provider's fatal "LE resources not recovered during flow control.
        FI_CXI_RX_MATCH_MODE=[hybrid|software] is required" and "LE exhaustion during flow control,
        FI_CXI_RX_MATCH_MODE=[hybrid|software] is required" (an error: the NIC's hardware match
        entries ran out in hardware match mode), and MPICH's "OFI poll failed (...: Input/output
        error - UNDELIVERABLE)" (a warning: the NIC's retry handler could not deliver a message, a
        peer node, NIC or switch down as much as a peer whose hardware matching failed).

    Why it matters:
        Slingshot 11's Cassini NIC matches MPI messages to receives in hardware. Many small
        messages or many ranks (halo exchanges, all-to-all, thousands of ranks) exhaust its list
        entries; in the default hardware mode the provider cannot move matching to software and
        kills the job, again at the same scale every run.

    How to fix:
        Set FI_CXI_RX_MATCH_MODE=hybrid (or software) in the job script; for UNDELIVERABLE, also
        check the nodes the failing ranks ran on with the site's fabric tools.

    References:
        - https://ofiwg.github.io/libfabric/main/man/fi_cxi.7.html (FI_CXI_RX_MATCH_MODE: hardware, software, hybrid)
        - https://cpe.ext.hpe.com/docs/latest/mpt/mpich/intro_mpi.html (Cray MPICH on Slingshot: FI_CXI_RX_MATCH_MODE)
        - https://github.com/ofiwg/libfabric/blob/main/prov/cxi/src/cxip_msg.c (FC_SW_ONLOAD_MSG_FATAL)
        - https://github.com/quokka-astro/quokka/issues/353
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("id") == _STATED), told[0])
    if s.get("id") == _STATED:
        yield Hit(message=f"the Slingshot NIC ran out of list entries for hardware tag matching and the CXI provider, in "
                          f"hardware match mode, aborted the job (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_FIX, evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the NIC could not deliver a message (UNDELIVERABLE): a "
                      "peer node, NIC or switch was unreachable, or, as Slingshot 11 users report, hardware tag matching "
                      "failed on the receiving side; FI_CXI_RX_MATCH_MODE=hybrid tells the two apart",
              fix=_FIX + "\nsacct -X -S today -o JobID,NodeList,State,ExitCode   # today's jobs and their nodes (Slurm): "
                         "a node in every failing job is the one to report to the site",
              evidence=told_evidence(s), severity="warning")
