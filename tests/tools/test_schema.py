"""Schema generation from type hints and docstrings: every type family the issue names, the
injected context, byte stability, and the errors a model sees for bad arguments."""

from __future__ import annotations

import enum
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from toolweave.tools import FunctionTool, InvalidArguments, ToolContext, tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    zip_code: Annotated[str, Field(description="Postal code")]


@dataclass
class Point:
    x: float
    y: float = 0.0


class Order(BaseModel):
    items: list[Address]
    point: Point | None = None


def _schema(func: object) -> dict[str, object]:
    return tool(func).parameters  # type: ignore[arg-type]


def test_primitive_types_and_required() -> None:
    def f(s: str, i: int, x: float, b: bool, opt: int = 3) -> None:
        """Primitives."""

    params = _schema(f)
    props = params["properties"]
    assert props == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "opt": {"default": 3, "type": "integer"},
    }
    assert params["required"] == ["s", "i", "x", "b"]
    assert params["type"] == "object"
    assert params["additionalProperties"] is False


def test_optional_union_literal_enum() -> None:
    def f(
        a: int | None = None,
        b: int | str = 1,
        mode: Literal["fast", "slow"] = "fast",
        color: Color = Color.RED,
    ) -> None:
        """Mixed."""

    params = _schema(f)
    props = params["properties"]
    assert props["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert props["b"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 1}
    assert props["mode"] == {"default": "fast", "enum": ["fast", "slow"], "type": "string"}
    assert props["color"] == {"$ref": "#/$defs/Color", "default": "red"}
    assert params["$defs"]["Color"]["enum"] == ["red", "green"]
    assert "required" not in params


def test_containers() -> None:
    def f(tags: list[str], counts: dict[str, int], pair: tuple[int, str]) -> None:
        """Containers."""

    props = _schema(f)["properties"]
    assert props["tags"] == {"items": {"type": "string"}, "type": "array"}
    assert props["counts"] == {"additionalProperties": {"type": "integer"}, "type": "object"}
    assert props["pair"]["type"] == "array"
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]


async def test_nested_models_and_dataclasses_validate_into_instances() -> None:
    seen: dict[str, object] = {}

    @tool
    def place(order: Order, color: Color = Color.GREEN) -> str:
        """Place an order."""
        seen["order"] = order
        seen["color"] = color
        return "ok"

    defs = place.parameters["$defs"]
    assert list(defs) == sorted(defs) == ["Address", "Color", "Order", "Point"]
    assert defs["Address"]["properties"]["zip_code"]["description"] == "Postal code"
    assert defs["Point"]["properties"]["y"]["default"] == 0.0

    args = {"order": {"items": [{"street": "Main", "zip_code": "1"}], "point": {"x": 1}}}
    result = await place.execute({**args, "color": "red"}, ToolContext())
    assert result.text == "ok"
    order = seen["order"]
    assert isinstance(order, Order)
    assert order.items[0] == Address(street="Main", zip_code="1")
    assert order.point == Point(x=1.0, y=0.0)
    assert seen["color"] is Color.RED


def test_annotated_field_description_wins_over_docstring() -> None:
    def f(
        city: Annotated[str, Field(description="From Annotated")],
        days: int = 1,
    ) -> None:
        """Forecast.

        Args:
            city: From the docstring.
            days: Number of days.
        """

    props = _schema(f)["properties"]
    assert props["city"]["description"] == "From Annotated"
    assert props["days"]["description"] == "Number of days."


@pytest.mark.parametrize(
    "doc",
    [
        """Search the web.

        Args:
            query: What to look for.
            limit: Maximum hits.
        """,
        """Search the web.

        Parameters
        ----------
        query : str
            What to look for.
        limit : int
            Maximum hits.
        """,
        """Search the web.

        :param query: What to look for.
        :type query: str
        :param limit: Maximum hits.
        """,
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_docstring_styles(doc: str) -> None:
    def search(query: str, limit: int = 5) -> None:
        pass

    search.__doc__ = doc
    t = tool(search)
    assert t.description == "Search the web."
    assert t.parameters["properties"]["query"]["description"] == "What to look for."
    assert t.parameters["properties"]["limit"]["description"] == "Maximum hits."


def test_description_keeps_prose_notes_and_returns_but_not_parameters() -> None:
    @tool
    def lookup(key: str) -> str:
        """查询键值。

        Reads one entry.

        Note:
            Keys are case sensitive.

        Args:
            key: 键名。

        Returns:
            The stored value.

        Raises:
            KeyError: never reaches the model.
        """
        return key

    assert lookup.description == (
        "查询键值。\n\nReads one entry.\n\nNote: Keys are case sensitive.\n\n"
        "Returns: The stored value."
    )
    assert lookup.parameters["properties"]["key"]["description"] == "键名。"


def test_google_sections_without_blank_lines_before_them() -> None:
    @tool
    def tight(key: str, limit: int = 1) -> str:
        """Look up a key.
        Args:
            key: The key.
            limit: At most this many.
        Returns:
            The value.
        """
        return key

    assert tight.description == "Look up a key.\n\nReturns: The value."
    props = tight.parameters["properties"]
    assert (props["key"]["description"], props["limit"]["description"]) == (
        "The key.",
        "At most this many.",
    )


def test_docstring_without_sections_is_kept_whole_and_description_override() -> None:
    def f(a: int) -> None:
        """Line one.

        Line two with Args in it but no section.
        """

    assert tool(f).description == "Line one.\n\nLine two with Args in it but no section."
    assert tool(description="Custom")(f).description == "Custom"


async def test_context_parameter_is_injected_not_exposed() -> None:
    @tool
    async def whoami(ctx: ToolContext, greeting: str = "hi") -> str:
        """Say who is calling."""
        return f"{greeting} {ctx.session_id} {ctx.call_id}"

    assert list(whoami.parameters["properties"]) == ["greeting"]
    assert "required" not in whoami.parameters

    result = await whoami.execute({}, ToolContext(session_id="s1", call_id="c9"))
    assert result.text == "hi s1 c9"


def test_context_may_be_annotated_or_any_position() -> None:
    @tool
    def f(a: int, context: Annotated[ToolContext, "injected"], b: int = 2) -> int:
        """Add."""
        assert isinstance(context, ToolContext)
        return a + b

    assert list(f.parameters["properties"]) == ["a", "b"]
    assert f.schema.context_param == "context"

    @tool
    def g(a: int, ctx: ToolContext | None = None) -> int:
        """Optional context, the common way to keep a function callable without one."""
        return a

    assert list(g.parameters["properties"]) == ["a"] and g.schema.context_param == "ctx"


async def test_reserved_and_underscore_names_work_by_alias() -> None:
    @tool
    def f(json: int, schema: str, model_config: bool, _hidden: int = 0) -> dict[str, object]:
        """Names pydantic itself uses."""
        return {"json": json, "schema": schema, "model_config": model_config, "_hidden": _hidden}

    assert list(f.parameters["properties"]) == ["json", "schema", "model_config", "_hidden"]
    assert f.parameters["required"] == ["json", "schema", "model_config"]
    args = {"json": "5", "schema": "s", "model_config": True, "_hidden": 2}
    result = await f.execute(args, ToolContext())
    assert result.structured == {"json": 5, "schema": "s", "model_config": True, "_hidden": 2}
    with pytest.raises(InvalidArguments, match="'json'"):
        await f.execute({"json": "x", "schema": "s", "model_config": True}, ToolContext())


async def test_positional_only_parameters_are_passed_positionally() -> None:
    @tool
    def f(a: int, /, b: int) -> int:
        """Subtract."""
        return a - b

    assert (await f.execute({"a": 5, "b": 2}, ToolContext())).structured == 3


def test_local_types_resolve_under_future_annotations() -> None:
    class Local(BaseModel):
        n: int

    @tool
    def f(item: Local) -> int:
        """Use a type defined in the enclosing function."""
        return item.n

    assert f.parameters["properties"]["item"] == {"$ref": "#/$defs/Local"}


async def test_tool_context_imported_only_under_type_checking_resolves() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from toolweave.tools import ToolContext\n"
        "def f(x: int, ctx: ToolContext) -> str:\n"
        "    'Typed code imports the context for the type checker only.'\n"
        "    return f'{x} {ctx.call_id}'\n"
    )
    namespace: dict[str, object] = {}
    exec(source, namespace)
    t = tool(namespace["f"])  # type: ignore[arg-type]
    assert list(t.parameters["properties"]) == ["x"] and t.schema.context_param == "ctx"
    assert (await t.execute({"x": 1}, ToolContext(call_id="c7"))).text == "1 c7"


def test_unusable_signatures_raise_clear_errors() -> None:
    def star(*args: int) -> None:
        """Varargs."""

    with pytest.raises(TypeError, match=r"\*args"):
        tool(star)

    def unresolved(x: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
        """Bad hint."""

    with pytest.raises(TypeError, match="cannot resolve a type hint"):
        tool(unresolved)

    def bad_primary(x: int) -> None:
        """Primary arg missing."""

    with pytest.raises(ValueError, match="primary_arg 'path'"):
        tool(primary_arg="path")(bad_primary)

    with pytest.raises(TypeError, match="pass name="):
        FunctionTool(lambda x: x)


def test_schema_is_byte_stable_across_builds() -> None:
    def f(order: Order, color: Color = Color.RED, tags: list[str] | None = None) -> None:
        """Stable."""

    first = json.dumps(tool(f).parameters)
    assert all(json.dumps(tool(f).parameters) == first for _ in range(3))
    t = tool(f)
    assert t.parameters is t.parameters  # the same object every time: no re-generation


def test_schema_is_byte_stable_across_processes() -> None:
    code = (
        "import json\n"
        "from toolweave.tools.demo import demo_registry\n"
        "print(json.dumps([d.parameters for d in demo_registry().definitions()]))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert '"expression"' in outputs.pop()


async def test_field_defaults_and_constraints() -> None:
    @tool
    def page(
        size: Annotated[int, Field(ge=1, le=100)] = 10,
        tags: list[str] = Field(default_factory=list, description="Filter tags"),  # noqa: B008
        cursor: str | None = Field(None, description="From the last page"),
    ) -> dict[str, object]:
        """Page through results.

        Args:
            size: Page size.
            tags: Docstring text loses to Field's own description.
        """
        return {"size": size, "tags": tags, "cursor": cursor}

    props = page.parameters["properties"]
    assert props["size"] == {
        "default": 10,
        "description": "Page size.",
        "maximum": 100,
        "minimum": 1,
        "type": "integer",
    }
    assert props["tags"]["description"] == "Filter tags"
    assert props["cursor"]["description"] == "From the last page"
    assert "required" not in page.parameters
    assert (await page.execute({}, ToolContext())).structured == {
        "size": 10,
        "tags": [],
        "cursor": None,
    }
    with pytest.raises(InvalidArguments, match="'size': Input should be less than or equal to 100"):
        await page.execute({"size": 101}, ToolContext())
