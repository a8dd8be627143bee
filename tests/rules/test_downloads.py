"""tls-certificate-verify-failed on each TLS client's own words, recorded against a local HTTPS
server whose certificate the client's trust store does not hold, and on public pastes
(tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts



@pytest.mark.parametrize("paste, fix", [
    ("python-3.11-urllib-tls-verify-failed.txt", "export SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE="),
    ("pip-23.2-tls-verify-failed.txt", "pip config set global.cert /etc/ssl/certs/ca-certificates.crt"),
    ("curl-7.88-tls-verify-failed.txt", "export CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt"),
    ("git-2.39-gnutls-tls-verify-failed.txt", "git config --global http.sslCAInfo /etc/ssl/certs/ca-certificates.crt"),
    ("wget-1.21-tls-verify-failed.txt", "wget --ca-certificate=/etc/ssl/certs/ca-certificates.crt URL"),
    ("openjdk-17-tls-pkix-path-failed.txt", "-Djavax.net.ssl.trustStore="),
    ("xmrig-3158-wget-cannot-verify-certificate.txt", "wget --ca-certificate="),
    ("whisper-standalone-win-75-hub-behind-proxy-tls.txt", "REQUESTS_CA_BUNDLE="),
    ("marie-ai-99-requests-tls-wrapped.txt", "REQUESTS_CA_BUNDLE="),
    ("caffe2-models-4-ssl-certificate-verify-failed.txt", "SSL_CERT_FILE="),   # Python 2.7: no reason printed
])
def test_each_clients_refusal_is_answered_with_that_clients_bundle_setting(paste, fix):
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts(paste))
    assert f.severity == "error" and "did not verify" in f.message
    assert "the certificate's issuer is in no CA bundle this client reads" in f.message
    assert fix in f.fix and f.fix.startswith("openssl s_client -connect HOST:443")
    assert "verify=False" not in f.fix and "--no-check-certificate" not in f.fix and "sslVerify false" not in f.fix



def test_the_reason_chooses_the_explanation():
    # CPython's _ssl.c format with OpenSSL 3.0's reason texts and _ssl.c's own mismatch text
    expired = "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: certificate has expired (_ssl.c:1006)\n"
    (f,) = fired("tls-certificate-verify-failed", told_facts(expired))
    assert "this node's clock is wrong" in f.message and "date -u" in f.fix
    mismatch = ("urllib.error.URLError: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                "IP address mismatch, certificate is not valid for '127.0.0.1'. (_ssl.c:1006)>\n")
    (f,) = fired("tls-certificate-verify-failed", told_facts(mismatch))
    assert "names another host" in f.message


def test_a_ca_file_that_cannot_be_read_is_named_as_such():
    (f,) = fired("tls-certificate-verify-failed", told_facts("curl: (77) error setting certificate file: /nonexistent.pem\n"))
    assert "cannot be read" in f.message and "CURL_CA_BUNDLE" in f.fix


def test_go_clients_are_pointed_at_ssl_cert_file():
    text = ("FATAL:   While making image from oci registry: error fetching image to cache: failed to get checksum for "
            "docker://registry.example.org/app:1: pinging container registry registry.example.org: Get "
            "\"https://registry.example.org/v2/\": x509: certificate signed by unknown authority\n")
    (f,) = fired("tls-certificate-verify-failed", told_facts(text))
    assert "export SSL_CERT_FILE=" in f.fix and "/etc/docker/certs.d/REGISTRY/ca.crt" in f.fix


def test_condas_hedged_summary_is_a_warning():
    (f,) = fired("tls-certificate-verify-failed", told_facts("CondaSSLError: Encountered an SSL error. Most likely a certificate verification issue.\n"))
    assert f.severity == "warning" and "conda config --set ssl_verify" in f.fix


def test_silent_where_verification_was_skipped_or_nothing_failed():
    # wget --no-check-certificate: a WARNING, and the download completed
    assert not fired("tls-certificate-verify-failed", recorded_paste_facts("wget-1.21-no-check-certificate-warning.txt"))
    # pip behind a host it could not resolve: no TLS at all (no-outbound-network's)
    assert not fired("tls-certificate-verify-failed", recorded_paste_facts("pytorch-51723-pip-index-unreachable.txt"))
    assert not fired("tls-certificate-verify-failed", recorded_paste_facts("pytorch-9124-pip-untrusted-http-index.txt"))


@pytest.mark.parametrize("paste, host, package", [
    ("pytorch-9124-pip-untrusted-http-index.txt", "pypi.v2ex.com", "torch"),
    ("docker-devpi-6-pip-untrusted-http-mirror.txt", "192.168.99.100", "flask"),
])
def test_a_plain_http_mirror_pip_ignores(paste, host, package):
    (f,) = fired("pip-index-mirror-unusable", recorded_paste_facts(paste))
    assert f.severity == "error" and f"pip skipped the index {host}" in f.message and "found no version at all" in f.message
    assert f"pip install --index-url https://{host}/simple/ {package}" in f.fix
    assert f"--trusted-host {host} --index-url http://{host}/simple/ {package}" in f.fix and f.fix.startswith("pip config debug")
    assert not fired("torch-wheel-unavailable", recorded_paste_facts(paste))


def test_a_mirror_that_refuses_or_serves_no_index():
    # pip's formats (collector.py, network/utils.py) with a site mirror named in "Looking in indexes"
    text = ("Looking in indexes: https://mirror.example.org/simple\n"
            "Could not fetch URL https://mirror.example.org/simple/torch/: 403 Client Error: Forbidden for url: "
            "https://mirror.example.org/simple/torch/ - skipping\n")
    (f,) = fired("pip-index-mirror-unusable", told_facts(text))
    assert "answered HTTP 403" in f.message and "refuses this client" in f.message
    text = ("WARNING: Skipping page https://mirror.example.org/simple/torch/ because the GET request got Content-Type: "
            "application/json. The only supported Content-Types are application/vnd.pypi.simple.v1+json, "
            "application/vnd.pypi.simple.v1+html, and text/html\n")
    (f,) = fired("pip-index-mirror-unusable", told_facts(text))
    assert "not a package index (Content-Type application/json" in f.message


def test_silent_on_public_indexes_and_pips_file_url_bug():
    # PyTorch's own index refusing a CUDA tag is torch-wheel-unavailable's, not a mirror's
    text = ("Looking in indexes: https://download.pytorch.org/whl/cu110\n"
            "Could not fetch URL https://download.pytorch.org/whl/cu110/torch/: 404 Client Error: Not Found for url: "
            "https://download.pytorch.org/whl/cu110/torch/ - skipping\n")
    assert not fired("pip-index-mirror-unusable", told_facts(text))
    assert not fired("pip-index-mirror-unusable", recorded_paste_facts("pip-3192-untrusted-host-none-healthy.txt"))
    assert not fired("pip-index-mirror-unusable", recorded_paste_facts("pytorch-51723-pip-index-unreachable.txt"))
    assert not fired("pip-index-mirror-unusable", recorded_paste_facts("pip-23.2-tls-verify-failed.txt"))


def test_nodes_codes_are_the_same_refusal():
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts("node-20-tls-verify-failed.txt"))
    assert "export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" in f.fix and "npm config set cafile" in f.fix


@pytest.mark.parametrize("paste, host", [
    ("manylinux-1203-wget-expired-lets-encrypt-chain.txt", "ufpr.dl.sourceforge.net"),
    ("openssh-rpms-3-wget-en-quot-expired-chain.txt", "www.openssl.org"),   # en@quot's U+2019 apostrophe
])
def test_wgets_expired_chain_is_read_with_its_reason_and_answered_with_a_current_bundle(paste, host):
    # the reason is wget's next line ("  Issued certificate has expired."), src/openssl.c
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts(paste))
    assert f.severity == "error" and f"(for {host})" in f.message
    assert "outside its validity dates" in f.message and "DST Root CA X3" in f.message
    assert "sudo yum update ca-certificates" in f.fix and "--no-check-certificate" not in f.fix


# Go's validity error and rustls (uv) on real pastes (issue 24 audit; SOURCES.md)
def test_gos_expired_certificate_is_read_with_its_dates():
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts("go-xdcc-cli-4-x509-certificate-expired.txt"))
    assert "outside its validity dates" in f.message and "is after 2023-01-08T09:42:48Z" in f.message
    assert "SSL_CERT_FILE" in f.fix


def test_uvs_rustls_unknown_issuer_and_not_its_bad_signature():
    from rulekit import PASTES
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts("uv-10563-invalid-peer-certificate-unknown-issuer.txt"))
    assert "issuer is in no CA bundle" in f.message and "UV_NATIVE_TLS=1" in f.fix
    # uv 0.1.43's own bug (BadSignature), fixed in 0.1.44: not a trust store
    bad = (PASTES / "uv-home-assistant-120071-invalid-peer-certificate-bad-signature.txt").read_text()
    assert not fired("tls-certificate-verify-failed", told_facts(bad))


def test_apts_gnutls_refusal_names_its_reason():
    (f,) = fired("tls-certificate-verify-failed", recorded_paste_facts("apt-pgadmin4-7344-gnutls-issuer-unknown.txt"))
    assert "issuer is in no CA bundle" in f.message and "update-ca-certificates" in f.fix
