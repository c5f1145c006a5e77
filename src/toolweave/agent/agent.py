"""`Agent`: a model, its tools and its limits; `run`, `run_sync` and `run_stream` drive the loop.

An Agent holds no per-run state, so one instance serves any number of concurrent runs (each
with its own `Session`). Settings are validated here so a typo fails at construction with the
field's name rather than mid-run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, Literal

from toolweave.agent._run.command_run import command_config
from toolweave.agent._run.config import RunConfig
from toolweave.agent._run.loop import Run
from toolweave.agent._run.resume import prepare
from toolweave.agent._run.stream import run_events
from toolweave.agent.economy import ContextEconomy
from toolweave.agent.events import AgentEvent
from toolweave.agent.orchestration.children import Children
from toolweave.agent.orchestration.limits import RunLimits
from toolweave.agent.orchestration.registry import children_registry
from toolweave.agent.orchestration.settings import Orchestration, RunScope
from toolweave.agent.output import Output, OutputT
from toolweave.agent.result import RunResult
from toolweave.agent.run_state import RunState
from toolweave.agent.session import Session
from toolweave.agent.tracing.run_trace import Tracing
from toolweave.errors import ConfigError
from toolweave.governance.pipeline import Governance
from toolweave.governance.rules import Rules
from toolweave.llm import Message, Model, ModelSettings
from toolweave.tools import (
    FunctionTool,
    PermissionPolicy,
    Tool,
    ToolRegistry,
)
from toolweave.tools.context import DepsT
from toolweave.tools.search_mode import ToolSearch

if TYPE_CHECKING:
    from toolweave.governance.approvals import ApprovalAnswer
    from toolweave.memory import MemoryManager, MemorySettings
    from toolweave.skills import SkillLibrary, SkillSettings


class Agent(Generic[DepsT, OutputT]):
    """A model with tools, instructions and limits; `Agent[Deps, Output]` to the type checker.

    `model` is a `Model` or a string for `toolweave.llm.model_from_string` ("openai:gpt-4o").
    `tools` is a list of tools (plain functions are wrapped with `@tool`) or a `ToolRegistry`,
    which the agent never changes: its own capabilities register in a layer over it.
    `output_type` is the answer's type, or an `Output` (how it is asked for, retries, what
    happens when the turns run out). Every limit is a named setting: `max_turns` counts model
    calls, `tool_timeout` is per call in seconds, `max_tool_result_chars` caps what one result
    may put in the context; `model_settings` (temperature, max_tokens) go with every model
    call. `deps_type` only informs the type checker (as in pydantic-ai): tools annotated
    `ctx: ToolContext[Deps]` then see `ctx.deps` typed, and `run(deps=...)` is checked.

    Each capability comes in through one parameter holding its own settings object, which
    checks itself (the table is in docs/agent.md): `governance` (a `Governance`, or a bare
    `Rules` or `PermissionPolicy`), `orchestration` (`Orchestration`: `Children` for subagents
    and teams, `RunLimits` for quota, query log, circuit and todos, slash commands), `memory`
    (`MemorySettings`, or a bare `MemoryManager`), `skills` (`SkillSettings`, or a bare
    `SkillLibrary`), `tracing` (`Tracing`) and `tool_search` (`ToolSearch`, or True for its
    defaults: past a threshold of tools the model sees pinned ones and a `tool_search` tool) and
    `context` (`ContextEconomy`: a result over `max_tool_result_chars` is saved whole and paged
    with `read_result`, on by default; old turns summarised by a model, opt-in; False: neither).
    Shell, delete and destructive tools ask by default, and with no approver that is a refusal
    naming the fix.
    """

    def __init__(
        self,
        model: Model | str,
        tools: Sequence[Tool | Callable[..., Any]] | ToolRegistry | None = None,
        *,
        instructions: str | None = None,
        output_type: type[OutputT] | Output[OutputT] | None = None,
        max_turns: int = 10,
        tool_timeout: float = 60.0,
        max_tool_result_chars: int = 8000,
        model_settings: ModelSettings | None = None,
        name: str = "agent",
        deps_type: type[DepsT] | None = None,
        governance: Governance | Rules | PermissionPolicy | None = None,
        orchestration: Orchestration | Children | RunLimits | None = None,
        memory: MemorySettings | MemoryManager | None = None,
        skills: SkillSettings | SkillLibrary | None = None,
        tracing: Tracing | None = None,
        tool_search: ToolSearch | bool | None = None,
        context: ContextEconomy | bool | None = None,
    ) -> None:
        if isinstance(model, str):
            from toolweave.llm import model_from_string  # adapters load only when asked for

            model = model_from_string(model)
        if not isinstance(model, Model):
            raise TypeError(
                f"Agent(model=...) must be a toolweave.llm.Model or a model string such as "
                f"'openai:gpt-4o', got {type(model).__name__}"
            )
        _positive("max_turns", max_turns)
        _positive("tool_timeout", tool_timeout)
        _positive("max_tool_result_chars", max_tool_result_chars)
        answer = output_type if isinstance(output_type, Output) else Output(output_type)
        if model_settings is None:
            model_settings = ModelSettings()
        elif not isinstance(model_settings, ModelSettings):
            raise TypeError(
                f"Agent(model_settings=...) must be a toolweave.llm.ModelSettings, got "
                f"{type(model_settings).__name__}"
            )
        orchestration = Orchestration.of(orchestration)
        if tracing is not None and not isinstance(tracing, Tracing):
            raise TypeError(f"Agent(tracing=...) must be a Tracing, got {type(tracing).__name__}")
        gating = Governance.of(governance)
        _one_policy(tools, gating)
        # The caller's registry is never changed: memory, skills and orchestration register
        # in the agent's own layer over it (its tools and policy stay visible, live).
        registry = tools.overlay() if isinstance(tools, ToolRegistry) else _registry(tools or ())
        agent_memory = None
        if memory is not None:  # the memory tool, the prompt's memories per run
            from toolweave.agent._run.memory import AgentMemory
            from toolweave.memory.context import MemorySettings

            agent_memory = AgentMemory(MemorySettings.of(memory))
            agent_memory.install(registry)
        output = answer.spec()
        if output is not None and answer.name in registry:
            raise ConfigError(
                f"Output(name={answer.name!r}) clashes with a tool of that name; pass another name"
            )
        output_mode = answer.mode
        if output_mode == "auto":
            native = bool(getattr(model, "supports_native_output", False))
            output_mode = "native" if native else "tool"
        agent_skills = None
        if skills is not None:  # skill tools, the catalog per run, allowed-tools as grants
            from toolweave.agent._run.skills import AgentSkills
            from toolweave.skills.settings import SkillSettings

            agent_skills = AgentSkills(SkillSettings.of(skills), model)
            agent_skills.install(registry)
        registry = children_registry(registry, orchestration.children)
        economy = ContextEconomy.of(context)
        agent_economy = None
        if economy is not None:  # saved results and `read_result`; model summaries if asked
            from toolweave.agent._run.economy import AgentEconomy

            agent_economy = AgentEconomy(economy, model, max_tool_result_chars)
            agent_economy.install(registry)
        agent_search = None
        search_settings = ToolSearch.of(tool_search)
        if search_settings is not None:  # past the threshold: pinned tools plus tool_search
            from toolweave.agent._run.result_pages import READ_RESULT
            from toolweave.agent._run.tool_search import AgentToolSearch

            pinned = (answer.name,) if output is not None else ()
            if agent_economy is not None and agent_economy.pages is not None:
                pinned = (*pinned, READ_RESULT)  # a cut result names its pager
            agent_search = AgentToolSearch(search_settings, gating, pinned, model)
            agent_search.install(registry)
        circuit = orchestration.limits.circuit
        if circuit is not None and circuit not in gating.gates:  # governance runs every gate
            gating = replace(gating, gates=(circuit, *gating.gates))
        self.name = name
        self.instructions = instructions
        self._config = RunConfig(
            model=model,
            registry=registry,
            system_message=Message.system(instructions) if instructions else None,
            max_turns=max_turns,
            tool_timeout=tool_timeout,
            max_tool_result_chars=max_tool_result_chars,
            output=output,
            output_mode=output_mode,
            output_retries=answer.retries,
            on_max_turns=answer.on_max_turns,
            governance=gating,
            user_output=answer.user_output,
            model_settings=model_settings,
            memory=agent_memory,
            skills=agent_skills,
            orchestration=orchestration,
            name=name,
            tracing=tracing,
            tool_search=agent_search,
            economy=agent_economy,
        )

    @classmethod
    def _from_config(
        cls, config: RunConfig, name: str, instructions: str | None
    ) -> Agent[Any, Any]:
        agent: Agent[Any, Any] = cls.__new__(cls)
        agent.name, agent.instructions, agent._config = name, instructions, config
        return agent

    @property
    def model(self) -> Model:
        return self._config.model

    @property
    def registry(self) -> ToolRegistry:
        """The agent's shared tools (each session layers its own on top)."""
        return self._config.registry

    @property
    def governance(self) -> Governance:
        """The gate pipeline every run of this agent uses; `governance.child(...)` gives the
        one for a subagent, team member or scheduled run it starts (narrower, never wider)."""
        return self._config.governance

    @property
    def max_turns(self) -> int:
        return self._config.max_turns

    @property
    def orchestration(self) -> Orchestration:
        """`children` (subagents, teams), `limits` (quota, query log, circuit, todos) and
        slash `commands`."""
        return self._config.orchestration

    @property
    def output_mode(self) -> Literal["native", "tool"]:
        """How structured output is asked for: the provider's native format or a final tool."""
        return self._config.output_mode

    @property
    def memory(self) -> MemoryManager | None:
        """The memory manager the agent recalls from and writes to (`Agent(memory=...)`)."""
        stage = self._config.memory
        return stage.manager if stage is not None else None

    # -- running ------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        session: Session | None = None,
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        timeout: float | None = None,
    ) -> RunResult[OutputT]:
        """Run to a final answer. Cancelling the awaiting task cancels running tools and
        leaves `session` consistent. `timeout` (seconds) is the run's deadline: past it the run
        raises `TimeoutError`, and subagents get at most what is left minus 30 s."""
        return await self._new_run(prompt, session, deps, None, timeout).execute()

    async def run_scoped(
        self, prompt: str, scope: RunScope, *, deps: Any = None
    ) -> RunResult[OutputT]:
        """Run inside a scope another run or the scheduler prepared: `scope` brings the session,
        the deadline, the identity hooks see, where usage rolls up and any background jobs.
        Subagents, team members and scheduled runs start here; `run` builds its own scope."""
        return await self._new_run(prompt, scope.session, deps, None, None, scope).execute()

    def _new_run(
        self,
        prompt: str,
        session: Session | None,
        deps: Any,
        emit: Callable[[AgentEvent], None] | None,
        timeout: float | None,
        scope: RunScope | None = None,
    ) -> Run:
        """A run of this agent: slash commands applied, its scope (deadline, identity) set."""
        session = session if session is not None else Session()
        if scope is None:
            deadline = None
            if timeout is not None:
                _positive("run(timeout", timeout)
                deadline = asyncio.get_running_loop().time() + timeout
            scope = RunScope(self, session, session.id, deadline, turns_left=self.max_turns)
        config = self._config
        commands = self.orchestration.commands
        invoked = commands.invoke(prompt) if commands is not None else None
        if invoked is not None and commands is not None:
            command, prompt = invoked
            config = command_config(config, command, commands)
        run = Run(config, prompt, session, deps, emit, scope)
        run.command = invoked[0] if invoked is not None else None
        return run

    def replace(
        self,
        *,
        registry: ToolRegistry | None = None,
        governance: Governance | None = None,
        model: Model | None = None,
    ) -> Agent[DepsT, OutputT]:
        """This agent with another tool registry, gate pipeline or model and everything else
        shared (the scheduler gives a scheduled run its background tools and a child governance
        this way, `DurableAgent` its model and tools as steps). The original is unchanged."""
        changes: dict[str, Any] = {}
        if model is not None:
            changes["model"] = model
        if registry is not None:
            changes["registry"] = registry
        if governance is not None:
            changes["governance"] = governance
        config = dataclasses.replace(self._config, **changes)
        return Agent._from_config(config, self.name, self.instructions)

    def child(
        self,
        *,
        model: Model,
        registry: ToolRegistry,
        instructions: str,
        max_turns: int,
        agent_id: str,
        agent_type: str,
    ) -> Agent[Any, str]:
        """A disposable child (a subagent or team member): the same gates, policy, skills,
        quota, circuit breaker, query log and limits; its own model, tools and instructions;
        plain-text answers; no memory context, subagents, teams, reminders or commands. Its
        rules and hooks are the parent's (a child narrows, never widens), and hook payloads and
        approval requests name it and its parent chain."""
        config = dataclasses.replace(
            self._config,
            model=model,
            registry=registry,
            system_message=Message.system(instructions),
            max_turns=max_turns,
            output=None,
            output_mode="tool",
            user_output="media_only",
            memory=None,
            orchestration=self.orchestration.child(),
            governance=self._config.governance.child(agent_id=agent_id, agent_type=agent_type),
        )
        return Agent._from_config(config, f"{self.name}/{agent_id}", instructions)

    def run_sync(
        self,
        prompt: str,
        session: Session | None = None,
        *,
        deps: DepsT = None,  # type: ignore[assignment]
    ) -> RunResult[OutputT]:
        """`run` for synchronous code; not callable from inside a running event loop."""
        return self._sync("run", self._new_run(prompt, session, deps, None, None))

    def _sync(self, name: str, run: Run) -> RunResult[OutputT]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._run_and_close(run))
        raise RuntimeError(
            f"Agent.{name}_sync() was called inside a running event loop; use "
            f"`await agent.{name}()`"
        )

    async def _run_and_close(self, run: Run) -> RunResult[OutputT]:
        """Execute `run`, then close the HTTP client the model opened on this throwaway event
        loop (its connections die with the loop; unclosed they leak sockets until collected)."""
        try:
            return await run.execute()
        finally:
            aclose = getattr(self.model, "aclose", None)
            if aclose is not None:
                await aclose()

    async def run_stream(
        self,
        prompt: str,
        session: Session | None = None,
        *,
        deps: DepsT = None,  # type: ignore[assignment]
        timeout: float | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Yield the run's events as they happen; a failed run yields `RunFailed`, then raises.

        Closing the generator early (`aclose()`, or `contextlib.aclosing` around an `async for`
        that breaks) or cancelling its consumer cancels the run.
        """
        queue: asyncio.Queue[Any] = asyncio.Queue()
        run = self._new_run(prompt, session, deps, queue.put_nowait, timeout)
        async with aclosing(run_events(run.execute(), queue)) as events:  # closing closes the run
            async for event in events:
                yield event

    # -- paused runs --------------------------------------------------------------------

    async def resume(
        self,
        state: RunState,
        approvals: Mapping[str, ApprovalAnswer] | None = None,
        *,
        session: Session | None = None,
        deps: DepsT = None,  # type: ignore[assignment]
        timeout: float | None = None,
        scope: RunScope | None = None,
    ) -> RunResult[OutputT]:
        """Finish a run that paused for approvals (`RunPaused.state`, or `RunState.from_json`
        in another process): `approvals` answers its pending calls by call id (True, False or
        "always"). Approved calls go through the same call chain as any call, a refused one
        gives the model the refusal, and one left unanswered pauses the run again. `state`
        must come from this agent's configuration (`RunStateError` names what differs).
        `scope` is for the scheduler, as in `run_scoped` (it brings the session)."""
        run = self._resumed(state, approvals, session, deps, None, timeout, scope)
        return await run.execute()

    def resume_sync(
        self,
        state: RunState,
        approvals: Mapping[str, ApprovalAnswer] | None = None,
        *,
        session: Session | None = None,
        deps: DepsT = None,  # type: ignore[assignment]
    ) -> RunResult[OutputT]:
        """`resume` for synchronous code; not callable from inside a running event loop."""
        return self._sync("resume", self._resumed(state, approvals, session, deps, None, None))

    async def resume_stream(
        self,
        state: RunState,
        approvals: Mapping[str, ApprovalAnswer] | None = None,
        *,
        session: Session | None = None,
        deps: DepsT = None,  # type: ignore[assignment]
        timeout: float | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """`resume` yielding the run's events, as `run_stream` does."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        run = self._resumed(state, approvals, session, deps, queue.put_nowait, timeout)
        async with aclosing(run_events(run.execute(), queue)) as events:  # closing closes the run
            async for event in events:
                yield event

    def _resumed(
        self,
        state: RunState,
        approvals: Mapping[str, ApprovalAnswer] | None,
        session: Session | None,
        deps: Any,
        emit: Callable[[AgentEvent], None] | None,
        timeout: float | None,
        scope: RunScope | None = None,
    ) -> Run:
        if not isinstance(state, RunState):
            raise TypeError(
                f"Agent.resume(state=...) takes a RunState (RunPaused.state, or "
                f"RunState.from_json(text)), got {type(state).__name__}"
            )
        if scope is not None:
            session = scope.session
        session = session if session is not None else Session(state.session_id)
        run = self._new_run(state.prompt, session, deps, emit, timeout, scope)
        run.resume_from = (state, prepare(run.config, state, approvals))
        return run

    def __repr__(self) -> str:
        return (
            f"Agent(name={self.name!r}, model={self.model.model_name!r}, "
            f"tools={self.registry.names()})"
        )


def _one_policy(tools: object, governance: Governance) -> None:
    """The declared-permission policy has one holder: a registry's and the governance's may not
    disagree (the run would silently use one of them)."""
    own = tools.policy if isinstance(tools, ToolRegistry) else None
    if own is not None and governance.policy is not None and own is not governance.policy:
        raise ConfigError(
            "Agent(tools=ToolRegistry(policy=...), governance=Governance(policy=...)) names two "
            "permission policies; keep one: pass the policy to Governance(policy=...) and none "
            "to the registry (or the same PermissionPolicy object to both)"
        )


def _registry(tools: Sequence[Tool | Callable[..., Any]]) -> ToolRegistry:
    registry = ToolRegistry()
    for item in tools:
        if isinstance(item, Tool):
            registry.register(item)
        elif callable(item):
            registry.register(FunctionTool(item))
        else:
            raise TypeError(f"Agent(tools=...) items must be tools or functions, got {item!r}")
    return registry


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise ConfigError(f"Agent({name}=...) must be positive, got {value!r}")
