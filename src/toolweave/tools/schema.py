"""JSON Schema and a cached validator from a Python function's signature.

pydantic v2 does the heavy lifting: each function gets one argument model, built once, whose
schema is what the model sees and whose compiled validator checks every call (~1 µs).
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema

from ._docstrings import parse_docstring
from .context import ToolContext
from .errors import InvalidArguments


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

    def validate(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Validate and coerce arguments; the error names each bad field and what it expected."""
        try:
            model = self.args_model.__pydantic_validator__.validate_python(args)
        except ValidationError as exc:
            raise InvalidArguments(
                describe_validation_error(tool_name, exc), tool=tool_name
            ) from exc
        return dict(model.__dict__)


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            problems.append(f"'{where}' is required but missing")
        elif err["type"] == "extra_forbidden":
            problems.append(f"'{where}' is not a parameter of this tool")
        else:
            got = json.dumps(err.get("input"), default=repr, ensure_ascii=False)
            if len(got) > 80:
                got = got[:77] + "..."
            problems.append(f"'{where}': {err['msg']} (got {got})")
    return (
        f"Invalid arguments for tool '{tool_name}': "
        + "; ".join(problems)
        + ". Fix these fields to match the tool's parameter schema and call it again."
    )


def _is_context(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, ToolContext)


def _field_description(annotation: Any) -> str | None:
    if typing.get_origin(annotation) is typing.Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, FieldInfo) and meta.description:
                return meta.description
    return None


def function_schema(func: Callable[..., Any], name: str, description: str | None) -> FunctionSchema:
    """Build the schema and validator for `func`; raise TypeError naming any unusable parameter."""
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"tool {name!r}: cannot resolve a type hint ({exc}); define the type at module level "
            "or import it where the function is defined"
        ) from exc
    doc = parse_docstring(func)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    positional_only: list[str] = []
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"tool {name!r}: *{param.name} / **{param.name} cannot be described to a model; "
                "declare each parameter explicitly"
            )
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            context_param = param.name
            continue
        if param.name.startswith("_"):
            raise TypeError(
                f"tool {name!r}: parameter {param.name!r} starts with '_', which JSON Schema "
                "property names from pydantic cannot; rename it"
            )
        if param.kind is param.POSITIONAL_ONLY:
            positional_only.append(param.name)
        default = ... if param.default is inspect.Parameter.empty else param.default
        doc_description = doc.params.get(param.name)
        if doc_description and not _field_description(annotation):
            fields[param.name] = (annotation, Field(default, description=doc_description))
        else:
            fields[param.name] = (annotation, default)
    model = create_model(
        f"{name}_arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
        **fields,
    )
    schema = model.model_json_schema(schema_generator=_ToolJsonSchema)
    schema.pop("title", None)
    schema.setdefault("properties", {})
    parameters = _stable(schema)
    return FunctionSchema(
        description=description if description is not None else doc.description,
        parameters=parameters,
        args_model=model,
        context_param=context_param,
        positional_only=tuple(positional_only),
    )


def _stable(schema: dict[str, Any]) -> dict[str, Any]:
    """A canonical copy: `$defs` sorted, everything else in pydantic's deterministic order."""
    if "$defs" in schema:
        schema["$defs"] = dict(sorted(schema["$defs"].items()))
        schema = {k: v for k, v in schema.items() if k != "$defs"} | {"$defs": schema["$defs"]}
    result: dict[str, Any] = json.loads(json.dumps(schema))
    return result
