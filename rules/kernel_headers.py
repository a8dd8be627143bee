"""No kernel headers for the kernel a module (nvidia, any DKMS module) is built for: DKMS and its
package hooks say so (knowledge/messages/dkms.toml), as do nvidia-installer and the compiler that
finds no generated header in /lib/modules/<kernel>/build; and a yum/dnf listing can show a
kernel-devel of another version than the kernel installed."""

from __future__ import annotations

from typing import Iterator, List

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_all, told_evidence, told_text

SYMBOL = "kernel-headers-missing-for-dkms"

_FIX = ("uname -r; ls -ld /lib/modules/$(uname -r)/build   # no such directory, or a dangling link: no headers for the running kernel\n"
        "sudo dnf install kernel-devel-$(uname -r)   # RHEL/Rocky/Alma (yum on 7); Debian/Ubuntu: sudo apt-get install "
        "linux-headers-$(uname -r); Arch: sudo pacman -S linux-headers (linux-zen-headers for linux-zen)\n"
        "sudo dkms autoinstall && dkms status   # rebuild the modules for that kernel; the module must be listed 'installed' for $(uname -r)")
_RPM_FIX = ("uname -r; rpm -q kernel kernel-devel   # the running kernel, and the kernel-devel versions installed\n"
            "sudo yum install kernel-devel-$(uname -r)   # the headers of the running kernel (if the repositories still carry "
            "that release), then: sudo dkms autoinstall\n"
            "sudo yum update kernel && sudo reboot   # or boot the kernel the installed kernel-devel belongs to, then: dkms status")


def _kernels(told: List[dict]) -> List[str]:
    seen: List[str] = []
    for s in told:
        k = s.get("kernel")
        if k and k not in seen:
            seen.append(str(k))
    return seen


@rule("SW068", SYMBOL, "error", "no kernel headers for the kernel a module is built for: DKMS cannot build it",
      also={"warning": "a yum/dnf listing shows kernel-devel of another version than the kernel installed"}, impact=6)
def kernel_headers_missing_for_dkms(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: dkms's "Error! Your kernel headers for kernel X cannot be found at
        /lib/modules/X/build or /lib/modules/X/source." (exit status 21), Arch Linux's dkms hook's
        "==> ERROR: Missing X kernel headers for module M/V.", dkms autoinstall's and the module
        packages' "skipped since the kernel headers for this kernel do not seem to be installed" and
        "No kernel headers were found", nvidia-installer's "Unable to find the kernel source tree
        for the currently running kernel", and a module build's "fatal error:
        /lib/modules/X/build/include/linux/autoconf.h: No such file or directory": each an error.
        A warning for a yum/dnf package listing whose kernel-devel is of another version than the
        one kernel installed: DKMS then has headers for no kernel that boots.

    Why it matters:
        DKMS builds out-of-tree modules (the NVIDIA driver's among them) against the build tree of
        each kernel, which the kernel's headers package installs. Without it nothing is built for
        that kernel, and the module is missing once it boots (nvidia-smi: no driver loaded).

    How to fix:
        Install the headers of the running kernel (kernel-devel-$(uname -r), linux-headers-$(uname
        -r), or the headers package of the kernel flavour) and rebuild with dkms autoinstall; or
        boot the kernel the installed headers belong to.

    References:
        - https://github.com/dell/dkms/blob/master/dkms.in (prepare_kernel: die 21, "Your kernel headers for kernel ...")
        - https://github.com/dell/dkms/blob/master/dkms_autoinstaller.in ("skipped since the kernel headers ...")
        - https://gitlab.archlinux.org/archlinux/packaging/packages/dkms (the alpm hook: "Missing ... kernel headers for module")
        - https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ (kernel headers and development packages before installing the driver)
        - https://www.kernel.org/doc/html/latest/kbuild/modules.html (building external modules against /lib/modules/$(uname -r)/build)
    """
    told = catalogued(f, SYMBOL)
    if told:
        built = next((s for s in told if str(s.get("id", "")).endswith(":build-tree-autoconf-missing")), None)
        s = built or told[0]
        kernels = _kernels([s] + told)
        which = f" (kernel{'s' if len(kernels) > 1 else ''} {', '.join(kernels[:4])})" if kernels else ""
        yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": the kernel headers (the build tree in "
                           f"/lib/modules/<kernel>/build) are not installed for the kernel the module is built for{which}, "
                           "so DKMS cannot build it"),
                  fix=_FIX, evidence=told_evidence(s))
        return
    kernels = ticket_all(f, "dkms:rpm-list-kernel")
    devel = ticket_all(f, "dkms:rpm-list-kernel-devel")
    if len(kernels) != 1 or not devel:
        return
    k = kernels[0]
    if any(d.get("version") == k.get("version") for d in devel):
        return
    d = devel[0]
    yield Hit(message=(f"the package list shows one kernel, {k.get('version')} (line {k.get('line')}), and kernel-devel "
                       f"{', '.join(str(x.get('version')) for x in devel)} (line {d.get('line')}): no headers for the kernel "
                       "installed, so DKMS builds no module for it (the running kernel, uname -r, is not in the paste)"),
              fix=_RPM_FIX, severity="warning",
              evidence={"kernel": k.get("version"), "kernel_devel": [x.get("version") for x in devel],
                        "ticket.line": d.get("line"), "ticket.text": str(d.get("text", ""))[:160]})
