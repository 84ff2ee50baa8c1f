"""How a command spells its options: the table deny rules read commands with.

A deny (or ask) rule with options — `deny rm -rf` — must stop every spelling the shell gives the
same options: grouped or split short options (`-rf`, `-r -f`, `-fr`), their long forms
(`--recursive --force`, GNU and git abbreviations such as `--recur`), and the program's own
equivalents (`rm -R` is `rm -r`; `git branch -D` is `--delete --force`; `cp -a` implies `-R`).
`read` turns a command's words into a `Spelling`: the program (its equivalents folded: `mkfs.ext4`
is `mkfs -t ext4`, `podman` is `docker`, `tofu` is `terraform`), its words with every option
written one canonical way, and the set of options with their values. The rule's own words are read
the same way, so both sides compare in one spelling.

`PROGRAMS` is the table (see docs/rules.md). A program not in it still has its short options
split (`-rf` is `-r` and `-f`, in any order), which may read an option's argument as more letters
— harmless for a deny rule, which only becomes more generous.

The package: `programs` (the table), `spelling` (a command's words read with it), `unsafe` (the
options and assignments an allow rule must name).
"""

from __future__ import annotations

from bridge.options.programs import PROGRAMS, SAME_PROGRAM, Program, program_name
from bridge.options.spelling import Spelling, read
from bridge.options.unsafe import INERT_VARIABLES, UNSAFE, may_be_made_unsafe, unsafe_options

__all__ = [
    "INERT_VARIABLES",
    "PROGRAMS",
    "SAME_PROGRAM",
    "UNSAFE",
    "Program",
    "Spelling",
    "may_be_made_unsafe",
    "program_name",
    "read",
    "unsafe_options",
]
