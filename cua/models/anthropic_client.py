"""Anthropic models through the official `anthropic` SDK, with its computer-use tool.

With `computer_tool=True` (the default) the model sees the `computer` tool sized to the image it
is sent and answers with one tool_use per step (step-wise mode); its input is parsed by
`parse_action(..., fmt="anthropic")`. With `computer_tool=False` it answers our JSON plans as text.
ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL select the endpoint.
"""

from __future__ import annotations

import os
import time
from typing import Any

from cua.models.base import (
    ModelError,
    ModelReply,
    Prompt,
    Usage,
    cost_of,
    encode_image,
    sdk_retry_hint,
    with_backoff,
)

TOOL_VERSION = "computer_20250124"
BETA_FLAG = "computer-use-2025-01-24"


def _retry_hint(exc: Exception) -> float | None:
    import anthropic

    return sdk_retry_hint(anthropic, exc, overloaded=(429, 529))


class AnthropicModel:
    """Messages client: images, retries, timeouts, token/cost accounting, optional computer tool."""

    def __init__(self, name: str, *, timeout: float = 60.0, retries: int = 4, max_tokens: int = 1024,
                 max_image_size: tuple[int, int] = (1280, 800), computer_tool: bool = True,
                 stepwise: bool | None = None, base_url: str | None = None, api_key: str | None = None,
                 image_format: str = "jpeg"):
        import anthropic

        self.name = name
        self.retries = retries
        self.max_tokens = max_tokens
        self.max_image_size = max_image_size
        self.image_format = image_format
        self.computer_tool = computer_tool
        self.stepwise = computer_tool if stepwise is None else stepwise
        self.usage = Usage()
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise ModelError("anthropic: no API key. Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a proxy)")
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"),
                                          timeout=timeout, max_retries=0)

    def _messages(self, prompt: Prompt) -> list[dict[str, Any]]:
        msgs: list[dict[str, Any]] = [{"role": r, "content": t} for r, t in prompt.history]
        content: list[dict[str, Any]] = [{"type": "text", "text": prompt.text}]
        if prompt.image is not None:
            media, data = encode_image(prompt.image, self.image_format)
            content.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
        msgs.append({"role": "user", "content": content})
        return msgs

    def complete(self, prompt: Prompt) -> ModelReply:
        t0 = time.monotonic()
        kwargs: dict[str, Any] = dict(model=self.name, max_tokens=self.max_tokens, system=prompt.system,
                                      messages=self._messages(prompt))
        if self.computer_tool:
            w, h = prompt.image.size if prompt.image is not None else self.max_image_size
            kwargs["tools"] = [{"type": TOOL_VERSION, "name": "computer", "display_width_px": w,
                                "display_height_px": h}]
            kwargs["betas"] = [BETA_FLAG]
            create = self.client.beta.messages.create
        else:
            create = self.client.messages.create
        usage = Usage(calls=1)
        resp = with_backoff(lambda: create(**kwargs), _retry_hint, usage, retries=self.retries,
                            what=f"anthropic:{self.name}")
        reply = ModelReply(usage=usage)
        for block in resp.content or []:
            kind = getattr(block, "type", "")
            if kind == "text":
                reply.text += block.text
            elif kind == "tool_use" and reply.tool_action is None and block.name == "computer":
                reply.tool_action = dict(block.input or {})
                reply.tool_format = "anthropic"
        if resp.usage is not None:
            usage.prompt_tokens, usage.completion_tokens = resp.usage.input_tokens, resp.usage.output_tokens
        usage.cost = cost_of(self.name, usage.prompt_tokens, usage.completion_tokens)
        usage.seconds = time.monotonic() - t0
        self.usage.add(usage)
        return reply
