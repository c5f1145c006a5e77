"""Resources and prompts of an `MCPServer`: matching URIs to templates and shaping results.

Kept apart from tools because both are plain functions with their own small conventions (a
template's `{name}` parts become keyword arguments; a prompt's string parameters become its
arguments) and neither needs the schema machinery tools use.
"""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Callable
from typing import Any, Protocol

from toolweave.mcp.shared.uri_templates import template_pattern


class CatalogSource(Protocol):
    """Resources, templates, prompts and completions that live elsewhere (the gateway's
    downstream servers), answered next to the server's own. Each lookup returns None for what
    is not the source's, so the next source (or a not-found error) answers instead."""

    async def resources(self) -> list[dict[str, Any]]: ...

    async def resource_templates(self) -> list[dict[str, Any]]: ...

    async def read_resource(self, uri: str) -> dict[str, Any] | None: ...

    async def prompts(self) -> list[dict[str, Any]]: ...

    async def get_prompt(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None: ...

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> dict[str, Any] | None: ...


class ResourceCatalog:
    """A `CatalogSource` of resources only: its subclass answers `resources` and
    `read_resource` (and `resource_templates` if it has any); it has no prompts or completions.
    """

    async def resources(self) -> list[dict[str, Any]]:
        return []

    async def resource_templates(self) -> list[dict[str, Any]]:
        return []

    async def read_resource(self, uri: str) -> dict[str, Any] | None:
        return None

    async def prompts(self) -> list[dict[str, Any]]:
        return []

    async def get_prompt(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
    ) -> dict[str, Any] | None:
        return None


class ResourceEntry:
    """A static resource (`uri`) or a template (`uri` with `{name}` parts)."""

    __slots__ = ("description", "func", "icons", "mime_type", "name", "pattern", "title", "uri")

    def __init__(
        self,
        uri: str,
        func: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        self.uri = uri
        self.icons = icons
        self.func = func
        self.name = name or func.__name__
        self.title = title
        self.description = description if description is not None else inspect.getdoc(func)
        self.mime_type = mime_type
        self.pattern = template_pattern(uri) if "{" in uri else None
        if self.pattern is not None:
            params = set(inspect.signature(func).parameters)
            missing = set(self.pattern.groupindex) - params
            if missing:
                raise TypeError(
                    f"resource template {uri!r}: function {func.__name__!r} needs parameters "
                    f"{sorted(missing)} to receive the template variables"
                )

    @property
    def is_template(self) -> bool:
        return self.pattern is not None

    def definition(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            ("uriTemplate" if self.is_template else "uri"): self.uri,
            "name": self.name,
        }
        if self.title:
            entry["title"] = self.title
        if self.description:
            entry["description"] = self.description
        if self.mime_type:
            entry["mimeType"] = self.mime_type
        if self.icons:
            entry["icons"] = self.icons
        return entry

    def match(self, uri: str) -> dict[str, str] | None:
        if self.pattern is None:
            return {} if uri == self.uri else None
        found = self.pattern.match(uri)
        return found.groupdict() if found else None

    def contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        """Turn what the function returned into `resources/read` contents."""
        if isinstance(value, dict) and "uri" in value:
            return [value]
        if isinstance(value, list) and all(isinstance(v, dict) and "uri" in v for v in value):
            return value
        item: dict[str, Any] = {"uri": uri}
        if isinstance(value, bytes):
            item["mimeType"] = self.mime_type or "application/octet-stream"
            item["blob"] = base64.b64encode(value).decode("ascii")
            return [item]
        if isinstance(value, str):
            item["mimeType"] = self.mime_type or "text/plain"
            item["text"] = value
            return [item]
        from toolweave.tools.result import to_jsonable

        item["mimeType"] = self.mime_type or "application/json"
        item["text"] = json.dumps(to_jsonable(value), ensure_ascii=False)
        return [item]


class PromptEntry:
    """A prompt: a function whose string parameters are the prompt's arguments."""

    __slots__ = ("_definition", "context_param", "description", "func", "icons", "name", "title")

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        title: str | None,
        description: str | None,
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        self.func = func
        self.icons = icons
        self.name = name
        self.title = title
        self.description = description
        self._definition: dict[str, Any] | None = None
        #: The parameter that receives the request's `Context` (to ask the client), if any.
        self.context_param = next(
            (
                p.name
                for p in inspect.signature(func).parameters.values()
                if _is_context_annotation(p.annotation)
            ),
            None,
        )

    def definition(self) -> dict[str, Any]:
        if self._definition is not None:
            return self._definition
        from toolweave.tools.docstrings import parse_docstring

        doc = parse_docstring(self.func)
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        description = self.description if self.description is not None else doc.description
        if description:
            entry["description"] = description
        if self.icons:
            entry["icons"] = self.icons
        arguments = []
        for param in inspect.signature(self.func).parameters.values():
            if _is_context_annotation(param.annotation):
                continue
            arg: dict[str, Any] = {"name": param.name}
            if param.name in doc.params:
                arg["description"] = doc.params[param.name]
            arg["required"] = param.default is inspect.Parameter.empty
            arguments.append(arg)
        if arguments:
            entry["arguments"] = arguments
        self._definition = entry
        return entry

    def messages(self, value: Any) -> dict[str, Any]:
        """Turn what the function returned into a `prompts/get` result."""
        if isinstance(value, dict) and "messages" in value:
            return value
        if isinstance(value, str):
            value = [value]
        messages = []
        for item in value:
            if isinstance(item, str):
                messages.append({"role": "user", "content": {"type": "text", "text": item}})
            elif isinstance(item, dict):
                messages.append(item)
            else:
                raise TypeError(
                    f"prompt {self.name!r} returned {type(item).__name__}; return a string, a "
                    "list of strings or message dicts, or {'messages': [...]}"
                )
        result: dict[str, Any] = {"messages": messages}
        definition = self.definition()
        if "description" in definition:
            result["description"] = definition["description"]
        return result


def _is_context_annotation(annotation: Any) -> bool:
    from toolweave.tools.context import ToolContext

    if isinstance(annotation, str):
        return annotation.rsplit(".", 1)[-1] in {"Context", "ToolContext"}
    return inspect.isclass(annotation) and issubclass(annotation, ToolContext)
