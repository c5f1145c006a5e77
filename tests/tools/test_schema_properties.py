"""Property tests: functions with generated signatures (names, types, defaults, parameter kinds)
must yield a schema whose properties, required list and types match the signature, and every
valid argument dict must reach the function intact (a validation round trip)."""

from __future__ import annotations

import enum
import json
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolweave.tools import InvalidArguments, ToolContext, tool


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


@dataclass
class Spot:
    x: int


@dataclass(frozen=True)
class Kind:
    """One parameter type: its annotation, its schema, and JSON inputs with their Python form."""

    annotation: Any
    check: Callable[[dict[str, Any]], bool]
    inputs: st.SearchStrategy[Any]
    to_python: Callable[[Any], Any] = lambda v: v


_INT = st.integers(-(10**6), 10**6)
_TEXT = st.text(max_size=8)
KINDS = [
    Kind(str, lambda s: s["type"] == "string", _TEXT),
    Kind(int, lambda s: s["type"] == "integer", _INT),
    Kind(float, lambda s: s["type"] == "number", st.floats(-1e6, 1e6, allow_nan=False)),
    Kind(bool, lambda s: s["type"] == "boolean", st.booleans()),
    Kind(
        int | None,
        lambda s: s["anyOf"] == [{"type": "integer"}, {"type": "null"}],
        st.none() | _INT,
    ),
    Kind(
        list[int],
        lambda s: s["type"] == "array" and s["items"] == {"type": "integer"},
        st.lists(_INT, max_size=3),
    ),
    Kind(
        dict[str, int],
        lambda s: s["type"] == "object" and s["additionalProperties"] == {"type": "integer"},
        st.dictionaries(_TEXT, _INT, max_size=3),
    ),
    Kind(
        Literal["a", "b"],
        lambda s: s["enum"] == ["a", "b"],
        st.sampled_from(["a", "b"]),
    ),
    Kind(Shade, lambda s: s["$ref"] == "#/$defs/Shade", st.sampled_from(["light", "dark"]), Shade),
    Kind(
        tuple[int, str],
        lambda s: s["prefixItems"] == [{"type": "integer"}, {"type": "string"}],
        st.tuples(_INT, _TEXT).map(list),
        tuple,
    ),
    Kind(
        Spot,
        lambda s: s["$ref"] == "#/$defs/Spot",
        st.builds(lambda x: {"x": x}, _INT),
        lambda v: Spot(**v),
    ),
]
_RESERVED = ["json", "schema", "copy", "model_config", "model_dump", "validate", "_private"]
NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n not in ("ctx", "generated", "_calls")
) | st.sampled_from(_RESERVED)


@dataclass
class Param:
    name: str
    kind: Kind
    has_default: bool
    default_input: Any
    keyword_only: bool


@st.composite
def signatures(draw: st.DrawFn) -> list[Param]:
    names = draw(st.lists(NAMES, min_size=0, max_size=6, unique=True))
    params = []
    for name in names:
        kind = draw(st.sampled_from(KINDS))
        params.append(
            Param(
                name,
                kind,
                draw(st.booleans()),
                draw(kind.inputs),
                draw(st.booleans()),
            )
        )
    # Python's own rule: among positional parameters, required ones come first.
    positional = [p for p in params if not p.keyword_only]
    positional.sort(key=lambda p: p.has_default)
    return positional + [p for p in params if p.keyword_only]


def build(params: list[Param], positional_only: int) -> tuple[Callable[..., Any], list[Any]]:
    """exec a real function with this signature; it records the arguments it receives."""
    namespace: dict[str, Any] = {"_calls": []}
    parts: list[str] = []
    positional = [p for p in params if not p.keyword_only]
    for i, p in enumerate(params):
        namespace[f"T{i}"] = p.kind.annotation
        text = f"{p.name}: T{i}"
        if p.has_default:
            namespace[f"D{i}"] = p.kind.to_python(p.default_input)
            text += f" = D{i}"
        if p.keyword_only and not any(x.keyword_only for x in params[:i]):
            parts.append("*")
        parts.append(text)
        if positional_only and i == min(positional_only, len(positional)) - 1:
            parts.append("/")
    body = "_calls.append(dict(locals()))" if params else "_calls.append({})"
    exec(f"def generated({', '.join(parts)}):\n    {body}\n    return 'ok'\n", namespace)
    return namespace["generated"], namespace["_calls"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=signatures(), positional_only=st.integers(0, 2), data=st.data())
async def test_generated_signatures(params: list[Param], positional_only: int, data: Any) -> None:
    func, calls = build(params, positional_only)
    t = tool(func)
    schema = t.parameters

    # Properties in signature order; required = exactly the parameters without defaults.
    assert list(schema["properties"]) == [p.name for p in params]
    required = [p.name for p in params if not p.has_default]
    assert schema.get("required", []) == required
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for p in params:
        prop = schema["properties"][p.name]
        assert p.kind.check(prop), (p.name, prop)
        if p.has_default:
            assert prop["default"] == json.loads(json.dumps(p.default_input))
        else:
            assert "default" not in prop

    # Byte stability: a second build is identical.
    assert json.dumps(tool(func).parameters) == json.dumps(schema)

    # Round trip: any valid argument dict reaches the function with defaults filled in.
    args = {
        p.name: data.draw(p.kind.inputs)
        for p in params
        if not p.has_default or data.draw(st.booleans())
    }
    result = await t.execute(json.loads(json.dumps(args)), ToolContext())
    assert result.text == "ok"
    expected = {p.name: p.kind.to_python(args.get(p.name, p.default_input)) for p in params}
    assert calls[-1] == expected

    # A value no parameter type accepts is reported against that parameter's name.
    if params:
        victim = data.draw(st.sampled_from(params))
        bad = {**args, victim.name: {"x": [[1]]}}
        try:
            await t.execute(bad, ToolContext())
        except InvalidArguments as exc:
            assert f"'{victim.name}" in exc.message
            assert exc.recoverable
        else:
            raise AssertionError(f"{victim.name} accepted an invalid value")
