"""The per-user cache of parsed catalogues: the same families as parsing the TOML, read again
when a catalogue changes, and never an error when the cache is unusable."""

import functools
import json
import os
import shutil

import pytest

from hpcdoctor.knowledge import message_cache, messages


@pytest.fixture(autouse=True)
def _own_caches(monkeypatch):
    # Fresh caches for these tests, and the module's own back afterwards: other tests of the same
    # worker hold families they loaded at import and compare them by identity.
    for name in ("families", "_family_at"):
        monkeypatch.setattr(messages, name, functools.lru_cache(maxsize=None)(getattr(messages, name).__wrapped__))


def _shape(fams):
    return [(f.id, len(f.forms), [(e.key, e.data) for e in f.entries]) for f in fams]


def _fresh(monkeypatch, tmp_path, folder=None):
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder or tmp_path / "cache"))
    messages.families.cache_clear()
    messages._family_at.cache_clear()


def test_cached_families_are_the_parsed_ones(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    first = messages.families()
    cache = tmp_path / "cache" / "hpcdoctor"
    written = list(cache.glob("messages-*.json"))
    assert len(written) == 1 and len(first) > 50
    parsed = [messages._family(p) for p in sorted(messages.MESSAGES_DIR.glob("*.toml"))]
    messages.families.cache_clear()
    again = messages.families()  # from the cache this time
    assert _shape(again) == _shape(first) == _shape(parsed)


def test_a_catalogue_changed_in_place_is_parsed_again(monkeypatch, tmp_path):
    folder = tmp_path / "knowledge"
    shutil.copytree(messages.MESSAGES_DIR, folder)
    monkeypatch.setattr(messages, "MESSAGES_DIR", folder)
    _fresh(monkeypatch, tmp_path)
    before = {f.id: len(f.entries) for f in messages.families()}
    toml = folder / "cuda.toml"
    toml.write_text(toml.read_text() + '\n[[entry]]\nkey = "cudaErrorTestOnly"\ncode = 99999\nmessage = "a test entry"\n')
    messages.families.cache_clear()
    after = {f.id: len(f.entries) for f in messages.families()}
    assert after["cuda"] == before["cuda"] + 1
    doc = json.loads(next((tmp_path / "cache" / "hpcdoctor").glob("messages-*.json")).read_text())
    assert doc["stamps"]["cuda.toml"] == [os.stat(toml).st_mtime_ns, os.stat(toml).st_size]


def test_an_unusable_cache_is_ignored(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    _fresh(monkeypatch, tmp_path, folder=blocker)
    assert len(messages.families()) > 50  # nothing could be written, and nothing failed
    bad = tmp_path / "bad"
    (bad / "hpcdoctor").mkdir(parents=True)
    from hpcdoctor import __version__
    (bad / "hpcdoctor" / f"messages-{__version__}.json").write_text('{"stamps": {"cuda.toml": [1, 2]}, "docs": [')
    _fresh(monkeypatch, tmp_path, folder=bad)
    assert _shape(messages.families()) == _shape([messages._family(p) for p in sorted(messages.MESSAGES_DIR.glob("*.toml"))])


def test_off_means_no_cache_file(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    monkeypatch.setenv("HPCDOCTOR_CACHE", "off")
    messages.families()
    assert not (tmp_path / "cache").exists()
    assert message_cache._folder() is None
