"""static-tls-exhausted on blind set E's real JetPack 5 ticket (libOpen3D.so dlopen()ed by a ROS 2
node), and never where torch's own import hit it (torch-import-failed says that one)."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts


def test_a_programs_dlopen_out_of_static_tls_preloads_the_library(tmp_path):
    name = "cmu-cabot-86-static-tls-block-open3d-jetpack5"
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("static-tls-exhausted", paste_facts(tmp_path, text, name + ".txt"))
    assert f.message.startswith("/usr/local/lib/libOpen3D.so cannot be loaded")
    assert f.fix.startswith("export LD_PRELOAD=/usr/local/lib/libOpen3D.so${LD_PRELOAD:+:$LD_PRELOAD}")


def test_torchs_own_import_is_left_to_torch_import_failed(tmp_path):
    # NVIDIA-AI-IOT/jetcard#34: the reporter's words and the error, importing torch in JupyterLab.
    text = ("But as soon as I try to import torch or torchvision in a Jupyter Notebook I get the following error:\n"
            "`OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block`\n")
    facts = paste_facts(tmp_path, text)
    assert fired("torch-import-failed", facts) and not fired("static-tls-exhausted", facts)
