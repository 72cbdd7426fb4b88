"""The offline teaching model, its OpenAI-compatible endpoint and the LLM tool loop."""
