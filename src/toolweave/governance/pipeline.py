"""`Governance`: the one gate pipeline every run's tool calls pass, cheapest check first.

plan mode -> gates (the agent's circuit breaker, then `gates`) -> rules -> PreToolUse hooks ->
admin approval -> user approval, run in this order for every call by `GovernanceMiddleware`
(`toolweave.governance.middleware`), the governance stage of the call chain. A block is the call's
recoverable error result (`CallBlocked`, with the stage that blocked it) and the run goes on;
only a hook's `continue: false` ends the run here. The declared-permission policy is not a stage
of this pipeline: it has one decider, `ToolRegistry.check_permissions`, which the agent loop
calls for a whole turn right after `precheck` and `ToolRegistry.invoke` calls before every
execution, so a denial (`PermissionDenied`, which ends the run) is never skipped by a caller
that uses the registry without governance. The safe default: a shell, delete or destructive
tool that no rule allows is asked about (unless the policy allows it outright,
`PermissionPolicy.skips_asking`), and with no approver that means refused, with the fix named.

Every run an agent starts uses this object: the main run, subagents, team members and scheduled
runs get `governance.child(...)`, which may add rules and hooks (narrowing) but never drops the
parent's; hook payloads inside a child carry `agent_id`, `agent_type` and the parent chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from toolweave.errors import ConfigError
from toolweave.governance._claude_payload import _claude_input, _own_arguments, _response_object
from toolweave.governance._rule_patterns import with_suggested_rule
from toolweave.governance._transcript import write_transcript
from toolweave.governance.approvals import (
    DEFAULT_APPROVAL_TIMEOUT,
    ApprovalRequest,
    Approver,
    ask_approval,
)
from toolweave.governance.context import (
    PERMISSION_MODES,
    SCHEDULED,
    AgentIdentity,
    Clearance,
    GateContext,
    PermissionMode,
)
from toolweave.governance.errors import CallBlocked, HookStopped, Stage
from toolweave.governance.gates import ToolGate
from toolweave.governance.hooks import HookOutcome, Hooks, run_once
from toolweave.governance.probes import probed_decision
from toolweave.governance.rules import Explanation, Rules, call_rules
from toolweave.tools import ApprovalRequired, PermissionPolicy, Tool
from toolweave.tools.base import call_annotations
from toolweave.tools.claude_names import claude_code_name, tool_names
from toolweave.tools.targets import set_target_check

__all__ = [
    "PERMISSION_MODES",
    "AgentIdentity",
    "CallBlocked",
    "Clearance",
    "GateContext",
    "Governance",
    "HookStopped",
    "PermissionMode",
    "Stage",
]

PLAN_MODE_EXEMPT = frozenset({"todo_write"})
"""Tools plan mode lets through although they write: the plan itself."""
_EDIT_PERMISSIONS = frozenset({"write", "filesystem"})


@dataclass(frozen=True)
class Governance:
    """Everything that decides whether a tool call runs, for every call of every run (see the
    module docstring); `Agent(governance=...)` takes one.

    `rules` (`Rules`, Claude Code's permission syntax), `hooks` (`Hooks`), `approver` (asked
    when a call needs a person), `admin_approver` (asked for admin-only tools) and
    `approval_timeout` (seconds an approver may take) make the pipeline; `policy` is the
    declared-permission policy (`PermissionPolicy`); `gates` are the caller's own `ToolGate`
    checks, run before the rules; `mode` is the permission mode a new session starts in (a
    session given its own mode keeps it). Each field is checked here, so a wrong type fails at
    construction naming the field.
    """

    rules: Rules | None = None
    hooks: Hooks | None = None
    approver: Approver | None = None
    admin_approver: Approver | None = None
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    identity: AgentIdentity = field(default_factory=AgentIdentity)
    approval_hint: str | None = None
    """How to allow a call nobody can be asked about; `{rule}`: the narrowest allow rule, quoted."""
    policy: PermissionPolicy | None = None
    gates: Sequence[ToolGate] = ()
    mode: PermissionMode | None = None

    def __post_init__(self) -> None:
        if not self.approval_timeout > 0:
            raise ConfigError(
                f"Governance(approval_timeout=...) must be a positive number of seconds, got "
                f"{self.approval_timeout!r}"
            )
        for name, value, kind in (
            ("rules", self.rules, Rules),
            ("hooks", self.hooks, Hooks),
            ("policy", self.policy, PermissionPolicy),
        ):
            if value is not None and not isinstance(value, kind):
                got = type(value).__name__
                raise TypeError(f"Governance({name}=...) must be a {kind.__name__}, got {got}")
        approvers = (("approver", self.approver), ("admin_approver", self.admin_approver))
        for name, approver in approvers:
            if approver is not None and not callable(approver):
                raise TypeError(
                    f"Governance({name}=...) must be an async function of an ApprovalRequest, "
                    f"got {approver!r}"
                )
        gates = tuple(self.gates)
        for gate in gates:
            if not isinstance(gate, ToolGate):
                raise TypeError(
                    f"Governance(gates=...) items need an `async def check(self, request)` "
                    f"method; got {gate!r}"
                )
        object.__setattr__(self, "gates", gates)
        if self.mode is not None and self.mode not in PERMISSION_MODES:
            raise ConfigError(
                f"Governance(mode={self.mode!r}) is not a permission mode; use one of "
                f"{', '.join(PERMISSION_MODES)}"
            )

    @classmethod
    def of(cls, value: Governance | Rules | PermissionPolicy | None) -> Governance:
        """What `Agent(governance=...)` accepts, as a `Governance`: a `Governance` as it is;
        `Rules` (such as `Rules.from_settings(".claude/settings.json")`) as
        `Governance(rules=...)`; a `PermissionPolicy` as `Governance(policy=...)`; None as
        `Governance()` (the safe defaults: shell, delete and destructive tools ask)."""
        if value is None:
            return cls()
        if isinstance(value, Governance):
            return value
        if isinstance(value, Rules):
            return cls(rules=value)
        if isinstance(value, PermissionPolicy):
            return cls(policy=value)
        raise TypeError(
            f"Agent(governance=...) must be a Governance, Rules or a PermissionPolicy, got "
            f"{type(value).__name__}"
        )

    def child(
        self,
        *,
        agent_id: str,
        agent_type: str,
        rules: Rules | None = None,
        hooks: Hooks | None = None,
    ) -> Governance:
        """The pipeline for a run this one starts: the same approvers, the parent's rules and
        hooks narrowed by the child's own (never widened), and the child's identity. A
        `"scheduled"` run has no requester to ask, so its questions go to the admin approver
        only (none configured: refused), and so do those of every run it starts."""
        merged_rules = self.rules
        if rules is not None:
            merged_rules = rules if self.rules is None else self.rules.narrow(rules)
        merged_hooks = self.hooks
        if hooks is not None:
            merged_hooks = hooks if self.hooks is None else self.hooks.narrow(hooks)
        parents = (*self.identity.parents, self.identity.agent_id)
        approver = self.admin_approver if agent_type == SCHEDULED else self.approver
        return replace(
            self,
            approver=approver,
            rules=merged_rules,
            hooks=merged_hooks,
            identity=AgentIdentity(agent_id, agent_type, parents),
        )

    # -- before the call ----------------------------------------------------------------

    def precheck(
        self,
        tool_name: str,
        tool: Tool | None,
        gate: GateContext,
        args: Mapping[str, Any] | None = None,
    ) -> None:
        """The instant stage, run for every call of a turn before any starts: plan mode (raises
        `CallBlocked`), judged by this call's annotations (`tools.call_annotations`)."""
        if tool is None:
            return  # the registry answers unknown names with what exists
        read_only = call_annotations(tool, args).read_only
        if gate.mode == "plan" and not read_only and tool_name not in PLAN_MODE_EXEMPT:
            raise CallBlocked(
                "plan",
                "plan mode is on, so only read-only tools (and todo_write) run; "
                "present the plan, then leave plan mode (Session.permission_mode = "
                "'default') to carry it out",
                tool=tool_name,
            )

    async def clear(
        self,
        tool_name: str,
        call_id: str | None,
        args: dict[str, Any],
        tool: Tool | None,
        gate: GateContext,
    ) -> Clearance:
        """The stages that may wait, after `precheck`: rules, PreToolUse hooks, admin and user
        approval. Returns the clearance or raises `CallBlocked` (recoverable) or `HookStopped`
        (ends the run)."""
        if tool is None:
            return Clearance(args)
        explanation = self.decide(tool_name, args, tool, gate)
        if explanation.decision == "ask" and explanation.rule is None:
            explanation = await self._probed(tool_name, call_id, args, tool, gate) or explanation
        if explanation.decision == "deny":
            await self._denied(tool_name, call_id, args, tool, gate, explanation.reason)
            raise CallBlocked("rules", explanation.reason, tool=tool_name)
        explicit_ask = explanation.decision == "ask" and explanation.rule is not None
        needs_approval = explanation.decision == "ask"
        reason = explanation.reason
        context: tuple[str, ...] = ()
        if self.hooks is not None and self.hooks.has("PreToolUse"):
            outcome = await self._hook("PreToolUse", tool_name, call_id, args, tool, gate)
            if outcome.stop:
                raise HookStopped(outcome.stop_reason, tool=tool_name)
            if outcome.blocked:
                await self._denied(tool_name, call_id, args, tool, gate, outcome.reason)
                raise CallBlocked("hook", outcome.reason, tool=tool_name)
            updated = _own_arguments(outcome.updated_input, tool)
            if updated is not None and updated != args:
                # The rewritten call meets the rules again: a hook tightens, never loosens.
                args = updated
                again = self.decide(tool_name, args, tool, gate)
                if again.decision == "deny":
                    await self._denied(tool_name, call_id, args, tool, gate, again.reason)
                    raise CallBlocked("rules", again.reason, tool=tool_name)
                if again.decision == "ask":
                    explicit_ask = explicit_ask or again.rule is not None
                    needs_approval, reason = True, again.reason
            if outcome.decision == "ask":
                needs_approval = True
                reason = outcome.decision_reason or "a PreToolUse hook asked for approval"
            elif outcome.decision == "allow" and not explicit_ask:
                needs_approval = False  # a hook may skip the default question, not an ask rule
            context = tuple(outcome.context)
        if getattr(tool, "admin_approval", False):
            await self._approve(
                "admin",
                tool_name,
                call_id,
                args,
                tool,
                gate,
                "it changes configuration, so it always needs an admin",
            )
        if needs_approval:
            if gate.mode == "dontAsk":
                message = f"{reason}; permission mode 'dontAsk' turns every question into a no"
                await self._denied(tool_name, call_id, args, tool, gate, message)
                raise CallBlocked("approval", message, tool=tool_name)
            await self._approve("user", tool_name, call_id, args, tool, gate, reason)
        targets = getattr(tool, "checks_targets", False) is True  # each file or redirect hop
        set_target_check(self.rules_for(tool, gate).allows(tool_name, tool) if targets else None)
        return Clearance(args, context)

    async def _probed(
        self,
        tool_name: str,
        call_id: str | None,
        args: dict[str, Any],
        tool: Tool,
        gate: GateContext,
    ) -> Explanation | None:
        """The decision by the permission patterns the tool reports (`probes`); a failed probe
        refuses the call, since what it would touch is unknown."""
        try:
            return await probed_decision(self.rules_for(tool, gate), tool_name, tool, args)
        except Exception as exc:
            message = f"the permission probe failed, so the call is refused: {exc}"
            await self._denied(tool_name, call_id, args, tool, gate, message)
            raise CallBlocked("rules", message, tool=tool_name) from None

    async def approve_request(
        self,
        error: ApprovalRequired,
        tool_name: str,
        call_id: str | None,
        args: dict[str, Any],
        tool: Tool | None,
        gate: GateContext,
    ) -> None:
        """A tool raised `ApprovalRequired`: ask (as for an `ask` rule); raises CallBlocked when
        not approved. `bypassPermissions` approves, `dontAsk` refuses without asking."""
        if gate.mode == "bypassPermissions":
            return
        if gate.mode == "dontAsk":
            raise CallBlocked(
                "approval", f"{error.reason}; permission mode 'dontAsk' refuses it", tool=tool_name
            )
        await self._approve(error.kind, tool_name, call_id, args, tool, gate, error.reason)

    def rules_for(self, tool: Tool, gate: GateContext) -> Rules:
        """The rule set a call of `tool` meets in this run (`rules.call_rules`)."""
        granted = gate.preapproved() if gate.preapproved is not None else None
        return call_rules(self.rules if self.rules is not None else _DEFAULT_RULES, tool, granted)

    def decide(
        self, tool_name: str, args: dict[str, Any], tool: Tool, gate: GateContext
    ) -> Explanation:
        """The rules' decision for this call in this gate's mode, with why: what `clear` acts
        on, and what `toolweave policy explain --config` prints."""
        rules = self.rules_for(tool, gate)
        accept_edits = gate.mode == "acceptEdits"
        explanation = rules.explain(tool_name, args, tool=tool, accept_edits=accept_edits)
        explanation = rules.unchecked_refused(explanation, tool_name, tool, gate.mode)
        if explanation.decision != "ask":
            return explanation
        policy = gate.policy
        if (
            explanation.rule is None
            and policy is not None
            and policy.skips_asking(tool.permissions)
        ):
            return Explanation("allow", "the permission policy allows it")
        if gate.mode == "bypassPermissions":
            return Explanation("allow", "permission mode 'bypassPermissions'")
        if (
            accept_edits
            and explanation.rule is None
            and _edits_only(tool)
            and not getattr(tool, "destructive_declared", False)  # deleting asks in every mode
        ):
            return Explanation("allow", "permission mode 'acceptEdits' accepts file edits")
        return explanation

    async def _approve(
        self,
        kind: Literal["user", "admin"],
        tool_name: str,
        call_id: str | None,
        args: dict[str, Any],
        tool: Tool | None,
        gate: GateContext,
        reason: str,
    ) -> None:
        gate.approvals += 1  # its hooks run once per call, in whichever round asks it
        if kind == "user" and self.hooks is not None and self.hooks.has("PermissionRequest"):
            outcome = await self._hook("PermissionRequest", tool_name, call_id, args, tool, gate)
            if outcome.decision == "allow":
                return
            if outcome.blocked or outcome.decision == "deny":
                why = (
                    outcome.reason or outcome.decision_reason or "a PermissionRequest hook said no"
                )
                await self._denied(tool_name, call_id, args, tool, gate, why)
                raise CallBlocked("approval", why, tool=tool_name)
        approver = self.admin_approver if kind == "admin" else self.approver
        if approver is not None and self.hooks is not None and self.hooks.has("Notification"):
            name = claude_code_name(tool_name, tool)
            notify = partial(
                self.fire,
                "Notification",
                gate,
                notification_type="permission_prompt",
                message=f"toolweave needs your permission to use {name}",
                title="Permission needed",
            )
            await run_once(gate.memo, "Notification", notify, gate.approvals)
        request = ApprovalRequest(
            tool_name,
            dict(args),
            reason,
            gate.session_id,
            gate.requester,
            kind,
            call_id,
            self.identity.agent_id,
        )
        approved, why = await ask_approval(
            approver, request, gate.state, timeout=self.approval_timeout, remember=kind == "user"
        )
        if approved:
            return
        if approver is None:
            hint = with_suggested_rule(self.approval_hint, tool_name, tool, args)
            why = _no_approver_fix(kind, tool_name, reason, hint)
        else:
            why = f"{reason}; {why}"
        await self._denied(tool_name, call_id, args, tool, gate, why)
        raise CallBlocked("admin" if kind == "admin" else "approval", why, tool=tool_name)

    # -- hooks --------------------------------------------------------------------------

    def _payload(self, gate: GateContext, **fields: Any) -> dict[str, Any]:
        transcript = {}
        if gate.history is not None:
            transcript["transcript_path"] = write_transcript(gate.session_id, gate.history())
        return {
            "session_id": gate.session_id,
            **transcript,
            "permission_mode": gate.mode,
            **self.identity.payload(),
            **fields,
        }

    async def _hook(
        self,
        event: str,
        tool_name: str,
        call_id: str | None,
        args: Mapping[str, Any],
        tool: Tool | None,
        gate: GateContext,
        **fields: Any,
    ) -> HookOutcome:
        assert self.hooks is not None
        payload = self._payload(
            gate,
            tool_name=claude_code_name(tool_name, tool),
            tool_input=_claude_input(args, tool),
            tool_use_id=call_id,
            **fields,
        )
        run = partial(self.hooks.run, event, payload, names=tool_names(tool_name, tool))
        return await run_once(gate.memo, event, run, gate.approvals)

    async def _denied(
        self,
        tool_name: str,
        call_id: str | None,
        args: Mapping[str, Any],
        tool: Tool | None,
        gate: GateContext,
        reason: str,
    ) -> None:
        if self.hooks is not None and self.hooks.has("PermissionDenied"):
            await self._hook(
                "PermissionDenied", tool_name, call_id, args, tool, gate, reason=reason
            )

    async def after(
        self,
        tool_name: str,
        call_id: str | None,
        args: Mapping[str, Any],
        tool: Tool | None,
        gate: GateContext,
        *,
        response: Any,
        error: str | None,
    ) -> HookOutcome | None:
        """PostToolUse (or PostToolUseFailure) hooks; their block reason and context go back to
        the model with the result. None when no hook listens."""
        event = "PostToolUseFailure" if error is not None else "PostToolUse"
        if self.hooks is None or not self.hooks.has(event):
            return None
        extra = (
            {"error": error}
            if error is not None
            else {"tool_response": _response_object(claude_code_name(tool_name, tool), response)}
        )
        return await self._hook(event, tool_name, call_id, args, tool, gate, **extra)

    async def fire(self, event: str, gate: GateContext, **fields: Any) -> HookOutcome:
        """Fire a run-level event (SessionStart, UserPromptSubmit, Notification, Stop,
        SubagentStart, SubagentStop, PreCompact, SessionEnd) with the common payload."""
        if self.hooks is None or not self.hooks.has(event):
            return HookOutcome(event)
        return await self.hooks.run(event, self._payload(gate, **fields))


_DEFAULT_RULES = Rules()


def _edits_only(tool: Tool) -> bool:
    values = {p.value for p in tool.permissions}
    return (
        bool(values) and values <= _EDIT_PERMISSIONS | {"read"} and bool(values & _EDIT_PERMISSIONS)
    )


def _no_approver_fix(kind: str, tool_name: str, reason: str, hint: str | None) -> str:
    if kind == "admin":
        return (
            f"{reason}, and no admin approver is configured, so it was refused. Pass "
            "Governance(admin_approver=...) (the requester's own approver cannot approve it)"
        )
    if hint is not None:
        return f"{reason}, and nobody can be asked, so it was refused (safe by default). {hint}"
    return (
        f"{reason}, and no approver is configured, so it was refused (safe by default). To "
        f"allow it, pass Governance(approver=...) to ask a person, add a rule such as "
        f'Rules(allow=["{tool_name}(...)"]) (for a shell: Rules(allow=["bash(git *)"])), or '
        'opt out with Rules(default="allow") or PermissionPolicy.allow_all()'
    )
