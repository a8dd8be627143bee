"""A DKMS module's own build failing for a kernel (knowledge/messages/dkms.toml): dkms's "Bad return
status for module build on kernel" and Void Linux's kernel hook's "Building DKMS module: M-V...
FAILED!". The headers being absent is kernel-headers-missing-for-dkms's; this is the build that ran
and stopped, whose reason is in the module's make.log."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

SYMBOL = "dkms-module-build-failed"
_HEADERS = "kernel-headers-missing-for-dkms"
_API_ERROR = "dkms:module-source-kernel-api-error"


@rule("SW115", SYMBOL, "error", "a DKMS module (the NVIDIA driver's) failed to build for a kernel", impact=6)
def dkms_module_build_failed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, dkms's "Error! Bad return status for module build on kernel: K (ARCH)"
        with its "Consult /var/lib/dkms/M/V/build/make.log for more information.", and Void
        Linux's kernel hook's "Building DKMS module: M-V... FAILED!" (it runs dkms build -q, so
        its verdict may be all the paste shows), and make.log's own last lines: GNU make's
        "*** [<kernel headers>/Makefile:N: /var/lib/dkms/M/V/build] Error 2". Not where the paste
        says the kernel's headers are missing: kernel-headers-missing-for-dkms answers that.

    Why it matters:
        The module is not built for that kernel: after booting it, the module (nvidia) does not
        load and nvidia-smi finds no driver. The reason is in make.log: most often a compiler other
        than the one the kernel was built with (cc pointing at clang, another GCC release), a driver
        release older than the kernel's API, or a tool the build needs (g++ for the open modules).

    How to fix:
        Read the end of the module's make.log; compare the compiler the kernel was built with
        (/proc/version) with the one cc runs; then rebuild with dkms build, or install a driver
        release that supports the kernel.

    References:
        - https://github.com/dell/dkms/blob/master/dkms.in (do_build: report_build_problem 10, the make.log)
        - https://github.com/void-linux/void-packages/blob/master/srcpkgs/dkms/files/kernel.d/dkms.postinst
        - https://github.com/void-linux/void-packages/issues/16778 (cc pointing at clang: the nvidia module failed to build)
    """
    if catalogued(f, _HEADERS) or first_symptom(f, _API_ERROR) is not None:
        return  # no headers, or the module's own compile error against the kernel: the rules that say so answer
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    log = first_symptom(f, "dkms:consult-make-log")
    module = s.get("module") or (log or {}).get("module")
    version = s.get("version") or (log or {}).get("version")
    # the hooks name the kernel; make's line names the headers tree it built against (kernel_tree)
    kernel = next((str(k) for k in (t.get("kernel") or t.get("kernel_tree") for t in told) if k), None)
    path = (log or {}).get("log") or (f"/var/lib/dkms/{module}/{version}/build/make.log" if module and version else None)
    what = f"{module} {version}" if module and version else "a module"
    for_kernel = f" for kernel {kernel}" if kernel else ""
    read_log = (f"tail -n 40 {shlex.quote(path)}   # the build's own error" if path
                else "tail -n 40 /var/lib/dkms/*/*/build/make.log   # the failed build's own error")
    # a kernel hook builds for the kernel being installed, not the one running: the newest tree under
    # /lib/modules when the paste does not name it
    target = shlex.quote(kernel) if kernel else '"$(ls -t /lib/modules | head -n 1)"'
    rebuild = ("dkms status   # the kernels each module is built for\n"
               + (f"sudo dkms build {shlex.quote(module)}/{shlex.quote(version)} -k {target}" if module and version
                  else f"sudo dkms autoinstall -k {target}"))
    yield Hit(message=f"DKMS could not build {what}{for_kernel} (line {s.get('line')}: \"{told_text(s)}\"): the module's own "
                      "build failed, so it will not load on that kernel; its make.log says why (a compiler other than "
                      "the kernel's, a driver release too old for the kernel, a missing build tool)",
              fix=(f"{read_log}\n"
                   "cat /proc/version; cc --version | head -1   # the compiler the kernel was built with, and the one "
                   "cc runs: they should be the same (cc pointing at clang breaks the build)\n"
                   f"{rebuild}   # after the cause is fixed (the kernel installed last, unless named); a driver too old for "
                   "the kernel needs a newer driver release"),
              evidence=told_evidence(s))


@rule("SW118", "dkms-module-too-old-for-kernel", "error",
      "a DKMS module's own source does not compile against the kernel's interfaces", impact=6)
def dkms_module_too_old_for_kernel(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the compiler's error in a module's own source as DKMS builds it
        (/var/lib/dkms/<module>/<version>/build/...), of the kinds a changed kernel interface gives:
        an incompatible pointer type (a callback whose signature the kernel changed), an implicit
        declaration of a function, a member a kernel struct no longer has, a wrong argument count,
        an unknown type or undeclared name, conflicting types, a kernel header that no longer exists
        (knowledge/messages/dkms.toml module-source-kernel-api-error).

    Why it matters:
        The module release was written for older kernels: after a kernel update DKMS cannot build
        it, and on the new kernel the module (nvidia, amdgpu) does not load. Rebuilding, or
        reinstalling the same release, fails the same way; the compiler is not at fault.

    How to fix:
        Install a release of the module that supports the kernel (the vendor's release notes list
        the kernels each release supports), or boot the kernel the module built for and hold the
        kernel package until such a release exists.

    References:
        - https://github.com/dell/dkms/blob/master/dkms.in (the build tree $dkms_tree/$module/$module_version/build)
        - https://github.com/ROCm/amdgpu/issues/53 (rock-dkms 1.8-192: vga_switcheroo's changed callback in 4.15.0-33)
    """
    s = first_symptom(f, _API_ERROR)
    if s is None:
        return
    module, version = s.get("module"), s.get("version")
    hold = ("# or boot the kernel it built for and hold the kernel package until a release supports the new one "
            "(apt-mark hold linux-image-generic linux-headers-generic, or dnf versionlock add kernel)")
    yield Hit(message=f"{module} {version}'s own source does not compile against this kernel (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): an interface the module uses changed in the kernel, so this module release "
                      "does not support the kernel it was built for; rebuilding it fails the same way",
              fix=(f"dkms status {shlex.quote(str(module))}; uname -r   # the kernels {module} {version} is built for, "
                   "and the one running\n"
                   f"# install a release of {module} newer than {version} whose release notes list this kernel, then: "
                   "sudo dkms autoinstall\n" + hold),
              evidence={**told_evidence(s), "module": module, "version": version})
