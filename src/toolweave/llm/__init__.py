"""Provider-neutral messages, the `Model` protocol, offline models and provider adapters."""

from __future__ import annotations

from toolweave.tools import ToolDef

from ._http import ModelConfigError
from ._prompted import PromptedToolsModel, parse_tool_calls
from ._schema_dialects import to_gemini_schema, to_openai_strict
from .anthropic import AnthropicModel
from .gemini import GeminiModel
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
from .openai_chat import OpenAIChatModel
from .openai_responses import OpenAIResponsesModel
from .providers import PRESETS, Preset, model_config_problem, model_from_string
from .scripted import FunctionModel, ScriptedModel
from .types import (
    Finished,
    FinishReason,
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
