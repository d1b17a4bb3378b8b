"""Live chat in the server: the event bus, the bot runner and the ASGI routes under /api/chat/."""
