"""Chat Completions through the real `openai` SDK (sync and async, streaming and not)."""

from __future__ import annotations

from tests.support.openai_server import ServerThread


def test_models_list_eliza_and_configured_agents(client):
    ids = [m.id for m in client.models.list()]
    assert ids[0] == "eliza"
    assert {"tool", "echo", "broken"} <= set(ids)
    assert client.models.retrieve("eliza").id == "eliza"
    assert client.models.retrieve("echo").owned_by == "symposium-settings"


def test_sync_chat(client):
    r = client.chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "hello there"}]
    )
    assert r.object == "chat.completion"
    assert r.id.startswith("chatcmpl-")
    assert r.choices[0].message.content == "ECHO: hello there"
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0


def test_sync_streaming(client):
    chunks = list(
        client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "stream 30"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "".join(f"c{i} " for i in range(30))
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0


async def test_async_chat_and_stream_continue_one_session(aclient, server: ServerThread):
    first = await aclient.chat.completions.create(
        model="eliza",
        messages=[
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "I am sad"},
        ],
    )
    reply = first.choices[0].message.content
    assert reply
    messages = [
        {"role": "system", "content": "Be kind."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "I am "}, {"type": "text", "text": "sad"}],
        },
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "my mother"},
    ]
    stream = await aclient.chat.completions.create(model="eliza", messages=messages, stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream])
    assert text
    (core,) = server.door.connections.values()
    assert len(core.sessions) == 1  # the continuation reused the agent session


def test_content_parts_with_an_image_placeholder(client):
    r = client.chat.completions.create(
        model="echo",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look: "},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ],
    )
    assert r.choices[0].message.content == "ECHO: look: [Image: image/png]"


def test_max_tokens_ends_with_length(client):
    r = client.chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "stream 200"}], max_tokens=5
    )
    assert r.choices[0].finish_reason == "length"
    assert len(r.choices[0].message.content.encode()) <= 20
    chunks = list(
        client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "stream 300"}],
            max_completion_tokens=3,
            stream=True,
        )
    )
    assert [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason] == ["length"]


def test_user_field_separates_conversation_spaces(client, server: ServerThread):
    for user in ("alice", "bob"):
        client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hi"}], user=user
        )
    assert {key[1] for key in server.door.connections} == {"alice", "bob"}
