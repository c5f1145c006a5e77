"""JSON Schema and a cached validator from a Python function's signature.

pydantic v2 does the heavy lifting: each function gets one argument model, built once, whose
schema is what the model sees and whose compiled validator checks every call (~1 µs). The model
is an implementation detail: parameter names that would clash with pydantic's own attributes
(`json`, `schema`, `model_*`, a leading `_`) are carried by alias, so any Python name works.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import SchemaValidator

from toolweave.tools.context import ToolContext
from toolweave.tools.docstrings import parse_docstring
from toolweave.tools.errors import InvalidArguments

MAX_REPORTED_PROBLEMS = 10
_RESERVED = frozenset(name for name in dir(BaseModel) if not name.startswith("__"))


class _ToolJsonSchema(GenerateJsonSchema):
    """pydantic's generator without the auto-titles that only cost tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """Everything derived once from a function: description, schema, validator, injection."""

    description: str
    parameters: dict[str, Any]
    args_model: type[BaseModel]
    context_param: str | None
    positional_only: tuple[str, ...]
    renames: tuple[tuple[str, str], ...] = ()
    """(model field, parameter) pairs for parameters carried by alias."""
    fields_validator: SchemaValidator | None = None
    """The model's field validator alone: yields the values dict without building a model."""

    def validate(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Validate and coerce arguments; the error names each bad field and what it expected."""
        values: dict[str, Any]
        try:
            if self.fields_validator is not None:
                values = self.fields_validator.validate_python(args)[0]
            else:
                values = self.args_model.__pydantic_validator__.validate_python(args).__dict__
                values = values.copy()
        except ValidationError as exc:
            raise InvalidArguments(
                describe_validation_error(tool_name, exc, args), tool=tool_name
            ) from exc
        for field_name, param in self.renames:
            values[param] = values.pop(field_name)
        return values


def describe_validation_error(
    tool_name: str, exc: ValidationError, args: dict[str, Any] | None = None
) -> str:
    """One sentence per bad field: where, what was expected, what arrived.

    With the `args` that failed, pydantic's union-member tags are dropped from the paths
    (`b: int | str` fails as `b.int` and `b.str`, which name no field the model could send) and
    the failed alternatives of one field are merged into one sentence.
    """
    problems: dict[tuple[str, str], list[str]] = {}
    errors = exc.errors(include_url=False)
    for err in errors:
        kind = err["type"]
        where = _path(err["loc"], args, err) if args is not None else None
        where = where or ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if kind in ("missing", "extra_forbidden"):
            problems.setdefault((where, kind), [])
        else:
            got = json.dumps(err.get("input"), default=repr, ensure_ascii=False)
            if len(got) > 80:
                got = got[:77] + "..."
            problems.setdefault((where, got), []).append(err["msg"])
    sentences = []
    for (where, detail), messages in list(problems.items())[:MAX_REPORTED_PROBLEMS]:
        if detail == "missing":
            sentences.append(f"'{where}' is required but missing")
        elif detail == "extra_forbidden":
            sentences.append(f"'{where}' is not a parameter of this tool")
        else:
            rest = [m.removeprefix("Input should be ") for m in messages[1:]]
            sentences.append(f"'{where}': {' or '.join([messages[0], *rest])} (got {detail})")
    if len(problems) > MAX_REPORTED_PROBLEMS:
        sentences.append(f"and {len(problems) - MAX_REPORTED_PROBLEMS} more problems")
    return (
        f"Invalid arguments for tool '{tool_name}': "
        + "; ".join(sentences)
        + ". Fix these fields to match the tool's parameter schema and call it again."
    )


def _path(loc: tuple[int | str, ...], args: dict[str, Any], err: Any) -> str | None:
    """The dotted path of an error inside `args`, without pydantic's union-member tags (`int`,
    `Address`): the steps that lead through the arguments to the rejected value itself (or,
    for a missing field, to its name). None if no such walk exists."""
    missing = err["type"] == "missing"
    target = err.get("input")
    last = len(loc) - 1

    def walk(index: int, node: Any) -> list[str] | None:
        if index > last:
            return [] if node is target else None
        key = loc[index]
        if missing and index == last:  # the field that is absent from `node`
            return [str(key)] if isinstance(node, dict) and key not in node else None
        present = (isinstance(node, dict) and key in node) or (
            isinstance(key, int)
            and isinstance(node, list | tuple)
            and -len(node) <= key < len(node)
        )
        if present:
            rest = walk(index + 1, node[key])
            if rest is not None:
                return [str(key), *rest]
        return walk(index + 1, node)  # treat `key` as a union-member tag

    parts = walk(0, args)
    return ".".join(parts) if parts else None


def _fields_validator(model: type[BaseModel]) -> SchemaValidator | None:
    """Validate into a plain dict (half the cost of a model instance); None if pydantic's core
    schema is not the model-over-fields shape this relies on."""
    core = model.__pydantic_core_schema__
    top: Any = core["schema"] if core["type"] == "definitions" else core
    if top.get("type") != "model" or top["schema"].get("type") != "model-fields":
        return None
    fields: Any = top["schema"]
    if core["type"] == "definitions":
        fields = {"type": "definitions", "schema": fields, "definitions": core["definitions"]}
    return SchemaValidator(fields, top.get("config"))


def _is_context(annotation: Any) -> bool:
    """`ToolContext`, a subclass, `Annotated[...]` of one, or `ToolContext | None`."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Union or isinstance(annotation, types.UnionType):
        members = typing.get_args(annotation)
        rest = [m for m in members if m is not type(None)]
        return len(members) == 2 and len(rest) == 1 and _is_context(rest[0])
    annotation = typing.get_origin(annotation) or annotation  # ToolContext[Deps]
    return inspect.isclass(annotation) and issubclass(annotation, ToolContext)


def _has_description(annotation: Any, default: Any) -> bool:
    if isinstance(default, FieldInfo) and default.description:
        return True
    if typing.get_origin(annotation) is Annotated:
        return any(isinstance(m, FieldInfo) and m.description for m in annotation.__metadata__)
    return False


def _caller_namespace() -> dict[str, Any]:
    """Locals of the nearest frame outside toolweave.tools: where a local type would live."""
    package = __name__.rpartition(".")[0]
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != package and not module.startswith(package + "."):
            break
        frame = frame.f_back  # type: ignore[assignment]
    return dict(frame.f_locals) if frame is not None else {}


def _annotated(func: Any) -> Any:
    """What carries the annotations: the function, a partial's function, or `__call__`."""
    if isinstance(func, functools.partial):
        return _annotated(func.func)
    if inspect.isroutine(func) or inspect.isclass(func):
        return func
    return type(func).__call__ if callable(func) else func


def _type_hints(func: Callable[..., Any], name: str) -> dict[str, Any]:
    source = _annotated(func)
    try:
        return typing.get_type_hints(source, include_extras=True)
    except NameError:
        pass
    # A type defined inside the function that decorates (tests, factories), or `ToolContext`
    # imported only under TYPE_CHECKING, as typed code often does.
    localns = {"ToolContext": ToolContext, **_caller_namespace()}
    try:
        return typing.get_type_hints(source, localns=localns, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"tool {name!r}: cannot resolve a type hint ({exc}); define the type at module level "
            "or import it where the function is defined"
        ) from exc


def function_schema(func: Callable[..., Any], name: str, description: str | None) -> FunctionSchema:
    """Build the schema and validator for `func`; raise TypeError naming any unusable parameter."""
    hints = _type_hints(func, name)
    doc = parse_docstring(func)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    positional_only: list[str] = []
    renames: list[tuple[str, str]] = []
    for index, param in enumerate(inspect.signature(func).parameters.values()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"tool {name!r}: *{param.name} / **{param.name} cannot be described to a model; "
                "declare each parameter explicitly"
            )
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            context_param = param.name
            continue
        if param.kind is param.POSITIONAL_ONLY:
            positional_only.append(param.name)
        default = ... if param.default is inspect.Parameter.empty else param.default
        extra: dict[str, Any] = {}
        doc_description = doc.params.get(param.name)
        if doc_description and not _has_description(annotation, default):
            extra["description"] = doc_description
        field_name = param.name
        if field_name in _RESERVED or field_name.startswith(("_", "model_")):
            field_name = f"tw_param_{index}"
            extra["alias"] = param.name
            renames.append((field_name, param.name))
        if extra:
            annotation = Annotated[annotation, Field(**extra)]
        fields[field_name] = (annotation, default)
    try:
        model = create_model(
            f"{name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
        schema = model.model_json_schema(schema_generator=_ToolJsonSchema)
    except Exception as exc:  # pydantic's schema errors name the type, not the tool
        raise TypeError(
            f"tool {name!r}: cannot build a JSON Schema for its parameters: {exc}. Use JSON-like "
            "types (str, int, float, bool, list, dict, Literal, Enum, pydantic models, "
            "dataclasses) for every parameter"
        ) from exc
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return FunctionSchema(
        description=description if description is not None else doc.description,
        parameters=_stable(schema),
        args_model=model,
        context_param=context_param,
        positional_only=tuple(positional_only),
        renames=tuple(renames),
        fields_validator=_fields_validator(model),
    )


def _stable(schema: dict[str, Any]) -> dict[str, Any]:
    """A canonical copy: `$defs` sorted, everything else in pydantic's deterministic order."""
    if "$defs" in schema:
        schema["$defs"] = dict(sorted(schema["$defs"].items()))
        schema = {k: v for k, v in schema.items() if k != "$defs"} | {"$defs": schema["$defs"]}
    result: dict[str, Any] = json.loads(json.dumps(schema))
    return result
