"""The LLM side: the offline teaching model, its OpenAI-compatible endpoint, provider choice, the tool loop.

``teaching_model`` (with ``teaching_parse``, ``teaching_text``, ``teaching_tools``) answers
like a real model, deterministically; ``endpoint`` and ``serve`` put it behind the OpenAI API;
``provider`` picks it or a real provider from the settings; ``openai_tools`` turns MCP tools
into function definitions (``anthropic_format`` into Messages tools); ``loop`` runs the tool loop and ``trace``
records it. Lesson 12: ``teaching_attacks`` (how the naive model falls for instructions planted in tool
descriptions and results) and ``host_guard`` (what a host does about it: pins, allowlists, confirmation).
May import config, servers, transports, wire and client; never display.
"""
