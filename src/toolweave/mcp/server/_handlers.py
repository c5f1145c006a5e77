"""The MCP methods a server answers, one coroutine each, shared by every transport.

Each handler takes the server it answers for (a `ServerView`) before the session:
`bind_handlers` gives an `MCPServer` its own table, which its sessions dispatch to, so nothing
below the app imports the app or this module.

Error policy (spec 2025-11-25 and the forge contract): an unknown tool, prompt or bad request
shape is a JSON-RPC error (-32602); invalid arguments and anything the tool itself raises are a
result with `isError: true` naming the problem, so the model can correct itself; MCP/transport
failures inside a tool (a proxied server died, sampling timed out) stay JSON-RPC errors
(`_run_tool`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from toolweave.mcp.server._declared import tasks_declared, tasks_required
from toolweave.mcp.server._input import (
    RetryInputs,
    arguments_digest,
    input_required_result,
    retry_inputs,
)
from toolweave.mcp.server._listing import page
from toolweave.mcp.server._run_tool import run_tool
from toolweave.mcp.server._session import Handler, ServerSession
from toolweave.mcp.server._view import ServerView
from toolweave.mcp.server.context import LOG_LEVELS, Context
from toolweave.mcp.server.results import error_result, result_to_wire
from toolweave.mcp.shared.constants import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    META_SERVER_INFO,
    SUPPORTED_VERSIONS,
)
from toolweave.mcp.shared.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    InputRequired,
    JSONRPCError,
)
from toolweave.mcp.shared.jsonrpc import RequestContext

#: A method's handler: the server it answers for, the session, the params, the request.
ServerHandler = Callable[
    [ServerView, ServerSession, dict[str, Any], RequestContext], Awaitable[dict[str, Any]]
]
MAX_COMPLETIONS = 100


async def initialize(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    requested = params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
    session.protocol_version = version
    session.legacy_client = True
    info = params.get("clientInfo")
    session.client_info = info if isinstance(info, dict) else {}
    caps = params.get("capabilities")
    session.client_capabilities = caps if isinstance(caps, dict) else {}
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": server.capabilities(),
        "serverInfo": server.info,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def discover(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": server.capabilities(),
        "_meta": {META_SERVER_INFO: server.info},
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def tools_list(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    await server.load_tool_sources()
    return page("tools", "tools", server.tool_definitions_for(session), params, server.page_size)


def _bad_params(message: str) -> JSONRPCError:
    return JSONRPCError(INVALID_PARAMS, message)


async def tools_call(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise _bad_params("tools/call needs params.name, the tool's name as a string")
    entry = server.tool_entry(name)
    if entry is None:
        await server.load_tool_sources()
        entry = server.tool_entry(name)
    if entry is None:
        known = ", ".join(server.tool_names()[:20])
        raise _bad_params(f"Unknown tool: {name!r}. Available tools: {known}")
    args = params.get("arguments")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return result_to_wire(error_result(f"arguments of tool {name!r} must be a JSON object"))
    binding = _binding(session, ctx, f"tools/call:{name}", args)
    inputs = await _retry_inputs(server, params, binding)
    call_ctx = Context(session, ctx, tool_name=name, deps=server.deps, inputs=inputs)
    try:
        if (
            inputs is not None
            and entry.task_support
            and tasks_declared(call_ctx.client_capabilities)
        ):
            outcome = await server.tasks.call(entry, args, call_ctx, inputs.answers)
            if isinstance(outcome, dict):
                return outcome  # the call became a task
            result = outcome
        elif entry.task_support == "required":
            raise tasks_required(f"tool {name!r} runs only as a task, so it")
        else:
            result = await run_tool(entry, entry.tool(), args, call_ctx)
    except InputRequired:
        assert binding is not None and isinstance(call_ctx.inputs, RetryInputs)  # 2026 only
        return input_required_result(server.request_states, call_ctx.inputs, **binding)
    return result_to_wire(result, wrap_structured=entry.wrap_structured)


def _binding(
    session: ServerSession, ctx: RequestContext, target: str, arguments: Any
) -> dict[str, str] | None:
    """What a 2026-07-28 `requestState` is bound to (None in a 2025 session: no states there)."""
    if not session.is_modern(ctx.meta):
        return None
    caller = session.principal or ""
    return {"caller": caller, "target": target, "digest": arguments_digest(arguments)}


async def _retry_inputs(
    server: ServerView, params: dict[str, Any], binding: dict[str, str] | None
) -> RetryInputs | None:
    if binding is None:
        return None
    return await retry_inputs(server.request_states, params, **binding)


async def resources_list(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    resources = [r.definition() for r in server.resources if not r.is_template]
    for source in server.catalog_sources:
        resources.extend(await source.resources())
    return page("resources", "resources", resources, params, server.page_size)


async def resource_templates_list(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    templates = [r.definition() for r in server.resources if r.is_template]
    for source in server.catalog_sources:
        templates.extend(await source.resource_templates())
    return page("templates", "resourceTemplates", templates, params, server.page_size)


async def _call(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    value = func(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


async def resources_read(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise _bad_params("resources/read needs params.uri, the resource URI as a string")
    for entry in server.resources:
        variables = entry.match(uri)
        if variables is not None:
            value = await _call(entry.func, variables)
            return {"contents": entry.contents(uri, value)}
    for source in server.catalog_sources:
        found = await source.read_resource(uri)
        if found is not None:
            return found
    code = INVALID_PARAMS if session.is_modern(ctx.meta) else RESOURCE_NOT_FOUND
    raise JSONRPCError(code, f"Resource not found: {uri}", {"uri": uri})


async def resources_subscribe(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise _bad_params("resources/subscribe needs params.uri as a string")
    session.subscriptions.add(uri)
    return {}


async def resources_unsubscribe(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise _bad_params("resources/unsubscribe needs params.uri as a string")
    session.subscriptions.discard(uri)
    return {}


async def prompts_list(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    prompts = [p.definition() for p in server.prompts.values()]
    for source in server.catalog_sources:
        prompts.extend(await source.prompts())
    return page("prompts", "prompts", prompts, params, server.page_size)


async def prompts_get(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    name = params.get("name")
    entry = server.prompts.get(name) if isinstance(name, str) else None
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise _bad_params(f"arguments of prompt {name!r} must be an object of strings")
    if entry is None and isinstance(name, str):
        for source in server.catalog_sources:
            found = await source.get_prompt(name, arguments)
            if found is not None:
                return found
    if entry is None:
        known = ", ".join(sorted(server.prompts))
        raise _bad_params(f"Unknown prompt: {name!r}. Available prompts: {known}")
    declared = entry.definition().get("arguments", [])
    missing = [a["name"] for a in declared if a["required"] and a["name"] not in arguments]
    if missing:
        raise _bad_params(f"prompt {name!r} is missing required arguments: {', '.join(missing)}")
    unknown = set(arguments) - {a["name"] for a in declared}
    if unknown:
        raise _bad_params(f"prompt {name!r} has no arguments named {', '.join(sorted(unknown))}")
    binding = _binding(session, ctx, f"prompts/get:{name}", arguments)
    inputs = await _retry_inputs(server, params, binding)
    kwargs = dict(arguments)
    if entry.context_param is not None:
        kwargs[entry.context_param] = Context(session, ctx, deps=server.deps, inputs=inputs)
    try:
        return entry.messages(await _call(entry.func, kwargs))
    except InputRequired:
        assert inputs is not None and binding is not None
        return input_required_result(server.request_states, inputs, **binding)


async def complete(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    ref = params.get("ref")
    argument = params.get("argument") or {}
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise _bad_params(
            "completion/complete needs params.ref ({'type': 'ref/prompt', 'name': ...} or "
            "{'type': 'ref/resource', 'uri': ...}) and params.argument ({'name', 'value'})"
        )
    key = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
    handler = server.completions.get(key) if isinstance(key, str) else None
    values: list[str] = []
    if handler is not None:
        context = (params.get("context") or {}).get("arguments") or {}
        found = await _call(
            handler,
            {
                "argument": argument.get("name", ""),
                "value": argument.get("value", ""),
                "context": context,
            },
        )
        values = [str(v) for v in found]
    else:
        context = (params.get("context") or {}).get("arguments") or {}
        for source in server.catalog_sources:
            answered = await source.complete(ref, argument, context)
            if answered is not None:
                return answered
    return {
        "completion": {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }
    }


def _serves_skills(server: ServerView, method: str) -> None:
    if not server.skills.offered:
        raise JSONRPCError(
            METHOD_NOT_FOUND, f"Method not found: {method} (this server has no skills)"
        )


async def skills_list(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    _serves_skills(server, ctx.method)
    return page("skills", "skills", await server.skills.entries(), params, server.page_size)


async def skills_get(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    _serves_skills(server, ctx.method)
    return await server.skills.get(params.get("uri"))


def _task_owner(session: ServerSession, ctx: RequestContext) -> str:
    """Who may see the task (tasks/* are refused to a client without the extension)."""
    if not tasks_declared(session.client_capabilities_for(ctx.meta)):
        raise tasks_required(ctx.method)
    return session.principal or ""


def _task_method(name: str) -> ServerHandler:
    """The handler of `tasks/<name>`: the server's `TaskManager.<name>` for the caller's tasks."""

    async def handle(
        server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        method: Callable[[dict[str, Any], str], Awaitable[dict[str, Any]]]
        method = getattr(server.tasks, name)
        return await method(params, _task_owner(session, ctx))

    return handle


async def listen(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    return await server.changes.listen(
        session, params, ctx, capabilities=server.capabilities(), tasks=server.tasks
    )


async def set_level(
    server: ServerView, session: ServerSession, params: dict[str, Any], ctx: RequestContext
) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise _bad_params(f"logging/setLevel: level must be one of {', '.join(LOG_LEVELS)}")
    session.log_level = str(level)
    return {}


#: The handler of each method, unbound (`bind_handlers` gives a server its own table).
HANDLERS: dict[str, ServerHandler] = {
    "initialize": initialize,
    "server/discover": discover,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resource_templates_list,
    "resources/read": resources_read,
    "resources/subscribe": resources_subscribe,
    "resources/unsubscribe": resources_unsubscribe,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": complete,
    "logging/setLevel": set_level,
    "subscriptions/listen": listen,
    "skills/list": skills_list,
    "skills/get": skills_get,
    "tasks/get": _task_method("get"),
    "tasks/update": _task_method("update"),
    "tasks/cancel": _task_method("cancel"),
}


def bind_handlers(server: ServerView) -> dict[str, Handler]:
    """`server`'s method table: each handler of `HANDLERS` with `server` as its first argument
    (what its sessions dispatch to, see `SessionHost.handlers`)."""
    return {method: partial(handler, server) for method, handler in HANDLERS.items()}
