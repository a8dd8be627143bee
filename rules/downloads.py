"""Downloads that fail on the way to the server rather than at it: a TLS certificate the client's
trust store does not verify (knowledge/messages/tls.toml), and a package index pip was pointed at
that it cannot use (pip.toml)."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

TLS = "tls-certificate-verify-failed"

# What each OpenSSL reason (X509_verify_cert_error_string) or client's wording says about the cause.
_ISSUER = ("the certificate's issuer is in no CA bundle this client reads: usually a site proxy or firewall "
           "that re-signs TLS with the site's own CA, or a missing or outdated bundle (a slim image, an old ca-certificates)")
_REASONS = (
    (re.compile(r"(?i)expired|not yet valid|NotValidYet|not valid yet"),
     "a certificate of the chain is outside its validity dates: the server's has expired, this node's clock is wrong, "
     "or an outdated CA bundle builds the chain through an expired root (Let's Encrypt's DST Root CA X3 expired on "
     "2021-09-30; bundles without ISRG Root X1 then fail: update ca-certificates)"),
    (re.compile(r"(?i)hostname mismatch|ip address mismatch|NotValidForName|not valid for name"),
     "the certificate names another host than the one asked for: a proxy answering for it, or a URL naming the "
     "server by another name or address"),
    (re.compile(r"(?i)unable to verify the first certificate"),
     "no issuer of the server's certificate is known here: the server sends no intermediate certificate, or a site "
     "proxy's CA is not in the bundle"),
)
_UPDATE = ("sudo yum update ca-certificates   # RHEL/CentOS (Debian/Ubuntu: sudo apt-get install --only-upgrade "
           "ca-certificates; conda: conda update ca-certificates certifi): a current bundle holds the current roots\n")
_BADFILE = "the CA bundle the client was pointed at (--cacert, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE) cannot be read"

_CHECK = ("openssl s_client -connect HOST:443 -servername HOST </dev/null 2>&1 | grep -E ' [si]:|Verify return code'"
          "   # who issued the certificate this node is shown (a site CA's name means a proxy re-signs TLS)\n"
          "date -u   # a clock far off makes every certificate look expired or not yet valid")
_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
_BUNDLE_NOTE = (f"# {_BUNDLE} is Debian's and Ubuntu's system bundle (RHEL: /etc/pki/tls/certs/ca-bundle.crt); where a proxy "
                "re-signs TLS, the site's CA certificate must be in it (ask the administrators for it) or be the file named; "
                "never turn verification off")
_FIX = {
    "python": (f"export SSL_CERT_FILE={_BUNDLE} REQUESTS_CA_BUNDLE={_BUNDLE}   # Python's ssl, requests and huggingface_hub "
               "(requests reads certifi's bundle, not the system's, unless told)\n"
               f"pip config set global.cert {_BUNDLE}   # pip (or pip install --cert {_BUNDLE} ...)\n"
               f"conda config --set ssl_verify {_BUNDLE}   # conda and mamba"),
    "curl": f"export CURL_CA_BUNDLE={_BUNDLE}   # curl (or curl --cacert {_BUNDLE} ...)\n"
            f"git config --global http.sslCAInfo {_BUNDLE}   # git over https",
    "git": f"git config --global http.sslCAInfo {_BUNDLE}   # git over https (GIT_SSL_CAINFO for one command)",
    "wget": f"wget --ca-certificate={_BUNDLE} URL   # or ca_certificate = {_BUNDLE} in ~/.wgetrc",
    "go": (f"export SSL_CERT_FILE={_BUNDLE}   # Go programs on Linux (apptainer and singularity pull, podman, skopeo) read it\n"
           "sudo install -D -m 644 site-ca.pem /etc/docker/certs.d/REGISTRY/ca.crt   # docker: the registry's CA, by registry name"),
    "node": (f"export NODE_EXTRA_CA_CERTS={_BUNDLE}   # Node.js adds these CAs to its own bundle\n"
             f"npm config set cafile {_BUNDLE}   # npm"),
    "apt": (f"sudo apt-get install --reinstall ca-certificates   # the system bundle apt reads ({_BUNDLE}); where a "
            "proxy re-signs TLS, its CA goes in /usr/local/share/ca-certificates/ then sudo update-ca-certificates"),
    "rust": ("export UV_NATIVE_TLS=1   # uv (and rye): read the system's trust store, not uv's bundled roots "
             "(newer uv: UV_SYSTEM_CERTS=1)\n"
             f"export SSL_CERT_FILE={_BUNDLE}   # rustls clients that read it (uv, cargo's reqwest)"),
    "java": ("keytool -importcert -noprompt -alias site-ca -file site-ca.pem -keystore ~/site-truststore.jks -storepass changeit\n"
             "export JAVA_TOOL_OPTIONS=\"-Djavax.net.ssl.trustStore=$HOME/site-truststore.jks -Djavax.net.ssl.trustStorePassword=changeit\""
             "   # Nextflow, Gradle, Maven; the JVM's own cacerts is replaced, so import the public CAs needed too"),
}
_CLIENT = {
    "tls:python-certificate-verify-failed": "python", "tls:curl-ssl-certificate-problem": "curl",
    "tls:curl-cacert-badfile": "curl", "tls:gnutls-server-certificate-verification-failed": "git",
    "tls:wget-cannot-verify-certificate": "wget", "tls:wget-gnutls-not-trusted": "wget",
    "tls:go-x509-unknown-authority": "go", "tls:java-pkix-path-building-failed": "java",
    "tls:node-issuer-cert-code": "node", "tls:node-leaf-signature-code": "node",
    "tls:gnutls-certificate-not-trusted": "apt", "tls:go-x509-expired-or-not-yet-valid": "go", "tls:rustls-invalid-peer-certificate": "rust",
    "conda:ssl-error": "python", "pip:ssl-verification-failed": "python", "tls:requests-ca-bundle-invalid-path": "python",
}


def _why(s: dict) -> str:
    if s.get("id") in ("tls:curl-cacert-badfile", "tls:requests-ca-bundle-invalid-path"):
        return _BADFILE
    said = f"{s.get('reason') or ''} {s.get('text') or ''}"
    return next((why for pattern, why in _REASONS if pattern.search(said)), _ISSUER)


@rule("NET023", TLS, "error", "a download's TLS certificate does not verify against the client's trust store", impact=6,
      also={"warning": "conda's summary alone (\"Most likely a certificate verification issue\"); live, a CA variable naming "
                       "a file that is not there"})
def tls_certificate_verify_failed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a TLS client refusing the server's certificate: Python's ssl module
        ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: <reason> (_ssl.c:N)", under
        urllib, requests, pip, huggingface_hub and conda; conda's "Encountered an SSL error"; pip
        26's ssl-verification-failed), libcurl ("SSL certificate problem: <reason>", curl's exit
        60, and git's "server certificate verification failed. CAfile: ..." where libcurl uses
        GnuTLS; "error setting certificate file", exit 77), GNU Wget ("cannot verify <host>'s
        certificate", "The certificate of <host> is not trusted"), Go programs ("x509: certificate
        signed by unknown authority": apptainer pull, docker, podman; "x509: certificate has
        expired or is not yet valid: current time ... is after ..."), rustls under uv, rye and
        cargo ("invalid peer certificate: UnknownIssuer", NotValidForName, Expired; BadSignature
        is another fault and left alone), apt's GnuTLS ("Certificate verification failed: The
        certificate is NOT trusted. The certificate issuer is unknown."), Java ("PKIX path building
        failed"), Node.js and npm ("code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'", SELF_SIGNED_CERT_IN_CHAIN,
        UNABLE_TO_VERIFY_LEAF_SIGNATURE) and requests' "Could not find a suitable TLS CA certificate
        bundle, invalid path".
        The reason, where printed, chooses the explanation. Live, as a warning: SSL_CERT_FILE,
        SSL_CERT_DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, PIP_CERT or GIT_SSL_CAINFO set to a path
        that does not exist on the node (only a variable the job sets; unset is the default).

    Why it matters:
        The download never reaches the data: models, wheels, containers and datasets fail to fetch.
        On clusters and corporate networks the usual cause is a proxy or firewall that re-signs TLS
        with the site's CA, which the bundle of the image, conda, certifi or the JVM does not hold;
        a slim image without ca-certificates, a bundle variable naming a missing file, and a node
        clock far off are the others. Turning verification off hides a real interception.

    How to fix:
        See who issued the certificate (openssl s_client); point each client at a bundle that
        holds the site's CA: SSL_CERT_FILE and REQUESTS_CA_BUNDLE (Python, requests,
        huggingface_hub), pip's global.cert, conda's ssl_verify, CURL_CA_BUNDLE, git's
        http.sslCAInfo, wget's --ca-certificate, SSL_CERT_FILE for Go programs, a trust store
        for the JVM. Install the site's CA into the system bundle where you administer the node.

    References:
        - https://github.com/python/cpython/blob/main/Modules/_ssl.c (fill_and_set_sslerror)
        - https://docs.openssl.org/3.0/man3/X509_STORE_CTX_get_error/ (the verify error texts)
        - https://curl.se/docs/sslcerts.html
        - https://pip.pypa.io/en/stable/topics/https-certificates/
        - https://docs.conda.io/projects/conda/en/stable/user-guide/configuration/non-standard-certs.html
        - https://requests.readthedocs.io/en/latest/user/advanced/#ssl-cert-verification
        - https://pkg.go.dev/crypto/x509 (SSL_CERT_FILE, SSL_CERT_DIR on Unix)
        - https://docs.docker.com/engine/security/certificates/
        - https://nodejs.org/api/cli.html#node_extra_ca_certsfile
        - https://github.com/rustls/rustls/blob/main/rustls/src/error.rs (invalid peer certificate: {err})
        - https://docs.astral.sh/uv/reference/environment/ (UV_NATIVE_TLS, SSL_CERT_FILE)
        - https://letsencrypt.org/docs/dst-root-ca-x3-expiration-september-2021/ (an old bundle's expired root)
    """
    # wget's WARNING: --no-check-certificate let the download go on unverified; nothing failed
    told = [s for s in catalogued(f, TLS) if s.get("level") != "WARNING"]
    if not told:
        yield from _missing_bundles(f)
        return
    # a TLS library's own verify error first: conda's summary only says "most likely"
    s = next((t for t in told if str(t.get("id", "")).startswith("tls:")), told[0])
    client = _CLIENT.get(str(s.get("id")), "python")
    host = s.get("host")
    hedged = not str(s.get("id", "")).startswith("tls:")
    why = _why(s)
    # an expired chain is fixed by a current bundle, not by pointing the client at the same old one
    update = _UPDATE if why is _REASONS[0][1] else ""
    yield Hit(message=f"{'conda says TLS failed, most likely' if hedged else 'a TLS certificate did not verify'}"
                      f"{f' (for {host})' if host else ''}: {why} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=f"{_CHECK}\n{update}{_FIX[client]}\n{_BUNDLE_NOTE}", evidence=told_evidence(s),
              severity="warning" if hedged else None)


def _missing_bundles(f: FactView) -> Iterator[Hit]:
    """Live: a CA variable of the job's environment naming a file or directory that is not there
    (checks/named_paths.py); the clients that read it find no CA to verify with."""
    for b in f.get("named_paths.ca_bundles") or []:
        if b.get("exists") is False:
            yield Hit(message=f"{b['var']}={b['path']} names a CA bundle that does not exist on this node: the TLS clients "
                              f"that read {b['var']} cannot verify any server with it",
                      fix=(f"ls -l {b['path']}; ls -l {_BUNDLE}   # the path set, and the system bundle\n"
                           f"export {b['var']}={_BUNDLE}   # or the site CA bundle's real path; unset {b['var']} to use the "
                           "client's default"),
                      evidence={"named_paths.ca_bundles": b}, severity="warning")


MIRROR = "pip-index-mirror-unusable"
# Public indexes whose refusals other rules answer: PyPI itself (no-outbound-network, TLS), PyTorch's
# and NVIDIA's wheel indexes (a 404 there is a CUDA tag or release they do not build: torch-wheel-unavailable).
_PUBLIC = re.compile(r"(?:^|\.)(?:pypi\.org|pythonhosted\.org|pypi\.python\.org|pytorch\.org|pypi\.nvidia\.com|ngc\.nvidia\.com)$")
_HOST = re.compile(r"^[a-z][a-z0-9+.-]{0,15}://(?:[^@/\s]{1,200}@)?(?P<host>[^/:\s]{1,253})", re.I)
_HTTP_STATUS = re.compile(r"\b(?P<code>40[134]|5\d\d) (?:Client|Server) Error\b")


def _host(url: str) -> str:
    m = _HOST.match(str(url or ""))
    return m.group("host").lower() if m else ""


def _mirror_refusal(f: FactView) -> "dict | None":
    """pip's "Could not fetch URL" or its HTTP error naming a status, on an index the paste says pip
    searched (Looking in indexes) that is not a public one."""
    symptoms = list(f.get("ticket.symptoms") or [])
    looking = next((s for s in symptoms if s.get("id") == "pip:looking-in-indexes"), None)
    indexes = {_host(u.strip()) for u in str((looking or {}).get("urls") or "").split(",")} - {""}
    mirrors = {h for h in indexes if not _PUBLIC.search(h)}
    for s in symptoms:
        if s.get("id") not in ("pip:fetch-url-failed", "pip:http-client-error", "pip:http-server-error"):
            continue
        status = _HTTP_STATUS.search(str(s.get("text", "")))
        if status and _host(s.get("url")) in mirrors:
            return dict(s, host=_host(s.get("url")), code=status.group("code"))
    return None


_MIRROR_WHY = {
    "pip:untrusted-host-ignored": "pip skipped the index {host}: it is a plain http:// URL and not a --trusted-host",
    "pip:skipping-page-content-type": "the index {host} answered with something that is not a package index (Content-Type "
                                      "{ctype}: a login or proxy page, a wrong URL)",
}
_MIRROR_CODE = {"401": "asks for credentials pip was not given", "403": "refuses this client (credentials, a blocked address)",
                "404": "has no such project or path (a mirror that does not carry it, or a wrong index URL)"}


@rule("NET024", MIRROR, "error", "the package index pip is configured to use cannot be used", impact=6)
def pip_index_mirror_unusable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted pip log, the index pip was pointed at (--index-url, PIP_INDEX_URL, pip.conf,
        a site mirror) being unusable: "The repository located at <host> is not a trusted or
        secure host and is being ignored" (a plain http:// mirror), "Skipping page <url> because
        the GET request got Content-Type: ..." (not an index), and "Could not fetch URL" or
        pip's HTTP error with 401, 403, 404 or 5xx from a mirror named in "Looking in indexes"
        (not PyPI, PyTorch's or NVIDIA's index, whose refusals other rules answer). TLS and
        name-resolution failures are tls-certificate-verify-failed's and no-outbound-network's.

    Why it matters:
        pip then reads no release at all and ends in "Could not find a version that satisfies
        the requirement ... (from versions: none)", which reads as a package that does not
        exist; the fault is the index configuration, often a pip.conf or PIP_INDEX_URL set by a
        site, an image or an old tutorial.

    How to fix:
        Find where the index is set (pip config debug, PIP_INDEX_URL), use its https:// URL, or
        --trusted-host for a site's plain-http mirror, or the public index for this install.

    References:
        - https://github.com/pypa/pip/blob/main/src/pip/_internal/network/session.py (is_secure_origin)
        - https://github.com/pypa/pip/blob/main/src/pip/_internal/index/collector.py (_get_index_content)
        - https://pip.pypa.io/en/stable/topics/configuration/
        - https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-trusted-host
    """
    # pip 7.1's "located at None": a local path it took for a URL (pypa/pip#3192), not an index
    told = [t for t in catalogued(f, MIRROR) if t.get("host") != "None"]
    s = told[0] if told else _mirror_refusal(f)
    if not s:
        return
    host = s.get("host") or _host(s.get("url")) or "the index"
    why = (_MIRROR_WHY[s["id"]].format(host=host, ctype=s.get("ctype") or "?") if s.get("id") in _MIRROR_WHY
           else f"the index {host} answered HTTP {s.get('code')}: it {_MIRROR_CODE.get(str(s.get('code')), 'failed on the server side')}")
    refused = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "pip:no-version-satisfies"), None)
    if refused and not [v for v in str(refused.get("versions") or "").split(",") if v.strip() and v.strip() != "none"]:
        why += ", and pip found no version at all"
    package = (re.match(r"\s*([A-Za-z0-9_.-]{1,80})", str((refused or {}).get("req") or "")) or [None, "PACKAGE"])[1]
    trusted = (f"\npip install --trusted-host {host} --index-url http://{host}/simple/ {package}   # only for a site mirror "
               "that has no https") if s.get("id") == "pip:untrusted-host-ignored" else ""
    yield Hit(message=f"{why} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=("pip config debug; env | grep -i '^PIP_'   # where the index is set: pip.conf files, PIP_INDEX_URL\n"
                   f"pip install --index-url https://{host}/simple/ {package}   # the mirror over https, where it serves it"
                   f"{trusted}\n"
                   f"pip install --index-url https://pypi.org/simple {package}   # or the public index, where this node may reach it"),
              evidence=told_evidence(s))
