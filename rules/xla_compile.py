"""XLA (JAX, TensorFlow) saying how it was built while it compiles: the slow-operation alarm's text
depends on whether XLA itself was compiled with optimisations (knowledge/messages/xla.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "xla-built-without-optimizations"

_FIX = ("python -c 'import jaxlib; print(jaxlib.__file__)'   # which jaxlib this Python loads: a build from source "
        "shows its own path (TensorFlow: python -c 'import tensorflow as tf; print(tf.__file__)')\n"
        "pip install --force-reinstall -U jax jaxlib   # a released wheel, built with -c opt; on NVIDIA GPUs: "
        "pip install -U \"jax[cuda12]\"\n"
        "# or rebuild from source with bazel's -c opt, as XLA's message says: a -c dbg or fastbuild build prints this alarm")


@rule("SW065", SYMBOL, "warning", "XLA (jaxlib, TensorFlow) was built without compiler optimizations: compiles run several times slower",
      impact=5)
def xla_built_without_optimizations(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, XLA's slow-operation alarm in the form an unoptimised XLA prints: "Slow
        compile?  XLA was built without compiler optimizations, which can be slow.  Try
        rebuilding with -c opt." (SlowCompilationAlarm), or the same sentence under constant
        folding's "Constant folding an instruction is taking > ...". XLA compiles that text in
        only when NDEBUG is not defined, so the line states how the library was built.
        The alarm of a released build ("Very slow compile?  If you want to file a bug ...", "The
        operation took ...", "This isn't necessarily a bug; constant-folding ...") is not this
        finding: a long compile of a large program is no fault of the node or the install.

    Why it matters:
        A jaxlib or TensorFlow built from source without bazel's -c opt (a debug or fastbuild
        build) runs XLA's own compiler unoptimised: every jit compile takes several times longer
        (jax#3323: two to three times, "could easily make XLA compilation 10x slower", the
        maintainer), and the alarm fires after 10 seconds instead of 2 minutes.

    How to fix:
        Find which jaxlib (or TensorFlow) the job's Python imports; replace a build from source
        with a released wheel, or rebuild it with -c opt.

    References:
        - https://github.com/openxla/xla/blob/001918b7024cf5f020051a9d25d2dd57a5896aaa/xla/service/slow_operation_alarm.cc (SlowCompilationAlarm: #if NDEBUG)
        - https://github.com/openxla/xla/blob/0e1ce76841700c606101e4c6b04ec081a446e96f/xla/hlo/transforms/simplifiers/hlo_constant_folding.cc
        - https://github.com/jax-ml/jax/issues/3323 (a jaxlib built from HEAD; the maintainer: rebuild with -c opt)
        - https://bazel.build/docs/user-manual#compilation-mode (fastbuild, dbg, opt; opt defines NDEBUG)
    """
    for s in catalogued(f, SYMBOL):
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": this XLA (the jaxlib or TensorFlow the program "
                          "imports) was compiled without optimisations, so every compile runs several times slower than "
                          "with a released wheel",
                  fix=_FIX, evidence=told_evidence(s))
        return
