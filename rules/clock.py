"""A clock out of step: this node's, or the file server's or KDC's it is compared with. Programs say so
when they compare the clock with a time written elsewhere (knowledge/messages/clock.toml: make, tar,
Kerberos), and a TLS client calls a freshly issued certificate "not yet valid" when the clock is behind."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "system-clock-wrong"
_KERBEROS = "clock:krb5-clock-skew-too-great"
_SLURM_CRED = "slurm:ESLURMD_CREDENTIAL_EXPIRED"
# Go names both sides of the validity window in one message; only "current time ... is before" is a
# certificate not valid yet (crypto/x509/verify.go), "is after" an expired one.
_GO_VALIDITY = "tls:go-x509-expired-or-not-yet-valid"
_APT_RELEASE = "apt_fetch:release-not-valid-yet"
_SLURM_FIX = ("sinfo -N -h -o '%N' | head -20 | xargs -I{} ssh {} date -u +'{} %s'   # the nodes' clocks in seconds: "
              "compare with date -u +%s on the slurmctld host\n"
              "chronyc tracking || ntpq -p   # on the node that refused the step: the time service's offset\n"
              "sudo chronyc makestep   # administrators, on a node whose clock is off (ntpd: sudo systemctl restart ntpd); keep chronyd running on every node\n"
              "grep -i 'credential' /var/log/slurm/slurmd.log | tail   # administrators: slurmd's own line says expired; clocks in step and still expired: a launch delayed past AuthInfo cred_expire (120 s)")

_FIX = ("date -u; timedatectl status   # 'System clock synchronized: no' or a time that is off: this node's clock\n"
        "chronyc tracking || ntpq -p   # the time service's offset from its servers (chrony, or ntpd)\n"
        "sudo chronyc makestep   # administrators: step the clock now (ntpd: sudo systemctl restart ntpd), then keep chronyd running\n"
        "stat -c '%y %n' FILE; ssh FILESERVER date -u   # for make and tar: the file's time against the clock of the host that wrote it")


def _not_yet_valid(f: FactView) -> Optional[dict]:
    """A TLS client's refusal of a certificate that is not valid yet (OpenSSL's reason 9, wget's words)."""
    return next((s for s in f.get("ticket.symptoms") or [] if str(s.get("id", "")).startswith("tls:")
                 and "not yet valid" in (str(s.get("reason", "")) + str(s.get("text", ""))).lower()
                 and not (s.get("id") == _GO_VALIDITY and s.get("when") != "before")), None)


@rule("SYS021", SYMBOL, "error", "the clock is out of step with the hosts it is compared with", impact=5,
      also={"warning": "file times ahead of the clock, a certificate not valid yet, or Slurm's \"Job credential expired\": "
                       "the usual cause, not shown; or, on a live node, the kernel counts its clock as not synchronised (adjtimex)"})
def system_clock_wrong(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket: Kerberos' "Clock skew too great" (KRB5KRB_AP_ERR_SKEW), an error; GNU
        make's "Clock skew detected" or "File '...' has modification time N s in the future", GNU
        tar's "time stamp ... is N s in the future", and a TLS client's "certificate is not yet
        valid" (OpenSSL's reason 9, wget's "Issued certificate not yet valid", Go's "x509:
        certificate has expired or is not yet valid: current time T is before T0"), and apt's
        "Release file for URL is not valid yet (invalid for another 318d 15h ...)", warnings: each
        means a clock is off, this node's or the one of the host that wrote the file. Slurm's
        "Job credential expired" (ESLURMD_CREDENTIAL_EXPIRED, "Task launch ... failed on node N",
        "Application launch failed"), a warning: slurmd refuses a step credential dated more than
        its lifetime (AuthInfo cred_expire, 120 s) ago or in its future, which Slurm's FAQ says
        typically means the node's clock differs from the controller's; a launch delayed past
        the lifetime (a node that answered slowly) reads the same.
        On a live node (or its snapshot), a warning where the kernel counts its clock as not
        synchronised: adjtimex(2) returns TIME_ERROR or sets STA_UNSYNC, as it does when no time
        service (chronyd, ntpd, systemd-timesyncd) has disciplined the clock lately (its maximum
        error then grows to 16 s).

    Why it matters:
        make decides what to rebuild from times and may skip stale targets; Kerberos refuses
        tickets beyond its allowed skew (5 minutes by default), so logins and Kerberised NFS
        fail; TLS refuses certificates outside their validity window.

    How to fix:
        Compare the clock with its time service (timedatectl, chronyc tracking), step it (chronyc
        makestep) and keep chronyd or ntpd running; for make and tar compare with the clock of
        the file server that wrote the files.

    References:
        - https://www.gnu.org/software/make/manual/make.html (make's use of modification times)
        - https://web.mit.edu/kerberos/krb5-latest/doc/admin/conf_files/krb5_conf.html (clockskew, 300 s by default)
        - https://docs.openssl.org/3.0/man1/openssl-verify/ (X509_V_ERR_CERT_NOT_YET_VALID: certificate is not yet valid)
        - https://chrony-project.org/doc/4.3/chronyc.html (tracking, makestep)
        - https://salsa.debian.org/apt-team/apt/-/blob/main/apt-pkg/acquire-item.cc (Release file ... is not valid yet)
        - https://github.com/golang/go/blob/master/src/crypto/x509/verify.go (current time %s is before %s)
        - https://slurm.schedmd.com/faq.html#time (Job credential expired: times not consistent with slurmctld's)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/interfaces/cred.c (now > ctime + cred_expire)
        - https://man7.org/linux/man-pages/man2/adjtimex.2.html (TIME_ERROR, STA_UNSYNC, maxerror and esterror in microseconds)
        - https://github.com/torvalds/linux/blob/v6.12/include/uapi/linux/timex.h (struct timex, STA_UNSYNC 0x0040, TIME_ERROR 5)
    """
    told = catalogued(f, SYMBOL)
    kerberos = next((s for s in told if s.get("id") == _KERBEROS), None)
    if kerberos is not None:
        yield Hit(message=f"Kerberos refused the exchange because the clocks differ by more than it allows (line "
                          f"{kerberos.get('line')}: \"{told_text(kerberos)}\"): this node's clock or the KDC's is wrong",
                  fix=_FIX, evidence=told_evidence(kerberos))
        return
    slurm = next((s for s in told if s.get("id") == _SLURM_CRED), None)
    if slurm is not None:
        node = slurm.get("text", "")
        on = node.split(" failed on node ", 1)[1].split(":", 1)[0].strip() if " failed on node " in node else ""
        yield Hit(message=f"line {slurm.get('line')}: \"{told_text(slurm)}\": slurmd{' on ' + on if on else ''} refused "
                          "the step's credential as expired: Slurm's FAQ says this typically means that node's clock "
                          "differs from the controller's (or the launch was delayed past the credential's 120 s life)",
                  fix=_SLURM_FIX, evidence=told_evidence(slurm), severity="warning")
        return
    said = told[0] if told else _not_yet_valid(f)
    if said is None:
        yield from _kernel_says_unsynchronised(f)
        return
    what = ("a certificate that is not valid yet: the usual cause is this node's clock being behind"
            if str(said.get("id", "")).startswith("tls:") else
            f"apt found the repository's Release file dated {said.get('for') or 'some time'} after this node's clock: "
            "this node's clock is behind (a mirror dating its files ahead is rare)"
            if said.get("id") == _APT_RELEASE else
            "a file time ahead of this node's clock: this node's clock is behind, or the clock of the host that wrote the file is ahead")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {what}",
              fix=_FIX, evidence=told_evidence(said), severity="warning")


def _kernel_says_unsynchronised(f: FactView) -> Iterator[Hit]:
    """The live judgement: the kernel's own NTP state (checks/clock_sync.py). Read with f[...] so a
    snapshot or paste without the reading is skipped with its reason, never passed."""
    if f["clock_sync.synchronised"]:
        return
    state = f.get("clock_sync.state")
    maxerror = f.get("clock_sync.maxerror_s")
    bound = f" and bounds its error only by {maxerror:g} s" if isinstance(maxerror, (int, float)) else ""
    yield Hit(message=f"the kernel counts this node's clock as not synchronised (adjtimex: {state}, STA_UNSYNC "
                      f"{'set' if f.get('clock_sync.unsync_flag') else 'clear'}){bound}: no time service is disciplining "
                      "it, so nothing keeps it in step with the file servers' and the KDC's clocks",
              fix=_FIX, severity="warning",
              evidence={k: f.get(f"clock_sync.{k}") for k in ("synchronised", "state", "status", "maxerror_s", "esterror_s")})
