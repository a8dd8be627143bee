"""GNU ld's and glibc's messages in the user's language (knowledge/message_translations.toml, read by
triage/translated.py) reach the same catalogue entry and rule as their English: real pastes printed in
zh_CN and ru_RU, each beside the same lines in English (the msgid with the paste's arguments, typed
here), and the table's every translation read back into its msgid."""

from __future__ import annotations

import gettext
import re
import subprocess
from pathlib import Path

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, told_facts
from hpcdoctor import knowledge
from hpcdoctor.triage import translated
from hpcdoctor.triage.messages import find_messages


def _read(text: str):
    return [(s["id"], s.get("key"), tuple(s.get("rules") or ())) for s in find_messages(text)]


def test_chattts_zh_cn_link_without_a_64_bit_libcuda_fires_triton_libcuda_not_found():
    # set AA's chattts-213: ld's pair in zh_CN ("cannot find -lcuda", "skipping incompatible ... libcuda.so")
    [hit] = fired("triton-libcuda-not-found", recorded_paste_facts("chattts-213-ld-cannot-find-lcuda-zh-cn.txt"))
    assert "/lib/i386-linux-gnu/libcuda.so" in hit.message and "zh_CN" in hit.message
    assert "找不到 -lcuda" in hit.message   # the user's own line is quoted, not hpcdoctor's English reading
    assert "TRITON_LIBCUDA_PATH" in hit.fix and "ldconfig -p" in hit.fix
    for line in hit.fix.splitlines():
        assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line


def test_chattts_reads_as_its_english():
    zh = (PASTES / "chattts-213-ld-cannot-find-lcuda-zh-cn.txt").read_text(encoding="utf-8")
    en = (zh.replace("找不到 -lcuda: 没有那个文件或目录", "cannot find -lcuda: No such file or directory")
          .replace("当搜索用于 /lib/i386-linux-gnu/libcuda.so 时跳过不兼容的 -lcuda",
                   "skipping incompatible /lib/i386-linux-gnu/libcuda.so when searching for -lcuda"))
    assert en != zh and _read(zh) == _read(en)
    assert {"linker:ld-cannot-find-lcuda", "linker:ld-skipping-incompatible-libcuda"} <= {i for i, _, _ in _read(zh)}


def test_either_linker_line_alone_is_not_triton():
    # the English formats (ld/ldfile.c) filled in: a link line without the stubs folder, or a skipped file
    # after which the link may have found another, says nothing of Triton's cache
    assert not fired("triton-libcuda-not-found", told_facts("/usr/bin/ld: cannot find -lcuda: No such file or directory\n"))
    assert not fired("triton-libcuda-not-found", told_facts(
        "/usr/bin/ld: skipping incompatible /lib/i386-linux-gnu/libcuda.so when searching for -lcuda\n"))
    assert not fired("triton-libcuda-not-found", told_facts("/usr/bin/ld: cannot find -lcudart: No such file or directory\n"))
    # a real one: mxnet#2656's make, without the toolkit's stubs folder on the link line
    assert not fired("triton-libcuda-not-found", recorded_paste_facts("mxnet-2656-ld-cannot-find-lcuda.txt"))


def test_gost_engine_ru_cannot_find_reads_as_its_english():
    ru = (PASTES / "gost-engine-398-ld-cannot-find-ru.txt").read_text(encoding="utf-8")
    en = ru.replace("невозможно найти -llibprov: Нет такого файла или каталога",
                    "cannot find -llibprov: No such file or directory")
    assert en != ru and _read(ru) == _read(en)
    # the same entry as the English line: a library's development files (linker.toml, x-devel-headers)
    assert ("linker:ld-cannot-find-library", "ld-cannot-find-library", ("library-devel-headers-missing",)) in _read(ru)
    [s] = [s for s in find_messages(ru) if s.get("language")]
    assert s["language"] == "ru" and s["read_as"] == "/usr/bin/ld: cannot find -llibprov: No such file or directory"
    assert s["text"] == "/usr/bin/ld: невозможно найти -llibprov: Нет такого файла или каталога"


def test_ltp_zh_cn_dlerror_in_a_jvm_reads_as_its_english():
    zh = (PASTES / "ltp-170-jni-dlerror-zh-cn.txt").read_text(encoding="utf-8")
    en = zh.replace("无法打开共享对象文件: 没有那个文件或目录", "cannot open shared object file: No such file or directory")
    assert en != zh and _read(zh) == _read(en)
    assert any(i.startswith("libraries:") for i, _, _ in _read(zh))


def test_a_cuda_library_dlopened_in_japanese_feeds_the_same_rule():
    # glibc's dlerror() format ("<object>: " + _(errstring) + ": %m") with ja's po text (glibc-2.42 po/ja.po)
    # filled in by hand: no public paste recorded
    ja = "libcudart.so.11.0: 共有オブジェクトファイルを開けません: そのようなファイルやディレクトリはありません\n"
    en = "libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    assert _read(ja) == _read(en) and ("libraries:libcudart", "libcudart", ("cuda-runtime-library-missing",)) in _read(ja)


def test_the_loaders_own_fatal_line_is_english_in_every_locale():
    # "error while loading shared libraries" is printed by ld.so before any locale exists (elf/dl-catch.c):
    # the table must not hold it, nor the formatted texts dlerror() cannot translate
    ids = {m["msgid"] for m in knowledge.load("message_translations")["message"]}
    assert "error while loading shared libraries" not in ids
    assert not any("not found (required by" in i or "undefined symbol" in i for i in ids)


def test_every_translation_reads_back_into_its_msgid():
    # each line format, filled with distinct arguments in the translation's own order, reads back as the
    # msgid filled with the same arguments in the msgid's order; each constant text after ": " as its
    # msgid. All in one text, a line each: each line is read alone, and marked with its languages.
    fill = {"P": "/usr/bin/ld", "E": "No such file or directory"}
    args = ["-lcuda", "/lib/i386-linux-gnu/libcuda.so", "-lfoo"]

    def filled(fmt: str) -> str:
        n = 0

        def one(m: "re.Match[str]") -> str:
            nonlocal n
            n += 1
            pos = int(m.group("pos")) if m.group("pos") else n
            return fill.get(m.group("conv")[-1]) or args[pos - 2]
        return translated._CONV.sub(one, fmt).rstrip("\n").rstrip()

    said, meant, langs = [], [], []
    for r in translated.readings():
        if r.kind == "line":
            said.append(filled(r.msgstr))
            meant.append(filled(r.msgid))
        else:
            said.append(f"x.so: {r.msgstr.rstrip()}")
            meant.append(f"x.so: {r.msgid}")
        langs.append(r.lang)
    english, _, told = translated.to_english("\n".join(said))
    for n, (got, want, lang) in enumerate(zip(english.split("\n"), meant, langs), start=1):
        assert got == want, (lang, said[n - 1], got)
        assert told[n][0] == lang, (lang, told[n])


MO = {"ld": "/usr/share/locale/{lang}/LC_MESSAGES/ld.mo", "libc": "/usr/share/locale/{lang}/LC_MESSAGES/libc.mo"}


def test_the_table_holds_what_this_machines_catalogues_print():
    # Where this machine carries the compiled catalogues (Debian 12: binutils 2.40's ld.mo, glibc 2.36's
    # libc.mo), each translation they print for a msgid in the table is one the table holds.
    table = knowledge.load("message_translations")
    checked = 0
    catalogues = {}   # each .mo parsed once, not once a message (a few hundred of each)
    for msg in table["message"]:
        for path in Path("/usr/share/locale").glob(f"*/LC_MESSAGES/{msg['domain']}.mo"):
            lang = path.parts[-3]
            if path not in catalogues:
                with open(path, "rb") as fh:
                    catalogues[path] = gettext.GNUTranslations(fh)
            cat = catalogues[path]
            said = cat._catalog.get(msg["msgid"])
            if msg["domain"] == "ld" and not str(cat._info.get("project-id-version", "")).startswith("ld"):
                continue
            if not said or said == msg["msgid"]:
                continue
            held = msg["msgstr"].get(lang)
            assert said in ([held] if isinstance(held, str) else held or []), (msg["msgid"], lang, said)
            checked += 1
    if not checked:
        pytest.skip("no ld.mo or libc.mo on this machine")
