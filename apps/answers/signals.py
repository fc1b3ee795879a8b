"""Hooks for steps that run after a turn (analytics connects here; answers never imports it)."""

from django.dispatch import Signal

# Sent once a turn's `finished` event is stored. kwargs: turn_id.
turn_finished = Signal()
# Sent once a turn reaches any end (finished, failed, cancelled) and its status is stored,
# for steps that count every turn rather than read answers. kwargs: turn_id.
turn_ended = Signal()
