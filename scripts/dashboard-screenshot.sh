#!/usr/bin/env bash
# Re-takes docs/screenshots/dashboard.png: the dashboard browser test, on its seeded turns, saves
# the page it shows after picking a fortnight. Run from the repository root.
set -euo pipefail
mkdir -p docs/screenshots
E2E_DASHBOARD_SCREENSHOT="$PWD/docs/screenshots/dashboard.png" DJANGO_ALLOW_ASYNC_UNSAFE=true \
    "${BIN:-.venv/bin}/pytest" -m e2e -q -p no:asyncio \
    "tests/e2e/test_dashboard.py::test_pick_a_range_click_a_category_and_land_on_the_same_count"
