"""A slash command while it runs: its `model`, its `allowed-tools`, its `!` and `@` lines.

A Claude Code command file can name the model it runs on, the tools it may use, shell commands
whose output it embeds (`` !`git status` ``) and files it embeds (`@src/app.py`). Here:

- `model`: a name in `Commands.models` (the names command files use mapped to `Model`s), a
  `provider:model` string, or a bare Claude model name when the agent's model is Anthropic's;
  anything else keeps the agent's model, with a warning naming the command.
- `allowed-tools`: while the command's run lasts, the calls its entries list are pre-approved
  (allow rules below every deny and ask rule, `toolweave.governance.grants`); other calls are
  decided by the rules and approvals as usual, never refused just for being unlisted.
- `` !`cmd` ``: run through the agent's own shell tool (`bash`) under the run's governance
  (the declared-permission policy, plan mode, rules with the command's `allowed-tools`, hooks,
  approvals); its output replaces the line. A refusal is written in its place, so it is never
  silently dropped.
- `@path`: read with the agent's `read_file` tool (its file jail, under the same governance);
  the file's text follows the reference. A path that cannot be read is noted the same way.

Every such call is a tool invocation of the run (`RunResult.invocations`), emitted as events,
and ends like a turn's call for the run's stages (`call_ended`: its query-log row).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.agent._run.dispatch import CallSetup, dispatch_call
from toolweave.agent._run.stages import RunStage, call_ended
from toolweave.agent.orchestration.slash_commands import Command, Commands
from toolweave.governance.errors import CallBlocked
from toolweave.llm import Model, ToolCallPart
from toolweave.tools import PermissionDenied, ToolContext, ToolInvocation, ToolRegistry

if TYPE_CHECKING:
    from toolweave.agent._run.config import RunConfig
    from toolweave.agent.session import Session

logger = logging.getLogger("toolweave.agent.commands")

SHELL_TOOL = "bash"
READ_TOOL = "read_file"
_BANG = re.compile(r"!`([^`\n]+)`")
# `@file.ext` or `@dir/file`: an email address or an @mention is not a file reference.
_PATH_CHAR = r"[^\s`'\"()<>,;@]"
_AT = re.compile(rf"(?<![\w@`])@({_PATH_CHAR}*[./]{_PATH_CHAR}*[^\s`'\"()<>,;@.:])")
_ANTHROPIC_ALIASES = {
    "haiku": "claude-haiku-4-5",
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
}


class CommandRun(Protocol):
    """What a command's lines read of the run they belong to (the loop's `Run` is one)."""

    prompt: str
    registry: ToolRegistry
    ctx: ToolContext
    invocations: list[ToolInvocation]
    session: Session
    stages: tuple[RunStage, ...]

    @property
    def config(self) -> RunConfig: ...

    def call_setup(self, turn: int) -> CallSetup: ...


def command_config(config: RunConfig, command: Command, commands: Commands) -> RunConfig:
    """`config` with the command's model applied (its `allowed-tools` are the run's grant)."""
    model = _model(command, commands, config.model)
    return dataclasses.replace(config, model=model) if model is not None else config


def _model(command: Command, commands: Commands, current: Model) -> Model | None:
    name = command.model
    if not name or name == "inherit":
        return None
    if name in commands.models:
        chosen = commands.models[name]
        if not isinstance(chosen, Model):
            raise TypeError(f"Commands.models[{name!r}] must be a toolweave.llm.Model")
        return chosen
    from toolweave.llm.presets import model_from_string

    spec = name if ":" in name else None
    if spec is None and type(current).__name__ == "AnthropicModel":
        spec = f"anthropic:{_ANTHROPIC_ALIASES.get(name, name)}"
    if spec is not None:
        try:
            return model_from_string(spec)
        except ValueError as exc:
            logger.warning("/%s: model %r not applied: %s", command.name, name, exc)
            return None
    logger.warning(
        "/%s: model %r not applied (the agent's model is kept): map it in Commands.models or "
        "write provider:model",
        command.name,
        name,
    )
    return None


async def expand_context(run: CommandRun, command: Command) -> str:
    """The run's prompt with the command's `!` lines run and `@` files read (see above). Both
    are found in the expanded template before anything runs, so a command's output can never
    add a reference of its own."""
    prompt = run.prompt
    bangs = [(m.start(), m.end(), m.group(1).strip()) for m in _BANG.finditer(prompt)]
    ats = [
        (m.start(), m.end(), m.group(1))
        for m in _AT.finditer(prompt)
        if not any(start <= m.start() < end for start, end, _ in bangs)
    ]
    pieces: dict[int, tuple[int, str]] = {}
    for start, end, line in bangs:  # the shell first, in order, as Claude Code does
        pieces[start] = (end, await _shell(run, line))
    for start, end, path in ats:
        ok, text = await context_call(run, READ_TOOL, {"path": path})
        pieces[start] = (end, f"@{path}\n{text.rstrip()}" if ok else f"@{path} [not read: {text}]")
    out: list[str] = []
    position = 0
    for start in sorted(pieces):
        end, text = pieces[start]
        out.extend((prompt[position:start], text))
        position = end
    out.append(prompt[position:])
    return "".join(out)


async def _shell(run: CommandRun, line: str) -> str:
    ok, text = await context_call(run, SHELL_TOOL, {"command": line})
    return f"$ {line}\n{text.rstrip()}" if ok else f"[`{line}` was not run: {text}]"


async def context_call(run: CommandRun, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    """Call tool `name` through the run's governance, outside the conversation: `(ok, text)`
    with the tool's output, or the reason it did not run."""
    tool = run.registry.get(name)
    if tool is None:
        return False, f"this agent has no {name!r} tool"
    call = ToolCallPart(f"command-{uuid.uuid4().hex[:12]}", name, args)
    setup = run.call_setup(0)
    try:  # the registry's declared-permission policy, as for a turn's calls (a blocked line)
        run.registry.check_permissions(name, tool)
    except PermissionDenied as denied:
        setup.on_blocked(call, CallBlocked("policy", denied.message, tool=name))
        return False, denied.message
    child = run.ctx.for_call(call.id)
    try:
        outcome = await dispatch_call(setup, call, tool, child, run.config.tool_timeout)
    finally:
        run.ctx.cancellation.release(child.cancellation)
    invocation = outcome.invocation
    call_ended(run.stages, run.session, call, outcome)
    if invocation is not None:
        run.invocations.append(invocation)
    if invocation is not None and invocation.ok:
        return True, invocation.result.text
    return False, outcome.part.text
