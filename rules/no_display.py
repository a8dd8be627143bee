"""A program that opens a window, or a connection to a display, on a machine without one: a batch
job, or ssh without X forwarding. Read from the toolkits' own messages (knowledge/messages/display.toml);
the node's DISPLAY and WAYLAND_DISPLAY only sharpen what a pasted message says."""

from __future__ import annotations

from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "no-display-on-node"
# The messages that print the display name they tried: printed empty, DISPLAY was unset or empty.
_NAMES_THE_DISPLAY = frozenset({"display:qt-xcb-could-not-connect", "display:tk-no-display-name",
                                "display:gtk-cannot-open-display", "display:x11-unable-to-open-display"})
_TOOLKIT = {"qt": "Qt", "tk": "Tk", "mpl": "matplotlib", "gtk": "GTK", "opencv": "OpenCV", "x11": "an X client"}


def _env(f: FactView, name: str) -> Optional[str]:
    """A variable of the environment hpcdoctor ran in; None when unset or not known (a paste)."""
    try:
        return f.env(name)
    except MissingFact:
        return None


def _known_env(f: FactView) -> bool:
    """Whether this node's own environment is known (a live run), not a paste's export lines."""
    if f.get("env.listed") is not None:
        return False
    try:
        f["env.vars"].get("DISPLAY")
    except MissingFact:
        return False
    return True


def _toolkit(sid: str) -> str:
    key = sid.split(":", 1)[-1]
    return next((k for k in ("qt", "tk", "mpl", "gtk", "opencv", "x11") if key.startswith(k)), "x11")


def _context(f: FactView) -> dict:
    """What the rest of the paste says about whose window it was: matplotlib in the traceback,
    OpenCV's bundled Qt (its plugin directory), OpenCV's GTK backend."""
    mpl, opencv = False, False
    for s in f.get("ticket.symptoms") or []:
        sid = str(s.get("id", ""))
        mpl = mpl or sid.startswith("display:mpl")
        opencv = opencv or sid.startswith("display:opencv") or "cv2" in str(s.get("directory", ""))
    return {"mpl": mpl, "opencv": opencv}


def _fix(kits: set, ctx: dict) -> str:
    lines: List[str] = []
    if ctx["mpl"] or "mpl" in kits:
        lines.append("export MPLBACKEND=Agg   # in the job script: matplotlib draws into files (savefig) "
                     "and needs no display; plt.show() then shows nothing")
    if "qt" in kits:
        lines.append("export QT_QPA_PLATFORM=offscreen   # Qt's platform plugin that renders without a display")
    if ctx["opencv"]:
        lines.append("# OpenCV: in a batch job drop cv2.imshow/cv2.waitKey and write frames with cv2.imwrite")
    if not lines:
        lines.append("# a batch job has no display: drop the call that opens a window (plt.show, cv2.imshow, "
                     "a GUI) or write the result to a file")
    lines.append("# a program that must open a window: run it under a virtual X server, installed on the node "
                 "(Debian's package xvfb): xvfb-run -a python your_script.py")
    return "\n".join(lines)


@rule("ENV028", SYMBOL, "error", "a program tried to open a window on a machine without a display", impact=6)
def no_display_on_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a toolkit's own words that it found no display: Qt's xcb plugin ("qt.qpa.xcb:
        could not connect to display", then "Could not load the Qt platform plugin \"xcb\" ... even though
        it was found" and "This application failed to start because no Qt platform plugin could be
        initialized"), Tk's "no display name and no $DISPLAY environment variable" and "couldn't
        connect to display", matplotlib's "Cannot load backend 'TkAgg' ... as 'headless' is currently
        running" and "Invalid DISPLAY variable", GTK's "cannot open display:", OpenCV's "Can't
        initialize GTK backend", and the X clients' "unable to open display" and "cannot connect to X
        server". Qt's plugin lines alone are not enough: a missing library of the plugin ends in the
        same lines. On a live node DISPLAY unset says nothing by itself (a batch job has none); it
        only sharpens a pasted message.

    Why it matters:
        A batch job, or an ssh session without X forwarding, has no X server to draw on. A script that
        calls plt.show(), cv2.imshow or builds a Qt or Tk window aborts there (Qt aborts the
        process), often after hours of computing, and the same script works on a desktop. A
        DISPLAY copied into a job from an ssh session points at a forwarded display that is gone.

    How to fix:
        Make the program draw without a display: MPLBACKEND=Agg for matplotlib (then savefig),
        QT_QPA_PLATFORM=offscreen for Qt, no cv2.imshow in batch (cv2.imwrite instead). A program that
        must open a window runs under a virtual X server: xvfb-run -a (package xvfb on the node).

    References:
        - https://matplotlib.org/stable/users/explain/figure/backends.html (MPLBACKEND, Agg)
        - https://doc.qt.io/qt-5/qguiapplication.html#QGuiApplication (-platform; QT_QPA_PLATFORM)
        - https://manpages.debian.org/bookworm/xvfb/xvfb-run.1.en.html (xvfb-run -a, --auto-servernum)
        - https://github.com/opencv/opencv/issues/18461 (cv2.imshow over ssh: drop imshow, or forward X)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    if catalogued(f, "ssh-client-xauth-missing"):
        return  # the ssh client forwarded X with a fake cookie: the display is there, the cookie is ssh-client-xauth-missing's
    ctx = _context(f)
    kits = {_toolkit(str(s.get("id", ""))) for s in told}
    if ctx["opencv"] and "qt" in kits:
        kits.add("opencv")
    s = told[0]
    display = next((str(t["display"]) for t in told if t.get("display")), None)
    who = " and ".join(sorted({_TOOLKIT[k] for k in kits}))
    if display:
        what = (f"{who} found no X server at DISPLAY={display}: a display forwarded by an ssh session that has "
                "ended, or copied into a job that cannot reach it")
    elif any(t.get("id") in _NAMES_THE_DISPLAY for t in told):
        what = f"{who} found no display (DISPLAY unset or empty): a batch job, or ssh without X forwarding"
    else:   # matplotlib's and OpenCV's words do not say which
        what = (f"{who} found no usable display (DISPLAY unset, or no X server answering at it): a batch job, or "
                "ssh without X forwarding")
    here = ""
    if _known_env(f):
        d, w = _env(f, "DISPLAY"), _env(f, "WAYLAND_DISPLAY")
        here = (f"; here DISPLAY={d}" if d else "; here DISPLAY is unset") + (f", WAYLAND_DISPLAY={w}" if w else "")
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"){here}",
              fix=_fix(kits, ctx), evidence=told_evidence(s))
