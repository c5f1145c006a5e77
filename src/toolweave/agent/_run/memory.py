"""Memory inside the agent loop: the memories relevant to the prompt, shown in the system message.

`Agent(memory=MemorySettings(manager, context=3))` hands the run an `AgentMemory`, one of the
run's stages (`toolweave.agent._run.stages`, as skills are): `shape` searches the memories for
the prompt and appends the block `memory_context` renders to the system message. Subagents and
team members get no memory stage: their prompt is a task their parent wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.agent._run.stages import RunStage
from toolweave.llm import Message, Model

if TYPE_CHECKING:
    from toolweave.agent.session import Session
    from toolweave.memory import MemorySettings
    from toolweave.tools import ToolRegistry


class AgentMemory(RunStage):
    """One agent's memory settings, as a run stage that shapes the prompt (see the module
    docstring)."""

    def __init__(self, settings: MemorySettings) -> None:
        self.manager = settings.manager
        self.context = settings.context

    def install(self, registry: ToolRegistry) -> None:
        """Register the `memory` tool without its deleting actions, unless the agent has one."""
        if "memory" in registry:
            return
        from toolweave.memory.tool import NON_DELETING_ACTIONS, MemoryTool

        registry.register(MemoryTool(self.manager, actions=NON_DELETING_ACTIONS))

    async def shape(
        self, prompt: str, system: Message | None, session: Session, model: Model
    ) -> tuple[str, Message | None]:
        """The prompt unchanged; the system message with the prompt's memories after it."""
        if not self.context:
            return prompt, system
        from toolweave.memory.context import memory_context

        block = await memory_context(self.manager, prompt, self.context)
        if block is None:
            return prompt, system
        text = f"{system.text}\n\n{block}" if system is not None and system.text else block
        return prompt, Message.system(text)
