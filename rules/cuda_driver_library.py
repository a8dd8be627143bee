"""A program that needs the NVIDIA driver's libcuda and whose loader found none: cudarc's panic
(knowledge/messages/libraries.toml, its two forms) and OpenMM's CUDA plugin that failed to load for
it (md_engines.toml). The loader's bare "libcuda.so.1: cannot open shared object file" is not read so:
Open MPI prints it on every machine without CUDA, where it is no fault."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, said_no_gpu, told_evidence, told_text
from hpcdoctor.rules.gpu_access import libs_not_bound_in_container
from hpcdoctor.rules.libraries import CUDARC_PANIC_WORDS

SYMBOL = "cuda-driver-library-not-found"

_FIX = ("ldconfig -p | grep -E 'libcuda\\.so'   # the driver's libcuda the loader knows: cudarc asks for the unversioned "
        "libcuda.so\n"
        "ls /usr/lib/wsl/lib/libcuda.so* 2>/dev/null && export LD_LIBRARY_PATH=/usr/lib/wsl/lib${LD_LIBRARY_PATH:+:"
        "$LD_LIBRARY_PATH}   # WSL 2: the Windows driver's libcuda is mapped there (NVIDIA's CUDA on WSL guide)\n"
        "nvidia-smi   # elsewhere: no answer means no NVIDIA driver here; a driver whose folder has only libcuda.so.1: "
        "a libcuda.so link to it in a folder on LD_LIBRARY_PATH")

# OpenMM's CUDA plugin links libcuda.so.1 itself (the driver's soname), so no link is needed: the
# driver is absent where OpenMM ran, or its folder is not searched.
_OPENMM_FIX = ("nvidia-smi   # no table: no NVIDIA driver where OpenMM ran (a login node, a container started without "
               "its GPUs: apptainer exec --nv, docker run --gpus all); run it on a GPU node\n"
               "ldconfig -p | grep -F 'libcuda.so.1'   # nothing with a driver installed: its folder is not in the "
               "loader's cache; put that folder on LD_LIBRARY_PATH\n"
               "python -c 'import openmm; print(openmm.Platform.getPluginLoadFailures())'   # empty once the CUDA "
               "plugin loads")


@rule("SW122", SYMBOL, "error", "a program that needs the NVIDIA driver's libcuda cannot load it", impact=8)
def cuda_driver_library_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, OpenMM's plugin loader failing on its CUDA plugin ("Error loading library
        .../plugins/libOpenMMCUDA.so: libcuda.so.1: cannot open shared object file", which
        Platform.getPluginLoadFailures() returns, beside "There is no registered Platform called
        "CUDA""), or cudarc (the Rust CUDA bindings under candle and mistral.rs) panicking
        because it could load the driver's library under none of the names it tried: "Unable to
        find cuda lib under the names ["cuda", "nvcuda"]. Please open GitHub issue." (cudarc up
        to 0.11.x) or "Unable to dynamically load the "cuda" shared library - searched for
        library names: ..." (later). Not inside a container started without its GPUs
        (container-nvidia-libs-not-bound answers that), nor where the user says the machine has
        no NVIDIA GPU.

    Why it matters:
        libcuda is the NVIDIA driver's own library, installed with the driver, never by a CUDA
        toolkit or a wheel; nothing that uses CUDA runs without it. cudarc loads the unversioned
        name (libloading's library_filename: libcuda.so), so a driver whose folder the loader does
        not search, or that has only libcuda.so.1 there, fails the same way as no driver at all.
        On WSL 2 the Windows driver's libcuda is mapped into /usr/lib/wsl/lib.

    How to fix:
        Check which libcuda the loader knows; on WSL 2 put /usr/lib/wsl/lib on LD_LIBRARY_PATH;
        elsewhere install the NVIDIA driver, or put a libcuda.so link to the driver's libcuda.so.1
        in a folder on LD_LIBRARY_PATH.

    References:
        - https://github.com/coreylowman/cudarc/blob/e69200d46a6890f4120a74683907264162e6f637/src/lib.rs (panic_no_lib_found)
        - https://github.com/coreylowman/cudarc/blob/1fa82db37352ab6d4e21e72527e66c235f6eb9b7/src/driver/sys/mod.rs (the names tried)
        - https://docs.nvidia.com/cuda/wsl-user-guide/ (libcuda mapped into WSL 2)
        - https://github.com/chelsea0x3b/cudarc/issues/255 (WSL: LD_LIBRARY_PATH without /usr/lib/wsl/lib)
        - https://github.com/openmm/openmm/blob/1a47c2f68439c579e27666e5f985ea1a46dd105a/olla/src/Platform.cpp (loadPluginLibrary)
    """
    plugin = first_symptom(f, "md_engines:openmm-plugin-needs-libcuda")
    s = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "libraries:libcuda"
              and any(words in str(t.get("text", "")) for words in CUDARC_PANIC_WORDS)), None)
    # the other rules' questions only where one of the two was pasted: libs_not_bound_in_container runs a rule
    if (plugin is None and s is None) or said_no_gpu(f) or libs_not_bound_in_container(f):
        return
    if plugin is not None:
        yield Hit(message=f"OpenMM's CUDA plugin could not be loaded: the NVIDIA driver's libcuda.so.1 is not on the loader's "
                          f"path where OpenMM ran (line {plugin.get('line')}: \"{told_text(plugin)}\"), so OpenMM has no CUDA "
                          "platform: no NVIDIA driver there, or its folder is not searched",
                  fix=_OPENMM_FIX, evidence=told_evidence(plugin))
        return
    yield Hit(message=f"cudarc could not load the NVIDIA driver's libcuda (line {s.get('line')}: \"{told_text(s)}\"): the loader "
                      "finds no libcuda.so where the program ran: no NVIDIA driver there, or the driver's folder is not on "
                      "the loader's path (WSL 2 keeps it in /usr/lib/wsl/lib); cudarc asks for the unversioned libcuda.so",
              fix=_FIX, evidence=told_evidence(s))
