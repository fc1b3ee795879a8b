"""Table rows in chunk text: a chunk keeps a table as "| a | b |" lines under its header row
and the Markdown rule ("|---|---|") that marks the header; a snippet shown to a person keeps
the rows and drops the rule, which is syntax and no content."""

from __future__ import annotations

import re

TABLE_RULE = re.compile(r"^\|(?:-{3}\|)+\n?", re.MULTILINE)


def table_rules_removed(text: str) -> str:
    return TABLE_RULE.sub("", text)
