"""An index whose OpenAI-compatible embedder is unreachable: it retries, stores and searches by
keywords with a warning, and embeds what it missed once the endpoint answers again (a real
HTTP endpoint on loopback, stopped and started on the same port)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.outage_embedder import HASH, NO_WAIT, Embeddings, Endpoint, endpoint, spec
from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval import EmbedRetry, Record

from .conftest import IndexFactory

__all__ = ["endpoint"]  # the fixture

RECORDS = [
    Record("tea", "the user drinks oolong tea every morning"),
    Record("bike", "the user rides a bicycle to work"),
    Record("cat", "用户养了一只橘猫"),
]


async def test_down_then_up_keyword_only_with_a_warning_then_vectors_made_up(
    make_index: IndexFactory, endpoint: Endpoint
) -> None:
    endpoint.down()
    index = make_index(spec(endpoint), embed_retry=NO_WAIT)
    await index.write(RECORDS)  # opens and writes although the embedder is unreachable
    assert await index.missing_vectors() == 3
    hits = await index.search("oolong tea", limit=3)
    assert [h.record.id for h in hits][:1] == ["tea"]
    assert hits.warning is not None and "keywords only" in hits.warning
    assert all(h.vector_score is None for h in hits)
    assert [h.record.id for h in await index.search("橘猫", limit=1)] == ["cat"]
    vector_only = await index.search("oolong tea", mode="vector", limit=3)
    assert list(vector_only) == [] and vector_only.warning is not None

    endpoint.up()
    hits = await index.search("oolong tea", limit=3)
    assert hits.warning is None
    assert await index.missing_vectors() == 0  # the first answer re-embedded the three
    vector_only = await index.search("bicycle to work", mode="vector", limit=1)
    assert [h.record.id for h in vector_only] == ["bike"] and vector_only.warning is None
    assert vector_only[0].vector_score == pytest.approx(
        float(HASH.embed(["bicycle to work"])[0] @ HASH.embed([RECORDS[1].text])[0]), abs=1e-5
    )


async def test_a_failed_try_is_retried_before_falling_back(
    make_index: IndexFactory, endpoint: Endpoint
) -> None:
    index = make_index(spec(endpoint), embed_retry=NO_WAIT)
    await index.write(RECORDS[:1])
    Embeddings.fail_next, Embeddings.calls = 1, 0
    await index.write(RECORDS[1:])  # the 503 is retried once, then the vectors are stored
    assert Embeddings.calls == 2 and await index.missing_vectors() == 0
    Embeddings.fail_next, Embeddings.calls = 2, 0
    await index.write([Record("dog", "a dog waits at the door")])
    assert Embeddings.calls == 2 and await index.missing_vectors() == 1


async def test_a_failed_embedder_is_left_alone_for_recheck_seconds(
    make_index: IndexFactory, endpoint: Endpoint
) -> None:
    index = make_index(
        spec(endpoint),
        embed_retry=EmbedRetry(attempts=1, backoff=0.0, recheck=3600.0),
    )
    await index.write(RECORDS)
    Embeddings.fail_next, Embeddings.calls = 1, 0
    first = await index.search("oolong tea")
    second = await index.search("oolong tea")
    assert Embeddings.calls == 1  # the second search did not ask the failed endpoint again
    assert first.warning is not None and second.warning == first.warning
    assert [h.record.id for h in second][:1] == ["tea"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("attempts", 0),
        ("attempts", 11),  # 0.5 s doubled ten times: a write would wait 17 minutes
        ("backoff", -1.0),
        ("backoff", float("inf")),  # time.sleep(inf) raised instead of falling back
        ("recheck", "soon"),
        ("recheck", float("nan")),
    ],
)
def test_retry_settings_are_checked(field: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"EmbedRetry.{field}"):
        EmbedRetry(**{field: value})
