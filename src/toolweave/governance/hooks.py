"""`Hooks`: Claude Code's hooks (same file format, events, exit codes and JSON answers), so users
reuse theirs unchanged, plus in-process hooks for Python code.

```json
{"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
    {"type": "command", "command": "./check.sh", "if": "Bash(git commit:*)", "timeout": 5},
    {"type": "http", "url": "http://127.0.0.1:8100/hook", "failClosed": true}]}]}}
```

Matchers are case-sensitive regexes over the tool's Claude Code name (`Bash`, `Read`,
`mcp__github__get_issue`) and its toolweave name (`bash`, `read_file`); the payload's
`tool_name` is the Claude Code name. What a file may hold is read by `_hook_config` (events
toolweave does not run are skipped with a warning, never fatal). In-process hooks
(`@hooks.on("PreToolUse", matcher="Bash")`) run before configured ones; hooks run one at a time
(except `async` ones, which run in the background) and the first block stops the rest. A file
given to `from_file` or `from_settings` is re-read whenever its content changes (by hash); a
broken edit keeps the last good configuration and logs why. Timeouts default to 10 s and are
capped at 60 s.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolweave.governance._hook_config import (
    DEFAULT_HOOK_TIMEOUT,
    HOOK_EVENTS,
    MAX_HOOK_TIMEOUT,
    ConfiguredHook,
    Group,
    compile_matcher,
    parse_hooks,
)
from toolweave.governance._hook_pins import Pins, changed, pin, script_paths
from toolweave.governance._hook_runners import RawResult, run_hook
from toolweave.governance._rule_patterns import Decision
from toolweave.governance.errors import HookConfigError
from toolweave.governance.rules import condition_matches

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "MAX_HOOK_TIMEOUT",
    "HookConfigError",
    "HookFunction",
    "HookOutcome",
    "Hooks",
]

logger = logging.getLogger("toolweave.hooks")

_TOOL_EVENTS = {
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
}
_MATCH_FIELD = {
    "SessionStart": "source",
    "PreCompact": "trigger",
    "Notification": "notification_type",
    "SessionEnd": "reason",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}
_PLAIN_TEXT_IS_CONTEXT = {"UserPromptSubmit", "SessionStart"}

HookFunction = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""An in-process hook: gets the payload, returns None or a Claude Code JSON answer."""


@dataclass
class HookOutcome:
    """What the hooks of one event decided, merged in order.

    `blocked` with `reason`: exit 2, `decision: "block"`, a deny, or `continue: false` (which
    also sets `stop`: end the run). `decision` is a PreToolUse `permissionDecision` (or a
    PermissionRequest behaviour); `updated_input` replaces the tool's arguments; `context`
    collects `additionalContext` (and plain stdout where Claude Code injects it).
    """

    event: str
    blocked: bool = False
    reason: str = ""
    decision: Decision | None = None
    decision_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    stop: bool = False
    stop_reason: str = ""
    system_messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


ONCE_PER_CALL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "Notification"})
"""Events whose hooks run once per call (PermissionRequest and Notification: once per approval
the call asks), even when the call goes on over several requests (an MCP input-required round,
`toolweave.tools.calls.CallRounds`): later rounds reuse the outcome."""


async def run_once(
    memo: dict[str, Any] | None,
    event: str,
    run: Callable[[], Awaitable[HookOutcome]],
    nth: int = 0,
) -> HookOutcome:
    """`run()`'s outcome, or for an event of `ONCE_PER_CALL_EVENTS` the one an earlier round
    of this call kept in `memo` (the call's `CallRounds.memo`; None: the call has no rounds);
    `nth` tells apart the approvals of one call (`GateContext.approvals`): each has its own."""
    key = f"hooks.{event}" + (f".{nth}" if nth else "")
    if memo is None or event not in ONCE_PER_CALL_EVENTS:
        return await run()
    kept = memo.get(key)
    if isinstance(kept, dict):
        return HookOutcome(**kept)
    outcome = await run()
    memo[key] = asdict(outcome)
    return outcome


class Hooks:
    """Hooks for every event; `run(event, payload)` fires the matching ones."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        source: str = "Hooks(...)",
        parents: tuple[Hooks, ...] = (),
        plugin_root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.source = source
        self.parents = parents
        self.plugin_root = os.fspath(plugin_root) if plugin_root is not None else None
        self._configured = parse_hooks(config or {}, source, plugin_root=self.plugin_root)
        self._pins: dict[str, Pins] = {}
        self._pin_scripts()
        self._local: dict[str, list[Group]] = {}
        self._background: set[asyncio.Task[RawResult]] = set()
        self._file: Path | None = None
        self._digest: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, cwd: str | None = None) -> Hooks:
        return cls(data, cwd=cwd)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, cwd: str | None = None,
        plugin_root: str | os.PathLike[str] | None = None,
    ) -> Hooks:  # fmt: skip
        """Hooks from a hooks.json (or any JSON file with a `hooks` key), reloaded on change.

        A plugin's `hooks/hooks.json` (beside `.claude-plugin/`) runs its commands with
        `CLAUDE_PLUGIN_ROOT` set to the plugin's folder; `plugin_root` says so explicitly."""
        file = Path(path).resolve()
        plugin = file.parent.parent
        if (
            plugin_root is None
            and file.parent.name == "hooks"
            and (plugin / ".claude-plugin").is_dir()
        ):
            plugin_root = plugin
        hooks = cls(cwd=cwd, source=str(file), plugin_root=plugin_root)
        hooks._file = file
        hooks._reload(initial=True)
        return hooks

    @classmethod
    def from_settings(cls, path: str | os.PathLike[str], *, cwd: str | None = None) -> Hooks:
        """The `hooks` of a Claude Code settings.json (none when it has no `hooks` key)."""
        return cls.from_file(path, cwd=cwd)

    def on(self, event: str, matcher: str | None = None) -> Callable[[HookFunction], HookFunction]:
        """Register an async function as an in-process hook (it runs before configured ones)."""
        _check_event(event, "Hooks.on")
        compiled = compile_matcher(matcher, f"Hooks.on({event!r})")

        def register(func: HookFunction) -> HookFunction:
            if not inspect.iscoroutinefunction(func):
                raise HookConfigError(f"in-process hook {func!r} must be an `async def`")
            self._local.setdefault(event, []).append(Group(compiled, (func,)))
            return func

        return register

    def narrow(self, child: Hooks) -> Hooks:
        """`child`'s hooks after these: a child run keeps every hook it inherits."""
        combined = Hooks(
            cwd=child.cwd or self.cwd, source=child.source, parents=(self,),
            plugin_root=child.plugin_root,
        )  # fmt: skip
        combined._configured, combined._local = child._configured, child._local
        combined._pins = child._pins
        combined._file, combined._digest = child._file, child._digest
        return combined

    def files(self) -> tuple[str, ...]:
        """What these hooks make the host run or load: the hooks file and every script a
        command names (real paths), for a sandbox to keep read-only."""
        own = () if self._file is None else (str(self._file),)
        scripts = (path for pins in self._pins.values() for path, _ in pins)
        inherited = (f for parent in self.parents for f in parent.files())
        return tuple(dict.fromkeys((*own, *scripts, *inherited)))

    def _pin_scripts(self) -> None:
        """Hash every script the configured commands name, as loaded now."""
        cwd = self.cwd or os.getcwd()
        self._pins = {
            hook.spec.command: pin(script_paths(hook.spec.command, cwd, self.plugin_root))
            for groups in self._configured.values()
            for group in groups
            for hook in group.hooks
            if isinstance(hook, ConfiguredHook) and hook.spec.command is not None
        }

    def _tampered(self, hook: ConfiguredHook) -> RawResult | None:
        """A block when a script `hook` names changed since it was loaded."""
        command = hook.spec.command
        path = None if command is None else changed(self._pins.get(command, ()))
        if path is None:
            return None
        return RawResult(
            blocked=True,
            reason=f"hook script {path} changed since the hooks were loaded, so the hook does "
            "not run and the call is blocked; check the script, then restart the host (or "
            "save the hooks file) to load it again",
        )

    async def settle(self) -> None:
        """Wait for the `async` hooks started so far (at shutdown, or in a test)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def has(self, event: str) -> bool:
        self._reload()
        return bool(self._configured.get(event) or self._local.get(event)) or any(
            p.has(event) for p in self.parents
        )

    async def run(
        self, event: str, payload: dict[str, Any], *, names: tuple[str, ...] = ()
    ) -> HookOutcome:
        """Fire `event`'s matching hooks in order (parents', in-process, configured).

        `names` are extra names a tool matcher may use (an MCP tool's `mcp__server__tool`).
        """
        _check_event(event, "Hooks.run")
        outcome = HookOutcome(event)
        await self._run_into(outcome, event, payload, names)
        return outcome

    async def _run_into(
        self, outcome: HookOutcome, event: str, payload: dict[str, Any], names: tuple[str, ...]
    ) -> None:
        for parent in self.parents:
            await parent._run_into(outcome, event, payload, names)
            if outcome.blocked:
                return
        self._reload()
        cwd = self.cwd or os.getcwd()
        body = {"hook_event_name": event, "cwd": cwd, **payload}
        subjects = _subjects(event, body, names)
        for group in (*self._local.get(event, ()), *self._configured.get(event, ())):
            matcher = group.matcher
            if matcher and subjects is not None and not any(map(matcher.fullmatch, subjects)):
                continue
            for hook in group.hooks:
                if outcome.updated_input is not None and "tool_input" in body:
                    body = {**body, "tool_input": outcome.updated_input}
                if isinstance(hook, ConfiguredHook):
                    if hook.condition is not None and not _condition(hook.condition, body):
                        continue
                    if (tampered := self._tampered(hook)) is not None:
                        _merge(outcome, tampered)
                        return
                    if hook.background:  # `async`: runs on, its answer is not awaited
                        task = asyncio.ensure_future(run_hook(hook.spec, dict(body), cwd))
                        self._background.add(task)
                        task.add_done_callback(self._background.discard)
                        continue
                raw = await _run_one(hook, body, cwd)
                _merge(outcome, raw)
                if outcome.blocked:
                    return

    def _reload(self, *, initial: bool = False) -> None:
        if self._file is None:
            return
        try:
            data = self._file.read_bytes()
        except OSError as exc:
            if initial:
                why = exc.strerror or type(exc).__name__  # str(exc) repeats the path
                raise HookConfigError(f"cannot read hooks file {self._file}: {why}") from exc
            logger.error(
                "hooks file %s unreadable (%s); keeping the last good hooks", self._file, exc
            )
            return
        digest = hashlib.sha256(data).hexdigest()
        if digest == self._digest:
            return
        try:
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                raise HookConfigError(f"{self._file}: not valid JSON: {exc}") from exc
            if not isinstance(parsed, dict):
                raise HookConfigError(f"{self._file}: expected a JSON object with `hooks`")
            if "hooks" not in parsed and not set(parsed) <= set(HOOK_EVENTS):
                parsed = {"hooks": {}}  # a settings file without hooks
            self._configured = parse_hooks(parsed, str(self._file), plugin_root=self.plugin_root)
            self._pin_scripts()
        except HookConfigError as exc:
            if initial:  # the message already starts with the file's path
                raise HookConfigError(f"invalid hooks file {exc}") from exc
            logger.error(
                "hooks file %s is invalid (%s); keeping the last good hooks", self._file, exc
            )
            return
        self._digest = digest


def _condition(condition: str, body: Mapping[str, Any]) -> bool:
    """A hook's `if` rule: only tool events have a call to match; elsewhere it always runs."""
    tool_input = body.get("tool_input")
    if body.get("hook_event_name") not in _TOOL_EVENTS or not isinstance(tool_input, Mapping):
        return True
    if "file_path" in tool_input:  # the absolute path, as the tool will open it
        tool_input = {"file_path": tool_input["file_path"]}
    return condition_matches(condition, str(body.get("tool_name", "")), tool_input)


async def _run_one(
    hook: ConfiguredHook | HookFunction, body: dict[str, Any], cwd: str
) -> RawResult:
    if isinstance(hook, ConfiguredHook):
        return await run_hook(hook.spec, body, cwd)
    try:
        answer = await hook(dict(body))
    except Exception as exc:
        return RawResult(error=f"in-process hook {hook.__qualname__} raised {exc!r}")
    if answer is not None and not isinstance(answer, dict):
        return RawResult(error=f"in-process hook {hook.__qualname__} returned {answer!r}")
    return RawResult(output=answer)


def _merge(outcome: HookOutcome, raw: RawResult) -> None:
    event = outcome.event
    if raw.error is not None:
        logger.warning("%s hook error (non-blocking): %s", event, raw.error)
        outcome.errors.append(raw.error)
        return
    if raw.blocked:
        outcome.blocked, outcome.reason = True, raw.reason
        if event in ("PreToolUse", "PermissionRequest"):
            outcome.decision = "deny"
        return
    if raw.output is None:
        if raw.text.strip() and event in _PLAIN_TEXT_IS_CONTEXT:
            outcome.context.append(raw.text.strip())
        return
    out = raw.output
    if isinstance(out.get("systemMessage"), str):
        outcome.system_messages.append(out["systemMessage"])
    specific = out.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if isinstance(specific.get("additionalContext"), str):
        outcome.context.append(specific["additionalContext"])
    if isinstance(specific.get("updatedInput"), dict):
        outcome.updated_input = specific["updatedInput"]
    decision = specific.get("permissionDecision")
    if event == "PermissionRequest" and isinstance(specific.get("decision"), dict):
        behaviour = specific["decision"]
        decision = behaviour.get("behavior")
        if isinstance(behaviour.get("updatedInput"), dict):
            outcome.updated_input = behaviour["updatedInput"]
        specific = {"permissionDecisionReason": behaviour.get("message", "")}
    legacy = out.get("decision")
    if decision is None and legacy in ("approve", "block") and event == "PreToolUse":
        decision = "allow" if legacy == "approve" else "deny"
    if decision in ("allow", "deny", "ask"):
        outcome.decision = _stricter(outcome.decision, decision)
        outcome.decision_reason = str(
            specific.get("permissionDecisionReason") or out.get("reason") or ""
        )
        if decision == "deny":
            outcome.blocked = True
            outcome.reason = outcome.decision_reason or f"denied by a {event} hook"
    elif legacy == "block":
        outcome.blocked, outcome.reason = (
            True,
            str(out.get("reason") or f"blocked by a {event} hook"),
        )
    if out.get("continue") is False:
        outcome.blocked = outcome.stop = True
        outcome.stop_reason = str(out.get("stopReason") or f"stopped by a {event} hook")
        outcome.reason = outcome.reason or outcome.stop_reason


def _stricter(current: Decision | None, new: Decision) -> Decision:
    order = {"allow": 0, "ask": 1, "deny": 2}
    return new if current is None or order[new] > order[current] else current


def _subjects(event: str, body: dict[str, Any], names: tuple[str, ...]) -> list[str] | None:
    """The strings a group's matcher is tried against, or None when the event has no matcher."""
    if event in _TOOL_EVENTS:
        return [str(body.get("tool_name", "")), *names]
    if event in _MATCH_FIELD:
        return [str(body.get(_MATCH_FIELD[event], ""))]
    return None


def _check_event(event: str, where: str) -> None:
    if event not in HOOK_EVENTS:
        raise HookConfigError(
            f"{where}: unknown hook event {event!r}; use one of {', '.join(HOOK_EVENTS)}"
        )
