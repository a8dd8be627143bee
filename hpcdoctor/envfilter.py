"""Which environment variables hpcdoctor looks at, and how secrets are kept out of everything.

The filter runs before anything is stored or reported, so a secret never reaches a fact, a
snapshot or a log line.
"""

from __future__ import annotations

import re
from typing import Dict, Mapping

RELEVANT_PREFIXES = (
    "OMP_", "KMP_", "GOMP_", "MKL_", "DNNL_", "ONEDNN_", "NCCL_", "RCCL_", "CUDA_", "CUDNN_",
    "NVIDIA_", "HIP_", "ROCR_", "ROCM_", "HSA_", "MIOPEN_", "TORCH_", "PYTORCH_", "FI_", "UCX_",
    "SLURM_", "SLURMD_", "PBS_", "LSB_", "OMPI_", "PMI_", "PMIX_", "MPICH_", "I_MPI_",
    "CONDA_", "XLA_", "TF_", "OPENBLAS_", "BLIS_", "ACL_", "NVSHMEM_", "GLOO_", "ACCELERATE_",
    "DEEPSPEED_", "NVTE_", "THP_",
)
RELEVANT_NAMES = frozenset({
    "LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
    "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    "GROUP_RANK", "NODE_RANK", "LRU_CACHE_CAPACITY", "LOADEDMODULES", "MODULEPATH",
    "SINGULARITY_CONTAINER", "APPTAINER_CONTAINER", "SINGULARITY_NAME", "APPTAINER_NAME",
    "HOSTNAME", "HF_HOME", "TRANSFORMERS_CACHE", "TMPDIR", "MALLOC_CONF", "HOME", "USER",
    "NO_COLOR", "TERM",
})

# A name containing one of these words holds a secret; its value is never kept.
_SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
_SECRET_RE = re.compile(r"(?:^|_)(?:%s)(?:_|$|S\b)" % "|".join(_SECRET_WORDS))
# Credentials embedded in URLs (MASTER_ADDR=https://user:pw@host, proxies).
_URL_CRED_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s:]+(?::[^/@\s]*)?@")

REDACTED = "<redacted>"

# Slurm exports a few variables whose names look secret but are not (SLURM_JOB_PARTITION is
# fine; SLURM_STEP_LAUNCHER_PORT has PORT not PASS): the regex above already spares them. These
# are names that match a secret word yet are plainly configuration.
_NOT_SECRET = frozenset({"NCCL_IB_PKEY", "FI_CXI_DEFAULT_VNI", "NCCL_IB_GID_INDEX"})


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    return bool(_SECRET_RE.search(upper))


def scrub_value(value: str) -> str:
    return _URL_CRED_RE.sub(lambda m: m.group("scheme") + REDACTED + "@", value)


def is_relevant(name: str) -> bool:
    return name in RELEVANT_NAMES or name.startswith(RELEVANT_PREFIXES)


def relevant(environ: Mapping[str, str]) -> Dict[str, str]:
    """The variables that matter for diagnosis, with secrets replaced by a marker.

    Secret-looking names are kept (that a token is set can matter) but never their values.
    """
    out: Dict[str, str] = {}
    for name, value in environ.items():
        if is_relevant(name):
            out[name] = REDACTED if is_secret_name(name) else scrub_value(str(value))
    return out


_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def parse_env_output(text: str) -> Dict[str, str]:
    """Parse the output of ``env``: NAME=value lines; a line that does not start a variable
    continues the previous value (values may contain newlines)."""
    env: Dict[str, str] = {}
    last = None
    for line in text.splitlines():
        m = _ENV_LINE.match(line)
        if m:
            last = m.group(1)
            env[last] = m.group(2)
        elif last is not None:
            env[last] += "\n" + line
    return env
