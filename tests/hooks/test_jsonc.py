"""Editing a JSON settings file with comments in it (`bridge.hooks.jsonc`): the one member set,
added or removed, every other byte kept."""

from __future__ import annotations

import json

import pytest

from bridge.hooks.jsonc import blank_comments, set_member

COMMENTED = """{
  // a line comment with "quotes" and a /* in it
  "url": "https://example.com//not-a-comment", /* a block
  over two lines */ "n": 1,
  "s": "a \\" quote // still a string"
}
"""


def test_comments_are_blanked_where_they_are_and_strings_are_left_alone():
    blank = blank_comments(COMMENTED)
    assert len(blank) == len(COMMENTED) and blank.count("\n") == COMMENTED.count("\n")
    assert json.loads(blank) == {
        "url": "https://example.com//not-a-comment",
        "n": 1,
        "s": 'a " quote // still a string',
    }
    with pytest.raises(ValueError, match="never ends"):
        blank_comments('{"a": 1 /* open')


def test_a_member_added_then_removed_gives_back_the_very_text():
    added = set_member(COMMENTED, "hooks", {"BeforeTool": [{"matcher": ".*"}]})
    assert added.startswith(COMMENTED[: COMMENTED.rindex('"\n}')])
    assert json.loads(blank_comments(added))["hooks"] == {"BeforeTool": [{"matcher": ".*"}]}
    assert set_member(added, "hooks", None) == COMMENTED


def test_a_member_replaced_keeps_the_comments_around_it():
    text = '{\n  /* before */ "hooks": {"old": 1}, // after\n  "n": 2\n}\n'
    replaced = set_member(text, "hooks", {"new": [1]})
    assert replaced.startswith('{\n  /* before */ "hooks": {\n')
    assert replaced.endswith('}, // after\n  "n": 2\n}\n')
    assert json.loads(blank_comments(replaced)) == {"hooks": {"new": [1]}, "n": 2}


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ('{\n  "hooks": {}, // first\n  "n": 2\n}', '{\n  "n": 2\n}'),
        ('{"a": 1, "hooks": {}, "b": 2}', '{"a": 1, "b": 2}'),
        ('{ /* only */ "hooks": {} }', "{ /* only */  }"),
        ('{\n  "hooks": {}\n}', "{\n}"),
    ],
)
def test_a_member_removed_takes_its_comma_with_it(text, left):
    assert set_member(text, "hooks", None) == left
    assert json.loads(blank_comments(set_member(text, "hooks", None))) == json.loads(
        blank_comments(left)
    )


def test_an_empty_object_gets_the_member_and_what_is_not_an_object_is_refused():
    assert json.loads(set_member("{}", "hooks", {"a": 1})) == {"hooks": {"a": 1}}
    with pytest.raises(ValueError):
        set_member("[1, 2]", "hooks", {})
