"""A GCC asked to offload OpenMP or OpenACC regions to a device it was not built for
(knowledge/messages/compiler_options.toml gcc-offload-target-not-configured)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_catalogued, told_evidence, told_text

SYMBOL = "gcc-offload-target-not-built"
# The distributions' packages of GCC's offload compilers, by target (knowledge/offload_compilers.toml).
_PACKAGED = knowledge.load("offload_compilers")["packages"]["by_target"]


@rule("SW121", SYMBOL, "error", "GCC was not built with the offload target the build asks for", impact=5)
def gcc_offload_target_not_built(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, GCC's driver refusing -foffload=<target>: "gfortran: fatal error:
        GCC is not configured to support nvptx-none as offload target".

    Why it matters:
        GCC compiles OpenMP target and OpenACC regions for a GPU only with an offload compiler for
        that device, chosen when GCC itself was built (--enable-offload-targets). A GCC built
        without it stops at the option; no flag or environment variable adds the target later.

    How to fix:
        Check which targets the GCC was configured with; install the distribution's offload
        compiler for the target (gcc-offload-nvptx on Debian, Ubuntu, Fedora and RHEL, for their
        default GCC), or use a compiler built with it (a site module, or another compiler's
        OpenMP offload).

    References:
        - https://gcc.gnu.org/wiki/Offloading (building GCC with --enable-offload-targets)
        - https://github.com/gcc-mirror/gcc/blob/master/gcc/gcc.cc (handle_foffload_option)
        - https://github.com/brechtsanders/winlibs_mingw/issues/43 (a GCC 10.2 build without nvptx-none)
    """
    s = first_catalogued(f, SYMBOL)
    if s is None:
        return
    target = str(s.get("target") or "")
    prog = str(s.get("program") or "gcc").rsplit("/", 1)[-1] or "gcc"
    package = _PACKAGED.get(target)
    install = (f"sudo apt-get install {package}   # Debian and Ubuntu, for their default GCC; Fedora and RHEL: sudo dnf "
               f"install {package}" if package
               else f"# no distribution package named here builds {target}: a GCC built with --enable-offload-targets={target}")
    yield Hit(message=f"{prog} was not built with the offload target {target} (line {s.get('line')}: \"{told_text(s)}\"): "
                      "it cannot compile OpenMP or OpenACC regions for that device, and no option adds the target to this "
                      "build of GCC",
              fix=(f"{shlex.quote(prog)} -v 2>&1 | grep -o -- '--enable-offload-targets=[^ ]*'   # the targets this GCC was "
                   "built with (none printed: none)\n"
                   f"{install}\n"
                   "module avail gcc nvhpc 2>&1 | tail -5   # on a cluster: a compiler module built with GPU offloading"),
              evidence={**told_evidence(s), "target": target})
