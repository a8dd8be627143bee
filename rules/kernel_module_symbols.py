"""A kernel module refused for its symbol versions (knowledge/messages/kernel_module_symbols.toml):
built against other headers than those of the kernel or the modules now loaded. On HPC nodes the
commonest case is an RDMA stack swapped under its users: MLNX_OFED replaces ib_core and its
symbols, so a module built against the distribution's (drbd's RDMA transport, nvidia-peermem,
Lustre's o2ib) no longer loads, and one built against OFED's fails once a kernel update brings
the distribution's back."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence, told_text

SYMBOL = "kernel-module-symbol-version-mismatch"
_TOLD = ("kernel_module_symbols:disagrees-about-symbol-version", "kernel_module_symbols:unknown-symbol-bad-version")


def _fix(module: str, symbol: str) -> str:
    return (f"modinfo -F vermagic {module}; uname -r   # the kernel {module} was built for, and the one running\n"
            f"grep -w {symbol} /lib/modules/$(uname -r)/modules.symbols   # the module that exports {symbol} for this "
            "kernel (an MLNX_OFED build of ib_core lives under updates/)\n"
            "sudo dkms status   # the DKMS builds and the kernels they were built for\n"
            f"# rebuild {module} against the headers of what is loaded now (a DKMS module: sudo dkms remove, then "
            "sudo dkms install, with its name/version from dkms status; a module that uses MLNX_OFED's symbols is "
            "built after MLNX_OFED is installed, with its Module.symvers in KBUILD_EXTRA_SYMBOLS), then modprobe it")


@rule("SYS061", SYMBOL, "error",
      "a kernel module was built against other symbol versions than the kernel or modules loaded", impact=6)
def kernel_module_symbol_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The kernel's own refusal of a module for its symbol versions, in a pasted kernel log or
        dmesg: "drbd_transport_rdma: disagrees about version of symbol ib_dealloc_pd_user" and
        "... Unknown symbol ib_dealloc_pd_user (err -22)", the -EINVAL that resolve_symbol
        returns when check_version fails. "Unknown symbol ... (err -2)" is not this: no loaded
        module exports the symbol at all.

    Why it matters:
        With CONFIG_MODVERSIONS each exported symbol carries a CRC of its prototype, and a module
        records the CRCs of the headers it was built with. A module built for another kernel, or
        against the distribution's RDMA headers on a node that runs MLNX_OFED's ib_core (or the
        reverse after a kernel update), is refused: its device or transport is missing
        (GPUDirect RDMA without nvidia-peermem, DRBD without its RDMA transport), and modprobe
        only says "Invalid argument" or "Unknown symbol in module".

    How to fix:
        Rebuild the module against the headers of the kernel and stack that are loaded (DKMS:
        remove and install it again; against MLNX_OFED, after OFED is installed and with its
        Module.symvers), then load it. An administrator's task.

    References:
        - https://github.com/torvalds/linux/blob/master/kernel/module/version.c (check_version)
        - https://github.com/torvalds/linux/blob/master/kernel/module/main.c (resolve_symbol, simplify_symbols)
        - https://docs.kernel.org/kbuild/modules.html (Module Versioning; KBUILD_EXTRA_SYMBOLS)
        - https://github.com/LINBIT/drbd/issues/59 (drbd_transport_rdma built against the inbox headers on an OFED host)
    """
    s = first_symptom(f, *_TOLD)
    if s is None:
        return
    module, symbol = str(s.get("module") or "MODULE"), str(s.get("symbol") or "SYMBOL")
    yield Hit(message=f"the kernel refused the module {module}: its version of {symbol} differs from the one the "
                      f"running kernel or a loaded module exports (line {s.get('line')}: \"{told_text(s)[:120]}\"), so it "
                      "was built against other headers (another kernel, or another RDMA stack than the loaded one, "
                      "such as the distribution's ib_core where MLNX_OFED's is loaded)",
              fix=_fix(module, symbol), evidence=told_evidence(s))
