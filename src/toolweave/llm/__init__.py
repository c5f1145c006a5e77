"""Provider-neutral messages, the `Model` protocol, offline models and provider adapters.

The neutral types load eagerly (every layer above uses them); the HTTP adapters, presets and
prompted mode load on first use (PEP 562), so code that only builds messages or drives a
`ScriptedModel` never pays for httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.tools import ToolDef

from .._lazy import lazy_exports
from .messages import (
    ImagePart,
    Message,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from .model import Model
from .scripted import FunctionModel, ScriptedModel
from .types import (
    Finished,
    FinishReason,
    ModelConfigError,
    ModelError,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolChoice,
    Usage,
)

_LAZY: dict[str, str] = {
    "PromptedToolsModel": ".prompted",
    "parse_tool_calls": ".prompted",
    "to_gemini_schema": ".schema_dialects",
    "to_openai_strict": ".schema_dialects",
    "AnthropicModel": ".anthropic",
    "GeminiModel": ".gemini",
    "OpenAIChatModel": ".openai_chat",
    "OpenAIResponsesModel": ".openai_responses",
    "PRESETS": ".providers",
    "Preset": ".providers",
    "model_config_problem": ".providers",
    "model_from_string": ".providers",
}

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .gemini import GeminiModel
    from .openai_chat import OpenAIChatModel
    from .openai_responses import OpenAIResponsesModel
    from .prompted import PromptedToolsModel, parse_tool_calls
    from .providers import PRESETS, Preset, model_config_problem, model_from_string
    from .schema_dialects import to_gemini_schema, to_openai_strict


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


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
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Part",
    "Preset",
    "PromptedToolsModel",
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
    "ToolDef",
    "ToolResultPart",
    "Usage",
    "model_config_problem",
    "model_from_string",
    "parse_tool_calls",
    "to_gemini_schema",
    "to_openai_strict",
]
