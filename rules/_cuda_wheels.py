"""Where each CUDA library lives when conda or NVIDIA's PyPI wheels installed it, and the fix that puts
that folder on the loader's path: a program built against a CUDA from conda or pip (rather than
/usr/local/cuda) finds it only where the loader looks (ld.so: LD_LIBRARY_PATH, then the RUNPATH its
build recorded, then ld.so.cache)."""

from __future__ import annotations

from typing import Optional

from hpcdoctor import knowledge

# The library's stem -> its NVIDIA wheel's folder under site-packages/nvidia/<folder>/lib, with the
# source beside it (knowledge/cuda_wheel_libs.toml).
_TABLE = knowledge.load("cuda_wheel_libs")
_DIRS, _CU13 = _TABLE["wheel_dirs"], _TABLE["cu13"]
_OUTSIDE = _TABLE["outside_lib64"]

_SITE = "$(python -c 'import site; print(site.getsitepackages()[0])')"


def wheel_dir(lib: str) -> Optional[str]:
    """The wheel folder of a CUDA library stem (libcudnn_cnn_infer -> cudnn); None for a library
    NVIDIA's wheels do not carry."""
    for prefix, folder in _DIRS["prefixes"].items():
        if lib.startswith(prefix):
            return str(folder)
    folder = _DIRS["libs"].get(lib)
    return str(folder) if folder else None


def loader_path_fix(lib: str, so: str) -> str:
    """Commands, one a line, that find the copies of ``so`` and put the folder of the one the program
    needs first on LD_LIBRARY_PATH: conda's environment lib folder, or the NVIDIA wheel's lib folder."""
    sub = wheel_dir(lib)
    wheel = f"{_SITE}/nvidia/{sub}/lib" if sub else None
    if lib in _OUTSIDE["wheel"]:
        wheel = f"{_SITE}/nvidia/{_OUTSIDE['wheel'][lib]}"
    # CUDA 13's wheels keep the toolkit's libraries in one folder: a soname of CUDA 13's major is there.
    if _CU13["majors"].get(lib) and so.split(".so.", 1)[-1].split(".")[0] == _CU13["majors"][lib]:
        wheel = f"{_SITE}/nvidia/{_CU13['folder']}/lib"
    # NVVM and its kin live outside the toolkit's lib64 (nvvm/lib64), in a conda environment as in the toolkit
    inner = _OUTSIDE["toolkit"].get(lib, "lib64")
    conda = f'"$CONDA_PREFIX"/{inner}' if lib in _OUTSIDE["toolkit"] else '"$CONDA_PREFIX"/lib'
    where = " ".join(x for x in (conda, f"/usr/local/cuda*/{inner}", f'"{wheel}"' if wheel else "") if x)
    lines = [f"ls {where} 2>/dev/null | grep {lib}   # the copies of {lib} there are: {so} is the one the "
             "program asks for"]
    if lib in _OUTSIDE["toolkit"]:
        lines.append(f'export LD_LIBRARY_PATH="${{CUDA_HOME:-/usr/local/cuda}}/{inner}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"'
                     f"   # the toolkit's {inner} folder, outside the lib64 its ld.so.conf entry names, in the shell or "
                     "job script that runs the program")
    lines.append(f'export LD_LIBRARY_PATH="${{CONDA_PREFIX:?activate the conda environment first}}/{conda.split("/", 1)[1]}'
                 '${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"   # conda: the environment\'s own CUDA libraries, in the '
                 "shell or job script that runs the program")
    if wheel:
        lines.append(f'export LD_LIBRARY_PATH="{wheel}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"   # pip: the '
                     f"nvidia-* wheel's folder instead (where {so} was listed above)")
    return "\n".join(lines)
