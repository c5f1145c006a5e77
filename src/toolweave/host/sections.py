"""Typed tables of `toolweave.toml`: one pydantic model per section, plugged in by name.

`[serve]` belongs to the host itself (config.py). Every other table is owned by whoever
reads it: a provider defines a `Section` subclass and adds one line to `SECTIONS`, and from
then on its table is validated like `[serve]` (unknown keys and wrong types are errors naming
the key and the file line, or the environment variable) and reaches it typed, through
`HostConfig.section("name")`:

```python
class SkillsSection(Section):
    roots: list[str] = []
    scripts: bool = False

SECTIONS["skills"] = "toolweave.host.providers.skills:SkillsSection"   # imported only when used
```

A table nobody registered is an error that lists the known ones, so a misspelt `[skils]`
never passes silently.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from toolweave.errors import ConfigError
from toolweave.host._toml_lines import line_of

SectionT = TypeVar("SectionT", bound="Section")


class Section(BaseModel):
    """A `toolweave.toml` table: unknown keys are errors and values are not coerced (strict),
    except that an integer is accepted where a float is expected."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


#: Section name -> its model, or `"module:Class"` imported when the table is first validated.
#: `[serve]` and `[mcpServers]` are the host's own and are not listed here.
SECTIONS: dict[str, str | type[Section]] = {
    "builtins": "toolweave.host.providers.builtins:BuiltinsSection",
    "kb": "toolweave.host.providers.kb:KBSection",
    "memory": "toolweave.host.providers.memory:MemorySection",
    "notes": "toolweave.host.providers.kb:NotesSection",
    "skills": "toolweave.host.providers.skills:SkillsSection",
}


def section_model(name: str) -> type[Section]:
    """The model registered for `[name]`."""
    target = SECTIONS.get(name)
    if target is None:
        known = ", ".join(f"[{k}]" for k in sorted(SECTIONS)) or "none"
        raise ConfigError(f"no section [{name}] is registered; registered sections: {known}")
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
        if not (isinstance(target, type) and issubclass(target, Section)):
            raise TypeError(f"SECTIONS[{name!r}] = {SECTIONS[name]!r} is not a Section subclass")
        SECTIONS[name] = target
    return target


@dataclass(slots=True)
class ConfigSource:
    """Where the values being validated came from, for error messages.

    `label` is the file name; `lines` maps key paths to their line in it; `env` maps the key
    paths that an environment variable set to that variable's name.
    """

    label: str
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)
    env: dict[tuple[str, ...], str] = field(default_factory=dict)

    def where(self, path: tuple[str | int, ...]) -> str:
        keys = tuple(str(p) for p in path if not isinstance(p, int))
        for n in range(len(keys), 0, -1):
            if keys[:n] in self.env:
                return f"environment variable {self.env[keys[:n]]}"
        line = line_of(self.lines, path)
        return f"{self.label}:{line}" if line is not None else self.label


def key_name(path: tuple[str | int, ...]) -> str:
    """`("serve", "policy", "denied", 0)` -> `[serve.policy].denied[0]`."""
    names = [p for p in path if isinstance(p, str)]
    if len(names) == 1:
        return f"[{names[0]}]"
    text = f"[{'.'.join(names[:-1])}].{names[-1]}"
    tail = path[path.index(names[-1]) + 1 :]
    return text + "".join(f"[{i}]" for i in tail)


def validate_section(
    model: type[SectionT], path: tuple[str, ...], data: Any, source: ConfigSource
) -> SectionT:
    """`data` (the decoded table at `path`) as `model`, or one `ConfigError` naming every bad
    key with its file line (or environment variable) and what to write instead."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source.where(path)}: {key_name(path)} must be a table, not {data!r}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = [_problem(model, path, error, source) for error in exc.errors()]
        raise ConfigError("\n".join(problems)) from None


def _problem(model: type[Section], path: tuple[str, ...], error: Any, source: ConfigSource) -> str:
    loc: tuple[str | int, ...] = (*path, *error["loc"])
    where = source.where(loc)
    if error["type"] == "extra_forbidden":
        table = _model_at(model, error["loc"][:-1])
        known = ", ".join(sorted(table.model_fields)) if table is not None else "none"
        parent = "[" + ".".join(p for p in loc[:-1] if isinstance(p, str)) + "]"  # a table
        return f"{where}: {key_name(loc)} is not a known key; the keys of {parent} are {known}"
    if error["type"] == "missing":
        return f"{where}: {key_name(loc)} is required"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {key_name(loc)}: {message}, not {error.get('input')!r}"


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The nested model a location points into (for the list of its keys)."""
    current: type[BaseModel] = model
    for part in loc:
        if not isinstance(part, str) or part not in current.model_fields:
            return None
        annotation = current.model_fields[part].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        current = annotation
    return current
