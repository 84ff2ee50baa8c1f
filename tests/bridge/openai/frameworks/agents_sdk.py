"""The OpenAI Agents SDK (`openai-agents`) against the bridge: `python agents_sdk.py URL SCENARIO`.

Scenarios: `tool-responses` / `tool-chat` (Runner with a function tool over the Responses API /
Chat Completions), `handoff` (a triage agent hands off to a second agent)."""

from __future__ import annotations

import asyncio
import json
import sys

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"Sunny in {city}"


async def main(url: str, scenario: str) -> dict:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)
    if scenario in ("tool-responses", "tool-chat"):
        cls = OpenAIResponsesModel if scenario == "tool-responses" else OpenAIChatCompletionsModel
        agent = Agent(
            name="Weather",
            instructions="You answer weather questions with the tool.",
            model=cls(model="tool", openai_client=client),
            tools=[get_weather],
        )
        result = await Runner.run(agent, 'calls [["get_weather", {"city": "Paris"}]]')
        return {"final": result.final_output, "calls": CALLS}
    if scenario == "handoff":
        spanish = Agent(
            name="Spanish agent",
            instructions="You only speak Spanish.",
            model=OpenAIChatCompletionsModel(model="echo", openai_client=client),
        )
        triage = Agent(
            name="Triage agent",
            instructions="Hand off to the right agent.",
            model=OpenAIChatCompletionsModel(model="tool", openai_client=client),
            handoffs=[spanish],
        )
        result = await Runner.run(triage, 'Hola!\ncalls [["transfer_to_spanish_agent", {}]]')
        return {"final": result.final_output, "last_agent": result.last_agent.name}
    raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
