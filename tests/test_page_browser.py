"""The page in a real browser: Debian's chromium, headless, driven by Selenium through
chromedriver, against a real ``schemux serve --http`` with a token (one browser and one
server for the module).

Refused without the token; signed in through the form, it shows a pane's picture, which
is drawn again when the pane changes; a program's output; and the calls of the audit log,
whose recording replays in place in the asciinema player. The token is in no URL, no
``Referer``, no cookie and no line of the server's log (the browser's own record of its
requests, the DevTools protocol's, is read back), and the page breaks no rule of its
Content-Security-Policy. ``SCHEMUX_PAGE_SCREENSHOT=PATH`` writes the screenshot of the
page to PATH (docs/page.png is made so).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests.http_serving import PageServer, serving_page
from tests.support import Pane, missing, new_pane, private_tmux_server, tmux

TOKEN = "page-test-token-3f9c2a71b8e64d05"
WAIT_SECONDS = 20.0


@pytest.fixture(scope="module")
def socket_name() -> Iterator[str]:
    with private_tmux_server("page") as name:
        yield name


@pytest.fixture(scope="module")
def served(socket_name: str) -> Iterator[PageServer]:
    with (
        tempfile.TemporaryDirectory(prefix="schemux-page-") as directory,
        serving_page(socket_name, Path(directory), TOKEN) as server,
    ):
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        missing("chromium and chromium-driver are not installed")
    assert chromium is not None
    assert driver_path is not None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where chromium's sandbox cannot start
        "--disable-dev-shm-usage",
        "--window-size=1400,1100",
        "--disable-extensions",
        "--no-first-run",
        "--password-store=basic",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except WebDriverException as error:
        pytest.fail(f"chromium did not start: {error.msg}")
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver: WebDriver, condition: Any, timeout: float = WAIT_SECONDS) -> Any:
    return WebDriverWait(driver, timeout).until(lambda _: condition())


def browser_log(driver: WebDriver, kind: str) -> list[dict[str, Any]]:
    """The browser's log of ``kind`` (``performance``: the DevTools protocol's network
    events; ``browser``: the console) since the last read."""
    entries: list[dict[str, Any]] = driver.get_log(kind)  # type: ignore[no-untyped-call]
    return entries


def signed_in(driver: WebDriver, served: PageServer) -> None:
    """The browser on the page, signed in through the form if it is not yet."""
    driver.get(f"{served.base}/")
    if driver.find_elements(By.NAME, "token"):
        driver.find_element(By.NAME, "token").send_keys(served.token)
        driver.find_element(By.CSS_SELECTOR, "form button").click()
    wait(driver, lambda: driver.find_elements(By.ID, "panes"))
    wait(driver, lambda: driver.find_element(By.ID, "status").text == "live")


def figure_of(driver: WebDriver, pane: Pane) -> WebElement | None:
    found = driver.find_elements(By.CSS_SELECTOR, f'figure.pane[data-pane="{pane.pane_id}"]')
    return found[0] if found else None


def picture_loaded(driver: WebDriver, figure: WebElement) -> bool:
    image = figure.find_element(By.TAG_NAME, "img")
    return bool(
        driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image)
    )


def test_without_the_token_the_page_shows_only_the_sign_in_form(
    browser: WebDriver, served: PageServer
) -> None:
    browser.delete_all_cookies()
    browser.get(f"{served.base}/")
    assert browser.find_elements(By.NAME, "token")
    assert not browser.find_elements(By.ID, "panes")
    browser.find_element(By.NAME, "token").send_keys("not-the-token-at-all-0000")
    browser.find_element(By.CSS_SELECTOR, "form button").click()
    wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "p.refused"))
    assert not browser.find_elements(By.ID, "panes")
    assert not browser.get_cookies()
    for path in ("/events", "/pictures/local/0", "/recordings/c000000000000"):
        assert httpx2.get(f"{served.base}{path}").status_code == 401


def test_a_pane_is_shown_live_and_drawn_again_when_it_changes(
    browser: WebDriver, served: PageServer, socket_name: str
) -> None:
    pane = new_pane(socket_name)
    signed_in(browser, served)
    figure = wait(browser, lambda: figure_of(browser, pane))
    wait(browser, lambda: picture_loaded(browser, figure))
    before = int(figure.get_attribute("data-version") or 0)
    image = figure.find_element(By.TAG_NAME, "img")
    first = image.get_attribute("src")
    # the test types into the pane with tmux itself: the page never does
    tmux(socket_name, "send-keys", "-t", pane.pane_id, "echo the-page-sees-this", "Enter")
    wait(browser, lambda: int(figure.get_attribute("data-version") or 0) > before)
    wait(browser, lambda: picture_loaded(browser, figure))
    assert image.get_attribute("src") != first
    # and what it loads is the pane's picture now: a PNG of the pane's size
    assert first is not None
    picture = httpx2.get(first.split("?")[0], headers={"Authorization": f"Bearer {served.token}"})
    assert picture.status_code == 200
    assert picture.headers["content-type"] == "image/png"
    assert picture.content.startswith(b"\x89PNG")


def test_a_program_shows_with_its_output(browser: WebDriver, served: PageServer) -> None:
    started = served.mcp_call("start_program", argv=["sh", "-c", "echo page-program-said-this"])
    program_id = started["programId"]
    signed_in(browser, served)

    def output() -> str:
        found = browser.find_elements(
            By.CSS_SELECTOR, f'article.program[data-program="{program_id}"] pre'
        )
        return found[0].text if found else ""

    wait(browser, lambda: "page-program-said-this" in output())


def test_a_recorded_call_replays_in_place(
    browser: WebDriver, served: PageServer, socket_name: str
) -> None:
    pane = new_pane(socket_name)
    served.mcp_call("run_command", command="echo replayed-by-the-player", pane_id=pane.pane_id)
    signed_in(browser, served)
    entry = wait(
        browser,
        lambda: next(
            iter(
                browser.find_elements(
                    By.XPATH,
                    "//li[@data-recording][.//code[contains(., 'replayed-by-the-player')]]",
                )
            ),
            None,
        ),
    )
    entry.find_element(By.CSS_SELECTOR, "button.replay").click()
    player = wait(browser, lambda: entry.find_elements(By.CSS_SELECTOR, ".ap-player"))[0]
    # the player plays the recording: the command's output shows in its terminal
    wait(browser, lambda: "replayed-by-the-player" in player.text.replace("\n", " "))
    screenshot = os.environ.get("SCHEMUX_PAGE_SCREENSHOT")
    if screenshot:
        browser.save_screenshot(screenshot)


def test_the_token_leaks_nowhere_and_the_page_keeps_its_policy(
    browser: WebDriver, served: PageServer, socket_name: str
) -> None:
    signed_in(browser, served)
    new_pane(socket_name)
    wait(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "figure.pane img[src]"))
    requests = [
        json.loads(entry["message"])["message"] for entry in browser_log(browser, "performance")
    ]
    sent = [m["params"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    extra = [m["params"] for m in requests if m["method"] == "Network.requestWillBeSentExtraInfo"]
    assert sent
    for request in sent:
        assert served.token not in request["request"]["url"]
        assert not request["request"]["headers"].get("Referer")  # DevTools shows none as ""
        if served.token in request["request"].get("postData", ""):
            assert request["request"]["url"] == f"{served.base}/signin"
    for request in extra:
        headers = {name.lower(): value for name, value in request["headers"].items()}
        assert not headers.get("referer")
        assert served.token not in headers.get("cookie", "")
    cookies = browser.get_cookies()
    assert [cookie["name"] for cookie in cookies] == ["schemux-page"]
    assert served.token not in cookies[0]["value"]
    assert cookies[0]["httpOnly"]
    assert cookies[0]["sameSite"] == "Strict"
    assert served.token not in served.log.read_text()
    console = [entry["message"] for entry in browser_log(browser, "browser")]
    assert not [line for line in console if "Content Security Policy" in line], console


def test_signing_out_ends_the_session(browser: WebDriver, served: PageServer) -> None:
    signed_in(browser, served)
    cookie = browser.get_cookie("schemux-page")
    assert cookie is not None
    browser.find_element(By.CSS_SELECTOR, "#signout button").click()
    wait(browser, lambda: browser.find_elements(By.NAME, "token"))
    assert browser.get_cookie("schemux-page") is None
    # the session is over on the server too, not only forgotten by the browser
    old = {"schemux-page": cookie["value"]}
    assert httpx2.get(f"{served.base}/events", cookies=old).status_code == 401
