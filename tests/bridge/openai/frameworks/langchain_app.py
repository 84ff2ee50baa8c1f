"""LangChain (`langchain-openai`) against the bridge: `python langchain_app.py URL SCENARIO`.

Scenarios: `bind-tools` (a tool round trip), `batch` (three requests sharing a system prompt, sent
concurrently), `structured` (`with_structured_output` of a pydantic model)."""

from __future__ import annotations

import json
import sys

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel


@tool
def get_weather(location: str) -> str:
    """The weather at a location."""
    return f"Rainy in {location}"


class Person(BaseModel):
    name: str
    age: int


def main(url: str, scenario: str) -> dict:
    def model(name: str) -> ChatOpenAI:
        return ChatOpenAI(model=name, base_url=url, api_key="unused", max_retries=0)

    if scenario == "bind-tools":
        llm = model("tool").bind_tools([get_weather])
        messages = [HumanMessage('calls [["get_weather", {"location": "Oslo"}]]')]
        first = llm.invoke(messages)
        messages.append(first)
        for call in first.tool_calls:
            messages.append(ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"]))
        second = llm.invoke(messages)
        return {
            "tool_calls": [{"name": c["name"], "args": c["args"]} for c in first.tool_calls],
            "final": second.content,
        }
    if scenario == "batch":
        questions = ["What is 2+2?", "Name a colour.", "Capital of France?"]
        system = SystemMessage("You are a terse assistant.")
        answers = model("echo").batch([[system, HumanMessage(q)] for q in questions])
        return {"questions": questions, "answers": [a.content for a in answers]}
    if scenario == "structured":
        person = model("tool").with_structured_output(Person).invoke("Bob is 42.")
        return {"person": person.model_dump()}
    raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
