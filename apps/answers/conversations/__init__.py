"""Conversations: their writes and reads (the chat sidebar, history, example questions) and the asker's feedback."""
