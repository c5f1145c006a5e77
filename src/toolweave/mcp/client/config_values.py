"""What an MCP config file's text means before its entries are validated: JSONC and variables.

VS Code's `mcp.json` is JSON with comments and trailing commas; Claude Code's `.mcp.json` and
VS Code both expand variables in the strings of an entry. `parse_jsonc` reads the first,
`Variables.expand` the second: `${VAR}` and `${VAR:-default}` (Claude Code; an unset `${VAR}`
without a default is an error naming the field, as Claude Code refuses the file), `${env:VAR}`
(VS Code; empty when unset), `${HOME}`, `${userHome}`, `${workspaceFolder}`,
`${workspaceFolderBasename}`, `${pathSeparator}` / `${/}`, and `${input:id}` for VS Code's
`inputs`, asked for through `ask` (the CLI prompts, hiding a password) and refused with an error
naming the input where nothing can ask (`toolweave serve`). Each input is asked for once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_jsonc(text: str, where: str) -> Any:
    """JSON with `//` and `/* */` comments and trailing commas (VS Code's JSONC)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json.loads(_strip_jsonc(text))
    except ValueError as exc:
        raise ConfigError(
            f"{where} is not valid JSON (comments and trailing commas are fine): {exc}"
        ) from None


def _strip_jsonc(text: str) -> str:
    """`text` with comments blanked (newlines kept, so error positions still match) and commas
    before a closing bracket removed; string contents are left alone."""
    out: list[str] = []
    i, n = 0, len(text)
    pending_comma: int | None = None  # index in `out` of a comma that may be trailing
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            pending_comma, i = None, end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        else:
            if char in "]}" and pending_comma is not None:
                out[pending_comma] = " "
            if char == ",":
                pending_comma = len(out)
            elif not char.isspace():
                pending_comma = None
            out.append(char)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class InputSpec:
    """One entry of VS Code's `inputs`: what to ask the person for."""

    id: str
    description: str = ""
    password: bool = False
    default: str | None = None
    options: tuple[str, ...] = ()


InputAsker = Callable[[InputSpec], str]
"""Asks a person for an input's value (the CLI's prompt); None where nobody can answer."""


def parse_inputs(raw: Any, where: str) -> dict[str, InputSpec]:
    """VS Code's top-level `inputs` list, validated."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ConfigError(f"{where}.inputs must be a list of {{id, type, description}} objects")
    specs: dict[str, InputSpec] = {}
    for index, item in enumerate(raw):
        spot = f"{where}.inputs[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise ConfigError(f"{spot} needs a string `id`")
        kind = item.get("type", "promptString")
        if kind not in ("promptString", "pickString"):
            raise ConfigError(
                f"{spot}.type is {kind!r}; toolweave asks for 'promptString' and 'pickString'"
            )
        options = item.get("options", [])
        if not isinstance(options, list):
            raise ConfigError(f"{spot}.options must be a list")
        default = item.get("default")
        specs[item["id"]] = InputSpec(
            id=item["id"],
            description=str(item.get("description", "")),
            password=item.get("password") is True,
            default=str(default) if default is not None else None,
            options=tuple(
                str(o.get("value", o)) if isinstance(o, dict) else str(o) for o in options
            ),
        )
    return specs


@dataclass
class Variables:
    """Expands the variables of one config file."""

    workspace: Path
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    ask: InputAsker | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    _answers: dict[str, str] = field(default_factory=dict)

    def expand(self, value: str, where: str) -> str:
        return _VARIABLE.sub(lambda match: self._value(match.group(1), where), value)

    def expand_entry(self, raw: Any, where: str) -> Any:
        """An entry with its command, args, env, url, headers and cwd strings expanded."""
        if not isinstance(raw, dict):
            return raw
        out = dict(raw)
        for key in ("command", "url", "serverUrl", "cwd"):
            if isinstance(out.get(key), str):
                out[key] = self.expand(out[key], f"{where}.{key}")
        if isinstance(out.get("args"), list):
            out["args"] = [
                self.expand(a, f"{where}.args[{i}]") if isinstance(a, str) else a
                for i, a in enumerate(out["args"])
            ]
        for key in ("env", "headers"):
            if isinstance(out.get(key), dict):
                out[key] = {
                    k: self.expand(v, f"{where}.{key}.{k}") if isinstance(v, str) else v
                    for k, v in out[key].items()
                }
        return out

    def _value(self, name: str, where: str) -> str:
        home = self.environ.get("HOME") or str(Path.home())
        fixed = {
            "HOME": home,
            "userHome": home,
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        if name in fixed:
            return fixed[name]
        if name.startswith("input:"):
            return self._input(name[len("input:") :], where)
        if name.startswith("env:"):
            return self.environ.get(name[len("env:") :], "")
        variable, sep, default = name.partition(":-")
        if _ENV_NAME.match(variable):
            found = self.environ.get(variable)
            if found:
                return found
            if sep:
                return default
            if found is not None:
                return found
            raise ConfigError(
                f"{where} uses ${{{variable}}}, which is not set; set the environment variable "
                f"or give a default: ${{{variable}:-value}}"
            )
        raise ConfigError(
            f"{where} uses ${{{name}}}, which toolweave does not expand; use ${{VAR}}, "
            "${VAR:-default}, ${env:VAR}, ${workspaceFolder}, ${userHome} or ${input:id}"
        )

    def _input(self, key: str, where: str) -> str:
        if key in self._answers:
            return self._answers[key]
        spec = self.inputs.get(key)
        if self.ask is None:
            label = f" ({spec.description})" if spec is not None and spec.description else ""
            raise ConfigError(
                f"{where} uses ${{input:{key}}}{label}, which must be typed in by a person, and "
                "nothing here can ask (toolweave serve runs unattended): put the value in an "
                "environment variable and write ${VAR} instead, or run toolweave chat/run"
            )
        if spec is None:
            raise ConfigError(
                f"{where} uses ${{input:{key}}} but `inputs` has no entry with id {key!r}; add "
                f'{{"id": "{key}", "type": "promptString", "description": "..."}}'
            )
        self._answers[key] = answer = self.ask(spec)
        return answer
