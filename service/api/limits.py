"""Request body size limit, enforced while the body streams in (Content-Length may lie)."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    """ASGI middleware answering 413 for request bodies larger than ``max_bytes``.

    The declared Content-Length is checked first; the streamed bytes are counted as well,
    because chunked uploads declare nothing. Once the limit is passed the middleware answers
    413 itself, tells the application the client went away, and drops whatever the
    application still tries to send.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, counting its body; answer 413 when it grows too large."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > self.max_bytes:
            await self._reject(send)
            return
        state = {"received": 0, "rejected": False}

        async def counting_receive() -> Message:
            if state["rejected"]:
                return {"type": "http.disconnect"}
            message = await receive()
            state["received"] += len(message.get("body", b""))
            if state["received"] > self.max_bytes:
                state["rejected"] = True
                await self._reject(send)
                return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if not state["rejected"]:
                await send(message)

        await self.app(scope, counting_receive, guarded_send)

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body larger than {self.max_bytes} bytes"})
        start: Message = {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
        await send(start)
        await send({"type": "http.response.body", "body": body.encode()})


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return 0
