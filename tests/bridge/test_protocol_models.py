"""`bridge.protocol`: the vscodelm wire models (docs/protocol.md, "Shapes") and the agent forms
(architecture decision 1), unit by unit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from bridge.protocol import (
    MAX_JSON_DEPTH,
    ClaudeCodeAgent,
    ContentPart,
    ElizaAgent,
    ExternalAgent,
    HttpServer,
    Message,
    SseServer,
    StdioServer,
    TextPart,
    ToolCallPart,
    ToolDefinition,
    ToolResultPart,
    agent_key,
    agent_label,
    describe_validation_error,
    parse_agent,
)
from bridge.vscodelm.wire import (
    CancelParams,
    ChatInformationParams,
    ChatRequestOptions,
    ChatResponseParams,
    TokenCountParams,
)

PART = TypeAdapter(ContentPart)
FLAT = {
    "name": "ElizACP",
    "command": "/usr/bin/symposium-tui",
    "args": ["eliza"],
    "env": [{"name": "K", "value": "V"}],
}


def chat_params(**over: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "modelId": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "value": "hi"}]}],
        "agent": {"eliza": {}},
    }
    params.update(over)
    return params


def error_text(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return describe_validation_error(exc.value)


# --- options -------------------------------------------------------------------------------------------


def test_options_with_one_tool_and_tool_mode_auto():
    opts = ChatResponseParams.model_validate(
        chat_params(
            options={
                "tools": [
                    {
                        "name": "read_file",
                        "description": "Read a file",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                        },
                    }
                ],
                "toolMode": "auto",
            }
        )
    ).options
    assert opts.toolMode == "auto"
    (tool,) = opts.tools
    assert isinstance(tool, ToolDefinition)
    assert (tool.name, tool.description) == ("read_file", "Read a file")
    assert tool.inputSchema == {"type": "object", "properties": {"path": {"type": "string"}}}


def test_tool_mode_required_and_null():
    assert ChatRequestOptions.model_validate({"toolMode": "required"}).toolMode == "required"
    assert ChatRequestOptions.model_validate({"toolMode": None}).toolMode is None


def test_empty_options_mean_no_tools_and_no_tool_mode():
    opts = ChatResponseParams.model_validate(chat_params(options={})).options
    assert opts.tools == [] and opts.toolMode is None


@pytest.mark.parametrize("options", ["absent", None])
def test_absent_or_null_options_default_to_empty(options):
    params = chat_params() if options == "absent" else chat_params(options=None)
    opts = ChatResponseParams.model_validate(params).options
    assert opts.tools == [] and opts.toolMode is None


def test_null_options_do_not_alter_the_callers_dict():
    params = chat_params(options=None)
    ChatResponseParams.model_validate(params)
    assert "options" in params and params["options"] is None


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"toolMode": "sometimes"}, "options.toolMode"),
        ({"tools": {}}, "options.tools"),
        ({"tools": [{"description": "d", "inputSchema": {}}]}, "options.tools.0.name"),
        ({"tools": [{"name": "n", "inputSchema": {}}]}, "options.tools.0.description"),
        ({"tools": [{"name": 5, "description": "d", "inputSchema": {}}]}, "options.tools.0.name"),
        ("auto", "options"),
    ],
)
def test_bad_options_name_the_field(options, field):
    with pytest.raises(ValidationError) as exc:
        ChatResponseParams.model_validate(chat_params(options=options))
    assert error_text(exc).startswith(field)


def test_tool_input_schema_is_opaque_json():
    for schema in ({}, {"type": "object"}, [], "weird", 5, None):
        tool = ToolDefinition.model_validate(
            {"name": "t", "description": "d", "inputSchema": schema}
        )
        assert tool.inputSchema == schema


# --- content parts ----------------------------------------------------------------------------------------


def test_each_part_type_parses_to_its_model():
    assert PART.validate_python({"type": "text", "value": "hi"}) == TextPart(value="hi")
    call = PART.validate_python(
        {"type": "tool_call", "toolCallId": "c1", "toolName": "read", "parameters": {"path": "/x"}}
    )
    assert isinstance(call, ToolCallPart) and call.parameters == {"path": "/x"}
    result = PART.validate_python(
        {"type": "tool_result", "toolCallId": "c1", "result": [{"$mid": 21, "value": "ok"}]}
    )
    assert isinstance(result, ToolResultPart) and result.result == [{"$mid": 21, "value": "ok"}]


@pytest.mark.parametrize(
    ("part", "missing"),
    [
        ({"type": "text"}, "text.value"),
        ({"type": "tool_call", "toolName": "t", "parameters": {}}, "tool_call.toolCallId"),
        ({"type": "tool_call", "toolCallId": "c", "parameters": {}}, "tool_call.toolName"),
        ({"type": "tool_call", "toolCallId": "c", "toolName": "t"}, "tool_call.parameters"),
        ({"type": "tool_result", "result": 1}, "tool_result.toolCallId"),
        ({"type": "tool_result", "toolCallId": "c"}, "tool_result.result"),
    ],
)
def test_every_part_field_is_required(part, missing):
    with pytest.raises(ValidationError) as exc:
        PART.validate_python(part)
    assert error_text(exc).startswith(missing), error_text(exc)


def test_missing_part_field_is_named_with_its_full_path_in_a_request():
    params = chat_params(
        messages=[
            {"role": "user", "content": [{"type": "text", "value": "a"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "value": "b"},
                    {"type": "tool_call", "toolCallId": "c", "toolName": "t"},
                ],
            },
        ]
    )
    with pytest.raises(ValidationError) as exc:
        ChatResponseParams.model_validate(params)
    assert error_text(exc) == "messages.1.content.1.tool_call.parameters: Field required"


@pytest.mark.parametrize("value", [None, 0, "", [], {}, [None], {"a": [1, 2.5, True]}])
def test_null_and_any_json_are_accepted_for_parameters_and_result(value):
    call = PART.validate_python(
        {"type": "tool_call", "toolCallId": "c", "toolName": "t", "parameters": value}
    )
    result = PART.validate_python({"type": "tool_result", "toolCallId": "c", "result": value})
    assert call.parameters == value and result.result == value


def test_part_fields_have_their_wire_types():
    for bad in (
        {"type": "text", "value": 5},
        {"type": "text", "value": None},
        {"type": "tool_call", "toolCallId": 7, "toolName": "t", "parameters": {}},
        {"type": "tool_call", "toolCallId": "c", "toolName": ["t"], "parameters": {}},
        {"type": "tool_result", "toolCallId": None, "result": {}},
    ):
        with pytest.raises(ValidationError):
            PART.validate_python(bad)


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image", "value": "x"},
        {"type": "Text", "value": "x"},
        {"type": None, "value": "x"},
        {"value": "no type"},
        {"type": "thinking", "value": "hmm"},
    ],
)
def test_unknown_or_missing_part_type_is_rejected(part):
    with pytest.raises(ValidationError) as exc:
        Message.model_validate({"role": "user", "content": [part]})
    assert error_text(exc).startswith("content.0"), error_text(exc)


def test_unknown_extra_keys_are_ignored_everywhere():
    params = ChatResponseParams.model_validate(
        {
            "modelId": "m",
            "requestInitiator": "panel",
            "messages": [
                {
                    "role": "user",
                    "name": "someone",
                    "content": [
                        {"type": "text", "value": "hi", "$mid": 21, "audience": ["user"]},
                        {
                            "type": "tool_call",
                            "toolCallId": "c",
                            "toolName": "t",
                            "parameters": {},
                            "extra": True,
                        },
                        {
                            "type": "tool_result",
                            "toolCallId": "c",
                            "result": None,
                            "isError": False,
                        },
                    ],
                }
            ],
            "agent": {"eliza": {}},
            "options": {
                "tools": [{"name": "t", "description": "d", "inputSchema": {}, "tags": ["x"]}],
                "toolMode": "auto",
                "justification": "x",
            },
        }
    )
    text, call, result = params.messages[0].content
    assert text.model_dump() == {"type": "text", "value": "hi"}
    assert call.model_dump() == {
        "type": "tool_call",
        "toolCallId": "c",
        "toolName": "t",
        "parameters": {},
    }
    assert result.model_dump() == {"type": "tool_result", "toolCallId": "c", "result": None}
    assert (
        params.messages[0].model_dump()["role"] == "user"
        and "name" not in params.messages[0].model_dump()
    )
    assert params.options.tools[0].model_dump() == {
        "name": "t",
        "description": "d",
        "inputSchema": {},
    }


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"content": []}, "role"),
        ({"role": "user"}, "content"),
        ({"role": None, "content": []}, "role"),
        ({"role": "user", "content": None}, "content"),
        ({"role": "user", "content": 5}, "content"),
        ({"role": "user", "content": True}, "content"),
        ({"role": "user", "content": {"type": "text", "value": "x"}}, "content"),
        ({"role": "user", "content": "text"}, "content"),
    ],
)
def test_message_needs_a_role_and_a_list_of_parts(message, field):
    with pytest.raises(ValidationError) as exc:
        Message.model_validate(message)
    assert error_text(exc).startswith(field), error_text(exc)


def test_empty_content_and_any_role_string_are_accepted():
    """VS Code can drop every part of a message (unknown data parts); roles are compared as strings."""
    assert Message.model_validate({"role": "user", "content": []}).content == []
    assert Message.model_validate({"role": "system", "content": []}).role == "system"


def test_json_nested_deeper_than_the_limit_is_rejected_naming_the_field():
    ok: Any = "leaf"
    for _ in range(MAX_JSON_DEPTH):
        ok = [ok]
    PART.validate_python({"type": "tool_result", "toolCallId": "c", "result": ok})
    too_deep = {"k": ok}
    with pytest.raises(ValidationError) as exc:
        Message.model_validate(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_call",
                        "toolCallId": "c",
                        "toolName": "t",
                        "parameters": too_deep,
                    }
                ],
            }
        )
    assert error_text(exc).startswith(
        "content.0.tool_call.parameters:"
    ) and "nested deeper" in error_text(exc)
    wide = {str(i): [[i]] for i in range(10_000)}  # broad is fine, only depth is limited
    PART.validate_python(
        {"type": "tool_call", "toolCallId": "c", "toolName": "t", "parameters": wide}
    )


# --- other method params ------------------------------------------------------------------------------------


def test_chat_params_need_model_messages_and_agent():
    for missing in ("modelId", "messages", "agent"):
        params = chat_params()
        del params[missing]
        with pytest.raises(ValidationError) as exc:
            ChatResponseParams.model_validate(params)
        assert error_text(exc).startswith(missing)


def test_chat_params_keep_agent_raw_for_parse_agent():
    params = ChatResponseParams.model_validate(chat_params(agent={"id": "elizacp", **FLAT}))
    assert params.agent == {"id": "elizacp", **FLAT}


def test_token_count_and_info_and_cancel_params():
    assert TokenCountParams.model_validate({"modelId": "m", "text": ""}).text == ""
    with pytest.raises(ValidationError):
        TokenCountParams.model_validate({"modelId": "m"})
    assert ChatInformationParams.model_validate({}).silent is False
    assert ChatInformationParams.model_validate({"silent": True}).silent is True
    assert CancelParams.model_validate({"requestId": 7}).requestId == 7
    assert CancelParams.model_validate({"requestId": "7"}).requestId == "7"


@pytest.mark.parametrize("request_id", [True, False, 1.0, None, [1], {"id": 1}])
def test_cancel_request_id_is_an_integer_or_a_string_like_a_request_id(request_id):
    """`true` is not request 1 (decision 9: booleans are not numbers)."""
    with pytest.raises(ValidationError):
        CancelParams.model_validate({"requestId": request_id})


# --- agent forms (decision 1) ------------------------------------------------------------------------------


def test_eliza_forms():
    assert parse_agent({"eliza": {}}) == ElizaAgent(deterministic=False)
    assert parse_agent({"eliza": None}) == ElizaAgent(deterministic=False)
    assert parse_agent({"eliza": {"deterministic": True}}) == ElizaAgent(deterministic=True)
    assert parse_agent({"eliza": {"deterministic": False, "unknown": 1}}) == ElizaAgent(
        deterministic=False
    )


@pytest.mark.parametrize("raw", ["claude_code", {"claude_code": None}, {"claude_code": {}}])
def test_claude_code_forms(raw):
    assert parse_agent(raw) == ClaudeCodeAgent()


def test_tagged_mcp_server_form():
    spec = parse_agent({"mcp_server": FLAT})
    assert isinstance(spec, ExternalAgent) and spec.id is None
    assert spec.server == StdioServer(
        name="ElizACP",
        command="/usr/bin/symposium-tui",
        args=["eliza"],
        env=[{"name": "K", "value": "V"}],
    )


def test_flat_form_the_extension_sends_with_and_without_id():
    spec = parse_agent({"id": "elizacp", **FLAT})
    assert isinstance(spec, ExternalAgent) and spec.id == "elizacp"
    assert isinstance(spec.server, StdioServer) and spec.server.command == "/usr/bin/symposium-tui"
    bare = parse_agent(dict(FLAT))
    assert isinstance(bare, ExternalAgent) and bare.id is None and bare.server == spec.server


def test_flat_stdio_with_explicit_type_and_extra_keys():
    spec = parse_agent({**FLAT, "type": "stdio", "_meta": {"x": 1}, "version": "1.0"})
    assert isinstance(spec, ExternalAgent) and spec.server.type == "stdio"


def test_flat_stdio_args_and_env_may_be_left_out():
    spec = parse_agent({"name": "a", "command": "b"})
    assert spec.server.args == [] and spec.server.env == []


def test_http_and_sse_servers():
    http = parse_agent(
        {
            "type": "http",
            "name": "h",
            "url": "http://127.0.0.1:1/",
            "headers": [{"name": "A", "value": "b"}],
        }
    )
    sse = parse_agent(
        {"mcp_server": {"type": "sse", "name": "s", "url": "http://127.0.0.1:1/sse", "headers": []}}
    )
    assert isinstance(http.server, HttpServer) and http.server.headers[0].name == "A"
    assert isinstance(sse.server, SseServer)


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (None, "agent"),
        (5, "agent"),
        ([], "agent"),
        ("gpt-4", "agent"),
        ({}, "agent"),
        ({"weird": {}}, "agent"),
        ({"eliza": 5}, "agent.eliza"),
        ({"eliza": {"deterministic": "maybe"}}, "agent.eliza.deterministic"),
        ({"mcp_server": "cmd"}, "agent.mcp_server"),
        ({"mcp_server": {"command": "c"}}, "agent.mcp_server"),
        ({"name": "x", "command": 5}, "agent"),
        ({"name": "x", "command": "c", "args": "a b"}, "agent"),
        ({"name": "x", "command": "c", "env": {"A": "b"}}, "agent"),
        ({"name": "x", "command": "c", "env": [{"name": "A"}]}, "agent"),
        ({"id": 5, "name": "x", "command": "c"}, "agent.id"),
        ({"command": "c"}, "agent"),
        ({"type": "telepathy", "name": "x", "command": "c"}, "agent"),
        ({"type": "http", "name": "x"}, "agent"),
    ],
)
def test_bad_agents_are_value_errors_naming_the_field(raw, where):
    with pytest.raises(ValueError) as exc:
        parse_agent(raw)
    assert str(exc.value).startswith(where), str(exc.value)


# --- agent keys: what two requests' agents are compared by (decision 1) --------------------------------------


def key(raw: Any) -> str:
    return agent_key(parse_agent(raw))


def test_eliza_defaults_compare_equal():
    assert key({"eliza": {}}) == key({"eliza": {"deterministic": False}}) == key({"eliza": None})
    assert key({"eliza": {}}) != key({"eliza": {"deterministic": True}})


def test_claude_code_spellings_compare_equal():
    assert key("claude_code") == key({"claude_code": None}) == key({"claude_code": {}})
    assert key("claude_code") != key({"eliza": {}})


def test_flat_with_id_differs_from_flat_without_id():
    assert key({"id": "elizacp", **FLAT}) != key(FLAT)
    assert key({"id": "elizacp", **FLAT}) != key({"id": "other", **FLAT})


def test_tagged_and_flat_without_id_are_the_same_agent():
    assert key({"mcp_server": FLAT}) == key(FLAT) == key({**FLAT, "type": "stdio"})


def test_key_ignores_key_order_and_unknown_keys():
    reordered = {"id": "elizacp", **{k: FLAT[k] for k in reversed(list(FLAT))}}
    assert (
        key({"id": "elizacp", **FLAT})
        == key(reordered)
        == key({"id": "elizacp", **FLAT, "_meta": {"a": 1}})
    )


def test_key_defaults_equal_explicit_empties():
    assert key({"name": "a", "command": "b"}) == key(
        {"name": "a", "command": "b", "args": [], "env": []}
    )


def test_key_changes_with_every_launch_detail():
    base = key({"id": "x", **FLAT})
    for change in (
        {"name": "Other"},
        {"command": "/bin/other"},
        {"args": ["eliza", "--deterministic"]},
        {"env": []},
        {"env": [{"name": "K", "value": "W"}]},
    ):
        assert key({"id": "x", **FLAT, **change}) != base, change


def test_key_is_canonical_json():
    k = key({"id": "elizacp", **FLAT})
    assert json.loads(k)["id"] == "elizacp"
    assert k == json.dumps(json.loads(k), sort_keys=True, separators=(",", ":"))


def test_different_kinds_never_share_a_key():
    keys = {
        key({"eliza": {}}),
        key("claude_code"),
        key(FLAT),
        key({"type": "http", "name": "ElizACP", "url": "http://x/"}),
    }
    assert len(keys) == 4


def test_agent_labels():
    assert agent_label(parse_agent({"eliza": {}})) == "eliza"
    assert agent_label(parse_agent("claude_code")) == "claude_code"
    assert agent_label(parse_agent({"id": "elizacp", **FLAT})) == "elizacp"
    assert agent_label(parse_agent(FLAT)) == "ElizACP"


# --- error descriptions ------------------------------------------------------------------------------------------


def test_describe_validation_error_caps_the_list():
    messages = [{"role": "user", "content": [{"type": "text"}]} for _ in range(8)]
    with pytest.raises(ValidationError) as exc:
        ChatResponseParams.model_validate(chat_params(messages=messages))
    text = error_text(exc)
    assert text.count("Field required") == 5 and text.endswith("(and 3 more)")
    assert text.startswith("messages.0.content.0.text.value: Field required")


def test_describe_validation_error_with_prefix():
    with pytest.raises(ValidationError) as exc:
        ElizaAgent.model_validate({"deterministic": "maybe"})
    assert describe_validation_error(exc.value, prefix="agent.eliza").startswith(
        "agent.eliza.deterministic: "
    )
