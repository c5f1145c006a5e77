"""`HybridToolIndex`'s per-query fusion (`ToolFusion`): the vector weight follows the query's
script and length, and a request of several sentences is also searched sentence by sentence, so
the tool its last sentence asks for is found beside the ones its longer first sentence names."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.embedders import E5_NAME
from toolweave.storage.retrieval.tool_index import TOOL_COLLECTION, HybridToolIndex, ToolFusion
from toolweave.tools import FunctionTool, ToolRegistry

from .test_search import catalog

REQUEST = (
    "Read the file notes.txt in my project folder and show me its contents, every line of the"
    " file. Then email the summary to my manager."
)


def hybrid_index(backend: str, tmp_path: Path, request: pytest.FixtureRequest, **kw: object):  # type: ignore[no-untyped-def]
    if backend == "sqlite":
        return HybridToolIndex(**kw)  # type: ignore[arg-type]
    from toolweave.storage.retrieval import IndexSettings, open_index

    settings = IndexSettings(
        dsn=request.getfixturevalue("postgres_dsn"),
        qdrant_path=str(tmp_path / f"qdrant_{uuid.uuid4().hex[:8]}"),
    )
    index = open_index(
        tmp_path / "unused.db", "auto", name=f"tools_{uuid.uuid4().hex[:8]}", settings=settings
    )
    return HybridToolIndex(index, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_each_sentence_of_a_request_finds_its_tool(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    found = {}
    for share in (0.0, ToolFusion().sentence_share):
        registry: ToolRegistry = catalog(tmp_path)
        index = hybrid_index(backend, tmp_path, request, fusion=ToolFusion(sentence_share=share))
        registry.search_index = index
        try:
            found[share] = await registry.search(REQUEST, k=3, explain=True)
        finally:
            await index.close()
    whole, by_sentence = found.values()
    assert "gmail_send_message" not in [m.name for m in whole]  # the whole request alone
    names = [m.name for m in by_sentence]
    assert "gmail_send_message" in names and "read_file" in names
    explain = by_sentence[0].explain
    assert explain is not None and explain["sentences"] == 2
    assert explain["weight"] == ToolFusion().long  # 14 distinct words or more: keywords lead


def test_the_weight_follows_the_query_s_script_and_length() -> None:
    fusion = ToolFusion()
    assert fusion.weight("mail a letter") == fusion.short
    assert fusion.weight(REQUEST) == fusion.long
    assert fusion.weight("给我的经理发一封邮件") == fusion.cjk
    # e5 reads Chinese, WordLlama does not: a Chinese query weighs e5's vectors more
    assert fusion.weight("给我的经理发一封邮件", E5_NAME) == fusion.cjk_by_embedder[E5_NAME] > 0.2
    assert fusion.weight("给我的经理发一封邮件", "wordllama:256") == fusion.cjk < 0.1
    assert fusion.weight("mail a letter", E5_NAME) == fusion.short
    assert fusion.sentences("mail a letter. OK.") == []  # "OK." is no sentence of its own
    assert fusion.sentences("Pay 3.5 dollars at www.example.com now") == []
    assert fusion.sentences("读取项目文件夹里的文件内容。然后把摘要发送给经理。") == [
        "读取项目文件夹里的文件内容。",
        "然后把摘要发送给经理。",
    ]
    many = " ".join(f"Step {i} needs a tool." for i in range(10))
    capped = ToolFusion(max_sentences=3).sentences(many)
    assert capped[:2] == ["Step 0 needs a tool.", "Step 1 needs a tool."]
    assert (
        len(capped) == 3
        and capped[2].startswith("Step 2")
        and capped[2].endswith("Step 9 needs a tool.")
    )


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"short": 1.5}, "ToolFusion.short"),
        ({"cjk": -0.1}, "ToolFusion.cjk"),
        ({"cjk_by_embedder": {E5_NAME: 2}}, "ToolFusion.cjk_by_embedder"),
        ({"sentence_share": -1}, "ToolFusion.sentence_share"),
        ({"long_terms": 0}, "ToolFusion.long_terms"),
        ({"max_sentences": 0}, "ToolFusion.max_sentences"),
    ],
)
def test_bad_settings_name_the_field(settings: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        ToolFusion(**settings)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="HybridToolIndex fusion"):
        HybridToolIndex(fusion=settings)  # type: ignore[arg-type]


def book_flight(city: str) -> str:
    """预订机票和酒店，支付订单后发送确认短信。

    Args:
        city: 目的地城市。
    """
    return "booked"


def flight_prices(city: str) -> str:
    """查询机票价格。

    Args:
        city: 城市。
    """
    return "prices"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_chinese_query_is_matched_by_its_characters(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """jieba cuts the query 订机票 into 订机票 and 机票, the description 预订机票 into 预订
    and 机票: the index's words share only 机票 with both tools, and the shorter description
    wins. The tool index reads a Chinese query as the registry's keyword index does (characters
    and character pairs), so 订 and 订机 find the booking tool."""
    registry = ToolRegistry()
    registry.register_all([FunctionTool(book_flight), FunctionTool(flight_prices)])
    index = hybrid_index(backend, tmp_path, request)
    registry.search_index = index
    try:
        for mode in ("keyword", "hybrid"):
            index.mode = mode  # type: ignore[assignment]
            found = await registry.search("帮我订机票", k=2, explain=True)
            assert [m.name for m in found] == ["book_flight", "flight_prices"], mode
        words = await index.index.search(
            "帮我订机票", limit=2, collection=TOOL_COLLECTION, mode="keyword"
        )
        assert [hit.record.id for hit in words] == ["flight_prices", "book_flight"]  # control
    finally:
        await index.close()
