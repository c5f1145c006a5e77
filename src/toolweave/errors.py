"""The one root of every error toolweave raises, so `except ToolweaveError` catches them all.

This module imports nothing: every package derives its own family from these classes in its own
`errors` module, without reaching up or sideways. The whole tree (a test holds it to the
classes: a parent is the first base, "also" names the other bases, a package in parentheses is
where the class and its children live):

    ToolweaveError
    ├── ConfigError (also ValueError): a bad argument, setting or config file
    │   ├── ModelConfigError (llm): a model cannot be built (a key, a model string, an option)
    │   ├── HookConfigError (governance): a hook definition is malformed
    │   └── RuleSyntaxError (governance): a permission rule does not parse
    ├── MissingDependency (also ImportError): an optional extra is not installed
    ├── StorageError (storage): a store, index or file failed
    │   ├── DimensionMismatch (also ConfigError): vectors of another embedder
    │   ├── EmbedderUnavailable (also ConfigError): an embedder spec or its package
    │   ├── EmbeddingFailed: an embeddings endpoint refused or failed
    │   ├── StoreUnavailable: the shared database does not answer (retry)
    │   └── FrontmatterError (also ConfigError): Markdown frontmatter missing or refused
    ├── ToolError (tools): a tool call failed; `recoverable` errors go back to the model
    │   ├── ToolNotFound: no tool of that name
    │   ├── InvalidArguments: the arguments do not fit the schema
    │   │   └── MemoryArgumentError (memory; also ValueError): a bad memory argument
    │   ├── ExecutionFailed: the tool raised
    │   │   └── SubagentBudgetExhausted (agent.orchestration): too little time for a subagent
    │   ├── PermissionDenied: the permission policy refused the call
    │   │   └── SandboxUnavailable: no OS sandbox can be made for a command
    │   ├── ApprovalRequired: the tool asks for approval before a side effect
    │   ├── ToolTimeout: the call ran past its timeout
    │   └── ToolCancelled: the caller cancelled the call
    ├── ShellParseError (tools; also ValueError): a command line that does not parse
    │   └── WrapperError: a wrapper command is missing an option's value
    ├── GovernanceError (governance): governance refused a call or stopped a run
    │   ├── CallBlocked: a gate stage blocked the call
    │   └── HookStopped: a hook ended the run
    ├── SkillError (skills): a skill cannot be loaded, installed or read
    ├── KnowledgeBaseError (kb): a knowledge-base or notes call failed
    │   ├── DocumentError: a document cannot be read or converted
    │   └── NoteNotFound: no note with that id
    ├── MCPError (mcp): an MCP request or connection failed
    │   ├── MCPTimeout: no answer in time
    │   ├── MCPConnectionClosed: the peer went away
    │   ├── OAuthError: authorization failed
    │   ├── InputRequired: a 2026 call needs the client's answers first (server-internal)
    │   ├── SkillVerificationError: a server's skill file differs from its listing
    │   └── JSONRPCError: the peer answered with a JSON-RPC error
    ├── ModelError (llm): a provider refused or failed
    ├── AccountingError (accounting): quotas and the query log
    │   └── QuotaExceeded: a quota is used up
    └── AgentError (agent): the loop stopped without an answer
        ├── MaxTurnsExceeded: the turn limit was reached
        ├── OutputValidationError: the answer does not fit output_type
        ├── SessionBusy: another run holds the session
        └── PromptBlocked: a UserPromptSubmit hook blocked the prompt
"""

from __future__ import annotations


class ToolweaveError(Exception):
    """Base of every error the library raises."""


class ConfigError(ToolweaveError, ValueError):
    """A bad argument, setting or configuration file; the message names the field and the fix.

    It is also a `ValueError`, so code that validated input with `except ValueError` keeps
    working.
    """


class MissingDependency(ToolweaveError, ImportError):
    """A feature needs a package of an optional extra that is not installed; the message names
    the feature, the missing module and the `pip install 'toolweave[<extra>]'` that fixes it."""

    def __init__(self, feature: str, module: str, extra: str) -> None:
        self.feature, self.module, self.extra = feature, module, extra
        self.install = f"pip install 'toolweave[{extra}]'"
        super().__init__(f"{feature} needs {module!r}, which is not installed: {self.install}")
        self.name = module


__all__ = ["ConfigError", "MissingDependency", "ToolweaveError"]
