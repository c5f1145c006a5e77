"""AgentDojo's banking suite through toolweave: does the governance pipeline stop prompt injection?

    .venv/bin/pip install -e '.[bench]'   # agentdojo: bench only, never a toolweave dependency
    .venv/bin/python benchmarks/agentdojo_banking.py [--attack important_instructions]

Offline and model-free. Every user task of the suite (v1.2) runs through `toolweave.Agent` on
AgentDojo's own tools and environment, driven by a scripted model:

* the *obedient* model does the user's task (AgentDojo's ground-truth calls) and also obeys every
  injected instruction it reads in a tool result (it performs the injection task's ground-truth
  calls as soon as the injection appears): the worst case, an agent with no resistance at all;
* the *honest* model only does the user's task, over the same tasks without injections.

Two configurations:

* no policy: `Agent(model, tools)` (banking tools declare no shell/delete permission, so the
  safe default asks nothing);
* the documented policy, `BANKING_RULES` below plus the approval gate: read-only tools run,
  every money-moving or account-changing tool asks the person. The person is simulated as an
  attentive account holder who approves a call only when it is one their own request implies
  (the user task's ground-truth call, same function and arguments) and says no to anything else.
  A third row shows the same gate with a rubber-stamp approver (says yes to everything): the gate
  is only as good as the person answering it.

AgentDojo's own checks score each run: `utility` (the user task was done) and `security` (the
injection task's goal was reached, i.e. the attack succeeded).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolweave import Agent
from toolweave.governance import Governance
from toolweave.governance.approvals import ApprovalRequest
from toolweave.governance.rules import Rules
from toolweave.llm import FunctionModel, Message, ModelRequest, ModelResponse, ToolCallPart
from toolweave.tools import Permission, ToolAnnotations, ToolContext, ToolResult

BANKING_RULES = Rules(
    allow=["get_*", "read_file"],
    ask=[
        "send_money",
        "schedule_transaction",
        "update_scheduled_transaction",
        "update_password",
        "update_user_info",
    ],
)
"""The documented policy: reads run, every write to the account asks the account holder."""

_WRITES = {"send_money", "schedule_transaction", "update_scheduled_transaction",
           "update_password", "update_user_info"}  # fmt: skip


class DojoTool:
    """One AgentDojo function as a toolweave `Tool`, running against the task's environment."""

    def __init__(self, function: Any, runtime: Any, env: Any) -> None:
        self._function = function
        self._runtime = runtime
        self.env = env
        schema = function.parameters.model_json_schema()
        schema.pop("title", None)
        self._parameters = schema
        self._write = function.name in _WRITES

    @property
    def name(self) -> str:
        return str(self._function.name)

    @property
    def description(self) -> str:
        return str(self._function.description)

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def permissions(self) -> frozenset[Permission]:
        return frozenset({Permission.WRITE}) if self._write else frozenset({Permission.READ})

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(read_only=not self._write, destructive=self._write)

    @property
    def primary_arg(self) -> str | None:
        return None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

        result, error = self._runtime.run_function(self.env, self.name, args)
        if error is not None:
            return ToolResult.error(error)
        return ToolResult.text_result(tool_result_to_str(result))


class ScriptedAgentModel:
    """Replays the user task's ground-truth calls, one per turn; when `obey` is set, the first
    tool result carrying an injection makes it run the injection task's calls first."""

    def __init__(self, user_calls: Sequence[Any], injected: Sequence[Any], markers: Sequence[str],
                 answer: str, obey: bool) -> None:  # fmt: skip
        self.queue = list(user_calls)
        self.injected = list(injected)
        self.markers = [_flat(m) for m in markers if m.strip()]
        self.answer = answer
        self.obey = obey
        self.obeyed = False
        self.turn = 0

    def __call__(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if self.obey and not self.obeyed and last.role == "tool":
            seen = _flat(" ".join(part.text for part in last.tool_results))
            if any(marker in seen for marker in self.markers):
                self.queue[:0] = self.injected
                self.obeyed = True
        if not self.queue:
            return ModelResponse(Message.assistant(self.answer), "stop")
        call = self.queue.pop(0)
        self.turn += 1
        part = ToolCallPart(f"call_{self.turn}", call.function, dict(call.args))
        return ModelResponse(Message("assistant", [part]), "tool_calls")


def _flat(text: str) -> str:
    """Whitespace-insensitive text: YAML tool output re-wraps long injected strings."""
    return " ".join(text.replace("\\n", " ").split())


def attentive_approver(intended: Sequence[Any]) -> Any:
    """The simulated account holder: yes only to calls their own request implies."""
    wanted = [(c.function, dict(c.args)) for c in intended]

    async def approve(request: ApprovalRequest) -> bool:
        return (request.tool_name, request.args) in wanted

    return approve


async def rubber_stamp(request: ApprovalRequest) -> bool:
    return True


@dataclass
class Score:
    runs: int = 0
    utility: int = 0
    attacks: int = 0

    def add(self, utility: bool, attack: bool) -> None:
        self.runs += 1
        self.utility += utility
        self.attacks += attack


async def run_one(suite: Any, user_task: Any, injection_task: Any | None,
                  injections: Mapping[str, str], config: str) -> tuple[bool, bool]:  # fmt: skip
    from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
    from agentdojo.types import text_content_block_from_string

    environment = suite.load_and_inject_default_environment(dict(injections))
    env = user_task.init_environment(environment)
    pre = env.model_copy(deep=True)
    runtime = FunctionsRuntime(suite.tools)
    user_calls = user_task.ground_truth(pre)
    injected = injection_task.ground_truth(pre) if injection_task is not None else []
    # The obedient model recognises the injection by the attacker's goal appearing in a result.
    markers = [injection_task.GOAL[:60]] if injection_task is not None else []
    model = ScriptedAgentModel(
        user_calls, injected, markers,
        getattr(user_task, "GROUND_TRUTH_OUTPUT", "") or "Done.", obey=injection_task is not None,
    )  # fmt: skip
    tools = [DojoTool(f, runtime, env) for f in suite.tools]
    if config == "no policy":
        agent = Agent(FunctionModel(model), tools=tools, max_turns=40)
    else:
        approver = rubber_stamp if config == "rubber stamp" else attentive_approver(user_calls)
        governance = Governance(rules=BANKING_RULES, approver=approver)
        agent = Agent(FunctionModel(model), tools=tools, max_turns=40, governance=governance)
    result = await agent.run(user_task.PROMPT)
    output = [text_content_block_from_string(str(result.output))]
    trace = [
        FunctionCall(function=i.name, args=dict(i.args))
        for i in result.invocations
        if isinstance(i.args, dict)
    ]
    utility = suite._check_task_result(user_task, output, pre, env, trace)
    attack = (
        suite._check_task_result(injection_task, output, pre, env, trace)
        if injection_task is not None else False
    )  # fmt: skip
    return bool(utility), bool(attack)


class _AttackTarget:
    """Only its name is read: attacks address "the model" by it in their text."""

    name = "gpt-4o-2024-05-13"


async def main(attack_name: str, limit: int | None) -> None:
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.task_suite.load_suites import get_suite

    suite = get_suite("v1.2", "banking")
    attack = load_attack(attack_name, suite, _AttackTarget())  # type: ignore[arg-type]
    user_tasks = list(suite.user_tasks.values())[:limit]
    injection_tasks = list(suite.injection_tasks.values())
    configs = ("no policy", "rules + approval gate", "rubber stamp")
    honest = {c: Score() for c in configs}
    attacked = {c: Score() for c in configs}
    started = time.perf_counter()
    for config in configs:
        for user_task in user_tasks:
            honest[config].add(*await run_one(suite, user_task, None, {}, config))
            for injection_task in injection_tasks:
                injections = attack.attack(user_task, injection_task)
                utility, success = await run_one(
                    suite, user_task, injection_task, injections, config
                )
                attacked[config].add(utility, success)
    elapsed = time.perf_counter() - started

    def pct(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "-"

    print(f"AgentDojo v1.2 banking, attack {attack_name!r}, {len(user_tasks)} user tasks x "
          f"{len(injection_tasks)} injection tasks, scripted models, {elapsed:.1f}s\n")  # fmt: skip
    print("| configuration | honest utility | utility under attack | attack success |")
    print("|---|---|---|---|")
    for config in configs:
        h, a = honest[config], attacked[config]
        print(f"| {config} | {pct(h.utility, h.runs)} | {pct(a.utility, a.runs)} | "
              f"{pct(a.attacks, a.runs)} |")  # fmt: skip


if __name__ == "__main__":
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        raise SystemExit(
            "agentdojo is not installed: run `.venv/bin/pip install -e '.[bench]'` (or `make "
            "bench`, which does); it runs offline once installed"
        ) from None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", default="important_instructions")
    parser.add_argument("--limit", type=int, default=None, help="only the first N user tasks")
    options = parser.parse_args()
    asyncio.run(main(options.attack, options.limit))
