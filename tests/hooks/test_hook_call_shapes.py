"""`symposium-tui hook CLI` (a real hook process) on the tool calls each CLI sends that carry what
a rule names somewhere other than where a Bash call does: an MCP tool's command, the folder a
command runs in, every URL of a web_fetch prompt, a patch header with padding. Every agent here is
on bypass: only a deny or an ask rule stops it."""

from __future__ import annotations

import subprocess

import pytest

from tests.bridge.test_rules_call_shapes import key_tree, really_reads
from tests.hooks.test_hook_process import hook, pre, verdict
from tests.support.hooks import write_settings

BYPASS = "\n".join(f"[agents.{a}]\nbypass = true\n" for a in ("claude-code", "codex", "gemini-cli"))


def settings(tree) -> None:
    write_settings(
        f"""
[[rules]]
action = "deny"
command = "rm -rf"
reason = "no deleting"

[[rules]]
action = "deny"
path = "{tree}/keys"
reason = "no keys"

[[rules]]
action = "deny"
url = "https://evil.example/"
reason = "not that site"

{BYPASS}
"""
    )


@pytest.fixture
def tree(tmp_path):
    settings(key_tree(tmp_path))
    return tmp_path


def denied(cli: str, tool: str, tool_input: dict, cwd: str = "/tmp") -> str:
    call = pre(cli, tool, tool_input)
    call["cwd"] = cwd
    word, reason = verdict(cli, hook(cli, call))
    assert word == "deny", reason
    return reason


@pytest.mark.parametrize(
    ("cli", "tool"),
    [("claude", "mcp__shell__run"), ("codex", "mcp__shell__run"), ("gemini", "mcp_shell_run")],
)
def test_an_mcp_tools_command_is_judged_by_the_rules(tree, cli, tool):
    assert "no deleting" in denied(cli, tool, {"command": "rm -rf /tmp/x"})
    assert "no keys" in denied(cli, tool, {"command": f"cat {tree}/keys/id_rsa"})
    # an MCP tool's input is handed over as `arguments`: the folder beside its command counts
    beside = {"command": "cat up/id_rsa", "cwd": f"{tree}/proj/sub"}
    assert subprocess.run(["cat", "up/id_rsa"], cwd=beside["cwd"], capture_output=True).stdout
    assert "no keys" in denied(cli, tool, beside)
    assert "no deleting" in denied(cli, tool, {"script": "rm -rf /tmp/x"})


@pytest.mark.parametrize(
    ("cli", "tool", "tool_input"),
    [
        ("codex", "Bash", {"command": "cat up/id_rsa", "workdir": "{t}/proj/sub"}),
        ("codex", "shell", {"command": ["bash", "-lc", "cat up/id_rsa"], "workdir": "sub"}),
        ("gemini", "run_shell_command", {"command": "cat ../../keys/id_rsa", "dir_path": "sub"}),
    ],
)
def test_a_commands_relative_paths_are_read_in_the_folder_it_runs_in(tree, cli, tool, tool_input):
    tool_input = {k: v.replace("{t}", str(tree)) if isinstance(v, str) else v
                  for k, v in tool_input.items()}  # fmt: skip
    command = tool_input["command"]
    script = command if isinstance(command, str) else command[2]
    # the oracle: run there, it prints the key
    assert really_reads(tree / "proj" / "sub", script) == "secret key\n"
    assert "no keys" in denied(cli, tool, tool_input, cwd=str(tree / "proj"))


@pytest.mark.parametrize(
    "prompt",
    [
        "Compare https://docs.python.org/3/ with https://evil.example/x",
        "Read HTTPS://evil.example/",
    ],
)
def test_every_url_gemini_clis_web_fetch_would_fetch_is_judged(tree, prompt):
    # web_fetch fetches each whitespace-separated word of its prompt that holds `://`
    assert "not that site" in denied("gemini", "web_fetch", {"prompt": prompt})


@pytest.mark.parametrize("pad", [" ", "\t", "  "])
def test_a_codex_patch_header_with_padding_still_names_its_file(tree, pad):
    # Codex's apply_patch parser trims each line before it reads a header
    patch = f"*** Begin Patch\n{pad}*** Delete File: {tree}/keys/id_rsa\n*** End Patch"
    assert "no keys" in denied("codex", "apply_patch", {"command": patch})


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("read_many_files", {"include": ["keys/id_rsa"]}),  # its paths (and globs) are `include`
        ("read_many_files", {"paths": ["README.md"], "include": ["keys/*"]}),
        ("read_many_files", {"include": ["keys\\id_rsa"]}),  # `\` is taken for `/`
        ("read_many_files", {"include": ["KEYS/ID_RSA"]}),  # node-glob's nocase: any case
        ("read_many_files", {"include": ["{t}/KEYS/id_rsa"]}),
        ("glob", {"pattern": "Keys/*"}),
        ("glob", {"pattern": "KEYS/ID_RSA", "dir_path": "{t}"}),
        ("glob", {"pattern": "../kEyS/*", "dir_path": "proj"}),
    ],
)
def test_what_gemini_clis_globs_match_whatever_their_case_is_judged(tree, tool, tool_input):
    tool_input = {k: [p.replace("{t}", str(tree)) for p in v] if isinstance(v, list)
                  else v.replace("{t}", str(tree)) for k, v in tool_input.items()}  # fmt: skip
    assert "no keys" in denied("gemini", tool, tool_input, cwd=str(tree))


def test_a_case_sensitive_gemini_glob_is_read_as_it_is_spelled(tree):
    call = pre("gemini", "glob", {"pattern": "KEYS/*", "case_sensitive": True})
    call["cwd"] = str(tree)
    assert verdict("gemini", hook("gemini", call))[0] == "allow"  # (matches nothing: bypass)


@pytest.mark.parametrize(
    ("cli", "tool", "tool_input"),
    [
        ("claude", "Glob", {"pattern": "k\\eys/*"}),
        ("claude", "Grep", {"pattern": "x", "glob": "k\\eys/*"}),
        ("gemini", "glob", {"pattern": "k\\eys/*", "case_sensitive": True}),
        ("claude", "mcp__fs__search", {"pattern": "{t}/k\\eys/*"}),
    ],
)
def test_a_glob_word_with_a_backslash_is_judged_as_the_word_it_escapes(tree, cli, tool, tool_input):
    # `\e` is `e` to node-glob (Gemini CLI), ripgrep's globs and bash: `k\eys/*` lists keys/
    tool_input = {k: v.replace("{t}", str(tree)) if isinstance(v, str) else v
                  for k, v in tool_input.items()}  # fmt: skip
    assert "no keys" in denied(cli, tool, tool_input, cwd=str(tree))


@pytest.mark.parametrize(
    ("cli", "tool", "key"),
    [
        ("claude", "Read", "file_path"),
        ("claude", "Edit", "file_path"),
        ("gemini", "read_file", "file_path"),
    ],
)
def test_a_relative_path_through_a_symlink_and_dotdot_is_read_as_the_kernel_reads_it(
    tree, cli, tool, key
):
    # `sub/up` is a symlink to `keys`: `sub/up/../keys/id_rsa` is `keys/id_rsa` to the kernel,
    # while removing `..` first (`sub/keys/id_rsa`) names nothing under `keys`
    assert really_reads(tree / "proj", "cat sub/up/../keys/id_rsa") == "secret key\n"
    assert "no keys" in denied(cli, tool, {key: "sub/up/../keys/id_rsa"}, cwd=str(tree / "proj"))
