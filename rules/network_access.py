"""A download that cannot resolve or reach its server from the machine that ran it: the compute
node without outbound network, read from the download clients' own messages
(knowledge/messages/netclient.toml, pip.toml, conda.toml)."""

from __future__ import annotations

import ipaddress
import re
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "no-outbound-network"
# Errno values the clients print: the resolver's (glibc EAI_NONAME, EAI_AGAIN, EAI_NODATA) and the
# socket's (ENETUNREACH, ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH; knowledge/glibc.toml).
_RESOLVER_ERRNO = {"-2", "-3", "-5"}
_UNREACHABLE_ERRNO = _RESOLVER_ERRNO | {"101", "110", "111", "113"}
# messages that name a failed lookup in their own words (netclient.toml): Perl's "Bad hostname", Go's
# "no such host", Java's UnknownHostException, Node's getaddrinfo ENOTFOUND / EAI_AGAIN
_RESOLVER_IDS = frozenset({"netclient:perl-io-socket-bad-hostname", "netclient:go-lookup-no-such-host",
                           "netclient:java-unknown-host", "netclient:node-getaddrinfo",
                           "apt_fetch:temporary-failure-resolving"})
_RESOLVER_REASONS = frozenset({"Bad hostname", "nodename nor servname provided, or not known"})
_NAMES_A_HOST = re.compile(r"(?:https?://|host=')(?P<host>[A-Za-z0-9._-]{1,253})")
# the server each service's downloads go to, to check for when the message names none
_SERVICE_HOST = {"hf": "huggingface.co", "pip": "pypi.org", "conda": "conda.anaconda.org", "torch.hub": "download.pytorch.org"}
_HF_HOST = re.compile(r"(?:^|\.)(?:huggingface\.co|hf\.co)$")
_FIX = {
    "hf": ("# on a login node (it reaches huggingface.co), into the cache the job reads (HF_HOME on a shared file "
           "system; MODEL_ID: the model the job loads):\n"
           "HF_HOME=$HOME/hf python -c \"from huggingface_hub import snapshot_download; snapshot_download('MODEL_ID')\"\n"
           "# in the job script:\n"
           "export HF_HOME=$HOME/hf HF_HUB_OFFLINE=1"),
    "pip": ("# on a login node, in the same environment (it lives on the shared file system; PACKAGE: what the job "
            "installs):\n"
            "python -m pip install PACKAGE"),
    "conda": ("# on a login node, in the same environment (it lives on the shared file system; PACKAGE: what the job "
              "installs):\n"
              "conda install PACKAGE"),
    "git": "# on a login node, into a directory the job reads:\ngit clone URL",
    "torch.hub": ("# on a login node, into the cache the job reads (TORCH_HOME on a shared file system; URL: the "
                  "weights the job loads):\n"
                  "TORCH_HOME=$HOME/torch python -c \"import torch; torch.hub.load_state_dict_from_url('URL')\"\n"
                  "# in the job script:\nexport TORCH_HOME=$HOME/torch"),
}


def _host(s: dict) -> Optional[str]:
    host = s.get("host")
    if not host:
        m = _NAMES_A_HOST.search(str(s.get("endpoint") or s.get("url") or s.get("text") or ""))
        host = m.group("host") if m else None
    return str(host).lower().rstrip(".") if host else None


def _outside(host: Optional[str]) -> bool:
    """A name on the internet, not the cluster's own (a bare node name, a private address, .local)."""
    if not host:
        return True   # the Hub's and urllib's messages name no host: the download is the program's
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        return "." in host and not host.endswith((".local", ".internal", ".localdomain", ".cluster", ".lan"))


def _messages(f: FactView) -> List[dict]:
    # a reset or a broken pipe mid-download is the link's or the server's moment, not the node's lack of a route
    told = [s for s in catalogued(f, SYMBOL) if _outside(_host(s))
            and (not s.get("errno") or str(s["errno"]) in _UNREACHABLE_ERRNO)]
    for s in f.get("ticket.symptoms") or []:
        # conda's HTTP error is a network failure only with status 000; pip's index page only on a connection error
        if (s.get("id") == "conda:http-error" and "000 CONNECTION FAILED" in str(s.get("text", ""))) or \
                (s.get("id") == "pip:fetch-url-failed" and str(s.get("reason", "")).startswith("connection error")):
            if _outside(_host(s)):
                told.append(s)
    return sorted(told, key=lambda s: s.get("line") or 0)


# what the failed request asked for: a pip index page (/simple/torch/, /whl/cu121/torch/), a
# transformers model ("it looks like bert-base-uncased is not the path"), a git URL.
_INDEX_PAGE = re.compile(r"(?:': |url: )(?P<path>/(?:simple|whl(?:/[A-Za-z0-9._-]{1,40})?)/(?P<package>[A-Za-z0-9._-]{1,80})/)")
_MODEL = re.compile(r"it looks like (?P<model>[A-Za-z0-9._-]{1,96}(?:/[A-Za-z0-9._-]{1,96})?) is not the path"
                    r"|huggingface\.co/(?!api/|datasets/|spaces/)(?P<repo>[A-Za-z0-9._-]{1,96}/[A-Za-z0-9._-]{1,96})/resolve/")
_UNFILLED = re.compile(r"\b(?:MODEL_ID|PACKAGE|URL)\b")
_PLACEHOLDER_NOTE = re.compile(r"; (?P<name>MODEL_ID|PACKAGE|URL): [^)\n]{1,60}\)")
_GIT_URL = re.compile(r"unable to access '(?P<url>https?://[^'\s]{1,300})'")


def _filled(fix: str, told: List[dict], host: Optional[str]) -> str:
    text = "\n".join(f"{t.get('text', '')}\nurl: {t.get('path') or ''}" for t in told)
    page, model, git = _INDEX_PAGE.search(text), _MODEL.search(text), _GIT_URL.search(text)
    if page:
        index = page.group("path").rsplit("/", 2)[0]
        package = page.group("package")
        if index.startswith("/whl"):   # PyTorch's own index (or a mirror of it): the same build needs the same index
            package += f" --index-url https://{host}{index}" if host else f"   # with the job's --index-url (...{index})"
        fix = fix.replace("install PACKAGE", f"install {package}")
    if model:
        fix = fix.replace("snapshot_download('MODEL_ID')", f"snapshot_download('{model.group('model') or model.group('repo')}')")
    if git:
        fix = fix.replace("git clone URL", f"git clone {git.group('url')}")
    # a placeholder filled from the paste needs no note saying what to put there; a command the paste
    # cannot complete stays as a comment, so that what is printed to run runs
    fix = _PLACEHOLDER_NOTE.sub(lambda m: ")" if m.group("name") not in fix.split("\n", 1)[-1] else m.group(0), fix)
    return "\n".join(f"# {line}" if _UNFILLED.search(line) and not line.startswith("#") else line
                     for line in fix.split("\n"))


def _service(s: dict, host: Optional[str]) -> Optional[str]:
    """Which tool's cache or install the download was for; None when only the server is known."""
    sid, text = str(s.get("id", "")), str(s.get("text", ""))
    if sid.startswith(("netclient:hub-", "netclient:transformers")):
        return "hf"
    if s.get("family") in ("pip", "conda"):
        return s["family"]
    if "pip._vendor" in text:
        return "pip"
    if sid == "netclient:urlopen-error" or (host == "download.pytorch.org" and "/models/" in text):
        return "torch.hub"
    if "fatal: unable to access '" in text:
        return "git"
    if host and _HF_HOST.search(host) and sid.startswith("netclient:urllib3"):
        return "hf"   # requests under huggingface_hub
    return None


def _check(host: Optional[str]) -> str:
    name = host or "pypi.org"
    return (f"getent hosts {name} || echo 'no DNS for {name} here'   # run on the login node, then inside a job\n"
            "# fetch what the job needs on the login node into a shared directory it reads, or use the site's "
            "documented proxy for compute nodes (https_proxy)")


@rule("NET010", SYMBOL, "error", "a download cannot resolve or reach its server from this machine", impact=7)
def no_outbound_network(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a download client's own words that the server's name did not resolve or
        its address could not be reached: urllib3's "Failed to resolve 'host' ([Errno -2] Name or
        service not known)" and "Failed to establish a new connection: [Errno -3] Temporary
        failure in name resolution" (requests, pip, huggingface_hub), urllib's "<urlopen error
        [Errno -2] ...>" (torch.hub), libcurl's "Could not resolve host: github.com" (curl, git),
        Wget's "unable to resolve host address", pip 26's "Failed to connect to", conda's "HTTP 000
        CONNECTION FAILED", and the Hugging Face libraries' "We couldn't connect to
        'https://huggingface.co'" and "cannot find the requested files in the local cache"; Perl's
        IO::Socket::INET "Bad hostname 'host'" and LWP's "Can't connect to host:port (reason)",
        Node's "getaddrinfo ENOTFOUND host" and "EAI_AGAIN", Go's "lookup host: no such host" and
        Java's "java.net.UnknownHostException: host", apt's "Temporary failure resolving 'host'". A
        server on the cluster's own network (a bare node name, a private address) is not this rule's:
        that is the job's own rendezvous or a site service.

    Why it matters:
        Most clusters give compute nodes no route to the internet, and often no DNS for outside
        names: only login or data-transfer nodes reach it. A job that downloads a model, a
        dataset, weights or packages at start fails on the compute node however often it retries,
        and the same command works on the login node, which is what confuses users.

    How to fix:
        Fetch beforehand, on a login node, into a cache on a shared file system that the job reads,
        then run the job offline: Hugging Face with HF_HOME and HF_HUB_OFFLINE=1, torch.hub with
        TORCH_HOME, pip and conda installs done from the login node into the same environment. A
        site that provides an HTTP proxy for compute nodes documents it (https_proxy).

    References:
        - https://huggingface.co/docs/huggingface_hub/guides/manage-cache and https://huggingface.co/docs/transformers/installation#offline-mode
        - https://pytorch.org/docs/stable/hub.html (TORCH_HOME, load_state_dict_from_url)
        - https://pypi.org/project/urllib3/2.8.0/ and https://pypi.org/project/huggingface-hub/2.4.0/ (the messages; knowledge/messages/netclient.toml)
        - https://curl.se/docs/manpage.html (exit code 6: could not resolve host)
        - https://github.com/Perl/perl5/blob/blead/dist/IO/lib/IO/Socket/INET.pm (Bad hostname) and https://github.com/libwww-perl/libwww-perl/blob/master/lib/LWP/Protocol/http.pm (Can't connect to)
    """
    told = _messages(f)
    if not told:
        return
    done = [t for t in f.get("ticket.symptoms") or [] if t.get("id") == "pip:successfully-installed"]
    if done and all(t.get("family") == "pip" or "pip._vendor" in str(t.get("text", "")) for t in told) and \
            max(d.get("line") or 0 for d in done) > max(t.get("line") or 0 for t in told):
        return   # pip retried and then installed: a passing outage, not a node without a route
    s = next((t for t in told if _host(t)), told[0])
    host = _host(s)
    errno = str(s.get("errno") or "")
    resolve = (errno in _RESOLVER_ERRNO or "resolve" in str(s.get("id", "")) or s.get("id") in _RESOLVER_IDS
               or str(s.get("reason", "")) in _RESOLVER_REASONS or "name resolution" in str(s.get("reason", "")).lower())
    what = (f"could not resolve {host}" if resolve and host else f"could not reach {host}" if host else
            "could not resolve its server's name" if resolve else "could not reach its server")
    service = _service(s, host)
    fix = _FIX[service] if service else _check(host)
    hub = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "netclient:torch-hub-downloading"), None)
    if hub and service == "torch.hub":
        fix = fix.replace("('URL')", f"('{hub.get('url')}')")
    fix = _filled(fix, told, host)
    if _UNFILLED.search(fix):   # what the user can run now: whether this node resolves the server at all
        probe = host or _SERVICE_HOST.get(service or "", "pypi.org")
        fix = f"getent hosts {probe} || echo 'no DNS for {probe} here'\n{fix}"
    yield Hit(message=f"a download {what} from the machine that ran it (line {s.get('line')}: \"{told_text(s)}\"): "
                      "compute nodes on most clusters have no route or DNS to the internet; only login nodes do",
              fix=fix, evidence=told_evidence(s))
