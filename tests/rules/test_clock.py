"""system-clock-wrong on outputs recorded on the development VM (GNU make 4.3, GNU tar 1.34 meeting a
file dated in the future; tests/fixtures/pastes/SOURCES.md) and on the emitters' strings."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_facts



@pytest.mark.parametrize("paste, quoted", [
    ("make-4.3-file-in-the-future.txt", "has modification time 3599 s in the future"),
    ("tar-1.34-time-stamp-in-the-future.txt", "time stamp 2026-11-26 23:06:29"),
])
def test_file_times_ahead_of_the_clock_are_a_warning(paste, quoted):
    (f,) = fired("system-clock-wrong", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message and "clock" in f.message
    assert "timedatectl status" in f.fix and "chronyc tracking" in f.fix


def test_kerberos_skew_is_an_error():
    # libkrb5.so.3 (MIT krb5 1.20.1) error table text for KRB5KRB_AP_ERR_SKEW
    (f,) = fired("system-clock-wrong", told_facts("Clock skew too great\n"))
    assert f.severity == "error" and "Kerberos" in f.message


def test_a_certificate_not_yet_valid_is_a_warning():
    # CPython _ssl.c's format with OpenSSL 3.0's reason 9 (tls.toml's source)
    text = ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
            "certificate is not yet valid (_ssl.c:1006)\n")
    (f,) = fired("system-clock-wrong", told_facts(text))
    assert f.severity == "warning" and "behind" in f.message


def test_silent_on_an_expired_certificate_and_a_healthy_build():
    # an expired chain is the server's or the CA bundle's age, not the clock (tls-certificate-verify-failed answers it)
    # a paste records no adjtimex reading: the live judgement is skipped with that reason, and nothing fires
    for paste in ("manylinux-1203-wget-expired-lets-encrypt-chain.txt", "openssh-rpms-3-wget-en-quot-expired-chain.txt"):
        findings, skipped = run_rule("system-clock-wrong", recorded_paste_facts(paste))
        assert findings == [] and [s["reason"] for s in skipped] == [
            "needs clock_sync.synchronised: the kernel's clock state was not read: probe adjtimex was not recorded"]


@pytest.mark.parametrize("name, node", [
    ("c3nl-cluster-62-job-credential-expired-clocks-out-of-sync.txt", "compute-0-1"),
    ("c3nl-cluster-18-job-credential-expired-head-node-clock.txt", ""),
])
def test_slurm_job_credential_expired_is_a_warning(tmp_path, name, node):
    # Slurm's FAQ (#time): "typically" clocks out of step; a launch delayed past cred_expire reads the same
    from pathlib import Path
    from rulekit import paste_facts
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_t" / name).read_text()
    (f,) = fired("system-clock-wrong", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "Job credential expired" in f.message and node in f.message
    assert "cred_expire" in f.fix and "chronyc" in f.fix


def test_silent_on_slurm_output_without_an_expired_credential():
    # slurmd 22.05.8 refusing to start for other reasons (munged absent, its port held): no clock fault said
    findings, _ = run_rule("system-clock-wrong", recorded_paste_facts("slurmd-22.05-listen-port-in-use.txt"))
    assert findings == []


# apt's and Go's own wordings of a clock behind (issue 24 audit; real pastes, SOURCES.md)
def test_apts_release_file_not_valid_yet_is_a_clock_behind():
    (f,) = fired("system-clock-wrong", recorded_paste_facts("apt-chilipie-190-release-not-valid-yet.txt"))
    assert f.severity == "warning" and "dated 318d 15h 7min 1s after this node's clock" in f.message
    assert "chronyc makestep" in f.fix


def test_apts_malformed_valid_until_and_gos_expired_certificate_are_not_the_clock():
    from rulekit import PASTES
    # a paste has no live clock reading: the rule skips that part, and says nothing from the text
    findings, _ = run_rule("system-clock-wrong", told_facts((PASTES / "apt-sensu-1526-invalid-valid-until-entry.txt").read_text()))
    assert not findings
    # Go's one message for both sides: "current time ... is after" NotAfter is an expired certificate
    findings, _ = run_rule("system-clock-wrong", recorded_paste_facts("go-xdcc-cli-4-x509-certificate-expired.txt"))
    assert not findings


def test_gnutls_not_yet_valid_certificate_alone_is_a_clock_behind():
    # the GnuTLS line of the Jetson paste alone, without apt's Release-file line below it
    from rulekit import PASTES
    text = (PASTES / "apt-jetson-image-118-gnutls-not-yet-valid.txt").read_text().splitlines()
    (f,) = fired("system-clock-wrong", told_facts("\n".join(text[:3]) + "\n"))
    assert f.severity == "warning" and "a certificate that is not valid yet" in f.message
    (f,) = fired("system-clock-wrong", recorded_paste_facts("apt-jetson-image-118-gnutls-not-yet-valid.txt"))
    assert "dated 230d 6h 25min 31s after this node's clock" in f.message
