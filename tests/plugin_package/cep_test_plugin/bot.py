"""A bot kind: it shouts the worker's last message back, with a `suffix` from model_opts."""


class Shout:
    keys, required = frozenset({"suffix"}), frozenset()

    def __init__(self, nickname, suffix):
        self.nickname, self.suffix = nickname, suffix

    @classmethod
    def from_spec(cls, spec, context):
        return cls(spec.nickname, spec.options.get("suffix", "!"))

    def settings(self):
        return {"type": "shout", "suffix": self.suffix}

    def session(self, conversation_id):
        return self

    async def reply(self, history):
        yield history[-1].text.upper() + self.suffix

    async def close(self):
        pass

    async def check(self):
        return None

    async def aclose(self):
        pass
