"""The LLM side: the offline teaching model, its OpenAI-compatible endpoint, provider choice, the tool loop.

``teaching_model`` (with ``teaching_parse``, ``teaching_text``, ``teaching_tools``) answers
like a real model, deterministically; ``endpoint`` and ``serve`` put it behind the OpenAI API;
``provider`` picks it or a real provider from the settings; ``openai_tools`` turns MCP tools
into function definitions; ``loop`` runs the tool loop and ``trace`` records it.
May import config, servers, transports, wire and client; never display.
"""
