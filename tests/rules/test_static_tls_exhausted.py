"""static-tls-exhausted on real tickets: blind set E's JetPack 5 ticket (libOpen3D.so dlopen()ed by a
ROS 2 node), and torch's import hitting it (jetbot#507, jetcard#34): one finding for glibc's fact,
saying that torch's import is where it struck, and no torch-import-failed beside it."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def test_a_programs_dlopen_out_of_static_tls_preloads_the_library(tmp_path):
    name = "cmu-cabot-86-static-tls-block-open3d-jetpack5"
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("static-tls-exhausted", paste_facts(tmp_path, text, name + ".txt"))
    assert f.message.startswith("/usr/local/lib/libOpen3D.so cannot be loaded")
    assert f.fix.startswith("export LD_PRELOAD=/usr/local/lib/libOpen3D.so${LD_PRELOAD:+:$LD_PRELOAD}")
    assert "import torch" not in f.fix


def test_torchs_bundled_libgomp_out_of_static_tls_is_this_rules_not_torch_import_failed(tmp_path):
    name = "jetbot-507-two-libgomp-static-tls-jetson"
    facts = paste_facts(tmp_path, (FIXTURES / "pastes" / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")
    (f,) = fired("static-tls-exhausted", facts)
    torch_gomp = "/home/jetbot/.local/lib/python3.6/site-packages/torch/lib/libgomp-d22c30c5.so.1"
    assert f.message.startswith(f"import torch fails: {torch_gomp} cannot be loaded")
    assert f.fix.startswith(f"export LD_PRELOAD={torch_gomp}${{LD_PRELOAD:+:$LD_PRELOAD}}")
    assert not run_rule("torch-import-failed", facts)[0]


def test_the_users_word_import_torch_is_said_in_the_finding(tmp_path):
    # NVIDIA-AI-IOT/jetcard#34: the reporter's words and the error, importing torch in JupyterLab.
    text = ("But as soon as I try to import torch or torchvision in a Jupyter Notebook I get the following error:\n"
            "`OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block`\n")
    facts = paste_facts(tmp_path, text)
    (f,) = fired("static-tls-exhausted", facts)
    assert f.message.startswith("import torch fails: /usr/lib/aarch64-linux-gnu/libgomp.so.1 cannot be loaded")
    assert f.fix.startswith("export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libgomp.so.1${LD_PRELOAD:+:$LD_PRELOAD}")
    assert not run_rule("torch-import-failed", facts)[0]


def test_the_loaders_other_failures_are_not_static_tls():
    # Real pastes of the loader failing for another reason: a file not found (CPCL#4), a glibc
    # symbol version missing (node#46412).
    for name in ("cpcl-4-libcudart-10-0-cuda-path.txt", "node-46412-glibc-2-28-centos-7.txt"):
        assert not fired("static-tls-exhausted", recorded_paste_facts(name))
