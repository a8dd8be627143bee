"""The batch systems' own error tables (issue 24, b1): HTCondor's HoldReasonCode table
(htcondor.toml), read as each code's meaning wherever condor_q -l or the event log prints a code,
and a policy expression that only names codes not read as a hold (real pastes, SOURCES.md)."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"


def _read(name):
    return find_messages((PASTES / name).read_text(encoding="utf-8"))


def _family(name):
    return next(f for f in messages.families() if f.id == name)


def test_htcondor_table_holds_every_hold_code_of_the_header():
    # condor_holdcodes.h @ 987397a: 0..48 are hold codes (1000+ are vacate codes, another attribute)
    assert sorted(_family("htcondor").by_code) == list(range(0, 49))


def test_a_periodic_release_expression_naming_codes_is_not_a_hold():
    found = _read("crabserver-5327-periodic-release-holdreasoncode-expression.txt")
    assert [s["id"] for s in found if s["family"] == "htcondor"] == []


def test_pbs_table_holds_every_code_openpbs_gives_a_text():
    fam = _family("pbs_errors")
    torque = [e for e in fam.entries if e.key.startswith("TORQUE_")]
    assert len(fam.entries) - len(torque) == 169   # pbs_messages.c @ cd7ab5e: pbs_err_to_txt[] has 169 rows
    assert len(torque) == 126   # pbs_error_db.h @ 34ff845: the rows whose text OpenPBS does not share
    assert fam.by_code[15018].key == "PBSE_UNKQUE" and fam.by_code[15001].key == "PBSE_UNKJOBID"


def test_torque_qsub_refusing_an_unknown_queue_is_read_as_pbse_unkque():
    found = _read("canu-891-torque-qsub-unknown-queue.txt")
    (s,) = [s for s in found if s["family"] == "pbs_errors"]
    assert (s["id"], s["rules"]) == ("pbs_errors:PBSE_UNKQUE", [])
    assert "requested queue not found" in s["text"]


def test_pbs_pro_qstat_inside_a_tools_exception_is_read_as_pbse_unkjobid():
    found = _read("balsam-323-pbspro-qstat-unknown-job-id.txt")
    (s,) = [s for s in found if s["family"] == "pbs_errors"]
    assert (s["id"], s["client"]) == ("pbs_errors:PBSE_UNKJOBID", "qstat")


def test_a_pbs_text_another_family_reads_with_its_rule_is_not_read_twice():
    # OpenPBS's PBSE_EXCQRESC, as ert's driver logged it: pbs.toml reads it; the generic table does not
    found = find_messages('error: "qsub: Job violates queue and/or server resource limits"')
    assert [s["family"] for s in found] == ["pbs"]


def test_lsf_tables_hold_every_text_openlava_gives():
    # lsb.err.c: 136 rows less 7 placeholders ("No error", "Error 5", 25, 26, 77, 78, 84); lib.err.c: 99 less "No error"
    assert len(_family("lsb_errors").entries) == 129 and len(_family("ls_errors").entries) == 98
    assert _family("lsb_errors").by_code[18].key == "LSBE_BAD_QUEUE"


def test_an_lsf_refusal_outside_openlavas_table_is_still_read_as_lsf():
    found = _read("ert-7550-lsf-bsub-rusage-select-section.txt")
    lsf = [s for s in found if s["family"] == "lsb_errors"]
    assert len(lsf) == 1 and lsf[0]["unlisted"] and not lsf[0].get("rules")
    assert "Job not submitted." in lsf[0]["text"]


def test_torque_qstat_text_is_read_as_torques_own_row_even_after_a_progress_bar():
    found = _read("pecan-772-torque-qstat-unknown-job-id-error.txt")
    assert [s["id"] for s in found if s["family"] == "pbs_errors"] == ["pbs_errors:TORQUE_PBSE_UNKJOBID"]
