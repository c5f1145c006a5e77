"""`Agent`: a model, its tools and its limits; `run`, `run_sync` and `run_stream` drive the loop.

An Agent holds no per-run state, so one instance serves any number of concurrent runs (each
with its own `Session`). Settings are validated here so a typo fails at construction with the
field's name rather than mid-run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypeVar

from toolweave.accounting.query_log import QueryLog
from toolweave.accounting.quota import Quota
from toolweave.agent._run.command_run import command_config
from toolweave.agent._run.config import RunConfig
from toolweave.agent._run.loop import Run
from toolweave.agent.events import AgentEvent
from toolweave.agent.orchestration.circuit import DEFAULT_CIRCUIT_FAILURES, DEFAULT_CIRCUIT_RECOVERY
from toolweave.agent.orchestration.settings import (
    DEFAULT_SUBAGENT_MAX_RESULT_CHARS,
    DEFAULT_SUBAGENT_TIMEOUT,
    Orchestration,
    RunScope,
    SubagentTools,
    orchestration_registry,
)
from toolweave.agent.orchestration.slash_commands import Commands
from toolweave.agent.orchestration.teams import TeamStore
from toolweave.agent.orchestration.todo_reminder import TodoSource
from toolweave.agent.output import DEFAULT_OUTPUT_NAME, OutputSpec
from toolweave.agent.session import Session
from toolweave.agent.tracing.run_trace import Tracing
from toolweave.errors import ConfigError
from toolweave.governance.approvals import DEFAULT_APPROVAL_TIMEOUT, Approver
from toolweave.governance.gates import ToolGate
from toolweave.governance.hooks import Hooks
from toolweave.governance.pipeline import Governance
from toolweave.governance.rules import Rules
from toolweave.llm import Message, Model, Usage
from toolweave.tools import (
    FunctionTool,
    PermissionPolicy,
    Tool,
    ToolInvocation,
    ToolRegistry,
    UserOutput,
)
from toolweave.tools.context import DepsT, ToolContext

if TYPE_CHECKING:
    from toolweave.memory import MemoryManager
    from toolweave.skills import SkillLibrary

OutputMode = Literal["auto", "native", "tool"]
OutputT = TypeVar("OutputT", default=str)
"""The type of `RunResult.output`: `output_type` when given, else the answer text."""


@dataclass(slots=True)
class RunResult(Generic[OutputT]):
    """What a finished run produced.

    `output` is the answer text, or an instance of `output_type`; `messages` is the session's
    whole history after the run and `new_messages` the part this run added; `invocations`
    are the tool calls in the order the model made them; `user_outputs` what tools sent to
    the user (`ctx.send_*`).
    """

    output: OutputT
    messages: list[Message]
    usage: Usage
    invocations: list[ToolInvocation]
    new_messages: list[Message] = field(default_factory=list)
    turns: int = 0
    run_id: str = ""
    session_id: str = ""
    user_outputs: list[UserOutput] = field(default_factory=list)


_DONE: Any = object()


class Agent(Generic[DepsT, OutputT]):
    """A model with tools, instructions and limits; `Agent[Deps, Output]` to the type checker.

    `model` is a `Model` or a string for `toolweave.llm.model_from_string` ("openai:gpt-4o").
    `tools` is a list of tools (plain functions are wrapped with `@tool`) or a `ToolRegistry`.
    Every limit is a named setting: `max_turns` counts model calls, `tool_timeout` is per
    call in seconds, `max_tool_result_chars` caps what one result may put in the context.
    `deps_type` only informs the type checker (as in pydantic-ai): tools annotated
    `ctx: ToolContext[Deps]` then see `ctx.deps` typed, and `run(deps=...)` is checked.

    Governance (docs/governance.md): `rules`, `hooks`, `approver`, `admin_approver` and
    `approval_timeout` build the gate pipeline every tool call passes; or pass a ready
    `governance=` (a parent's `governance.child(...)`). Shell, delete and destructive tools ask
    by default, and with no approver that is a refusal naming the fix.

    `memory` (a `MemoryManager`) adds the `memory` tool without its deleting actions (register a
    `MemoryTool(actions=...)` yourself for those); `memory_context` memories most relevant to
    each prompt are then shown in that run's system message (0: none).
    """

    def __init__(
        self,
        model: Model | str,
        tools: Sequence[Tool | Callable[..., Any]] | ToolRegistry | None = None,
        *,
        instructions: str | None = None,
        max_turns: int = 10,
        tool_timeout: float = 60.0,
        max_tool_result_chars: int = 8000,
        output_type: type[OutputT] | None = None,
        output_mode: OutputMode = "auto",
        output_retries: int = 1,
        output_name: str = DEFAULT_OUTPUT_NAME,
        on_max_turns: Literal["error", "final_answer"] = "error",
        policy: PermissionPolicy | None = None,
        gates: Sequence[ToolGate] = (),
        rules: Rules | None = None,
        hooks: Hooks | None = None,
        approver: Approver | None = None,
        admin_approver: Approver | None = None,
        approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT,
        governance: Governance | None = None,
        user_output: Literal["all", "media_only"] = "all",
        temperature: float | None = None,
        max_tokens: int | None = None,
        name: str = "agent",
        deps_type: type[DepsT] | None = None,
        skills: SkillLibrary | None = None,
        skill_selector: Model | bool = False,
        subagents: bool = False,
        subagent_model: Model | str | None = None,
        subagent_tools: SubagentTools = "read_only",
        subagent_timeout: float = DEFAULT_SUBAGENT_TIMEOUT,
        subagent_max_result_chars: int = DEFAULT_SUBAGENT_MAX_RESULT_CHARS,
        teams: bool | TeamStore = False,
        circuit_failures: int | None = DEFAULT_CIRCUIT_FAILURES,
        circuit_recovery: float = DEFAULT_CIRCUIT_RECOVERY,
        todos: TodoSource | None = None,
        quota: Quota | None = None,
        commands: Commands | dict[str, Any] | None = None,
        query_log: QueryLog | None = None,
        memory: MemoryManager | None = None,
        memory_context: int = 0,
        tracing: Tracing | None = None,
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
        if output_retries < 0:
            raise ConfigError("Agent(output_retries=...) must be 0 or more")
        _choice("on_max_turns", on_max_turns, ("error", "final_answer"))
        _choice("output_mode", output_mode, ("auto", "native", "tool"))
        _choice("user_output", user_output, ("all", "media_only"))
        registry = tools if isinstance(tools, ToolRegistry) else _registry(tools or ())
        if memory_context < 0 or (memory_context and memory is None):
            raise ConfigError(
                "Agent(memory_context=...) must be 0 or more, and needs Agent(memory=...)"
            )
        if memory is not None and "memory" not in registry:
            from toolweave.memory.tool import NON_DELETING_ACTIONS, MemoryTool

            registry.register(MemoryTool(memory, actions=NON_DELETING_ACTIONS))
        self.memory = memory
        self.memory_context = memory_context
        for gate in gates:
            if not isinstance(gate, ToolGate):
                raise TypeError(
                    f"Agent(gates=...) items need an `async def check(self, request)` method; "
                    f"got {gate!r}"
                )
        output = OutputSpec(output_type, output_name) if output_type is not None else None
        if output is not None and output_name in registry:
            raise ConfigError(
                f"Agent(output_name={output_name!r}) clashes with a tool of that name; pass "
                "another output_name"
            )
        if output_mode == "auto":
            native = bool(getattr(model, "supports_native_output", False))
            output_mode = "native" if native else "tool"
        parts = {"rules": rules, "hooks": hooks, "approver": approver,
                 "admin_approver": admin_approver}  # fmt: skip
        if governance is None:
            _positive("approval_timeout", approval_timeout)
            governance = Governance(rules, hooks, approver, admin_approver, approval_timeout)
        elif any(v is not None for v in parts.values()):
            given = sorted(k for k, v in parts.items() if v is not None)
            raise ConfigError(
                f"Agent(governance=...) already holds rules, hooks and approvers; also passing "
                f"{', '.join(given)} is ambiguous: put them in the Governance (or its .child())"
            )
        agent_skills = None
        if skills is not None:  # skill tools, the allowed-tools gate, the catalog per run
            from toolweave.agent._run.skills import AgentSkills

            selector = model if skill_selector is True else skill_selector or None
            agent_skills = AgentSkills(skills, selector=selector)
            agent_skills.install(registry)
            gates = (agent_skills.gate, *gates)
        orchestration = Orchestration.build(
            subagents=subagents,
            subagent_model=subagent_model,
            subagent_tools=subagent_tools,
            subagent_timeout=subagent_timeout,
            subagent_max_result_chars=subagent_max_result_chars,
            teams=teams,
            circuit_failures=circuit_failures,
            circuit_recovery=circuit_recovery,
            todos=todos,
            quota=quota,
            commands=commands,
            query_log=query_log,
        )
        registry = orchestration_registry(registry, orchestration)
        extra_gates = (orchestration.circuit,) if orchestration.circuit is not None else ()
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
            output_retries=output_retries,
            on_max_turns=on_max_turns,
            policy=policy,
            gates=(*extra_gates, *gates),
            governance=governance,
            user_output=user_output,
            temperature=temperature,
            max_tokens=max_tokens,
            skills=agent_skills,
            orchestration=orchestration,
            name=name,
            tracing=tracing,
        )

    @classmethod
    def _from_config(cls, config: RunConfig, name: str) -> Agent[Any, Any]:
        agent: Agent[Any, Any] = cls.__new__(cls)
        agent.name, agent.instructions, agent._config = name, None, config
        agent.memory, agent.memory_context = None, 0  # children get no memory context
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
        """Subagents, teams, circuit breaker, reminders, quota, commands and query log."""
        return self._config.orchestration

    @property
    def output_mode(self) -> Literal["native", "tool"]:
        """How structured output is asked for: the provider's native format or a final tool."""
        return self._config.output_mode

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
        config = await self._config_for(prompt)
        return await self._new_run(prompt, session, deps, None, timeout, config=config).execute()

    def _new_run(
        self,
        prompt: str,
        session: Session | None,
        deps: Any,
        emit: Callable[[AgentEvent], None] | None,
        timeout: float | None,
        scope: RunScope | None = None,
        *,
        config: RunConfig | None = None,
    ) -> Run:
        """A run of this agent: slash commands applied, its scope (deadline, identity) set."""
        session = session if session is not None else Session()
        if scope is None:
            deadline = None
            if timeout is not None:
                _positive("run(timeout", timeout)
                deadline = asyncio.get_running_loop().time() + timeout
            scope = RunScope(self, session, session.id, deadline, turns_left=self.max_turns)
        config = config or self._config
        commands = self.orchestration.commands
        invoked = commands.invoke(prompt) if commands is not None else None
        if invoked is not None and commands is not None:
            command, prompt = invoked
            config = command_config(config, command, commands)
        run = Run(config, prompt, session, deps, emit, scope)
        run.command = invoked[0] if invoked is not None else None
        return run

    def _derive(
        self,
        *,
        model: Model,
        registry: ToolRegistry,
        instructions: str,
        max_turns: int,
        agent_id: str,
        agent_type: str,
    ) -> Agent[Any, str]:
        """A disposable child: same gates, policy, governance, quota and limits; its own model,
        tools and instructions; plain-text answers; no subagents, teams, reminders, commands or
        log."""
        settings = self.orchestration
        child = Orchestration(
            subagent_timeout=settings.subagent_timeout,
            subagent_max_result_chars=settings.subagent_max_result_chars,
            circuit=settings.circuit,
            quota=settings.quota,
        )
        config = dataclasses.replace(
            self._config,
            model=model,
            registry=registry,
            system_message=Message.system(instructions),
            max_turns=max_turns,
            output=None,
            output_mode="tool",
            user_output="media_only",
            orchestration=child,
            # The same approvers; the parent's rules and hooks (a child narrows, never widens);
            # hook payloads and approval requests name the child and its parent chain.
            governance=self._config.governance.child(agent_id=agent_id, agent_type=agent_type),
        )
        return Agent._from_config(config, f"{self.name}/{agent_id}")

    async def _run_scoped(
        self, prompt: str, scope: RunScope, parent: ToolContext
    ) -> RunResult[Any]:
        """Run inside another run (a subagent): its deadline, identity and usage roll-up come
        from `scope`; files and images it sends reach the parent's user."""
        result = await self._new_run(
            prompt, scope.session, parent.deps, None, None, scope
        ).execute()
        sink = parent.output_sink
        for item in result.user_outputs:
            if sink is not None:
                outcome = sink(item)
                if inspect.isawaitable(outcome):
                    await outcome
        return result

    def run_sync(
        self,
        prompt: str,
        session: Session | None = None,
        *,
        deps: DepsT = None,  # type: ignore[assignment]
    ) -> RunResult[OutputT]:
        """`run` for synchronous code; not callable from inside a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._run_and_close(prompt, session, deps))
        raise RuntimeError(
            "Agent.run_sync() was called inside a running event loop; use `await agent.run()`"
        )

    async def _run_and_close(
        self, prompt: str, session: Session | None, deps: DepsT
    ) -> RunResult[OutputT]:
        """`run`, then close the HTTP client the model opened on this throwaway event loop
        (its connections die with the loop; unclosed they leak sockets until collected)."""
        try:
            return await self.run(prompt, session, deps=deps)
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
        config = await self._config_for(prompt)
        run = self._new_run(prompt, session, deps, queue.put_nowait, timeout, config=config)
        task = asyncio.ensure_future(run.execute())
        task.add_done_callback(lambda _: queue.put_nowait(_DONE))
        try:
            while True:
                event = await queue.get()
                if event is _DONE:
                    break
                yield event
            await task  # re-raises the run's error after RunFailed was yielded
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _config_for(self, prompt: str) -> RunConfig:
        """This run's config: the agent's, with the prompt's memories in the system message."""
        if self.memory is None or not self.memory_context:
            return self._config
        from toolweave.memory.context import memory_context

        block = await memory_context(self.memory, prompt, self.memory_context)
        if block is None:
            return self._config
        system = f"{self.instructions}\n\n{block}" if self.instructions else block
        return dataclasses.replace(self._config, system_message=Message.system(system))

    def __repr__(self) -> str:
        return (
            f"Agent(name={self.name!r}, model={self.model.model_name!r}, "
            f"tools={self.registry.names()})"
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


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"Agent({name}={value!r}) must be one of {', '.join(allowed)}")
