"""The web UI in a real headless Chromium (Debian's, driven by Playwright), as a user sees it:
load the page, paste a trace, read the problem and its fix, open a source, rate the answer and
find the rating stored. The page must not reach past 127.0.0.1. Saves tests/artifacts/web.png."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_web import serving, web_settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOT = REPO / "tests" / "artifacts" / "web.png"
TRACE = ("$ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --tp 4 "
         "--mem-fraction-static 0.5\n"
         "sglang 0.4.6.post1, torch 2.6.0+cu124, NVIDIA H100 80GB HBM3\n"
         "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                     "(apt-get install chromium)"),
]


@pytest.fixture
def browser_page():
    """(a Chromium page, the list of requests it tried to send off the machine)"""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        outside = []   # requests that tried to leave the machine

        def local_only(route):
            url = route.request.url
            if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
                route.continue_()
            elif url.startswith("https://github.com/"):   # a source link: a stand-in page, offline
                route.fulfill(status=200, content_type="text/html",
                              body=f"<html><body><h1>stand-in for {url}</h1></body></html>")
            else:
                outside.append(url)
                route.abort()

        context.route("**/*", local_only)
        try:
            yield context.new_page(), outside
        finally:
            browser.close()


def test_paste_read_the_fix_open_a_source_and_rate_it(assistant, tmp_path, browser_page):
    from playwright.sync_api import expect

    from assistant.feedback import FeedbackStore

    page, outside = browser_page
    settings = web_settings(assistant, tmp_path)
    with serving(assistant, settings) as url:
        page.goto(url, wait_until="domcontentloaded")
        expect(page.locator("#mode-banner")).to_contain_text("Answers come from the knowledge base alone",
                                                             timeout=30_000)

        box = page.locator("#question textarea")
        box.fill(TRACE)
        page.locator("#question button.submit-button").click()

        chat = page.locator("#chat")
        reply = chat.locator(".bot.message").last
        expect(reply).to_contain_text("What went wrong", timeout=30_000)
        expect(reply.locator("h3")).to_contain_text("Not enough memory. Please try to increase "
                                                     "--mem-fraction-static")
        expect(reply).to_contain_text("Fix")
        command = reply.locator("pre code").first
        expect(command).to_contain_text("--mem-fraction-static")
        expect(reply.locator(".copy_code_button").first).to_be_attached()   # the copy button

        detected = page.locator("#detected")
        expect(detected).to_contain_text("0.4.6.post1")
        expect(detected).to_contain_text("H100")

        # open a source: its details, then its link (GitHub is stood in for, the page stays offline)
        first = page.locator("#sources details.source").first
        expect(first.locator("summary")).to_contain_text("kv-cache-not-enough-memory")
        expect(first.locator("summary")).to_contain_text(re.compile(r"score \d\.\d\d · confidence"))
        first.locator("summary").click()
        link = first.locator("a").first
        expect(link).to_be_visible()
        href = link.get_attribute("href")
        assert href.startswith("https://github.com/")
        with page.expect_popup() as popup:
            link.click()
        popup.value.wait_for_load_state("domcontentloaded")
        assert popup.value.url == href
        assert "stand-in for" in popup.value.content()
        popup.value.close()

        # rate it: thumbs down, stored with the question, the answer and the matched ids
        reply.hover()
        chat.get_by_role("button", name="Dislike").last.click()
        expect(page.get_by_text("your rating is saved")).to_be_visible(timeout=10_000)

        reply.locator("h3").scroll_into_view_if_needed()   # the picture shows the problem's title
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)

    rows = FeedbackStore(settings.feedback_db).rows()
    assert len(rows) == 1
    row = rows[0]
    assert (row.surface, row.rating, row.mode) == ("web", -1, "extractive")
    assert row.matched_ids[0] == "kv-cache-not-enough-memory"
    assert "RuntimeError: Not enough memory" in row.question
    assert row.answer["matches"][0]["id"] == "kv-cache-not-enough-memory"
    assert outside == [], f"the page tried to reach: {outside}"
