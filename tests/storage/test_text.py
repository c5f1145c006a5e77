"""Text utilities and embedders: one CJK class, both token estimates, lazy heavy imports."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toolweave.storage import EmbedderUnavailable, estimate_tokens, segment
from toolweave.storage.retrieval import load_embedder
from toolweave.storage.text import estimate_tokens as agent_estimate_tokens
from toolweave.storage.text import fts5_match, fts_text, like_pattern, query_terms, segmented


def test_token_estimates_count_each_cjk_character_once() -> None:
    assert agent_estimate_tokens is estimate_tokens
    assert estimate_tokens("") == 0
    assert estimate_tokens("机器学习") == 4
    assert estimate_tokens("machine learning is fun", other="words") == 4
    assert estimate_tokens("我喜欢 machine learning", other="words") == 5
    assert estimate_tokens('{"a":1,"b":2}') == 4  # JSON: characters / 4, not words


def test_segmentation_finds_chinese_words_and_their_parts() -> None:
    words = segment("我喜欢机器学习和Python编程")
    assert {"喜欢", "机器", "学习", "python", "编程"} <= set(words)
    assert {"清华", "大学", "清华大学"} <= set(segment("我来到北京清华大学"))
    assert segment("Hello, World!") == ["hello", "world"]
    assert query_terms("学习 学习 python") == ["学习", "python"]


def chinese_corpus() -> list[str]:
    """Every line of the repository's documents and tests (Chinese in both), plus mixed and
    edge-case texts."""
    root = Path(__file__).resolve().parents[2]
    sources = [root / "README.zh-CN.md", *sorted((root / "docs").glob("*.md"))]
    lines = [
        line
        for path in [*sources, *sorted((root / "tests").rglob("test_*.py"))]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [
        *lines,
        "我来到北京清华大学，在Python编程课上学习了2024年的机器学习",
        "张三在阿里巴巴工作；李四住在上海。乌龙茶和绿茶都很好喝",
        "snake_case e-mail a@b.com https://x.com/a_b?q=1 Ünïcödé İstanbul straße ½ ① ⅷ",
        "日本語のテキスト 한국어 텍스트 emoji 😀 混合",
    ]


def test_rjieba_cuts_chinese_exactly_as_jieba_does() -> None:
    """rjieba (jieba-rs) is the segmenter because it is ~13x faster; jieba, the reference
    implementation, is the oracle: the same search-mode words for every CJK run."""
    import logging

    import jieba
    import rjieba

    from toolweave.storage.text import _CJK_RUN, has_cjk

    jieba.setLogLevel(logging.WARNING)
    runs = [r for text in chinese_corpus() for r in _CJK_RUN.findall(text) if has_cjk(r)]
    assert len(runs) > 1000
    for run in runs:
        assert rjieba.cut_for_search(run, False) == list(jieba.cut_for_search(run, HMM=False)), run


def test_fts_text_indexes_exactly_the_words_segment_finds() -> None:
    """SQLite's words column gets the text with only its CJK runs segmented (unicode61 splits
    and folds the rest); its tokens must be those of the fully segmented text."""
    texts = chinese_corpus()
    conn = sqlite3.connect(":memory:")
    for table in ("full", "fast"):
        conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(w, tokenize='unicode61')")
        conn.execute(f"CREATE VIRTUAL TABLE {table}_v USING fts5vocab({table}, 'instance')")
    for rowid, text in enumerate(texts):
        conn.execute("INSERT INTO full (rowid, w) VALUES (?, ?)", (rowid, segmented(text)))
        conn.execute("INSERT INTO fast (rowid, w) VALUES (?, ?)", (rowid, fts_text(text)))

    def tokens(table: str) -> list[tuple[int, str]]:
        sql = f"SELECT doc, term FROM {table}_v ORDER BY doc, offset"
        return [(int(doc), term) for doc, term in conn.execute(sql)]

    assert tokens("fast") == tokens("full")
    assert fts_text("plain English text") == "plain English text"  # no work without CJK


def test_many_texts_are_cut_by_one_jieba_call_word_for_word_as_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jieba lets go of the GIL on each call (taking it back waits behind any busy thread), so
    a write's texts are cut in one call, with the same words each text gets alone."""
    import toolweave.storage.text as text_module

    texts = [*chinese_corpus(), "plain English", "Python编程2024年\n第二行", "", "　全角　"]
    alone = [  # each CJK run cut by a call of its own
        text_module._CJK_RUN.sub(lambda run: f" {' '.join(text_module._cut(run.group()))} ", t)
        for t in texts
    ]
    calls: list[str] = []
    real = text_module._jieba()

    class Counting:
        def cut_for_search(self, run: str, hmm: bool) -> list[str]:
            calls.append(run)
            words: list[str] = real.cut_for_search(run, hmm)
            return words

    monkeypatch.setattr(text_module, "_JIEBA", Counting())
    assert text_module.fts_texts(texts) == alone
    assert len(calls) == 1
    assert text_module.fts_texts(["no Chinese here", "nor here"]) == ["no Chinese here", "nor here"]
    assert len(calls) == 1


def test_query_syntax_is_quoted_not_interpreted() -> None:
    assert fts5_match(['a"b', "NEAR"]) == '"a""b" OR "NEAR"'
    assert fts5_match(["a", "b"], "AND") == '"a" AND "b"'
    assert like_pattern("50%_x\\") == "%50\\%\\_x\\\\%"


def test_embedders_give_unit_float32_rows_and_clear_errors() -> None:
    for spec in ("hash", "hash:32", "auto"):
        embedder = load_embedder(spec)
        vectors = embedder.embed(["机器学习", "machine learning"])
        assert vectors.shape == (2, embedder.dim) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert load_embedder("auto").dim == 256
    for bad, message in [
        ("nope", "unknown"),
        ("hash:x", "hash:<dim>"),
        ("openai-compat:http://x", "openai-compat:<url>#<model>"),
    ]:
        with pytest.raises(EmbedderUnavailable, match=message):
            load_embedder(bad)


def test_storage_and_memory_imports_load_no_heavy_dependency() -> None:
    heavy = ("numpy", "jieba", "rjieba", "wordllama", "psycopg", "qdrant_client", "networkx")
    code = (
        "import sys, toolweave, toolweave.storage, toolweave.memory\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_queries_leave_out_question_words_and_chinese_function_words() -> None:
    from toolweave.storage.text import query_terms

    assert query_terms("How many people did live in Paris?") == ["people", "live", "paris"]
    assert query_terms("谁发明了电话？") == ["发明", "电话"]
    assert query_terms("《战国无双3》是由哪两个公司合作开发的？") == [
        "战国",
        "无双",
        "两个",
        "公司",
        "合作",
        "开发",
        "合作开发",
    ]
    # A query of nothing but such words keeps them.
    assert query_terms("how many") == ["how", "many"]
    assert query_terms("什么") == ["什么"]


def test_unknown_chinese_names_are_their_characters_on_both_sides() -> None:
    """jieba's HMM would guess a word for characters its dictionary lacks, differently in a
    question and a passage; without it both sides cut the same characters alike."""
    from toolweave.storage.text import segment

    name = "谭咏麟"
    assert all(part in segment(f"{name}的歌") for part in segment(name))
    assert set(segment(name)) <= set(segment(f"歌手{name}在香港演出"))


def test_a_jieba_that_joins_lines_falls_back_to_a_call_per_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Were jieba ever to keep a line break inside a word, the runs of one call could not be
    told apart: each run is then cut alone, with the same result."""
    import toolweave.storage.text as text_module

    real = text_module._jieba()
    texts = ["清华大学在北京", "plain", "我们 and 你们"]
    expected = text_module.fts_texts(texts)

    class JoiningLines:
        def cut_for_search(self, run: str, hmm: bool) -> list[str]:
            if "\n" in run:
                return [run]  # one "word" holding every line break
            words: list[str] = real.cut_for_search(run, hmm)
            return words

    monkeypatch.setattr(text_module, "_JIEBA", JoiningLines())
    assert text_module.fts_texts(texts) == expected
