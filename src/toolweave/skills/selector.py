"""Choosing one skill for a task up front, for small models that do not pick well on their own.

The model sees only names and descriptions (level 1) and answers `{"skill": "<name>"}`; when it
answers anything else, or fails, BM25 over the descriptions decides. None means no skill
matched at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.skills._bm25 import bm25_scores

if TYPE_CHECKING:
    from toolweave.llm.model import Model
    from toolweave.skills.library import SkillLibrary
    from toolweave.skills.skill import Skill

SELECTOR_INSTRUCTIONS = (
    "You pick the one skill that fits the user's task, judging only by the skill descriptions. "
    'Answer with JSON only: {"skill": "<name>"} or {"skill": null} when none fits.'
)


def bm25_select(library: SkillLibrary, task: str) -> Skill | None:
    """The skill whose name and description best match `task`, or None when nothing matches."""
    skills = [s for s in library.skills.values() if not s.disable_model_invocation]
    scores = bm25_scores(task, [f"{s.name} {s.description}" for s in skills])
    best = max(zip(scores, skills, strict=True), key=lambda p: p[0], default=None)
    return best[1] if best is not None and best[0] > 0 else None


async def select_skill(
    library: SkillLibrary, task: str, model: Model | None = None
) -> Skill | None:
    """Ask `model` to pick a skill for `task`; fall back to BM25 when it cannot."""
    if model is None:
        return bm25_select(library, task)
    from toolweave.llm.messages import Message
    from toolweave.llm.types import ModelRequest
    from toolweave.tools.arguments import repair_json

    request = ModelRequest(
        messages=[
            Message.system(SELECTOR_INSTRUCTIONS + "\n\n" + library.catalog()),
            Message.user(task),
        ]
    )
    try:
        response = await model.complete(request)
        answer = repair_json(response.message.text)
    except Exception:  # a selector failure must never block the task: fall back
        return bm25_select(library, task)
    name = answer.get("skill") if isinstance(answer, dict) else None
    if isinstance(name, str) and name in library.skills:
        return library.skills[name]
    return bm25_select(library, task)
