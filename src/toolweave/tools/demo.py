"""Small demo tools: a weather lookup, a unit conversion and a calculator, for docs, examples
and `make run` (offline, deterministic, so every doc snippet runs anywhere)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from toolweave.tools.function_tool import FunctionTool, tool
from toolweave.tools.registry import ToolRegistry

# Fixed readings so demos and tests are reproducible offline.
_WEATHER = {
    "beijing": (12.0, "sunny", 35),
    "北京": (12.0, "sunny", 35),
    "shanghai": (18.0, "cloudy", 70),
    "上海": (18.0, "cloudy", 70),
    "london": (9.0, "rain", 85),
}


@tool(read_only=True, tags=["weather"], category="demo")
def get_weather(
    city: Annotated[str, Field(description="City name in English or Chinese, e.g. 'Beijing'")],
) -> dict[str, object]:
    """Current weather for a city (offline demo data): temperature in Celsius and conditions."""
    reading = _WEATHER.get(city.strip().lower())
    if reading is None:
        known = ", ".join(sorted(k for k in _WEATHER if k.isascii()))
        raise ValueError(f"no weather data for {city!r}; known cities: {known}")
    celsius, conditions, humidity = reading
    return {"city": city, "celsius": celsius, "conditions": conditions, "humidity": humidity}


@tool(read_only=True, tags=["weather", "math"], category="demo")
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Args:
        celsius: Temperature in degrees Celsius.
    """
    return round(celsius * 9 / 5 + 32, 2)


_OPS: dict[type[ast.AST], Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
}


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        if isinstance(node.op, ast.Pow) and abs(_evaluate(node.right)) > 100:
            raise ValueError("exponents above 100 are not allowed")
        value: int | float = _OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        unary: int | float = _OPS[type(node.op)](_evaluate(node.operand))
        return unary
    raise ValueError("only numbers and + - * / % ** and parentheses are allowed")


@tool(read_only=True, tags=["math"], category="demo", primary_arg="expression")
def calculate(
    expression: str,
    precision: Literal[0, 2, 4, 8] = 4,
) -> int | float:
    """Evaluate an arithmetic expression safely (no names, no calls).

    Args:
        expression: Arithmetic such as "(3 + 4) * 2 / 7".
        precision: Decimal places to round a fractional result to (integers stay integers).
    """
    value = _evaluate(ast.parse(expression, mode="eval"))
    return value if isinstance(value, int) else round(value, precision)


DEMO_TOOLS: tuple[FunctionTool, ...] = (get_weather, celsius_to_fahrenheit, calculate)


def demo_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_all(DEMO_TOOLS)
    return registry
