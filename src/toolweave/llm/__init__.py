"""Provider-neutral messages, the `Model` protocol, offline models and provider adapters.

Every name loads on first use (PEP 562, `toolweave._lazy`), so code that only builds messages
or drives a `ScriptedModel` never pays for httpx, the adapters, presets or prompted mode.
`ToolDef` lives in `toolweave.tools`, its one home.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ModelConfigError": ".errors",
    "ModelError": ".errors",
    "ImagePart": ".messages",
    "Message": ".messages",
    "Part": ".messages",
    "Role": ".messages",
    "TextPart": ".messages",
    "ThinkingPart": ".messages",
    "ProviderToolPart": ".messages",
    "ProviderTool": ".settings",
    "ProviderToolUpdate": ".types",
    "ToolCallPart": ".messages",
    "ToolResultPart": ".messages",
    "Model": ".model",
    "FunctionModel": ".scripted",
    "ScriptedModel": ".scripted",
    "ModelSettings": ".settings",
    "Finished": ".types",
    "FinishReason": ".types",
    "ModelRequest": ".types",
    "ModelResponse": ".types",
    "StreamEvent": ".types",
    "TextDelta": ".types",
    "ThinkingDelta": ".types",
    "ToolCallDelta": ".types",
    "ToolCallReady": ".types",
    "ToolChoice": ".types",
    "Usage": ".types",
    "PromptedToolsModel": ".prompted",
    "parse_tool_calls": ".prompted",
    "to_gemini_schema": ".schema_dialects",
    "to_openai_strict": ".schema_dialects",
    "AnthropicModel": ".anthropic",
    "GeminiModel": ".gemini",
    "OpenAIChatModel": ".openai_chat",
    "OpenAIResponsesModel": ".openai_responses",
    "PRESETS": ".presets",
    "Preset": ".presets",
    "model_config_problem": ".presets",
    "model_from_string": ".presets",
}

if TYPE_CHECKING:
    from toolweave.llm.anthropic import AnthropicModel
    from toolweave.llm.errors import ModelConfigError, ModelError
    from toolweave.llm.gemini import GeminiModel
    from toolweave.llm.messages import (
        ImagePart,
        Message,
        Part,
        ProviderToolPart,
        Role,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolResultPart,
    )
    from toolweave.llm.model import Model
    from toolweave.llm.openai_chat import OpenAIChatModel
    from toolweave.llm.openai_responses import OpenAIResponsesModel
    from toolweave.llm.presets import PRESETS, Preset, model_config_problem, model_from_string
    from toolweave.llm.prompted import PromptedToolsModel, parse_tool_calls
    from toolweave.llm.schema_dialects import to_gemini_schema, to_openai_strict
    from toolweave.llm.scripted import FunctionModel, ScriptedModel
    from toolweave.llm.settings import ModelSettings, ProviderTool
    from toolweave.llm.types import (
        Finished,
        FinishReason,
        ModelRequest,
        ModelResponse,
        ProviderToolUpdate,
        StreamEvent,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        ToolCallReady,
        ToolChoice,
        Usage,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "PRESETS",
    "AnthropicModel",
    "FinishReason",
    "Finished",
    "FunctionModel",
    "GeminiModel",
    "ImagePart",
    "Message",
    "Model",
    "ModelConfigError",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Part",
    "Preset",
    "PromptedToolsModel",
    "ProviderTool",
    "ProviderToolPart",
    "ProviderToolUpdate",
    "Role",
    "ScriptedModel",
    "StreamEvent",
    "TextDelta",
    "TextPart",
    "ThinkingDelta",
    "ThinkingPart",
    "ToolCallDelta",
    "ToolCallPart",
    "ToolCallReady",
    "ToolChoice",
    "ToolResultPart",
    "Usage",
    "model_config_problem",
    "model_from_string",
    "parse_tool_calls",
    "to_gemini_schema",
    "to_openai_strict",
]
