"""Typed dependencies, checked by mypy itself: `ToolContext[Deps]` makes `ctx.deps` a `Deps`,
a bare `ToolContext` stays valid under --strict (its TypeVar defaults to Any), and
`Agent[Deps, Output]` types `run(deps=...)` and `RunResult.output`. A snippet is type-checked
with mypy's API and its `reveal_type` notes are compared; a deliberate misuse must fail."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api as mypy_api

from toolweave import ToolContext, tool

MYPY_CACHE = Path(__file__).resolve().parents[2] / ".mypy_cache"

SNIPPET = """
from dataclasses import dataclass

from pydantic import BaseModel

from toolweave import Agent, ScriptedModel, ToolContext, tool


@dataclass
class Deps:
    city: str


class Advice(BaseModel):
    umbrella: bool


@tool
def where(ctx: ToolContext[Deps]) -> str:
    reveal_type(ctx.deps)
    return ctx.deps.city


@tool
def untyped(ctx: ToolContext) -> str:
    reveal_type(ctx.deps)
    return "ok"


async def main() -> None:
    agent = Agent(ScriptedModel([]), [where], deps_type=Deps, output_type=Advice)
    reveal_type(agent)
    result = await agent.run("hi", deps=Deps("杭州"))
    reveal_type(result.output)
    text = await Agent(ScriptedModel([])).run("hi")
    reveal_type(text.output)
    await agent.run("hi", deps=42)  # the one error: deps must be a Deps
"""


def test_deps_and_output_are_typed_for_mypy_users(tmp_path: Path) -> None:
    path = tmp_path / "typed_deps.py"
    path.write_text(textwrap.dedent(SNIPPET), encoding="utf-8")
    # The project's own cache (`make typecheck` runs `mypy src` first): toolweave and its
    # dependencies are checked once, not again for a five-line snippet (18 s on 2 cores).
    out, err, status = mypy_api.run(["--strict", "--cache-dir", str(MYPY_CACHE), str(path)])
    lines = (out + err).splitlines()
    revealed = [line.split("Revealed type is ", 1)[1] for line in lines if "Revealed type" in line]
    assert revealed == [
        '"typed_deps.Deps"',
        '"Any"',
        '"toolweave.agent.agent.Agent[typed_deps.Deps, typed_deps.Advice]"',
        '"typed_deps.Advice"',
        '"str"',
    ], out
    errors = [line for line in lines if ": error:" in line]
    assert status == 1 and len(errors) == 1, out  # the one deliberate misuse, nothing else
    assert 'Argument "deps" to "run" of "Agent" has incompatible type "int"' in errors[0]


def test_a_generic_context_is_injected_not_exposed() -> None:
    @tool
    def where(ctx: ToolContext[dict[str, str]], day: str) -> str:
        return ctx.deps["city"] + day

    assert list(where.parameters["properties"]) == ["day"]


@pytest.mark.parametrize("deps", [None, {"city": "杭州"}])
def test_context_carries_any_deps(deps: object) -> None:
    assert ToolContext(deps=deps).for_call("c1").deps is deps
