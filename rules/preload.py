"""A library the site or the user preloads (LD_PRELOAD, /etc/ld.so.preload) that ld.so opened and could
not map: glibc's "cannot be preloaded (failed to map segment from shared object): ignored." (knowledge/
messages/loader.toml). The mapping of an executable segment is refused by a noexec mount under the
library, by a security module's profile of the program (AppArmor's "file_mmap" denial, apparmor.toml;
SELinux's AVC, selinux.toml) or by an address-space limit: the loader's line names none of them, so
the finding chooses by where the library lies and by what else the paste shows."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ld-preload-blocked-by-apparmor"
_PRELOAD = "loader:preload-map-segment-failed"
_DENIED = "apparmor:denied-file-mmap"
# Where a noexec mount is the usual cause: the temporary directories, which sites mount noexec.
_TEMP = re.compile(r"^/(?:tmp|var/tmp|dev/shm|run/user)/")


def _symptom(f: FactView, ids) -> Optional[dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict) and s.get("id") in ids), None)


def _fix(path: str, apparmor: bool, selinux: bool) -> str:
    # a bare soname: the directory the loader's cache finds it in
    where = shlex.quote(path.rsplit("/", 1)[0] or "/") if path.startswith("/") else \
        f"\"$(dirname \"$(ldconfig -p | grep -m1 -F {shlex.quote(path)} | sed 's/.*=> //')\")\""
    lines = [f"findmnt -no TARGET,OPTIONS --target {where}   # noexec among the options: the mount refuses executable mappings"]
    if apparmor or not selinux:
        lines.append("sudo dmesg | grep -i 'apparmor=\"DENIED\"' | grep file_mmap   # AppArmor: the profile that refused the mapping and the file "
                     "(journalctl -k where dmesg is restricted)")
    if selinux or not apparmor:
        lines.append("sudo ausearch -m avc -ts recent | grep -E 'map|execute'   # SELinux: the AVC denial of the library's mapping")
    lines.append("ulimit -v   # a number here is an address-space limit, which can refuse the mapping too")
    lines.append("# administrators: allow the library in the program's profile (AppArmor: a rule 'PATH mr,' then apparmor_parser -r "
                 "the profile's file; SELinux: a policy module from audit2allow), or install the library on a mount without noexec")
    return "\n".join(lines)


@rule("ENV089", SYMBOL, "warning",
      "a preloaded library could not be mapped: a noexec mount or a security profile (AppArmor, SELinux) refused it",
      impact=3, also={"error": "AppArmor's own \"file_mmap\" denial of the library is pasted too"})
def ld_preload_blocked(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        glibc's "ERROR: ld.so: object '<lib>' from LD_PRELOAD cannot be preloaded (failed to map
        segment from shared object): ignored.": the loader opened the preloaded library (a site's
        tracking library such as XALT's, a profiler, a shim) and the mmap of a segment failed. A
        warning naming the likely cause by where the library lies: under /tmp, /var/tmp, /dev/shm
        or /run/user a noexec mount; elsewhere a security module's profile of the program
        (AppArmor, or SELinux), named when the paste names it. An error where AppArmor's own record
        of the refusal is pasted (apparmor="DENIED" operation="file_mmap" ... name=<lib>).

    Why it matters:
        The program still runs, without the preload: whatever the library does (job accounting,
        profiling, a compatibility shim) is missing for that program, and the error line is
        printed on every run. The library is fine: do_preload prints no errno, and the mmap of an
        executable segment fails with EPERM on a noexec mount, with EACCES or EPERM where a
        profile of the program lacks the m permission for the file, and with ENOMEM under an
        address-space limit.

    How to fix:
        Check the mount (findmnt -T on the library's directory), the kernel's AppArmor or SELinux
        denials (dmesg | grep apparmor, ausearch -m avc) and ulimit -v; administrators allow the
        library in the program's profile (AppArmor: "PATH mr," and apparmor_parser -r; SELinux:
        audit2allow), or install the library on a mount without noexec.

    References:
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/rtld.c;hb=glibc-2.42 (do_preload: cannot be preloaded ... ignored)
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-map-segments.h;hb=glibc-2.42 (the mmap of each PT_LOAD segment)
        - https://man7.org/linux/man-pages/man2/mmap.2.html (EPERM: PROT_EXEC on a noexec mount; EACCES)
        - https://gitlab.com/apparmor/apparmor/-/wikis/AppArmor_Core_Policy_Reference (the m permission: PROT_EXEC mappings)
        - https://github.com/xalt/xalt/issues/58 (SLES's AppArmor profile of lessopen.sh refuses XALT's preload)
    """
    told = catalogued(f, SYMBOL)
    s = next((x for x in told if x.get("id") == _PRELOAD), None)
    if s is None:
        return
    path = str(s.get("file") or "")
    denied = _symptom(f, (_DENIED,))
    apparmor = denied is not None or _symptom(f, ("apparmor:named",)) is not None
    selinux = any(str(x.get("id", "")).startswith("selinux:") for x in f.get("ticket.symptoms") or [] if isinstance(x, dict))
    quoted = f"line {s.get('line')}: \"{told_text(s)}\": the preloaded library {path} could not be mapped, so the program ran without it"
    if denied is not None:
        why = (f"; AppArmor's record on line {denied.get('line')} says the profile \"{denied.get('profile')}\" refused the "
               f"mapping of {denied.get('file')}: the profile of that program lacks the m permission for the library")
    elif _TEMP.match(path):
        why = ("; the library lies in a temporary directory, which sites mount noexec: a noexec mount refuses executable "
               "mappings (a security profile or an address-space limit can too)")
    else:
        module = "AppArmor, which the paste names," if apparmor else ("SELinux, which the paste names," if selinux else
                                                                      "a security module (AppArmor or SELinux)")
        why = (f"; outside the temporary directories the usual cause is {module} whose profile of the program refuses the "
               "executable mapping; a noexec mount under the library or an address-space limit does the same, and the "
               "loader's line names none of them")
    yield Hit(message=quoted + why, fix=_fix(path, apparmor, selinux),
              evidence=told_evidence(denied or s), severity="error" if denied is not None else None)
