"""`HybridToolIndex`'s per-query fusion (`ToolFusion`): the vector weight follows the query's
script and length, and a request of several sentences is also searched sentence by sentence, so
the tool its last sentence asks for is found beside the ones its longer first sentence names."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.tool_index import HybridToolIndex, ToolFusion
from toolweave.tools import ToolRegistry

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
        ({"sentence_share": -1}, "ToolFusion.sentence_share"),
        ({"long_terms": 0}, "ToolFusion.long_terms"),
        ({"max_sentences": 0}, "ToolFusion.max_sentences"),
    ],
)
def test_bad_settings_name_the_field(settings: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        ToolFusion(**settings)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="HybridToolIndex fusion"):
        HybridToolIndex(fusion=settings)  # type: ignore[arg-type]
