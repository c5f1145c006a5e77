"""Provider-neutral messages, the `Model` protocol, offline models and provider adapters."""

from __future__ import annotations

from toolweave.tools import ToolDef

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
    "FinishReason",
    "Finished",
    "FunctionModel",
    "ImagePart",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "Part",
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
]
