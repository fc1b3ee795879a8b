"""Conversations: their writes and reads (the chat sidebar, the history a turn reads, example questions)."""
