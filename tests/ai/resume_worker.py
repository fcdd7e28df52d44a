"""Resumes a suspended AI step in a fresh Python process, as the engine does after a
restart: reads ``{"suspended": ..., "answer": ..., "replies": [...]}`` on stdin, serves
the replies from a fake Ollama of its own, prints the result's JSON on stdout."""

from __future__ import annotations

import asyncio
import json
import sys

from custom_components.opennvr_workflows.ai import (
    AIStepContext,
    AIStepResult,
    FixedBudget,
    OllamaLLMClient,
    OllamaSettings,
    resume_ai_step,
)
from tests.ai.fake_nvr import FakeNvr
from tests.ai.steps import investigate
from tests.fakes.ollama_server import FakeOllama, reply_from_json


async def main() -> None:
    job = json.loads(sys.stdin.read())
    async with FakeOllama() as fake:
        fake.script(*(reply_from_json(r) for r in job["replies"]))
        llm = OllamaLLMClient(OllamaSettings(host=fake.url, model=job["model"]))
        ctx = AIStepContext(
            llm=llm,
            nvr=FakeNvr(),
            budget=FixedBudget(10),
            hardware="cpu",
            camera="gate",
            model_name=job["model"],
        )
        try:
            result = await resume_ai_step(investigate(), ctx, job["suspended"], job["answer"])
        finally:
            await llm.aclose()
        assert isinstance(result, AIStepResult), result
        print(json.dumps({"result": result.to_json(), "sent": [c.messages for c in fake.chats]}))


if __name__ == "__main__":
    asyncio.run(main())
