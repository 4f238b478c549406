"""A tiny DOM census over report HTML (stdlib parser), so tests assert structure, not text."""

from __future__ import annotations

from html.parser import HTMLParser


class Element:
    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class Census(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {k: v or "" for k, v in attrs}))

    def by_class(self, name: str) -> list[Element]:
        return [e for e in self.elements if name in e.classes]

    def by_id(self, element_id: str) -> Element | None:
        return next((e for e in self.elements if e.attrs.get("id") == element_id), None)


def section_of(html: str, section_id: str) -> str:
    """The markup of one `<section id=…>` of a page (sections do not nest)."""
    start = html.index(f'<section id="{section_id}"')
    return html[start : html.index("</section>", start)]
