"""no-display-on-node on verbatim public pastes and on outputs recorded on the development VM
(tests/fixtures/pastes, SOURCES.md there): the toolkit's own words decide, and which toolkit decides the fix."""

from __future__ import annotations

import pytest

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_opencvs_qt_over_ssh_names_no_display_and_offscreen_and_imshow():
    (f,) = fired("no-display-on-node", recorded_paste_facts("kanezaki-11-qt-xcb-no-display-ssh-cv2.txt"))
    # the empty name after "display" is unset, not the next line's "qt.qpa.plugin:" joined on by the window
    assert "found no display (DISPLAY unset or empty)" in f.message and "line 4" in f.message
    assert "OpenCV" in f.message and "Qt" in f.message
    assert f.fix.startswith("export QT_QPA_PLATFORM=offscreen")
    assert "cv2.imshow" in f.fix and "cv2.imwrite" in f.fix


def test_a_display_set_but_not_answering_is_named():
    (f,) = fired("no-display-on-node", recorded_paste_facts("therecipe-qt-1130-qt-xcb-display-127.txt"))
    assert "no X server at DISPLAY=127.0.0.1:0.0" in f.message


def test_matplotlibs_headless_refusal_is_answered_with_agg():
    (f,) = fired("no-display-on-node", recorded_paste_facts("matplotlib-3.10-tkagg-headless.txt"))
    assert "matplotlib found no usable display" in f.message and "line 15" in f.message
    assert f.fix.startswith("export MPLBACKEND=Agg")


@pytest.mark.parametrize("paste, display", [
    ("debian12-tk-no-display.txt", None),          # DISPLAY unset
    ("debian12-tk-display-refused.txt", ":99"),    # set, nothing answering
    ("debian12-xdpyinfo-no-display.txt", None),
])
def test_tk_and_x_clients_recorded_here(paste, display):
    (f,) = fired("no-display-on-node", recorded_paste_facts(paste))
    assert (f"DISPLAY={display}" in f.message) if display else ("DISPLAY unset or empty" in f.message)
    # no toolkit variable would help a plain Tk or X program: the fix says what would
    assert "xvfb-run -a" in f.fix and "MPLBACKEND" not in f.fix and "QT_QPA_PLATFORM" not in f.fix


def test_gtk_from_a_public_paste(tmp_path):
    # the line of https://github.com/nomeata/screen-message/issues/20, as the catalogue's example
    found = find_messages("(sm:1091950): Gtk-WARNING **: 13:30:46.306: cannot open display: ")
    assert [s["id"] for s in found] == ["display:gtk-cannot-open-display"]


def test_qts_plugin_lines_alone_are_read_but_not_a_diagnosis(tmp_path):
    # the same paste without Qt's display line: a plugin that fails to load for a missing library
    # (libxcb-cursor0 under Qt 6.5) ends in the same two lines
    text = (PASTES / "kanezaki-11-qt-xcb-no-display-ssh-cv2.txt").read_text().replace(
        "qt.qpa.xcb: could not connect to display \n", "")
    g = paste_facts(tmp_path, text)
    assert {"display:qt-platform-plugin-not-loaded", "display:qt-no-platform-plugin"} <= \
        {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("no-display-on-node", g)


def test_a_live_node_without_display_says_nothing_on_its_own():
    # a batch job has no DISPLAY: that is normal, not a finding
    assert not fired("no-display-on-node", facts("cpu-kvm-2core"))


def test_the_live_display_sharpens_a_pasted_message():
    g = facts("cpu-kvm-2core", **{"env.vars.DISPLAY": "localhost:10.0"})
    g["facts"]["ticket"] = recorded_paste_facts("debian12-tk-no-display.txt")["facts"]["ticket"]
    (f,) = fired("no-display-on-node", g)
    assert f.message.endswith("; here DISPLAY=localhost:10.0")


def test_silent_without_a_display_message():
    assert not fired("no-display-on-node", recorded_paste_facts("pytorch-35646-pip-and-conda-same-torch-healthy.txt"))
