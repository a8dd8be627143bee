"""Two copies of one compiled library in a Python process, each brought by a different package (a pip
wheel that bundles its own copy of a library the system or another wheel also provides): read, at
info level only, from glibc's heap-corruption abort (knowledge/messages/glibc_malloc.toml) beside the
user's words that the crash depends on which module is imported first (prose.toml import-order-said)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "wheel-bundled-library-conflict"
_ORDER = "prose:import-order-said"

_FIX = ("python -X importtime -c 'import A; import B' 2>&1 | tail -3   # A and B: the two modules, in the order that aborts\n"
        "python -c 'import A, B, os; print(open(f\"/proc/{os.getpid()}/maps\").read())' | awk '{print $6}' | grep '\\.so' | sort -u   "
        "# in the order that works: libraries loaded twice under two paths (a wheel's .libs/ copy beside the system's)\n"
        "pip uninstall -y opencv-python && pip install opencv-python-headless   # example: one build of a package whose wheel "
        "bundles its own libraries; or install both packages from one source (conda-forge, or the distribution's packages)\n"
        "# until then: import the module that works first (the order the paste shows does not abort)")


@rule("SW078", SYMBOL, "info", "a heap abort that depends on import order: consistent with two copies of one library "
                               "(wheels bundling their own)", impact=2)
def wheel_bundled_library_conflict(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A glibc heap-corruption abort in a paste (malloc.c's malloc_printerr strings: "free():
        invalid pointer", "double free or corruption (out)", "malloc(): corrupted top size",
        "munmap_chunk(): invalid pointer" and the rest) where the user also says the crash
        depends on the order in which two modules are imported ("if cv2 is imported after
        importing ngtpy ..."). Info only: the abort itself is heap corruption, most often a bug
        of the program; a bare abort fires nothing.

    Why it matters:
        Python packages installed from pip often carry their own copies of compiled libraries
        (auditwheel puts them in <package>.libs/: libstdc++, libgomp, libpng, OpenCV's
        dependencies). When two such copies of one library, or a copy and the system's, end up in
        one process, memory allocated by one copy can be released by the other, and glibc aborts.
        Which copy wins depends on the load order, so the crash follows the import order.

    How to fix:
        Import the modules in the order that works for now; then install the two packages from
        one source (both from conda-forge, or the distribution's builds), or a build of one of
        them that does not bundle the conflicting library; report it to the package that bundles
        it. Tell the two copies apart with /proc/<pid>/maps.

    References:
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=malloc/malloc.c (malloc_printerr)
        - https://github.com/pypa/auditwheel (how wheels bundle their libraries)
        - https://github.com/NGT-labs/NGT/issues/52 (the crash with pip's OpenCV, not the distribution's)
    """
    aborts = catalogued(f, SYMBOL)
    if not aborts:
        return
    # not held to stated(): the words are a condition by nature ("if cv2 is imported after ...")
    order = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == _ORDER), None)
    if order is None:
        return
    s = aborts[0]
    yield Hit(message=f"glibc aborted on heap corruption (line {s.get('line')}: \"{told_text(s)}\"), and the paste says it "
                      f"depends on the import order (line {order.get('line')}: \"{told_text(order)[:100]}\"): consistent with "
                      "two copies of one compiled library in the process (a pip wheel bundling its own), not proof of it",
              fix=_FIX, evidence=told_evidence(s), severity="info")
