"""The Jupyter server's own refusals to start (knowledge/messages/jupyter_server.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

_ROOT_FIX = (
    "docker run --user \"$(id -u):$(id -g)\" -p 8888:8888 IMAGE   # better: run the server as a user, not root\n"
    "jupyter notebook --allow-root   # or jupyter lab --allow-root: only where root in the container is intended")


@rule("ENV097", "jupyter-refuses-root", "error", "the Jupyter server refused to start as root", impact=4)
def jupyter_refuses_root(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the Jupyter server's "[C ... NotebookApp] Running as root is not
        recommended. Use --allow-root to bypass." (Notebook 5.0 to 6.5, JupyterLab's LabApp on
        it) or the same from Jupyter Server's ServerApp (JupyterLab 3+, Notebook 7).

    Why it matters:
        The server checks its effective user id at start and, as root without --allow-root,
        logs this critical line and exits with status 1: a container whose image starts Jupyter
        as its default root user stops as soon as it starts.

    How to fix:
        Run the server as an ordinary user (docker run --user, or a USER line in the image, as the
        Jupyter Docker Stacks do with jovyan); where root is intended, add --allow-root to the
        command (jupyter notebook --allow-root, jupyter lab --allow-root) or set
        c.ServerApp.allow_root = True (c.NotebookApp.allow_root before Notebook 7).

    References:
        - https://github.com/jupyter/notebook/blob/v6.5.7/notebook/notebookapp.py (NotebookApp.start, allow_root)
        - https://github.com/jupyter-server/jupyter_server/blob/v2.20.0/jupyter_server/serverapp.py (ServerApp.start)
        - https://github.com/ermaker/dockerfile-keras-jupyter/issues/4
    """
    told = catalogued(f, "jupyter-refuses-root")
    if not told:
        return
    s = told[0]
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the Jupyter server runs as root without --allow-root "
                      "and exited at once (status 1)",
              fix=_ROOT_FIX, evidence=told_evidence(s))
