"""Files and directories the job's environment names for its tools, and whether they are there:
the CA bundles TLS clients are told to trust (SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE,
CURL_CA_BUNDLE, PIP_CERT, GIT_SSL_CAINFO) and the CUDA directory XLA is told to take libdevice from
(XLA_FLAGS=--xla_gpu_cuda_data_dir). Only what a variable names is looked at: a variable left
unset is the tool's default, not a finding."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import ReplaySysRoot, SysRoot

NAME = "named_paths"
TIMEOUT = 1.0

# Who reads each (read 2026-11-26): OpenSSL's X509_get_default_cert_file_env/_dir_env (SSL_CERT_FILE,
# SSL_CERT_DIR; Python's ssl.get_default_verify_paths and Go's crypto/x509 root_unix.go read the same
# names), requests' sessions.py merge_environment_settings (REQUESTS_CA_BUNDLE, else CURL_CA_BUNDLE),
# curl(1) (CURL_CA_BUNDLE), pip's --cert option (PIP_CERT), git-config(1) http.sslCAInfo (GIT_SSL_CAINFO).
CA_FILES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT", "GIT_SSL_CAINFO")
CA_DIRS = ("SSL_CERT_DIR",)
_XLA_DATA_DIR = re.compile(r"--xla_gpu_cuda_data_dir=(?P<dir>\S{1,400})")
LIBDEVICE = "nvvm/libdevice/libdevice.10.bc"


def ca_bundles(root: SysRoot, env: Dict[str, str]) -> List[Dict[str, Any]]:
    """Each CA variable that is set to a path, with whether that path exists."""
    out = []
    for var in CA_FILES + CA_DIRS:
        value = (env.get(var) or "").strip()
        # SSL_CERT_DIR may list several directories; an empty value is "no bundle", not a path
        for path in [p for p in value.split(":" if var in CA_DIRS else "\n") if p.startswith("/")][:4]:
            out.append({"var": var, "path": path[:400], "exists": root.exists(path)})
    return out


def xla_cuda_data_dir(root: SysRoot, env: Dict[str, str]) -> Optional[Dict[str, Any]]:
    """The directory XLA_FLAGS names for CUDA's data, with whether libdevice is under it; None when unset."""
    m = _XLA_DATA_DIR.search(env.get("XLA_FLAGS") or "")
    if not m:
        return None
    d = m.group("dir").strip("'\"").rstrip("/")
    return {"path": d, "libdevice": root.exists(f"{d}/{LIBDEVICE}")}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    # A replay answers "absent" for any file its recording did not keep: only a snapshot recorded
    # with this check kept the files these variables name (the recorder marks each one it found).
    if isinstance(root, ReplaySysRoot) and NAME not in (root.meta.get("checks") or {}):
        return {"named_paths": Unknown("not recorded: the snapshot or paste was made without this check, so "
                                       "whether the named CA bundles and CUDA directory exist is not known")}
    env = root.environ()
    return {"named_paths": {"ca_bundles": ca_bundles(root, env), "xla_cuda_data_dir": xla_cuda_data_dir(root, env)}}
