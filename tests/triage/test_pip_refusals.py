"""pip's refusals to install torch, pasted by users (knowledge/messages/pip.toml, rules/torch_install.py):
each paste is a real public ticket, verbatim (fixtures/pastes/SOURCES.md), and the answer must be the
release this user's Python and platform can install, as a command that runs."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from fixcheck import fix_problem

PASTES = FIXTURES / "pastes"
SYMBOL = "torch-wheel-unavailable"


def finding(name: str):
    run = check_from(PASTES / f"{name}.txt")
    assert run["doc"] is not None, run["stderr"]
    hits = [f for f in run["doc"]["findings"] if f["symbol"] == SYMBOL]
    return hits[0] if hits else None


# (paste, what the fix must start with, words the message must hold)
CASES = [
    # cp311 wheel on Python 3.10.9 (the user's words), Windows: name the release, pip picks the cp310 file;
    # knowledge: torch 2.1 has Python 3.8-3.11 wheels and Windows cu121 builds
    ("taggui-34-cp311-wheel-on-python310-windows",
     "pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121",
     ["Python 3.10", "CPython 3.11 (cp311)"]),
    # "from versions: 2.2.0 ... 2.7.1": the listing of a Python whose first torch is 2.2, i.e. 3.12
    ("imagebind-139-torch1131-from-versions-python312", "pip install torch==2.2.2",
     ["Python 3.12's", "nearest listed release is 2.2.2"]),
    # 2.0.1 is on PyPI, its +cu118 build only on PyTorch's index, which has it for 2.0 (Linux x86_64)
    ("actalker-10-cu118-local-version-not-on-pypi",
     "pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118",
     ["only by PyTorch's own index"]),
    # a CUDA pin on an Apple M2: PyPI's plain 2.1.2 is listed for this Mac, no CUDA build exists for macOS
    ("onetrainer-169-cu118-pin-on-apple-m2", "pip install torch==2.1.2   # from PyPI, without +cu118",
     ["never macOS", "Python 3.10"]),
    # the find-links listing starts at 2.2.0 (Python 3.12) and holds 2.2.x+cu121: the nearest with cu121
    ("comic-translate-215-cu121-find-links-python312",
     "pip install torch==2.2.2 --index-url https://download.pytorch.org/whl/cu121",
     ["Python 3.12's"]),
    # Python 3.12 on the /whl/cpu index, torch 2.0.1 (cp38-cp311 only): the nearest release with cp312,
    # from the same index
    ("fastsdcpu-78-torch201-cpu-index-python312",
     'pip install "torch>=2.2,<2.3" --index-url https://download.pytorch.org/whl/cpu',
     ["Python 3.12", "torch 2.0 has wheels for Python 3.8-3.11 only", "python3.11 -m venv"]),
    # Python 3.7 on Windows: no torch 2.x at all, a new environment of a Python torch 2.2 has
    ("ballonstranslator-892-torch222-python37-win10", "py -3.8 -m venv torch-py38 && ",
     ["Python 3.7 has no torch wheels"]),
    # pip's own line names the interpreter (lib/python3.12/site-packages)
    ("chattts-2-torch21-from-versions-python312-site-packages", "pip install torch==2.2.2",
     ["Python 3.12 (pip's line"]),
    # Python 3.5 (pip's DEPRECATION line) and a release before the tables: look, do not guess
    ("pytorch-56917-cu102-pin-python35",
     "pip index versions torch --index-url https://download.pytorch.org/whl/cu102",
     ["Python 3.5", "1.8.1 is outside hpcdoctor's wheel tables (2.0-2.15)"]),
    # Python 3.8 (the title), which torch 2.0 has wheels for, and still "none": the interpreter's tags
    # (the thread's collect_env later shows PyPy); repeating the install would fail again
    ("pytorch-97865-torch200-none-pypy-python38-title", "python3 -m pip debug --verbose",
     ["3.8 among them", "PyPy or 32-bit"]),
    # a dependency's requirement ("(from torchlayers)") and a listing of 0.1.2 placeholders only:
    # nothing in it to install
    ("torchlayers-13-torch13-from-versions-placeholders", "python3 -m pip debug --verbose",
     ["pip lists only torch 0.1.2-0.1.2.post2", "older than 1.3.0"]),
    # torch 2.0 was never built for CUDA 12.1 (11.7, 11.8): its own newest CUDA, and where cu121 starts
    ("gooddrag-3-torch201-cu121-no-such-build",
     "pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118",
     ["no +cu121 build", "11.7, 11.8", "+cu121 builds are torch 2.1-2.5"]),
    # "from versions: 2.6.0" alone: Python 3.13's first torch; 2.3 stops at 3.12
    ("alltheworldaplay-8-torch230-only-260-listed-windows", "pip install torch==2.6.0",
     ["Python 3.13's", "python3.12 -m venv ~/torch-py312 && ~/torch-py312/bin/pip install torch==2.3.0"]),
    # a requirements file's line before the list ("(from -r requirements.txt (line 7))"): the list is read
    ("pytorch-vae-33-torch120-requirements-line-python385", "pip install torch==1.4.0",
     ["nearest listed release is 1.4.0"]),
    # a 32-bit Python on Windows: only the 0.1.2 placeholders are listed
    ("pytorch-41005-cpu-pin-32bit-python-windows", "python3 -m pip debug --verbose",
     ["0.1.2-0.1.2.post2", "32-bit"]),
    # builds from outside PyTorch's index (+git..., AMD's +rocm6.4.2.git...): no release to name, the tags to read
    ("rocm-lab-6-git-build-wheel-cp310", "python3 -m pip debug --verbose",
     ["+gite19229c, not one of PyTorch's builds", "cp310 on Linux x86_64"]),
    ("legacy-rocm-build-5461-amd-rocm642-wheel-cp312", "python3 -m pip debug --verbose",
     ["not one of PyTorch's builds", "cp312"]),
    ("deep-text-edit-38-cp37-wheel-unsupported",
     "pip index versions torch --index-url https://download.pytorch.org/whl/cu113",
     ["CPython 3.7 on Linux x86_64"]),
]


@pytest.mark.parametrize("name,fix,words", CASES, ids=[c[0] for c in CASES])
def test_pip_refusal_answered_with_what_this_python_can_install(name, fix, words):
    f = finding(name)
    assert f is not None, name
    assert f["fix"].startswith(fix), f["fix"]
    assert fix_problem(f["fix"], "bash") is None, f["fix"]
    for w in words:
        assert w in f["message"] + f["fix"], (w, f["message"])


def test_another_package_refused_is_not_a_torch_problem():
    # torchao's cp312 wheel on Python 3.11: pip's message, but not torch's wheel
    assert finding("cogvideoxwrapper-294-torchao-cp312-wheel-python311") is None


def test_the_fix_never_names_a_release_without_wheels_for_the_users_python(tmp_path):
    # the same refusal with the interpreter stated as 3.13 (pip's own site-packages line): 2.0-2.5 have
    # no cp313 wheels, 2.6 is the first that has
    text = (PASTES / "imagebind-139-torch1131-from-versions-python312.txt").read_text()
    paste = tmp_path / "py313.txt"
    paste.write_text(text.replace('"\nERROR: Could', '"\nRequirement already satisfied: numpy in '
                                  '/opt/venv/lib/python3.13/site-packages (2.1.0)\nERROR: Could', 1))
    run = check_from(paste)
    (f,) = [x for x in run["doc"]["findings"] if x["symbol"] == SYMBOL]
    assert "Python 3.13" in f["message"], f["message"]
    assert f["fix"].startswith('pip install "torch>=2.6,<2.7"'), f["fix"]


def test_torchs_refusal_is_found_after_another_packages(tmp_path):
    # two real refusals in one paste: torchao's (not torch's) first, then taggui#34's torch wheel
    other = (PASTES / "cogvideoxwrapper-294-torchao-cp312-wheel-python311.txt").read_text().splitlines()[0].lstrip("# ")
    paste = tmp_path / "two.txt"
    paste.write_text(other + "\n" + (PASTES / "taggui-34-cp311-wheel-on-python310-windows.txt").read_text())
    run = check_from(paste)
    (f,) = [x for x in run["doc"]["findings"] if x["symbol"] == SYMBOL]
    assert "torch-2.1.2+cu121-cp311-cp311-win_amd64.whl" in f["message"], f["message"]


def test_a_requires_python_refusal_names_the_newest_release_of_that_python(tmp_path):
    # No public paste of pip's "Package 'torch' requires a different Python" was found (searched
    # 2026-11-26): the line as pip 26.2.1's factory.py formats it, with torch 2.5's Requires-Python.
    paste = tmp_path / "requires.txt"
    paste.write_text("ERROR: Package 'torch' requires a different Python: 3.8.10 not in '>=3.9.0'\n")
    run = check_from(paste)
    (f,) = [x for x in run["doc"]["findings"] if x["symbol"] == SYMBOL]
    # cp38 wheels stop at 2.4 (2.5's release matrix starts at 3.9)
    assert f["fix"].startswith('pip install "torch>=2.4,<2.5"'), f["fix"]
    assert fix_problem(f["fix"], "bash") is None
