"""A website crawl against a real HTTP server: same-site links to a depth and a page limit,
robots.txt honoured, pages that are not HTML or lead elsewhere reported, the main text kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apps.corpus.models import Chunk, Collection, Document
from apps.sources.models import Source, SourceItem, SourceKind
from apps.sources.sync.run import source_sync
from apps.sources.sync.services import source_create
from tests.conftest import CountingEmbedder
from tests.sources import servers

pytestmark = pytest.mark.django_db


def page(title: str, text: str, *links: str) -> str:
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return (
        f"<html><head><title>{title}</title></head><body><nav>Home Menu Search</nav>"
        f"<main><h1>{title}</h1><p>{text}</p><p>{anchors}</p></main>"
        "<footer>Copyright footer words</footer></body></html>"
    )


@pytest.fixture
def site(website: servers.Running, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    name = tmp_path.name.replace("_", "")[:20]
    root = website.root / "site" / name
    root.mkdir()
    yield root, f"{website.url}/{name}"
    (website.root / "site" / "robots.txt").unlink(missing_ok=True)


def crawl(start: str, **fields: Any) -> Source:
    collection = Collection.objects.create(name=f"web {start}")
    source = source_create(name=start, kind=SourceKind.WEB, location=start, collection=collection)
    Source.objects.filter(pk=source.pk).update(**fields)
    source.refresh_from_db()
    return source


def test_links_are_followed_to_the_depth_and_only_on_the_site(
    site: tuple[Path, str], embedder: CountingEmbedder
) -> None:
    root, url = site
    (root / "index.html").write_text(
        page("Start", "The start page.", "a.html", "https://example.org/x", "#top", "a.html#s")
    )
    (root / "a.html").write_text(page("A", "Armadillos roll into balls.", "b.html"))
    (root / "b.html").write_text(page("B", "Bison roam the plains.", "c.html"))
    (root / "c.html").write_text(page("C", "Cheetahs run fast."))
    source = crawl(f"{url}/index.html", max_depth=2)

    report = source_sync(source_id=source.pk, wait=True)

    keys = sorted(SourceItem.objects.filter(source=source).values_list("key", flat=True))
    assert (report.status, report.added) == ("ok", 3)
    assert keys == [f"{url}/a.html", f"{url}/b.html", f"{url}/index.html"]
    texts = " ".join(
        Chunk.objects.filter(document__collection=source.collection).values_list("text", flat=True)
    )
    assert "Armadillos" in texts and "Copyright" not in texts and "Menu" not in texts


def test_the_page_limit_stops_the_crawl(site: tuple[Path, str], embedder: CountingEmbedder) -> None:
    root, url = site
    links = [f"p{n}.html" for n in range(6)]
    (root / "index.html").write_text(page("Start", "Start.", *links))
    for link in links:
        (root / link).write_text(page(link, f"Page {link}."))
    source = crawl(f"{url}/index.html", max_pages=3)

    report = source_sync(source_id=source.pk, wait=True)

    assert report.seen == 3 and Document.objects.filter(collection=source.collection).count() == 3


def test_robots_txt_is_honoured(
    site: tuple[Path, str], website: servers.Running, embedder: CountingEmbedder
) -> None:
    root, url = site
    prefix = url.removeprefix(website.url)
    (website.root / "site" / "robots.txt").write_text(
        f"User-agent: *\nDisallow: {prefix}/private/\n"
    )
    (root / "private").mkdir()
    (root / "index.html").write_text(page("Start", "Start.", "private/secret.html", "open.html"))
    (root / "private" / "secret.html").write_text(page("Secret", "Hidden words."))
    (root / "open.html").write_text(page("Open", "Open words."))

    report = source_sync(source_id=crawl(f"{url}/index.html").pk, wait=True)
    forbidden = source_sync(source_id=crawl(f"{url}/private/secret.html").pk, wait=True)

    assert report.added == 2
    assert not SourceItem.objects.filter(key__contains="private").exists()
    assert forbidden.status == "failed" and "robots.txt" in forbidden.error


def test_a_page_that_is_not_html_is_reported_and_the_rest_synced(
    site: tuple[Path, str], embedder: CountingEmbedder
) -> None:
    root, url = site
    (root / "index.html").write_text(page("Start", "Start.", "data.json", "missing.html"))
    (root / "data.json").write_text('{"a": 1}')

    report = source_sync(source_id=crawl(f"{url}/index.html").pk, wait=True)

    errors = dict(SourceItem.objects.filter(error__gt="").values_list("key", "error"))
    assert (report.added, report.failed) == (1, 2)
    assert "not an HTML page" in errors[f"{url}/data.json"]
    assert "404" in errors[f"{url}/missing.html"]


def test_a_start_page_that_cannot_be_read_fails_the_sync(
    site: tuple[Path, str], embedder: CountingEmbedder
) -> None:
    _, url = site
    report = source_sync(source_id=crawl(f"{url}/nothing.html").pk, wait=True)
    assert report.status == "failed" and "cannot be read" in report.error
