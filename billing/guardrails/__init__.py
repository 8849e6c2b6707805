"""Guardrail checks (PII, secrets, the admin's blocklist) on a request's input and its answer.

Configure with `guardrail_config_parse(json)`, compile once with `guardrails_compile(config)`, then
`messages_check` (input), `texts_check` (a whole answer) or `StreamGuard` (a streamed answer).
"""

from .checks import (
    NO_GUARDRAILS,
    CheckOutcome,
    CheckResult,
    CompiledCheck,
    GuardrailBlocked,
    Guardrails,
    guardrails_compile,
    messages_check,
    texts_check,
)
from .config import (
    Action,
    CheckName,
    CheckSpec,
    GuardrailConfig,
    GuardrailConfigError,
    guardrail_config_parse,
)
from .stream import StreamGuard

__all__ = [
    "NO_GUARDRAILS", "Action", "CheckName", "CheckOutcome", "CheckResult", "CheckSpec", "CompiledCheck",
    "GuardrailBlocked", "GuardrailConfig", "GuardrailConfigError", "Guardrails", "StreamGuard",
    "guardrail_config_parse", "guardrails_compile", "messages_check", "texts_check",
]
