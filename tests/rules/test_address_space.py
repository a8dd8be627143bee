"""Set R's class of issue 24: the JVM under an address-space limit (virtual-memory-ulimit-too-low) and
the session's RLIMIT_AS as the limits check reads it, through the real catalogue and the paste path.
Pastes are set R's and the public ones in tests/fixtures/pastes/SOURCES.md; near misses from the
same emitters stay silent."""

from __future__ import annotations


from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts, told_facts



def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- the JVM under ulimit -v --------------------------------------------------------------------

def test_metaspace_on_a_login_node_is_a_warning_naming_the_limit_and_a_job(tmp_path):
    (f,) = fired("virtual-memory-ulimit-too-low", _r(tmp_path, "cbio-cluster-183-login-node-ulimit-v-java-heap"))
    assert f.severity == "warning" and "Could not allocate metaspace: 1073741824 bytes" in f.message
    assert "(1024 MiB)" in f.message and "ulimit -v" in f.fix and "qsub -I" in f.fix


def test_metaspace_with_the_limit_shown_is_an_error():
    (f,) = fired("virtual-memory-ulimit-too-low", recorded_paste_facts("haikuports-3549-ulimit-v-metaspace.txt"))
    assert f.severity == "error" and "ulimit -S -v 819400" in f.message and "800 MiB" in f.message


def test_a_jvm_that_started_is_silent():
    # the second half of the same comment: the limit raised, java -version answers
    text = ("$ulimit -S -v unlimited\n$java -version\njava version \"1.8.0_161\"\n"
            "Java(TM) SE Runtime Environment (build 1.8.0_161-b12)\n")
    assert not fired("virtual-memory-ulimit-too-low", told_facts(text))



def test_the_probe_reads_rlimit_as_of_a_process_started_under_a_limit():
    # a real child process whose soft RLIMIT_AS is set before it starts (as a login node's ulimit -v is)
    import json
    import resource
    import subprocess
    import sys

    from hpcdoctor.checks.limits import _address_space

    limit = 3 * 1024 ** 3
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]

    def lowered():
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    code = "import json; from hpcdoctor.checks.limits import _rlimit_as; print(json.dumps(_rlimit_as()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=lowered, check=True).stdout
    rec = _address_space(json.loads(out))
    assert rec["soft"] == limit and rec["hard"] == (None if hard == resource.RLIM_INFINITY else hard)
    assert _address_space({"soft": "4G"}).__class__.__name__ == "Unknown"
