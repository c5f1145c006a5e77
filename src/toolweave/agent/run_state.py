"""`RunState`: a paused agent run as JSON, to save now and finish later in any process.

A run pauses when an approver defers (`toolweave.governance.defer_approval`, or any approver
raising `ApprovalDeferred`): the calls of that turn that need no answer finish, the others
wait, and the run raises `RunPaused` carrying this state. It holds what the run had (the
history, the system message it was shaped with, the results of the turn's finished calls, the
pending calls with the arguments and reason the person is shown, usage, turns used, the
session's permission mode and "always" answers) and the agent's configuration by reference
(name, model, digests of instructions, tools and output), never objects. `Agent.resume`
checks that reference, so a state goes back only to the agent configuration that paused it.

`to_json` seals the text with an HMAC (SHA-256); `from_json` refuses a text whose seal does not
match, so an edit after the save (a pending call's arguments, the history) is detected. Without
a `secret` the key is public and the seal only catches edits that do not recompute it; pass
the same `secret` to both to make it tamper-evident against whoever can write the store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolweave.agent.errors import RunStateError
from toolweave.governance.approvals import ApprovalRequest
from toolweave.llm import Message, ToolResultPart, Usage

if TYPE_CHECKING:
    from toolweave.agent._run.config import RunConfig

__all__ = ["PendingCall", "RunState"]

STATE_VERSION = 1
"""The layout `to_json` writes; `from_json` refuses others."""
_PUBLIC_KEY = b"toolweave.run_state"


@dataclass(frozen=True)
class PendingCall:
    """A call waiting for a person: what they are shown (`tool_name`, `args`, `reason`), who
    must answer (`kind`: "user" or "admin") and the `call_id` to answer it by."""

    call_id: str
    tool_name: str
    args: dict[str, Any]
    reason: str
    kind: str = "user"

    @classmethod
    def of(cls, request: ApprovalRequest) -> PendingCall:
        return cls(
            request.call_id or "", request.tool_name, request.args, request.reason, request.kind
        )

    def prompt(self) -> str:
        """One line for a person: what will run, and why it needs a yes."""
        kind: Literal["user", "admin"] = "admin" if self.kind == "admin" else "user"
        question = ApprovalRequest(self.tool_name, self.args, self.reason, None, kind=kind)
        return question.prompt()


def agent_reference(config: RunConfig) -> dict[str, Any]:
    """The configuration a state is bound to, by name and digest (no objects)."""
    defs = sorted(config.registry.definitions(), key=lambda d: d.name)
    tools = [[d.name, d.parameters] for d in defs]
    system = config.system_message.text if config.system_message is not None else ""
    return {
        "name": config.name,
        "model": f"{type(config.model).__name__}:{config.model.model_name}",
        "instructions": _digest(system),
        "tools": _digest(tools),
        "output": config.output.name if config.output is not None else None,
        "max_turns": config.max_turns,
    }


@dataclass
class RunState:
    """A paused run (see the module docstring); `pending` lists the calls to answer."""

    run_id: str
    session_id: str
    agent: dict[str, Any]
    prompt: str
    messages: list[Message]
    pending: list[PendingCall]
    completed: list[ToolResultPart] = field(default_factory=list)
    system: Message | None = None
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    permission_mode: str = "default"
    always: list[str] = field(default_factory=list)
    requester: str | None = None

    def to_json(self, *, secret: str | None = None) -> str:
        """The state as sealed JSON text (see the module docstring for `secret`)."""
        body = self._body()
        body["seal"] = _seal(body, secret)
        return json.dumps(body, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, secret: str | None = None) -> RunState:
        """Load what `to_json` wrote; raises `RunStateError` when the seal does not match (the
        text was changed after the save, or another `secret` sealed it)."""
        try:
            body = json.loads(text)
            seal = body.pop("seal")
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise RunStateError(f"not a saved RunState (RunState.to_json output): {exc}") from None
        if body.get("version") != STATE_VERSION:
            raise RunStateError(
                f"RunState version {body.get('version')!r} is not {STATE_VERSION}; resume it "
                "with the toolweave version that saved it"
            )
        if not hmac.compare_digest(str(seal), _seal(body, secret)):
            raise RunStateError(
                "the run state was changed after it was saved (its seal does not match), or "
                "was sealed with another secret; pending calls are not resumed from it"
            )
        try:
            return cls._of(body)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # sealed, yet not ours
            raise RunStateError(
                f"the run state's seal matches but its content is not a RunState layout "
                f"({type(exc).__name__}: {exc}); pending calls are not resumed from it"
            ) from None

    @classmethod
    def _of(cls, body: dict[str, Any]) -> RunState:
        return cls(
            run_id=body["run_id"],
            session_id=body["session_id"],
            agent=body["agent"],
            prompt=body["prompt"],
            messages=[Message.from_dict(m) for m in body["messages"]],
            pending=[PendingCall(**p) for p in body["pending"]],
            completed=[p for m in body["completed"] for p in Message.from_dict(m).tool_results],
            system=Message.from_dict(body["system"]) if body["system"] is not None else None,
            usage=Usage(**body["usage"]),
            turns=body["turns"],
            permission_mode=body["permission_mode"],
            always=body["always"],
            requester=body["requester"],
        )

    def check(self, config: RunConfig) -> None:
        """Raise `RunStateError` naming each part of `config` that differs from the saved one."""
        here = agent_reference(config)
        differ = [key for key in here if here[key] != self.agent.get(key)]
        if differ:
            saved = ", ".join(f"{k}={self.agent.get(k)!r}" for k in differ)
            now = ", ".join(f"{k}={here[k]!r}" for k in differ)
            raise RunStateError(
                f"this run state was saved by another agent configuration ({saved}; this "
                f"agent has {now}); resume it with the agent that paused it"
            )

    def _body(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "agent": self.agent,
            "prompt": self.prompt,
            "messages": [m.to_dict() for m in self.messages],
            "pending": [asdict(p) for p in self.pending],
            "completed": [Message("tool", [p]).to_dict() for p in self.completed],
            "system": self.system.to_dict() if self.system is not None else None,
            "usage": asdict(self.usage),
            "turns": self.turns,
            "permission_mode": self.permission_mode,
            "always": sorted(self.always),
            "requester": self.requester,
        }


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def _digest(value: Any) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()[:16]


def _seal(body: dict[str, Any], secret: str | None) -> str:
    key = secret.encode() if secret is not None else _PUBLIC_KEY
    return hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()
