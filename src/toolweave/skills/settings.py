"""`SkillSettings`: how an agent uses a `SkillLibrary`, checked once when the agent is built.

The library is the skills; these settings are the agent's choices about them (who picks a skill
up front, how much of the system prompt the catalog may take), so one library can serve agents
that use it differently.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolweave.errors import ConfigError
from toolweave.llm import Model
from toolweave.skills.library import CATALOG_BUDGET_CHARS, SkillLibrary


@dataclass(frozen=True, slots=True)
class SkillSettings:
    """An agent's skills: `Agent(skills=SkillSettings(library, selector=True))`.

    The agent gets the skill tools, the catalog of model-invocable skills in each run's system
    message (at most `catalog_budget_chars` characters; past it the skills nearest the prompt
    are listed), `/name args` prompts as skill commands and each active skill's
    `allowed-tools` pre-approved for the run. `selector` picks a skill up front for models
    that do not choose well on their own: a `Model` to ask, True for the agent's own model,
    False for none. A bare `SkillLibrary` given as `Agent(skills=...)` means
    `SkillSettings(library)`.
    """

    library: SkillLibrary
    selector: Model | bool = False
    catalog_budget_chars: int = CATALOG_BUDGET_CHARS

    def __post_init__(self) -> None:
        if not isinstance(self.library, SkillLibrary):
            raise TypeError(
                f"SkillSettings(library=...) must be a toolweave.skills.SkillLibrary, got "
                f"{type(self.library).__name__}"
            )
        if not isinstance(self.selector, (bool, Model)):
            raise TypeError(
                f"SkillSettings(selector=...) must be a Model, True (the agent's model) or "
                f"False, got {type(self.selector).__name__}"
            )
        budget = self.catalog_budget_chars
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise ConfigError(
                f"SkillSettings(catalog_budget_chars=...) must be a positive number of "
                f"characters, got {budget!r}"
            )

    @classmethod
    def of(cls, value: SkillSettings | SkillLibrary) -> SkillSettings:
        """What `Agent(skills=...)` accepts, as settings."""
        if isinstance(value, SkillSettings):
            return value
        if isinstance(value, SkillLibrary):
            return cls(value)
        raise TypeError(
            f"Agent(skills=...) must be a SkillSettings or a SkillLibrary, got "
            f"{type(value).__name__}"
        )
