"""`MemoryTool`: one `memory` tool, one `action` parameter for every operation.

One tool instead of nine keeps the model's tool list short; the schema lists each action's
arguments, and a call with an argument its action does not take, or without one it needs, is a
recoverable `MemoryArgumentError` naming the field, so the model can fix it. `add` stamps the
call's session id into the metadata (so a memory can be traced to the conversation that made
it). Destructive `clear_all` is off unless listed in `actions`.

With `per_user=True` the caller's identity picks whose memory is used: the principal the MCP
transport authenticated (a token or an OAuth subject) when there is one, else the request's
`_meta["toolweave/user_id"]`. A `user_id` argument (or, under a principal, the `_meta` value)
can only narrow that identity, to itself or a scope below it (`alice/work`), never change it: a
model told by a document to read `bob`'s memory gets a refusal. With no identity at all (a
local caller that sent none) the argument picks the user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolweave.memory.errors import MemoryArgumentError
from toolweave.memory.manager import MemoryManager
from toolweave.memory.types import FORGET_STRATEGIES, MEMORY_TYPES, MODALITIES
from toolweave.tools.base import ToolAnnotations, action_annotations
from toolweave.tools.context import ToolContext
from toolweave.tools.permissions import Permission
from toolweave.tools.result import ToolResult, to_tool_result

ALL_ACTIONS = (
    "add",
    "search",
    "summary",
    "stats",
    "update",
    "remove",
    "forget",
    "consolidate",
    "clear_all",
)
DEFAULT_ACTIONS = tuple(a for a in ALL_ACTIONS if a != "clear_all")
DELETING_ACTIONS = frozenset({"remove", "forget", "clear_all"})
READING_ACTIONS = frozenset({"search", "summary", "stats"})
WRITING_ACTIONS = frozenset({"add", "update", "consolidate"})
NON_DELETING_ACTIONS = tuple(a for a in ALL_ACTIONS if a not in DELETING_ACTIONS)
"""What `Agent(memory=...)` offers: governance asks before delete/destructive tools, so an agent
remembers and recalls freely and deleting stays an explicit `MemoryTool(actions=...)` choice."""
USER_META_KEY = "toolweave/user_id"
_TYPES = {"type": "string", "enum": list(MEMORY_TYPES)}
_PROPERTIES: dict[str, dict[str, Any]] = {
    "content": {"type": "string", "description": "add/update: the memory's text"},
    "memory_type": {
        **_TYPES,
        "description": "add: which memory (default working); search: one type to search",
    },
    "importance": {"type": "number", "minimum": 0, "maximum": 1, "description": "add/update"},
    "metadata": {"type": "object", "description": "add/update: extra fields, e.g. event_type"},
    "timestamp": {"type": "string", "description": "add: when it happened (ISO 8601)"},
    "relations": {
        "type": "array",
        "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
        "description": "add (semantic): [subject, predicate, object] triples",
    },
    "file_path": {"type": "string", "description": "add (perceptual): the file described"},
    "modality": {"type": "string", "enum": list(MODALITIES), "description": "add/search"},
    "query": {"type": "string", "description": "search: what to recall"},
    "limit": {"type": "integer", "minimum": 1, "description": "search: how many (default 5)"},
    "memory_types": {"type": "array", "items": _TYPES, "description": "search: types to search"},
    "min_importance": {"type": "number", "minimum": 0, "maximum": 1, "description": "search"},
    "explain": {"type": "boolean", "description": "search: show why each memory was recalled"},
    "as_of": {"type": "string", "description": "search: facts valid at this ISO 8601 time"},
    "session_id": {
        "type": "string",
        "description": "search: only memories made in this conversation (session id)",
    },
    "since": {"type": "string", "description": "search: happened at or after (ISO 8601)"},
    "until": {"type": "string", "description": "search: happened at or before (ISO 8601)"},
    "memory_id": {"type": "string", "description": "update/remove: the memory's id"},
    "strategy": {"type": "string", "enum": list(FORGET_STRATEGIES), "description": "forget"},
    "threshold": {"type": "number", "minimum": 0, "maximum": 1, "description": "forget"},
    "max_age_days": {"type": "number", "minimum": 0, "description": "forget (time_based)"},
    "from_type": {**_TYPES, "description": "consolidate: source type (default working)"},
    "to_type": {**_TYPES, "description": "consolidate: target type (default episodic)"},
    "importance_threshold": {"type": "number", "minimum": 0, "maximum": 1},
}
_ACTION_ARGS: dict[str, tuple[set[str], set[str]]] = {  # action -> (required, optional)
    "add": (
        {"content"},
        {
            "memory_type",
            "importance",
            "metadata",
            "timestamp",
            "relations",
            "file_path",
            "modality",
        },
    ),
    "search": (
        {"query"},
        {
            "limit",
            "memory_types",
            "memory_type",
            "min_importance",
            "explain",
            "as_of",
            "modality",
            "session_id",
            "since",
            "until",
        },
    ),
    "summary": (set(), set()),
    "stats": (set(), set()),
    "update": ({"memory_id"}, {"content", "importance", "metadata"}),
    "remove": ({"memory_id"}, set()),
    "forget": (set(), {"strategy", "threshold", "max_age_days"}),
    "consolidate": (set(), {"from_type", "to_type", "importance_threshold"}),
    "clear_all": (set(), set()),
}


class MemoryTool:
    """The `memory` tool over a `MemoryManager` (see the module docstring)."""

    category = "memory"
    """The registry category (a read-only subagent keeps the session's memory tools)."""

    def __init__(
        self,
        manager: MemoryManager,
        *,
        actions: Iterable[str] = DEFAULT_ACTIONS,
        per_user: bool = False,
        name: str = "memory",
    ) -> None:
        self.manager = manager
        self.actions = tuple(a for a in ALL_ACTIONS if a in set(actions))
        unknown = set(actions) - set(ALL_ACTIONS)
        if unknown:
            raise MemoryArgumentError(
                f"actions: unknown {sorted(unknown)}; known: {list(ALL_ACTIONS)}"
            )
        self.per_user = per_user
        self._name = name
        self._users: dict[str, MemoryManager] = {manager.user_id: manager}
        properties = {"action": {"type": "string", "enum": list(self.actions)}}
        used = set().union(*(_ACTION_ARGS[a][0] | _ACTION_ARGS[a][1] for a in self.actions))
        properties.update({k: v for k, v in _PROPERTIES.items() if k in used})
        if per_user:
            properties["user_id"] = {"type": "string", "description": "whose memory to use"}
        self._parameters = {
            "type": "object",
            "properties": properties,
            "required": ["action"],
            "additionalProperties": False,
        }
        permissions = {Permission.READ, Permission.WRITE}
        if DELETING_ACTIONS & set(self.actions):
            permissions.add(Permission.DELETE)
        self._permissions = frozenset(permissions)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return (
            "Long-term memory: store and recall what matters across conversations. Actions: "
            + ", ".join(self.actions)
            + ". Types: working (short-lived scratch), episodic (events), semantic (facts and"
            " relations), perceptual (files: images, audio). Search ranks by relevance,"
            " recency and importance; identical content is stored once."
        )

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def permissions(self) -> frozenset[Permission]:
        return self._permissions

    @property
    def annotations(self) -> ToolAnnotations:
        # Destructive only when a deleting action is offered: without them nothing is lost.
        destructive = bool(DELETING_ACTIONS & set(self.actions))
        return ToolAnnotations(
            read_only=False, destructive=destructive, idempotent=False, open_world=False
        )

    def annotations_for(self, args: Mapping[str, Any]) -> ToolAnnotations:
        """Per action: search, summary and stats are read-only, add, update and consolidate
        write, remove, forget and clear_all destroy."""
        return action_annotations(
            self.annotations, args.get("action"), reads=READING_ACTIONS,
            writes=WRITING_ACTIONS, deletes=DELETING_ACTIONS,
        )  # fmt: skip

    @property
    def primary_arg(self) -> str | None:
        return "action"

    def _manager_for(self, args: dict[str, Any], ctx: ToolContext) -> MemoryManager:
        user = self._user_for(args.pop("user_id", None) if self.per_user else None, ctx)
        if user is None:
            return self.manager
        if user not in self._users:
            self._users[user] = self.manager.for_user(user)
        return self._users[user]

    def _user_for(self, asked: Any, ctx: ToolContext) -> str | None:
        """Whose memory a call uses: the caller's identity, narrowed by `asked` at most."""
        if not self.per_user:
            return None
        meta = getattr(ctx, "meta", None)
        declared = meta.get(USER_META_KEY) if isinstance(meta, dict) else None
        principal = getattr(ctx, "principal", None)
        if not (isinstance(principal, str) and principal):
            principal = None
        identity = principal or declared
        if principal is not None and asked is None:
            asked = declared  # under a principal, `_meta` is a request like the argument
        if identity is None or asked is None:
            return asked if identity is None else identity
        _check_narrows(asked, identity)
        return str(asked)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        args = dict(args)
        action = args.pop("action", None)
        if action not in self.actions:
            raise MemoryArgumentError(
                f"action must be one of {list(self.actions)}, got {action!r}", tool=self.name
            )
        manager = self._manager_for(args, ctx)
        required, optional = _ACTION_ARGS[action]
        missing = sorted(required - set(args))
        if missing:
            raise MemoryArgumentError(f"action {action!r} needs {missing}", tool=self.name)
        extra = sorted(set(args) - required - optional)
        if extra:
            raise MemoryArgumentError(
                f"action {action!r} does not take {extra}; it takes {sorted(required | optional)}",
                tool=self.name,
            )
        return to_tool_result(await self._run(manager, action, args, ctx))

    async def _run(
        self, m: MemoryManager, action: str, args: dict[str, Any], ctx: ToolContext
    ) -> Any:
        if action == "add":
            metadata = dict(args.pop("metadata", None) or {})
            if ctx.session_id is not None:
                metadata.setdefault("session_id", ctx.session_id)
            memory_id = await m.add(metadata=metadata, **args)
            return {"id": memory_id, "memory_type": args.get("memory_type", "working")}
        if action == "search":
            if "memory_type" in args:  # the seed's spelling: one type, as `add` takes it
                if "memory_types" in args:
                    raise MemoryArgumentError(
                        "search takes memory_type or memory_types, not both", tool=self.name
                    )
                args["memory_types"] = [args.pop("memory_type")]
            hits = await m.search(**args)
            return {
                **({"warning": hits.warning} if hits.warning else {}),
                "count": len(hits),
                "memories": [
                    {
                        **{k: v for k, v in h.item.to_dict().items() if k != "user_id"},
                        "score": round(h.score, 4),
                        **({"explanation": h.explanation} if h.explanation else {}),
                    }
                    for h in hits
                ],
            }
        if action == "summary":
            return await m.summary()
        if action == "stats":
            return await m.stats()
        if action == "update":
            item = await m.update(args.pop("memory_id"), **args)
            if item is None:
                raise MemoryArgumentError("memory_id: no such memory", tool=self.name)
            return item.to_dict()
        if action == "remove":
            return {"removed": await m.remove(args["memory_id"])}
        if action == "forget":
            return {"forgotten": await m.forget(**args)}
        if action == "consolidate":
            return {"consolidated": await m.consolidate(**args)}
        return {"cleared": await m.clear_all()}

    def __repr__(self) -> str:
        return f"MemoryTool({self.manager.user_id!r}, actions={list(self.actions)})"


def _check_narrows(asked: Any, identity: Any) -> None:
    """Refuse `asked` unless it is `identity` or a scope below it (`identity/...`)."""
    if asked == identity or (isinstance(asked, str) and asked.startswith(f"{identity}/")):
        return
    raise MemoryArgumentError(
        f"user_id: {asked!r} is not the caller's identity {identity!r} or a scope below it "
        f"({identity}/...); an argument can narrow whose memory is used, never change it"
    )
