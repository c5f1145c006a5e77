"""What a run pre-approves: its slash command's and its active skills' `allowed-tools`.

The grants themselves are governance's (`toolweave.governance.grants`: allow rules below every
deny and ask rule, named in explanations); this reads which ones apply to a run right now, for
the `GateContext.preapproved` of each call it decides. A command grants for its whole run; a
skill from the moment it is activated (read with a successful `skill_read`, run as `/name`, or
picked by the selector) until the run ends. A command file in a folder the agent's own tools
can write grants nothing until a person trusts it (`toolweave trust FILE`), as for skills: a
sandboxed call could have written it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolweave.governance.grants import command_grant, preapproved, skill_grant
from toolweave.storage.trust import exposed, is_trusted

if TYPE_CHECKING:
    from toolweave.agent._run.config import RunConfig
    from toolweave.agent.orchestration.slash_commands import Command
    from toolweave.agent.session import Session
    from toolweave.governance import Rules

logger = logging.getLogger(__name__)


def run_grants(config: RunConfig, command: Command | None, session: Session) -> Rules | None:
    """What a run pre-approves now: its slash command's `allowed-tools`, then those of every
    skill activated in `session` since the run began."""
    grants: list[tuple[str, Sequence[str]]] = []
    if command is not None and command.allowed_tools and _command_grants(command, config):
        grants.append((command_grant(command.name), command.allowed_tools))
    skills = config.skills
    if skills is not None:
        grants.extend(
            (skill_grant(skill.name), skill.allowed_tools) for skill in skills.scope.grants(session)
        )
    rules = config.governance.rules
    return preapproved(grants, rules.cwd if rules is not None else None)


def _command_grants(command: Command, config: RunConfig) -> bool:
    """False for a command file under a folder the agent's tools can write that no person
    has trusted (logged with the fix)."""
    from toolweave.agent._run.skills import writable_folders  # loads only for a command file

    path = command.path
    if not path or not exposed(path, writable_folders(config.registry)) or is_trusted(path):
        return True
    logger.warning(
        "/%s: its allowed-tools pre-approve nothing: %s lies in a folder the agent's own tools "
        "can write; review it, then run `toolweave trust %s`",
        command.name,
        path,
        path,
    )
    return False
