"""Crash-safe agent runs on DBOS (`pip install 'toolweave[durable]'`): `DurableAgent`.

Each run of a `DurableAgent` is a DBOS workflow, and each model call and each tool call in it a
DBOS step, checkpointed in DBOS's system database (SQLite by default, Postgres when
`launch_dbos` is given a `postgresql://` URL). A process killed mid-run is recovered by the
next one that launches DBOS on the same database: the workflow runs again from the start, the
steps that finished return their recorded outputs without running (a tool that ran is not run
again, a model answer is not paid for twice) and the run goes on from the first step that did
not. This is how pydantic-ai's `DBOSAgent` integrates DBOS; here tool calls are steps as well.

What runs between steps runs again on recovery and must decide the same way: the loop itself,
rules and hooks. Approvals are asked again unless the approver pauses the run instead
(`defer_approval`, `RunState`); a step's outputs must pickle (DBOS's default serializer).
Streaming is not replayed: a model step completes the whole answer (`complete`), and a
`run_stream` over a durable agent yields it as one piece. The step runs the tool after
governance, in the call chain's terminal, so what decides whether a call runs is unchanged.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic

from toolweave._extras import require

require("durable", "DurableAgent")

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync  # noqa: E402  (after the check)

from toolweave.agent.output import OutputT  # noqa: E402
from toolweave.agent.run_state import RunState  # noqa: E402
from toolweave.agent.session import Session  # noqa: E402
from toolweave.llm import ModelRequest, ModelResponse, StreamEvent  # noqa: E402
from toolweave.llm.types import response_events  # noqa: E402
from toolweave.tools import Tool, ToolContext, ToolResult  # noqa: E402

if TYPE_CHECKING:
    from toolweave.agent.agent import Agent
    from toolweave.agent.result import RunResult
    from toolweave.governance.approvals import ApprovalAnswer
    from toolweave.llm import Model

__all__ = ["DEFAULT_DATABASE", "DurableAgent", "StepModel", "StepTool", "launch_dbos"]

DEFAULT_DATABASE = "toolweave_durable.sqlite"
"""The SQLite file (in the working directory) `launch_dbos` keeps workflows in by default."""
_URL_SCHEMES = ("sqlite://", "postgresql://", "postgresql+psycopg://", "postgres://")


def launch_dbos(database: str | Path = DEFAULT_DATABASE, *, name: str = "toolweave") -> None:
    """Configure and launch DBOS for durable runs: `database` is a SQLite file path or a
    `sqlite://` / `postgresql://` URL. Create every `DurableAgent` first: launching recovers
    the workflows a killed process left unfinished, which needs their definitions."""
    text = str(database)
    url = text if text.startswith(_URL_SCHEMES) else f"sqlite:///{Path(text).resolve()}"
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]  # psycopg 3, the postgres extra
    DBOS(config={"name": name, "system_database_url": url})
    DBOS.launch()


class DurableAgent(Generic[OutputT]):
    """`agent` with its runs as DBOS workflows and its model and tool calls as DBOS steps.

    `name` (default: the agent's) names the workflow and steps in DBOS's database, so it must
    be the same in the process that recovers a run and unique among durable agents. `run`
    starts (or, given the `workflow_id` of an earlier run, returns or recovers) a run;
    `agent` is the wrapped `Agent` (its model and tools are the steps), usable as any agent.
    """

    def __init__(self, agent: Agent[Any, OutputT], *, name: str | None = None) -> None:
        self.name = name if name is not None else agent.name
        registry = agent.registry.overlay()
        for tool_name in agent.registry.names():
            tool = agent.registry.get(tool_name)
            if tool is not None:
                registry.register(StepTool(tool, f"toolweave.{self.name}.tool.{tool_name}"))
        model = StepModel(agent.model, f"toolweave.{self.name}.model")
        self.agent: Agent[Any, OutputT] = agent.replace(registry=registry, model=model)

        async def workflow(prompt: str, session_id: str) -> RunResult[OutputT]:
            return await self.agent.run(prompt, Session(session_id))

        async def resumed(state: str, approvals: dict[str, ApprovalAnswer]) -> RunResult[OutputT]:
            return await self.agent.resume(RunState.from_json(state), approvals)

        self._workflow = DBOS.workflow(name=f"toolweave.{self.name}.run")(workflow)
        self._resumed = DBOS.workflow(name=f"toolweave.{self.name}.resume")(resumed)

    async def run(self, prompt: str, *, workflow_id: str | None = None) -> RunResult[OutputT]:
        """Run `prompt` durably to its answer. With a `workflow_id` DBOS already knows, the
        recorded run is returned (finished) or awaited (recovered after a crash). A run that
        pauses for a person (`defer_approval`) raises `RunPaused`, here and from `result`."""
        return await self._start(workflow_id, self._workflow, prompt, uuid.uuid4().hex)

    async def resume(
        self,
        state: RunState,
        approvals: Mapping[str, ApprovalAnswer] | None = None,
        *,
        workflow_id: str | None = None,
    ) -> RunResult[OutputT]:
        """`Agent.resume` as a durable workflow: finish a paused run with the answers, its
        remaining model and tool calls as steps."""
        answers = dict(approvals or {})
        return await self._start(workflow_id, self._resumed, state.to_json(), answers)

    async def _start(
        self, workflow_id: str | None, workflow: Any, *args: Any
    ) -> RunResult[OutputT]:
        """Start `workflow(*args)` as `workflow_id` (a new id when None), or return the run
        DBOS already has under that id."""
        if workflow_id is not None and await DBOS.list_workflows_async(workflow_ids=[workflow_id]):
            return await self.result(workflow_id)
        handle: WorkflowHandleAsync[RunResult[OutputT]]
        with SetWorkflowID(workflow_id if workflow_id is not None else uuid.uuid4().hex):
            handle = await DBOS.start_workflow_async(workflow, *args)
        return await handle.get_result()

    def run_sync(self, prompt: str, *, workflow_id: str | None = None) -> RunResult[OutputT]:
        """`run` for synchronous code."""
        return asyncio.run(self.run(prompt, workflow_id=workflow_id))

    async def result(self, workflow_id: str) -> RunResult[OutputT]:
        """The answer of the run `workflow_id`, waiting for it when it is still running (in
        this process, or recovered here after the process that started it died)."""
        handle: WorkflowHandleAsync[RunResult[OutputT]]
        handle = await DBOS.retrieve_workflow_async(workflow_id)
        return await handle.get_result()


class StepModel:
    """A model whose every call is a DBOS step named `step` (a recovered run reads the
    recorded answer instead of calling the provider again)."""

    def __init__(self, model: Model, step: str) -> None:
        self.wrapped = model

        async def complete(request: ModelRequest) -> ModelResponse:
            return await model.complete(request)

        self._complete = DBOS.step(name=step)(complete)

    @property
    def model_name(self) -> str:
        return self.wrapped.model_name

    def __getattr__(self, name: str) -> Any:  # capabilities the loop reads (native output)
        return getattr(self.wrapped, name)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self._complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self._complete(request)
        async for event in response_events(response):
            yield event


class StepTool:
    """A tool whose execution is a DBOS step named `step`; everything governance and the
    registry read (schema, permissions, annotations, hints) is the wrapped tool's."""

    def __init__(self, tool: Tool, step: str) -> None:
        self.wrapped = tool

        async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await tool.execute(args, ctx)

        self._execute = DBOS.step(name=step)(execute)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    @property
    def name(self) -> str:
        return self.wrapped.name

    @property
    def description(self) -> str:
        return self.wrapped.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.wrapped.parameters

    @property
    def permissions(self) -> Any:
        return self.wrapped.permissions

    @property
    def annotations(self) -> Any:
        return self.wrapped.annotations

    @property
    def primary_arg(self) -> str | None:
        return self.wrapped.primary_arg

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self._execute(args, ctx)
