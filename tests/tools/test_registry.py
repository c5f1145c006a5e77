"""`ToolRegistry`: contents, definitions, stats, invoke (errors never escape), permission checks
before execution, and session overlays. Concurrency lives in test_tools_registry_concurrency."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolweave.tools import (
    ExecutionFailed,
    InvalidArguments,
    Permission,
    PermissionDenied,
    PermissionPolicy,
    ToolAnnotations,
    ToolContext,
    ToolDef,
    ToolError,
    ToolNotFound,
    ToolRegistry,
    ToolResult,
    ToolTimeout,
    tool,
)


@tool(tags=["math"], category="calc")
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool(tags=["math", "text"], category="calc")
async def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()


@tool(category="io")
def fail(reason: str) -> None:
    """Always fails."""
    raise RuntimeError(reason)


def make_registry(*tools: Any, policy: PermissionPolicy | None = None) -> ToolRegistry:
    registry = ToolRegistry(policy)
    registry.register_all(tools or (add, shout, fail))
    return registry


def test_contents_and_lookup() -> None:
    registry = make_registry()
    assert registry.names() == ["add", "fail", "shout"]
    assert registry.get("add") is add and registry.get("nope") is None
    assert "add" in registry and "nope" not in registry and len(registry) == 3
    assert registry.find_by_tag("math") == [add, shout]
    assert registry.find_by_tag("text") == [shout]
    assert registry.find_by_category("calc") == [add, shout]
    assert registry.find_by_category("none") == []
    assert registry.unregister("fail") is fail
    assert registry.names() == ["add", "shout"]
    with pytest.raises(ToolNotFound):
        registry.unregister("fail")


def test_register_rejects_duplicates_and_bad_names_with_tool_error() -> None:
    registry = make_registry()
    with pytest.raises(ToolError, match="already registered"):
        registry.register(add)

    @tool(name="has space")
    def bad() -> None:
        """Bad name."""

    with pytest.raises(ToolError, match="1-64 characters"):
        registry.register(bad)

    def plain(x: int) -> int:
        return x

    with pytest.raises(TypeError, match=r"turn a function into one with @tool"):
        registry.register(plain)  # type: ignore[arg-type]


def test_register_all_is_all_or_nothing() -> None:
    @tool(name="add")
    def other_add() -> None:
        """Clashes with `add`."""

    registry = make_registry(add)
    with pytest.raises(ToolError, match="'add': a tool with that name is already registered"):
        registry.register_all([shout, other_add])
    with pytest.raises(ToolError, match="'shout': it appears twice in this batch"):
        registry.register_all([shout, fail, shout])
    assert registry.names() == ["add"]  # nothing half-registered
    with pytest.raises(ToolError, match="timeout must be a positive number of seconds"):
        registry.register(shout, timeout=0)
    assert registry.names() == ["add"]


async def test_register_overrides_tags_category_timeout() -> None:
    @tool(tags=["slow"], category="wait", timeout=60)
    async def hang() -> None:
        """Never returns."""
        await asyncio.Event().wait()

    registry = ToolRegistry()
    registry.register(add, tags=["other"], category="misc")
    registry.register(hang, timeout=0.01)
    assert registry.find_by_tag("other") == [add] and registry.find_by_tag("math") == []
    assert registry.find_by_category("misc") == [add]
    assert registry.find_by_tag("slow") == [hang] and registry.find_by_category("wait") == [hang]
    timed_out = (await registry.invoke("hang", {})).error
    assert isinstance(timed_out, ToolTimeout) and timed_out.timeout == 0.01


def test_definitions_sorted_cached_and_byte_stable() -> None:
    registry = ToolRegistry()
    registry.register_all([shout, fail, add])
    first = registry.definitions()
    assert [d.name for d in first] == ["add", "fail", "shout"]
    assert first[0] == ToolDef("add", "Add two integers.", add.parameters)
    again = registry.definitions()
    assert all(a is b for a, b in zip(first, again, strict=True))
    dump = json.dumps([[d.name, d.description, d.parameters] for d in first])
    assert dump == json.dumps([[d.name, d.description, d.parameters] for d in again])
    registry.unregister("fail")
    assert [d.name for d in registry.definitions()] == ["add", "shout"]


class EchoTool:
    """A hand-written tool (no decorator) that returns a plain value: the registry converts."""

    name = "echo"
    description = "Echo the arguments."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    permissions = frozenset({Permission.READ})
    annotations = ToolAnnotations(read_only=True)
    primary_arg = None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return {"args": args, "call": ctx.call_id}


async def test_invoke_success_records_everything() -> None:
    registry = make_registry(add, EchoTool())
    ctx = ToolContext(call_id="c1")
    invocation = await registry.invoke("add", '{"a": 2, "b": 3}', ctx)
    assert invocation.ok and invocation.error is None
    assert (invocation.name, invocation.call_id) == ("add", "c1")
    assert invocation.args == {"a": 2, "b": 3}
    assert invocation.result.structured == 5
    assert invocation.duration >= 0
    echo = await registry.invoke("echo", {"x": 1}, call_id="c2")
    assert echo.ok and echo.call_id == "c2"
    assert isinstance(echo.result, ToolResult)
    assert echo.result.structured == {"args": {"x": 1}, "call": "c2"}


@pytest.mark.parametrize(
    ("name", "args", "error_type", "recoverable", "fragment"),
    [
        ("nope", {}, ToolNotFound, False, "Available tools: add, fail, shout"),
        ("add", {"a": "x"}, InvalidArguments, True, "'a': Input should be a valid integer"),
        ("add", "[1]", InvalidArguments, True, "got an array"),
        ("fail", {"reason": "disk full"}, ExecutionFailed, True, "RuntimeError: disk full"),
    ],
)
async def test_invoke_never_raises(
    name: str, args: Any, error_type: type[ToolError], recoverable: bool, fragment: str
) -> None:
    registry = make_registry()
    invocation = await registry.invoke(name, args)
    assert type(invocation.error) is error_type
    assert invocation.error.recoverable is recoverable
    assert fragment in invocation.error.message
    assert invocation.ok is False
    assert invocation.result.is_error and invocation.result.text == invocation.error.message


async def test_not_found_suggests_close_names_and_caps_the_list() -> None:
    typo = (await make_registry().invoke("ad", {})).error
    assert isinstance(typo, ToolNotFound)
    assert typo.message == (
        "Unknown tool 'ad'. Did you mean 'add'? Available tools: add, fail, shout. "
        "Call one of these instead."
    )
    many = ToolRegistry()
    for i in range(60):
        many.register(tool(name=f"t{i:02d}")(add.func))
    message = (await many.invoke("zzz", {})).error.message  # type: ignore[union-attr]
    assert "t49" in message and "t50" not in message and "(and 10 more)" in message
    empty = (await ToolRegistry().invoke("x", {})).error
    assert empty is not None and "no tools are available" in empty.message


async def test_exceptions_from_hand_written_tools_become_tool_errors() -> None:
    class Broken:
        name = "broken"
        description = "Raises from execute."
        parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
        permissions: frozenset[Permission] = frozenset()
        annotations = ToolAnnotations()
        primary_arg = None

        async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            raise ZeroDivisionError("division by zero")

    invocation = await make_registry(Broken()).invoke("broken", {})
    assert isinstance(invocation.error, ExecutionFailed)
    assert "ZeroDivisionError: division by zero" in invocation.error.message
    assert isinstance(invocation.error.__cause__, ZeroDivisionError)


async def test_stats_per_tool() -> None:
    registry = make_registry()
    await registry.invoke("add", {"a": 1})
    await registry.invoke("add", {"a": "bad"})
    await registry.invoke("fail", {"reason": "x"})
    await registry.invoke("made_up_by_the_model", {})
    stats = registry.stats()
    assert list(stats) == ["add", "fail"]  # unknown names are not tools
    assert (stats["add"].calls, stats["add"].errors) == (2, 1)
    assert (stats["fail"].calls, stats["fail"].errors) == (1, 1)
    assert stats["add"].total_duration > 0
    assert stats["add"].mean_duration == pytest.approx(stats["add"].total_duration / 2)


async def test_permission_denied_before_execution() -> None:
    ran: list[str] = []

    @tool(permissions=[Permission.SHELL])
    def run_shell(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return "ran"

    registry = make_registry(run_shell, policy=PermissionPolicy(denied=[Permission.SHELL]))
    invocation = await registry.invoke("run_shell", {"command": "rm -rf /"})
    assert isinstance(invocation.error, PermissionDenied)
    assert invocation.error.recoverable is False
    assert invocation.error.permission == "shell"
    assert "'run_shell'" in invocation.error.message and "'shell'" in invocation.error.message
    assert ran == []  # never silently skipped, never executed


async def test_overlay_shadows_without_touching_the_shared_registry() -> None:
    shared = make_registry()

    @tool(name="add")
    def session_add(a: int, b: int = 0) -> int:
        """Session add: adds one more."""
        return a + b + 1

    @tool
    def session_only() -> str:
        """Only in the session."""
        return "mine"

    session = shared.overlay()
    session.register(session_add)
    session.register(session_only)
    assert session.names() == ["add", "fail", "session_only", "shout"]
    names = [d.name for d in session.definitions()]
    assert names == sorted(set(names))  # no name twice
    assert session.get("add") is session_add and shared.get("add") is add
    assert (await session.invoke("add", {"a": 1})).result.structured == 2
    assert (await shared.invoke("add", {"a": 1})).result.structured == 1
    assert (await session.invoke("shout", {"text": "hi"})).result.text == "HI"
    assert shared.names() == ["add", "fail", "shout"]
    assert "session_only" not in shared

    # Changes to the shared layer show through; unregister touches only the session layer.
    @tool
    def later() -> None:
        """Added to the shared registry after the overlay was made."""

    shared.register(later)
    assert "later" in [d.name for d in session.definitions()]
    session.unregister("add")
    assert session.get("add") is add
    with pytest.raises(ToolNotFound):
        session.unregister("shout")
    assert session.stats().keys() == {"add", "shout"} and shared.stats().keys() == {"add"}


async def test_overlay_policy_inherits_or_overrides() -> None:
    @tool(permissions=["network"])
    def fetch(url: str) -> str:
        """Fetch a URL."""
        return url

    shared = make_registry(fetch, policy=PermissionPolicy(denied=["network"]))
    inherited = shared.overlay()
    assert isinstance((await inherited.invoke("fetch", {"url": "u"})).error, PermissionDenied)
    permissive = shared.overlay(policy=PermissionPolicy(allowed=["network"]))
    assert (await permissive.invoke("fetch", {"url": "u"})).ok
    # An inheriting session follows the shared policy as it is now, not as it was.
    shared.policy = PermissionPolicy(allowed=["network"])
    assert inherited.policy is shared.policy
    assert (await inherited.invoke("fetch", {"url": "u"})).ok
    shared.policy = None
    assert inherited.policy is None and permissive.policy is not None
