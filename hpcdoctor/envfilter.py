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
    # the locale categories a job runs under (rules/locales.py)
    "LC_",
    # enroot's paths and settings (checks/containers.py resolves its directories as enroot does)
    "ENROOT_",
)
RELEVANT_NAMES = frozenset({
    "LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE",
    "VIRTUAL_ENV",
    "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    "GROUP_RANK", "NODE_RANK", "LRU_CACHE_CAPACITY", "LOADEDMODULES", "MODULEPATH",
    "SINGULARITY_CONTAINER", "APPTAINER_CONTAINER", "SINGULARITY_NAME", "APPTAINER_NAME",
    "HOSTNAME", "HF_HOME", "TRANSFORMERS_CACHE", "TMPDIR", "MALLOC_CONF", "HOME", "USER",
    # where a run writes its caches: checks/limits.py reads the free space of their file systems
    "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "PIP_CACHE_DIR",
    # the XDG directories enroot's defaults derive from (checks/containers.py)
    "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
    "NO_COLOR", "TERM",
    # whether a window can open, and how matplotlib and Qt draw without one (rules/no_display.py)
    "DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND", "QT_QPA_PLATFORM",
    # the locale and Python's text encoding (rules/locales.py)
    "LANG", "LANGUAGE", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONCOERCECLOCALE",
    # where OpenCL's and EGL's loaders look for drivers, and how MuJoCo renders (checks/vendor_loaders.py)
    "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "__EGL_VENDOR_LIBRARY_DIRS", "__EGL_VENDOR_LIBRARY_FILENAMES",
    # nvcc's host compiler and flags from the environment (checks/host_compilers.py)
    "NVCC_CCBIN", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
    # the Level Zero loader's and SYCL's device choice (checks/vendor_loaders.py, rules/intel_gpu.py)
    "ONEAPI_DEVICE_SELECTOR", "SYCL_DEVICE_FILTER", "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY",
    "ZE_ENABLE_ALT_DRIVERS",
    "MUJOCO_GL", "MUJOCO_EGL_DEVICE_ID", "PYOPENGL_PLATFORM",
    # PyCUDA's compiler cache (rules/jit_builds.py)
    "PYCUDA_CACHE_DIR", "PYCUDA_DISABLE_CACHE",
    # the CA bundles TLS clients are told to trust (checks/named_paths.py)
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO",
})

# A name holds a secret when one of its underscore-separated words is, begins with or ends with a
# secret word: TORCH_HUB_APIKEY, NCCL_APITOKEN, NCCL_PASSPHRASE, SLURM_JWT, CONDA_PWD. Matching
# whole words only (the old rule) missed all five.
_SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PWD", "JWT", "CREDENTIAL",
                 "CREDENTIALS", "AUTH", "COOKIE", "SESSION", "SIGNATURE", "APIKEY")
_SECRET_PREFIXES = ("PASS", "SECRET", "TOKEN", "CRED", "AUTH")
_SECRET_SUFFIXES = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PWD", "JWT", "CREDENTIALS", "COOKIE", "KEYS",
                    "TOKENS", "SECRETS")

REDACTED = "<redacted>"

# Names that match a secret word yet are plainly configuration.
_NOT_SECRET = frozenset({"NCCL_IB_PKEY", "FI_CXI_DEFAULT_VNI", "NCCL_IB_GID_INDEX", "PWD", "OLDPWD",
                         "SLURM_STEP_LAUNCHER_PORT", "KMP_AFFINITY"})


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    for word in upper.split("_"):
        if not word:
            continue
        if word in _SECRET_WORDS or word.startswith(_SECRET_PREFIXES) or word.endswith(_SECRET_SUFFIXES):
            return True
    return False


# --- secrets by value -------------------------------------------------------------------------
# A URL as it appears in a variable: scheme, then anything up to whitespace or a quote. The scheme
# is bounded: with ``*`` every letter of a 200 KB value without "://" started a scan to its end
# (quadratic, 62 s; issue 27). A longer scheme still matches by its last 32 characters.
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s'\"<>]+")
# Query keys that carry a signature or a token in signed and API URLs (S3, GCS, Azure SAS, OAuth).
_SECRET_QUERY_KEYS = frozenset({
    "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature",
    "x-goog-credential", "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key",
    "password", "passwd", "secret", "client_secret", "auth", "session", "sessiontoken", "x-ms-signature",
})
# A key holds no "?": otherwise each "?" of "?a?a?a..." scanned to the end for its "=" (quadratic).
# A fragment is a pair too: OAuth's implicit flow returns "#access_token=...".
_QUERY_PAIR = re.compile(r"([?&;#])([^=&#;?]+)=([^&#;]*)")
# conda's token channels: https://conda.anaconda.org/t/<token>/channel
_CONDA_TOKEN = re.compile(r"(/t/)[^/\s]+(?=/)")
# Known credential shapes outside URLs: HTTP authorisation values and key=value settings.
_AUTH_HEADER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.I)
# ("name: value" needs the space, so that PATH-like lists such as /opt/token:/usr/bin stay intact.)
# A quote may close the key and open the value, as JSON writes them ("password": "x y").
_KV_SECRET = re.compile(r"\b(password|passwd|pwd|token|secret|api[_-]?key|apikey)(\s*=\s*|:\s+|[\"']\s{0,4}[=:]\s{0,4})"
                        r"(\"[^\"\n]{0,4096}\"?|'[^'\n]{0,4096}'?|[^\s,;&]+)", re.I)
# A command line's option: --password X, --api-key=X, -password X.
_OPTION_SECRET = re.compile(r"(?<![\w-])(--?[A-Za-z0-9-]{0,40}(?:password|passwd|passphrase|token|secret|api-?key|apikey)"
                            r"[A-Za-z0-9-]{0,40})(=|\s{1,8})([^\s-][^\s]*)", re.I)
# user:password@host without a scheme (a proxy setting, an rsync or MASTER_ADDR value).
_BARE_USERINFO = re.compile(r"(?<![\w.%+/:@-])([\w.%+-]{1,64}):([^\s@/:'\"]{1,256})@(?=[\w\[])")
# A private key in PEM armour, to its END line (or the end of the value when it is cut).
_PEM_KEY = re.compile(r"-----BEGIN ([A-Z0-9 ]{0,40}PRIVATE KEY)-----.*?(?:-----END \1-----|\Z)", re.S)
# A variable set inside another value ("... SLURM_JWT=eyJ..." after a line break).
_INNER_ASSIGN = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]{0,63})=([^\s&;,]*)")
# Prefixes that providers put on their tokens so that scanners can find them.
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,})\b"
    # A JSON Web Token: base64url header and payload, both JSON objects ("eyJ" is '{"').
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")


def _scrub_userinfo(url: str) -> str:
    scheme, rest = url.split("://", 1)
    head = re.split(r"[?#]", rest, 1)[0]
    if "@" not in head:
        return url
    userinfo, tail = head.rsplit("@", 1)
    # user:password@ (the password may hold / or @) and :TOKEN@ are credentials; a bare TOKEN@
    # before the host is too (git's https://TOKEN@github.com). host:port/path@x is a path.
    if re.match(r"^[^/:@]+:\d+/", userinfo):
        return url
    if ":" not in userinfo and "/" in userinfo:
        return url
    return f"{scheme}://{REDACTED}@{tail}{rest[len(head):]}"


def _scrub_url(m: "re.Match[str]") -> str:
    url = _scrub_userinfo(m.group(0))
    url = _CONDA_TOKEN.sub(lambda t: t.group(1) + REDACTED, url)

    def pair(q: "re.Match[str]") -> str:
        key = q.group(2)
        if key.lower() in _SECRET_QUERY_KEYS and q.group(3):
            return f"{q.group(1)}{key}={REDACTED}"
        return q.group(0)

    return _QUERY_PAIR.sub(pair, url)


def scrub_value(value: str) -> str:
    """A value with every credential it carries replaced: URL user information, signed-URL and
    token query parameters, conda token channels, authorisation values, key=value secrets and
    provider token shapes. Detection by value backs up detection by name."""
    value = _PEM_KEY.sub(lambda m: f"-----BEGIN {m.group(1)}-----{REDACTED}", value)
    value = _URL_RE.sub(_scrub_url, value)
    value = _BARE_USERINFO.sub(lambda m: f"{m.group(1)}:{REDACTED}@", value)
    value = _AUTH_HEADER.sub(lambda m: f"{m.group(1)} {REDACTED}", value)
    value = _KV_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", value)
    value = _OPTION_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", value)
    value = _INNER_ASSIGN.sub(lambda m: f"{m.group(1)}={REDACTED}" if is_secret_name(m.group(1)) and m.group(2) else m.group(0),
                              value)
    return _TOKEN_SHAPES.sub(REDACTED, value)


def one_line(value: str) -> str:
    """A value as one line of ``env`` output: line breaks written as the two characters \\n."""
    return value.replace("\r", "\\r").replace("\n", "\\n")


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
