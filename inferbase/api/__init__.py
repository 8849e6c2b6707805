"""The public API: request validation, the chat-completions consumer, DRF views and the error envelope."""
