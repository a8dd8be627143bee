"""SYS052, NET044 and NET045 (rules/mpi_messages.py) on verbatim cuts of public threads
(tests/fixtures/pastes, SOURCES.md there): PMIx's and ORTE's socket-path refusals, Open MPI's and
PRRTE's undecompressible launch message, and PMIx's harmless no-compression warning."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def test_pmix_1_2_tmpdir_too_long_names_the_directory_and_its_length():
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts("poseidon-31-pmix-tmpdir-too-long.txt"))
    assert "line 1" in f.message and "109 bytes" in f.message and "/data/scratch2/fisched99" in f.message
    assert f.fix.startswith("export TMPDIR=/tmp") and "apptainer exec --env TMPDIR=/tmp" in f.fix


def test_orte_pmix_init_server_failure_says_may():
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts("ompi-1528-orterun-pmix-failed-tmpdir.txt"))
    assert "may not have fit" in f.message and "/var/folders/30" in f.message


def test_pmix_3_rendezvous_file_wording(tmp_path):
    # PMIx 3.2.5's help-pmix-server.txt [rnd-path-too-long] filled in (no public paste of it was found)
    text = ("--------------------------------------------------------------------------\n"
            "The PMIx server was unable to setup a rendezvous file due to your\n"
            "system's restriction for Unix's socket's path-length.\n\n"
            "   Temporary directory: /scratch/a/very/long/workflow/dir/openmpi-sessions-1000@node1_0/123\n"
            "   Rendezvous filename: /scratch/a/very/long/workflow/dir/openmpi-sessions-1000@node1_0/123/pmix-99\n\n"
            "Please try to set TMPDIR to something short (like /tmp) or change\n"
            "your computer's name to something shorter (see uname -n).\n")
    (f,) = fired("tmpdir-path-too-long-for-socket", paste_facts(tmp_path, text))
    assert "line 2" in f.message and "openmpi-sessions-1000@node1_0/123" in f.message


def test_not_fired_on_the_stale_rendezvous_point(tmp_path):
    # the neighbouring topic of help-pmix-server.txt [listener-failed-start] (its own text): a stale
    # named pipe from an earlier job, not the path's length
    text = ("The PMIx server was unable to setup a rendezvous point. This is\n"
            "usually due to a conflicting stale named pipe from a prior failed\n"
            "job, thus preventing the server from binding to its assigned socket.\n")
    g = paste_facts(tmp_path, text)
    assert any(s["id"] == "openmpi:pmix-server:listener-failed-start" for s in g["facts"]["ticket"]["symptoms"])
    assert not fired("tmpdir-path-too-long-for-socket", g)


def test_compression_mismatch_between_nodes():
    (f,) = fired("pmix-compression-mismatch-between-nodes",
                 recorded_paste_facts("ompi-11846-pmix-compression-mismatch.txt"))
    assert "line 3" in f.message and "zlib" in f.message
    assert "mpirun --prefix" in f.fix and "ldconfig -p | grep libz.so" in f.fix


def test_prrte_wording_of_the_compression_mismatch(tmp_path):
    # PRRTE v3.0.14's help-prte-runtime.txt [failed-to-uncompress] filled in (no public paste found)
    text = ("A compressed message was received that could not be decompressed. This\n"
            "is most likely due to a missing libz library on the receiving node:\n\n   node:  node2\n")
    (f,) = fired("pmix-compression-mismatch-between-nodes", paste_facts(tmp_path, text))
    assert "line 1" in f.message


def test_compression_library_warning_is_info_only():
    for name in ("openpmix-3351-pcompress-unavailable-warning.txt", "picongpu-3971-pcompress-unavailable-warning.txt"):
        g = recorded_paste_facts(name)
        (f,) = fired("pmix-compression-library-unavailable", g)
        assert f.severity == "info" and "harmless" in f.message
        assert f.fix.startswith("export PMIX_MCA_pcompress_base_silence_warning=1")
        assert not fired("pmix-compression-mismatch-between-nodes", g)


def test_compression_warning_not_fired_on_the_mismatch():
    assert not fired("pmix-compression-library-unavailable",
                     recorded_paste_facts("ompi-11846-pmix-compression-mismatch.txt"))


def test_ssh_controlpath_too_long_gets_ssh_fix(tmp_path):
    # OpenSSH V_10_5_P1 misc.c unix_listener's format filled in (no public paste kept)
    text = 'unix_listener: path "/home/user/.ssh/control-user@server.example.com:22.AbCdEfGhIjKlMnOp" too long for Unix domain socket\n'
    (f,) = fired("tmpdir-path-too-long-for-socket", paste_facts(tmp_path, text))
    assert f.message.startswith("ssh could not use its Unix-domain socket (line 1)")
    assert f.fix.startswith("ssh -o ControlPath=~/.ssh/cm-%C HOST true") and "TMPDIR" not in f.fix
