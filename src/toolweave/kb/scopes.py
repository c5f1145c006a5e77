"""Two knowledge-base scopes searched together: a session's own documents and the shared ones.

Seed 004's knowledge base has a library per conversation and a global one every conversation
searches, which only an admin manages. `ScopedKnowledgeBase` is that over one store: the shared
scope is the knowledge base's own namespace (what `[kb].paths` ingests), a session's scope is
the namespace `session:<id>` (a long or unusual id is hashed into it), and `search` looks in
both and returns one ranking, each hit marked with its scope. The `kb` tools built with
`scoped=True` add, list and remove in the caller's session and search both; writing the shared
scope (`scope="global"`) raises `ApprovalRequired(kind="admin")`, so only an admin approver can
let it happen.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolweave.kb.expand import Expansion
from toolweave.kb.knowledge_base import DEFAULT_SEARCH_K, KnowledgeBase
from toolweave.kb.results import KBHit
from toolweave.storage.retrieval.embed_guard import Hits
from toolweave.storage.retrieval.index import SearchMode

Scope = Literal["session", "global"]
SCOPES: tuple[Scope, ...] = ("session", "global")
SESSION_PREFIX = "session:"
DEFAULT_SESSION = "default"
"""The session scope of a call with no session (a stateless MCP request)."""
_PLAIN_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,48}$")


def session_namespace(session_id: str | None) -> str:
    """The namespace of `session_id`'s documents: `session:<id>`, the id hashed when it is
    long or holds characters a namespace cannot (always the same namespace for one id)."""
    sid = session_id or DEFAULT_SESSION
    if _PLAIN_ID.match(sid) is None:
        sid = hashlib.sha256(sid.encode("utf-8")).hexdigest()[:40]
    return SESSION_PREFIX + sid


@dataclass(frozen=True, slots=True)
class ScopedHit:
    """A hit and the scope it came from."""

    scope: Scope
    hit: KBHit

    def as_json(self) -> dict[str, object]:
        return {**self.hit.as_json(), "scope": self.scope}


class ScopedKnowledgeBase:
    """`kb` (its namespace: the shared, global scope) plus one scope per session."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.shared = kb

    def session(self, session_id: str | None) -> KnowledgeBase:
        """The knowledge base of `session_id`'s own documents (the same store)."""
        return self.shared.namespaced(session_namespace(session_id))

    def scope(self, scope: Scope, session_id: str | None) -> KnowledgeBase:
        return self.shared if scope == "global" else self.session(session_id)

    async def search(
        self,
        query: str,
        session_id: str | None,
        k: int = DEFAULT_SEARCH_K,
        mode: SearchMode = "hybrid",
        expand: Expansion | None = None,
        scopes: Sequence[Scope] = SCOPES,
    ) -> Hits[ScopedHit]:
        """The best `k` chunks of the session's documents and the shared ones, together: both
        are one index scored the same way, so hits are merged by score (the session's first on
        a tie). A scope searched by keywords only (its embedder failing) passes its warning."""
        found: list[tuple[float, int, ScopedHit]] = []
        warning = None
        for order, scope in enumerate(scopes):
            hits = await self.scope(scope, session_id).search(query, k=k, mode=mode, expand=expand)
            found.extend((hit.score, order, ScopedHit(scope, hit)) for hit in hits)
            warning = warning or hits.warning
        found.sort(key=lambda item: (-item[0], item[1]))
        return Hits((item[2] for item in found[:k]), warning)
