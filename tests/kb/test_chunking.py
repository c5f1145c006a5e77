"""chunk_markdown: every rule of the issue, in Chinese and English."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolweave.kb import chunk_markdown
from toolweave.storage.text import estimate_tokens


def tokens(text: str) -> int:
    return estimate_tokens(text, other="words")


def words(n: int, word: str = "alpha") -> str:
    return " ".join([word] * n)


def test_reference_infinite_loop_case_terminates() -> None:
    # The reference chunker loops forever on a 60-token paragraph then a 750-token one at 800/100.
    text = f"{words(60)}\n\n{words(750, 'beta')}\n"
    chunks = chunk_markdown(text, 800, 100)
    assert [tokens(c.text) for c in chunks] == [60, 750]
    assert chunks[1].text == words(750, "beta")


def test_overlap_carries_trailing_paragraphs() -> None:
    paragraphs = [words(30, f"p{i}") for i in range(6)]
    chunks = chunk_markdown("\n\n".join(paragraphs), 100, 40)
    assert all(tokens(c.text) <= 100 for c in chunks)
    assert chunks[0].text.split("\n\n") == paragraphs[:3]
    assert chunks[1].text.split("\n\n")[0] == paragraphs[2]  # 30 tokens of overlap carried over


def test_heading_path_and_contextual_prefix() -> None:
    text = (
        "# 指南\n\n引言。\n\n## Install\n\nRun pip.\n\n### 中文 #\n\n安装完成。\n\n"
        "## Use\n\nCall it.\n"
    )
    chunks = chunk_markdown(text)
    assert [c.heading_path for c in chunks] == [
        "指南",
        "指南 > Install",
        "指南 > Install > 中文",
        "指南 > Use",
    ]
    assert chunks[2].contextual_text == "指南 > Install > 中文\n安装完成。"
    for c in chunks:
        assert text[c.start : c.end] == c.text  # spans are code points of the source


def test_fences_are_never_split_and_hash_lines_inside_are_not_headings() -> None:
    code = "```python\n# not a heading\n" + "\n".join(f"x{i} = {i}" for i in range(200)) + "\n```"
    text = f"# Code\n\nBefore.\n\n{code}\n\nAfter.\n"
    chunks = chunk_markdown(text, 50, 0)
    fenced = [c for c in chunks if c.text.startswith("```")]
    assert len(fenced) == 1 and fenced[0].text == code
    assert tokens(fenced[0].text) > 50  # the only chunk allowed over the budget
    assert {c.heading_path for c in chunks} == {"Code"}
    tilde = chunk_markdown("~~~\n# inside\n~~~\n\n# Real\n\ntext\n")
    assert [c.heading_path for c in tilde] == [None, "Real"]


def test_unclosed_fence_runs_to_the_end() -> None:
    chunks = chunk_markdown("intro\n\n```\n# still code\nmore\n")
    assert [c.heading_path for c in chunks] == [None]
    assert "# still code" in chunks[0].text


def test_small_table_stays_whole() -> None:
    table = "| name | 城市 |\n|---|---|\n| Ann | 北京 |\n| Bob | 上海 |"
    chunks = chunk_markdown(f"# T\n\n{table}\n\nafter\n", 800, 100)
    assert chunks[0].text.startswith(table)


def test_large_table_splits_by_rows_with_header_repeated() -> None:
    header = "| id | description |\n| --- | --- |"
    rows = [f"| {i} | row number {i} 第{i}行 |" for i in range(60)]
    chunks = chunk_markdown(header + "\n" + "\n".join(rows), 60, 10)
    assert len(chunks) > 1
    seen: list[str] = []
    for c in chunks:
        lines = c.text.split("\n")
        assert lines[:2] == header.split("\n")
        assert tokens(c.text) <= 60
        seen.extend(lines[2:])
    assert seen == rows  # every row exactly once, in order (tables carry no overlap)


def test_long_paragraph_splits_on_cjk_and_western_sentences() -> None:
    sentence_zh = "检索增强生成把文档切成小块。"
    sentence_en = "Each chunk is embedded once!"
    paragraph = (sentence_zh * 10) + " " + " ".join([sentence_en] * 10) + "最后一句？"
    chunks = chunk_markdown(paragraph, 40, 0)
    assert all(tokens(c.text) <= 40 for c in chunks)
    joined = "".join(c.text for c in chunks)
    assert joined.replace(" ", "") == paragraph.replace(" ", "")
    assert chunks[0].text.endswith("。")  # cut at a sentence end, not mid-sentence
    assert any(c.text.endswith("!") for c in chunks)


def test_sentence_longer_than_budget_splits_by_tokens() -> None:
    zh = "字" * 95  # one 95-character sentence, no terminator: split by characters
    chunks = chunk_markdown(zh, 30, 0)
    assert [len(c.text) for c in chunks] == [30, 30, 30, 5]
    en = words(70, "token")
    assert [tokens(c.text) for c in chunk_markdown(en, 30, 0)] == [30, 30, 10]


def test_positions_count_code_points_not_bytes() -> None:
    text = "# 标题\n\n😀 表情与中文。\n\n第二段。\n"
    chunks = chunk_markdown(text, 4, 0)
    for c in chunks:
        assert text[c.start : c.end] == c.text
    assert chunks[0].start == text.index("😀")


def test_char_unit_is_the_kb_add_default_shape() -> None:
    text = "\n\n".join("段落" * 100 + str(i) for i in range(5))
    chunks = chunk_markdown(text, 600, 60, unit="chars")
    assert all(len(c.text) <= 600 for c in chunks)
    assert len(chunks) >= 2


def test_bad_sizes_name_the_field() -> None:
    with pytest.raises(ValueError, match="chunk_tokens"):
        chunk_markdown("x", 0, 0)
    with pytest.raises(ValueError, match="overlap_tokens"):
        chunk_markdown("x", 10, 10)
    with pytest.raises(ValueError, match="unit"):
        chunk_markdown("x", 10, 1, unit="bytes")  # type: ignore[arg-type]


def test_empty_and_blank_documents() -> None:
    assert chunk_markdown("") == []
    assert chunk_markdown("\n\n  \n") == []
    assert [c.heading_path for c in chunk_markdown("# Only a heading\n")] == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["# H", "## 小节", "```", "| a | b |", "|---|---|", "", "word " * 40, "中文。" * 30]
        ),
        max_size=40,
    ),
    st.integers(min_value=5, max_value=120),
    st.integers(min_value=0, max_value=4),
)
def test_always_terminates_within_budget(
    lines: list[str], budget: int, overlap_fifths: int
) -> None:
    text = "\n".join(lines)
    overlap = budget * overlap_fifths // 5
    chunks = chunk_markdown(text, budget, overlap)
    in_fence = "```" in text
    for c in chunks:
        assert 0 <= c.start < c.end <= len(text)
        if not in_fence:
            assert tokens(c.text) <= budget


def test_setext_headings_open_sections_like_atx_ones() -> None:
    text = "指南\n====\n\n简介。\n\nInstall\n-------\nRun the installer.\n\n- a list item\n---\n"
    chunks = chunk_markdown(text, 800, 0)
    paths = [c.heading_path for c in chunks]
    assert paths == ["指南", "指南 > Install"]
    assert chunks[0].text == "简介。"
    assert chunks[1].text.startswith("Run the installer.") and "- a list item" in chunks[1].text
