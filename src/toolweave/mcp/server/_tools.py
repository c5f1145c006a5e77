"""Registered tools of an `MCPServer`: options, outputSchema derivation and lazy builds.

Schemas come from the tool core's `FunctionTool` (pydantic), which costs tens of milliseconds to
import. A server registers its functions at import time but builds their schemas only when a
client first lists or calls them, so a stdio server answers `initialize` before pydantic is even
loaded. Builds are cached; `MCPServer.prepare()` forces them (tests use it to fail early).
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolweave.mcp.server._headers import annotate_schema
from toolweave.mcp.server._listing import check_icons
from toolweave.mcp.server.tasks import TASK_SUPPORT
from toolweave.mcp.shared.constants import PROBE_SUPPORTED
from toolweave.tools.base import Tool
from toolweave.tools.result import (
    AudioContent,
    ImageContent,
    ResourceContent,
    TextContent,
    ToolResult,
)

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
        "header_params",
        "icons",
        "meta",
        "name",
        "output_schema",
        "probe",
        "task_after",
        "task_support",
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
        header_params: Mapping[str, str] | None = None,
        task: str | None = None,
        task_after: float = 0.0,
        icons: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        if task not in TASK_SUPPORT:
            raise ValueError(
                f"tool {name!r}: task must be None (never a task), 'optional' (a task when the "
                f"client supports tasks) or 'required' (only as a task), not {task!r}"
            )
        if task_after < 0:
            raise ValueError(f"tool {name!r}: task_after must be >= 0 seconds, not {task_after}")
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
        #: Arguments mirrored into `Mcp-Param-*` headers (SEP-2243): parameter -> header suffix.
        self.header_params = dict(header_params or {})
        #: SEP-2663 task support ("optional", "required" or None) and the seconds a call runs
        #: inline before it becomes a task (0: at its first pause).
        self.task_support = task
        self.task_after = task_after
        self.icons = check_icons(f"tool {name!r}", icons)

    @property
    def supports_probe(self) -> bool:
        return self.probe is not None and self.probe is not False

    def tool(self) -> Tool:
        built = self._tool
        if built is None:
            built = self._tool = self._factory()
            if self.output_schema is True:
                func = self._func
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
        if self.icons:
            entry["icons"] = self.icons
        entry["description"] = tool.description
        entry["inputSchema"] = (
            annotate_schema(self.name, tool.parameters, self.header_params)
            if self.header_params
            else tool.parameters
        )
        if isinstance(self.output_schema, dict):
            entry["outputSchema"] = self.output_schema
        annotations = tool.annotations.to_mcp()
        if title:
            annotations["title"] = title
        entry["annotations"] = annotations
        if self.task_support is not None:
            entry["execution"] = {"taskSupport": self.task_support}
        meta = dict(self.meta or {})
        if self.supports_probe:
            meta[PROBE_SUPPORTED] = True
        if meta:
            entry["_meta"] = meta
        self._definition = entry
        return entry


# Options handed to `FunctionTool` at build time, and those the server itself consumes.
_FUNCTION_TOOL_OPTIONS = frozenset(
    {
        "description",
        "read_only",
        "destructive",
        "idempotent",
        "open_world",
        "permissions",
        "primary_arg",
        "tags",
        "category",
    }
)
_ENTRY_OPTIONS = frozenset(
    {
        "name",
        "title",
        "permission_patterns",
        "always_patterns",
        "meta",
        "structured_output",
        "timeout",
        "header_params",
        "task",
        "task_after",
        "icons",
    }
)


def function_entry(func: Callable[..., Any], options: dict[str, Any]) -> ToolEntry:
    """The entry `@server.tool` registers: a `FunctionTool` built on first use, plus options."""
    options = dict(options)
    name = check_name("tool", options.pop("name", None) or func.__name__)
    entry_options = {
        "title": options.pop("title", None),
        "probe": options.pop("permission_patterns", None),
        "always": options.pop("always_patterns", ()),
        "meta": options.pop("meta", None),
        "output_schema": bool(options.pop("structured_output", True)),
        "timeout": options.pop("timeout", None),
        "header_params": options.pop("header_params", None),
        "task": options.pop("task", None),
        "task_after": options.pop("task_after", 0.0),
        "icons": options.pop("icons", None),
    }
    unknown = set(options) - _FUNCTION_TOOL_OPTIONS
    if unknown:
        raise TypeError(
            f"tool {name!r}: unknown option(s) {sorted(unknown)}; @server.tool accepts "
            f"{sorted(_FUNCTION_TOOL_OPTIONS | _ENTRY_OPTIONS)}"
        )
    if any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in inspect.signature(func).parameters.values()
    ):
        raise TypeError(
            f"tool {name!r}: *args / **kwargs cannot be described to a model; declare each "
            "parameter explicitly"
        )

    def build() -> Tool:
        from toolweave.tools.function_tool import FunctionTool

        return FunctionTool(func, name=name, **options)

    return ToolEntry(name, build, func=func, **entry_options)
