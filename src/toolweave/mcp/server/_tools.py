"""Registered tools, resources and prompts of an `McpServer`, built lazily.

Schemas come from the tool core's `FunctionTool` (pydantic), which costs tens of milliseconds to
import. A server registers its functions at import time but builds their schemas only when a
client first lists or calls them, so a stdio server answers `initialize` before pydantic is even
loaded. Builds are cached; `McpServer.prepare()` forces them (tests use it to fail early).
"""

from __future__ import annotations

import base64
import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from toolweave.tools.base import Tool
from toolweave.tools.result import (
    AudioContent,
    ImageContent,
    ResourceContent,
    TextContent,
    ToolResult,
)

from .results import PROBE_SUPPORT_KEY

logger = logging.getLogger("toolweave.mcp.server")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
PatternSource = Callable[[dict[str, Any]], Sequence[str]]

# Return types that carry no structure worth an outputSchema (text, results, content parts).
_UNSTRUCTURED: tuple[type, ...] = (
    str,
    bytes,
    type(None),
    object,
    ToolResult,
    TextContent,
    ImageContent,
    AudioContent,
    ResourceContent,
)


def _unstructured(annotation: Any) -> bool:
    if annotation is None or annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unstructured(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_unstructured(arg) for arg in typing.get_args(annotation))
    if not isinstance(annotation, type):
        return False
    return annotation in _UNSTRUCTURED or issubclass(annotation, ToolResult)


def check_name(kind: str, name: str) -> str:
    if not NAME_PATTERN.match(name):
        raise ValueError(
            f"{kind} name {name!r} is invalid: use 1-128 characters from A-Z a-z 0-9 _ . - "
            "(MCP clients reject other names)"
        )
    return name


def output_schema_for(func: Callable[..., Any]) -> tuple[dict[str, Any] | None, bool]:
    """The outputSchema for a function's return type and whether values are wrapped.

    Object-like returns (pydantic models, TypedDicts, dataclasses, dicts) are described as
    they are; other JSON values (`-> float`, `-> list[str]`) are wrapped as `{"result": ...}`,
    as MCP requires structured content to be an object.
    """
    annotation = inspect.signature(func).return_annotation
    if annotation is inspect.Signature.empty:
        return None, False
    try:
        annotation = typing.get_type_hints(func).get("return", annotation)
    except NameError:
        return None, False
    if _unstructured(annotation):
        return None, False
    from pydantic import TypeAdapter
    from pydantic.json_schema import GenerateJsonSchema

    class _NoTitles(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    try:
        schema = TypeAdapter(annotation).json_schema(schema_generator=_NoTitles)
    except Exception as exc:  # a type pydantic cannot describe gets no outputSchema, not a crash
        logger.warning(
            "no outputSchema for %s: pydantic cannot describe its return type %r (%s); on "
            "Python < 3.12 use typing_extensions.TypedDict, a dataclass or a pydantic model",
            getattr(func, "__name__", func),
            annotation,
            exc,
        )
        return None, False
    schema.pop("title", None)
    if schema.get("type") == "object" or (
        "$ref" in schema and _resolves_to_object(schema, schema["$ref"])
    ):
        return json.loads(json.dumps(schema)), False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _resolves_to_object(schema: dict[str, Any], ref: str) -> bool:
    name = ref.rsplit("/", 1)[-1]
    target = schema.get("$defs", {}).get(name, {})
    return isinstance(target, dict) and target.get("type") == "object"


class ToolEntry:
    """One tool as the server publishes it; the `Tool` itself is built on first use."""

    __slots__ = (
        "_definition",
        "_factory",
        "_func",
        "_tool",
        "always",
        "meta",
        "name",
        "output_schema",
        "probe",
        "timeout",
        "title",
        "wrap_structured",
    )

    def __init__(
        self,
        name: str,
        factory: Callable[[], Tool],
        *,
        func: Callable[..., Any] | None = None,
        title: str | None = None,
        probe: PatternSource | bool | None = None,
        always: Sequence[str] = (),
        meta: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | bool | None = True,
        timeout: float | None = None,
    ) -> None:
        self.name = name
        self._factory = factory
        self._func = func
        self._tool: Tool | None = None
        self._definition: dict[str, Any] | None = None
        self.title = title
        self.probe = probe
        self.always = list(always)
        self.meta = meta
        # True: derive from the function's return type on build; a dict: given; None/False: none.
        self.output_schema: dict[str, Any] | bool | None = output_schema
        self.wrap_structured = False
        self.timeout = timeout

    @property
    def supports_probe(self) -> bool:
        return self.probe is not None and self.probe is not False

    def tool(self) -> Tool:
        built = self._tool
        if built is None:
            built = self._tool = self._factory()
            if self.output_schema is True:
                func = self._func if self._func is not None else getattr(built, "func", None)
                schema, wrapped = output_schema_for(func) if func is not None else (None, False)
                self.output_schema, self.wrap_structured = schema, wrapped
            elif self.output_schema is False:
                self.output_schema = None
        return built

    def definition(self) -> dict[str, Any]:
        """The tools/list entry (cached)."""
        if self._definition is not None:
            return self._definition
        tool = self.tool()
        entry: dict[str, Any] = {"name": self.name}
        title = self.title or tool.annotations.title
        if title:
            entry["title"] = title
        entry["description"] = tool.description
        entry["inputSchema"] = tool.parameters
        if isinstance(self.output_schema, dict):
            entry["outputSchema"] = self.output_schema
        annotations = tool.annotations.to_mcp()
        if title:
            annotations["title"] = title
        entry["annotations"] = annotations
        meta = dict(self.meta or {})
        if self.supports_probe:
            meta[PROBE_SUPPORT_KEY] = True
        if meta:
            entry["_meta"] = meta
        self._definition = entry
        return entry


class ResourceEntry:
    """A static resource (`uri`) or a template (`uri` with `{name}` parts)."""

    __slots__ = ("description", "func", "mime_type", "name", "pattern", "title", "uri")

    def __init__(
        self,
        uri: str,
        func: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
    ) -> None:
        self.uri = uri
        self.func = func
        self.name = name or func.__name__
        self.title = title
        self.description = description if description is not None else inspect.getdoc(func)
        self.mime_type = mime_type
        self.pattern = _template_pattern(uri) if "{" in uri else None
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


def _template_pattern(uri: str) -> re.Pattern[str]:
    """RFC 6570 level-1 templates: each `{name}` matches one path segment."""
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", uri)
    regex = "".join(
        f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part) for i, part in enumerate(parts)
    )
    return re.compile(f"^{regex}$")


class PromptEntry:
    """A prompt: a function whose string parameters are the prompt's arguments."""

    __slots__ = ("_definition", "description", "func", "name", "title")

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        title: str | None,
        description: str | None,
    ) -> None:
        self.func = func
        self.name = name
        self.title = title
        self.description = description
        self._definition: dict[str, Any] | None = None

    def definition(self) -> dict[str, Any]:
        if self._definition is not None:
            return self._definition
        from toolweave.tools._docstrings import parse_docstring

        doc = parse_docstring(self.func)
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        description = self.description if self.description is not None else doc.description
        if description:
            entry["description"] = description
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
