"""`@tool`: a typed Python function becomes a `Tool` with an exact JSON Schema.

Sync functions run in a worker thread so they never block the event loop; async functions are
awaited directly. The library's own errors (`ToolweaveError`) pass through for
`ToolRegistry.invoke` to make them the call's outcome; every other exception (SystemExit from an
argparse-using helper included) becomes `ExecutionFailed`; only the caller's own cancellation
propagates, as asyncio requires.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from toolweave.errors import ConfigError, ToolweaveError
from toolweave.tools.base import ToolAnnotations
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ExecutionFailed, ToolCancelled
from toolweave.tools.permissions import Permission, permission_set
from toolweave.tools.result import ToolResult, to_tool_result
from toolweave.tools.schema import FunctionSchema, function_schema

F = TypeVar("F", bound=Callable[..., Any])


class _ThreadStopIteration(Exception):
    """StopIteration cannot cross into an asyncio future (the await would hang); carry it."""


def _guard_stop_iteration(
    func: Callable[..., Any], positional: Sequence[Any], kwargs: dict[str, Any]
) -> Any:
    try:
        return func(*positional, **kwargs)
    except StopIteration as exc:
        raise _ThreadStopIteration(str(exc)) from exc


class FunctionTool:
    """A `Tool` backed by a Python function; build it with `@tool`."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        permissions: Iterable[str | Permission] | None = None,
        read_only: bool = False,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool = False,
        primary_arg: str | None = None,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        timeout: float | None = None,
        admin_approval: bool = False,
    ) -> None:
        self.func = func
        func_name = name or getattr(func, "__name__", None)
        if not func_name or func_name == "<lambda>":
            raise TypeError(f"cannot name a tool for {func!r}; pass name='...' to @tool")
        self._name: str = func_name
        self._schema: FunctionSchema = function_schema(func, self._name, description)
        if primary_arg is not None and primary_arg not in self._schema.parameters["properties"]:
            raise ConfigError(
                f"tool {self._name!r}: primary_arg {primary_arg!r} is not one of its parameters "
                f"{sorted(self._schema.parameters['properties'])}"
            )
        if timeout is not None and not timeout > 0:
            raise ConfigError(
                f"tool {self._name!r}: timeout must be a positive number of seconds or None "
                f"(no limit), got {timeout!r}"
            )
        self._permissions = permission_set(permissions)
        # A read-only tool is by definition neither destructive nor in need of idempotency care.
        self._annotations = ToolAnnotations(
            read_only=read_only,
            destructive=(not read_only) if destructive is None else destructive,
            idempotent=read_only if idempotent is None else idempotent,
            open_world=open_world,
        )
        self._primary_arg = primary_arg
        # Governance reads these: an explicit destructive=True asks by default (the implied
        # destructive of a non-read-only tool does not), and admin_approval tools (config
        # changes) always need the admin approver.
        self.destructive_declared = destructive is True
        self.admin_approval = admin_approval
        self.tags: frozenset[str] = frozenset(tags or ())
        self.category = category
        self.timeout = timeout
        self._is_async = inspect.iscoroutinefunction(func) or (
            not inspect.isroutine(func)  # an object with `async def __call__`
            and inspect.iscoroutinefunction(type(func).__call__)
        )
        self.__wrapped__ = func
        self.__doc__ = func.__doc__

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._schema.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema.parameters

    @property
    def permissions(self) -> frozenset[Permission]:
        return self._permissions

    @property
    def annotations(self) -> ToolAnnotations:
        return self._annotations

    @property
    def primary_arg(self) -> str | None:
        return self._primary_arg

    @property
    def schema(self) -> FunctionSchema:
        return self._schema

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        schema = self._schema
        kwargs = schema.validate(self._name, args)
        if schema.context_param is not None:
            kwargs[schema.context_param] = ctx
        positional = (
            [kwargs.pop(p) for p in schema.positional_only] if schema.positional_only else ()
        )
        try:
            if self._is_async:
                value = await self.func(*positional, **kwargs)
            else:
                call = functools.partial(_guard_stop_iteration, self.func, positional, kwargs)
                value = await asyncio.get_running_loop().run_in_executor(
                    None, contextvars.copy_context().run, call
                )
                if inspect.isawaitable(value):  # an async function behind a plain decorator
                    value = await value
            return to_tool_result(value)
        except ToolweaveError:
            raise  # the library's own families: the registry makes them the call's outcome
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the caller cancelled us: let cancellation propagate
            raise ToolCancelled(  # the tool gave up on its own (e.g. it saw ctx.cancelled)
                f"Tool '{self._name}' was cancelled before it finished.", tool=self._name
            ) from None
        except (Exception, SystemExit) as exc:
            original = exc.__cause__ if isinstance(exc, _ThreadStopIteration) else exc
            detail = str(original) or "(no message)"
            raise ExecutionFailed(
                f"Tool '{self._name}' failed: {type(original).__name__}: {detail}. "
                "Check the arguments or try a different approach.",
                tool=self._name,
            ) from original

    async def __call__(self, **kwargs: Any) -> ToolResult:
        """Run the tool directly (handy in tests); arguments are validated as for a model."""
        return await self.execute(kwargs, ToolContext())

    def __repr__(self) -> str:
        return f"FunctionTool(name={self._name!r})"


@overload
def tool(func: F, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    permissions: Iterable[str | Permission] | None = None,
    read_only: bool = False,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool = False,
    primary_arg: str | None = None,
    tags: Iterable[str] | None = None,
    category: str | None = None,
    timeout: float | None = None,
    admin_approval: bool = False,
) -> Callable[[F], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    **options: Any,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a typed function into a tool; use bare (`@tool`) or with options (`@tool(...)`)."""
    if func is not None:
        return FunctionTool(func, **options)

    def decorate(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(f, **options)

    return decorate
