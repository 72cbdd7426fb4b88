"""The one exception the LLM side raises (kept light: the CLI imports it without importing openai)."""


class LLMError(RuntimeError):
    """The LLM could not be used; the message says what to change."""
