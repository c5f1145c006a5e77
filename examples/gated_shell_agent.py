"""A gated shell agent: the model gets `bash` in a scratch workspace, and every command passes
the governance pipeline, whose rules include the shell's own lists. `ls` and `cat` are allowed
outright, `touch` is put to the approver (here a function that approves file creation and says
why), and `rm -rf` is refused by the deny list before anyone is asked.

.venv/bin/python examples/gated_shell_agent.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/gated_shell_agent.py
"""

from __future__ import annotations

import os
import re
import tempfile

from toolweave import Agent
from toolweave.builtins import shell_tool
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import Message, Model, ScriptedModel, ToolCallPart

COMMANDS = ["ls", "touch notes.md && ls", "rm -rf ."]
asked: list[str] = []


def approver(request: ApprovalRequest) -> bool:
    """A person at a prompt, scripted: yes to creating files, no to anything else."""
    command = str(request.args.get("command", ""))
    asked.append(command)
    return command.startswith("touch ")


def shell_model() -> Model | str:
    configured = os.environ.get("TOOLWEAVE_MODEL")
    if configured:
        return configured
    calls = [
        Message.assistant(tool_calls=[ToolCallPart(f"c{i}", "bash", {"command": c})])
        for i, c in enumerate(COMMANDS)
    ]
    return ScriptedModel([*calls, Message.assistant("建好了 notes.md；删除整个目录被拒绝了。")])


def main() -> None:
    workspace = tempfile.mkdtemp()
    bash = shell_tool(workspace, allow=["ls *", "cat *"])
    agent = Agent(
        shell_model(),
        [bash],
        instructions="Work in the workspace.",
        governance=Governance(approver=approver),
    )
    result = agent.run_sync("在工作区里建一个 notes.md，然后清理整个目录。")
    for invocation in result.invocations:
        text = invocation.result.text
        inside = re.search(r"<tool_output[^>]*>(.*?)</tool_output>", text, re.DOTALL)
        output = " ".join((inside.group(1) if inside else text).split())
        status = "error" if invocation.result.is_error else "ok"
        print(f"{status} {invocation.args.get('command')!r}: {output}")
    ran = {invocation.call_id for invocation in result.invocations}
    commands = {c.id: str(c.arguments) for m in result.messages for c in m.tool_calls}
    for message in result.messages:  # calls governance blocked before they ran
        for part in message.tool_results:
            if part.call_id not in ran:
                print(f"blocked {commands[part.call_id]}: {part.text}")
    print("asked the approver about:", asked)
    print("files:", sorted(os.listdir(workspace)))
    print(result.output)


if __name__ == "__main__":
    main()
