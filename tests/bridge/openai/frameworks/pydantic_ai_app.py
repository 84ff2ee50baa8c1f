"""pydantic-ai against the bridge: `python pydantic_ai_app.py URL SCENARIO`.

Scenarios: `tool` (an agent with a tool), `structured` (an output type, pydantic-ai's default tool
output), `native` (the same with `NativeOutput`: `response_format` json_schema)."""

from __future__ import annotations

import json
import sys

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.output import NativeOutput
from pydantic_ai.providers.openai import OpenAIProvider


class City(BaseModel):
    name: str
    population: int


def main(url: str, scenario: str) -> dict:
    model = OpenAIChatModel("tool", provider=OpenAIProvider(base_url=url, api_key="unused"))
    if scenario == "tool":
        agent = Agent(model, instructions="Use the tool.")
        calls: list[str] = []

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            calls.append(city)
            return f"Windy in {city}"

        result = agent.run_sync('calls [["get_weather", {"city": "Lima"}]]')
        return {"final": result.output, "calls": calls}
    if scenario in ("structured", "native"):
        output = City if scenario == "structured" else NativeOutput(City)
        agent = Agent(model, output_type=output, instructions="Describe the city.")
        result = agent.run_sync("Paris")
        return {"city": result.output.model_dump()}
    raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
