"""The portal in a real headless Chromium (Debian's chromium and chromium-driver, driven by Selenium) against
the live gateway: log in, filter Logs, open a decision and read its sentences; another organization's request
is a 404. The pages are saved as screenshots in docs/screenshots/ (linked from the README)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import REPO, LiveGateway, decision_of, poll

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = REPO / "docs" / "screenshots"
PASSWORD = "a browser's password"

# Skipped only where Chromium is genuinely absent; CI installs it (.ci/run), so there a missing browser fails.
pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()) and not os.environ.get("CI"),
    reason="Chromium is not installed: apt-get install chromium chromium-driver (.ci/run installs them)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="inferbase-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1440,900"):
        options.add_argument(flag)
    # The driver's path is given, so Selenium Manager (which would download one) never runs.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def portal(live: LiveGateway) -> dict[str, object]:
    """A portal analyst of the live gateway's demo organization, a few requests of its own, and a request of
    another organization."""
    username = f"analyst-{uuid.uuid4().hex[:6]}"
    live.manage("create_portal_user", "--org", "demo", "--role", "analyst", "--username", username,
                "--password", PASSWORD)
    headers = {"Authorization": f"Bearer {live.api_key}"}
    prompts = [("coding", "Write a python function that reverses a linked list", False),
               ("translation", "Translate to French: the weather is lovely today", False),
               ("coding", "Fix this SQL query: SELECT * FROM users WHERE id = '1", True)]
    ids = {}
    with httpx.Client(base_url=live.api, headers=headers, timeout=30) as client:
        for _, prompt, stream in prompts:
            body = {"model": "auto", "messages": [{"role": "user", "content": prompt}], "max_tokens": 400,
                    "routing": {"optimize": "cost", "quality_floor": "none"}}
            if stream:
                response = client.post("/chat/completions", json={**body, "stream": True})
                assert response.status_code == 200, response.text
                ids[prompt] = response.headers["x-request-id"]
            else:
                response = client.post("/chat/completions", json=body)
                assert response.status_code == 200, response.text
                ids[prompt] = response.json()["id"]
        coding_id = ids[prompts[0][1]]
        decision = poll(lambda: decision_of(client, coding_id), timeout=20)
    other_key = live.create_key(org=f"other-{uuid.uuid4().hex[:6]}")
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {other_key}"}, timeout=30) as client:
        other = client.post("/chat/completions", json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]})
        assert other.status_code == 200, other.text
        poll(lambda: decision_of(client, other.json()["id"]), timeout=20)
    return {"username": username, "coding_id": coding_id, "decision": decision, "other_id": other.json()["id"]}


def _arrive(driver, path_and_query: str) -> None:  # type: ignore[no-untyped-def]
    """Wait (polling, 10 s at most) until the browser has loaded the page at this path and query."""
    from selenium.webdriver.support.ui import WebDriverWait

    def arrived(d) -> bool:  # type: ignore[no-untyped-def]
        url = d.current_url.split("://", 1)[-1]
        return url[url.index("/"):].startswith(path_and_query) and d.execute_script(
            "return document.readyState") == "complete"

    WebDriverWait(driver, 10, poll_frequency=0.05).until(arrived)


def _follow(driver, element) -> None:  # type: ignore[no-untyped-def]
    """Click a link or submit button that loads a page, and wait (polling, 10 s at most) until the page it was
    on has gone. A page that posts back to its own URL (a dry-run, a form with errors) passes `_arrive` at once,
    before the answer has loaded; the old page's going cannot be mistaken."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")

    def gone(_driver) -> bool:  # type: ignore[no-untyped-def]
        try:
            old.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            # Mid-navigation, chromedriver can report the old node as an "unknown error" instead of a stale one.
            if "does not belong to the document" in str(error) or "No node with given id" in str(error):
                return True
            raise
        return False

    element.click()
    WebDriverWait(driver, 10, poll_frequency=0.05).until(gone)


def _screenshot(driver, name: str, *, whole: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Save what a 1440x900 laptop screen shows (with `whole`, the whole page) as docs/screenshots/<name>.png."""
    height = driver.execute_script("return document.documentElement.scrollHeight") if whole else 900
    driver.set_window_size(1440, max(900, min(int(height) + 20, 4000)))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    driver.set_window_size(1440, 900)


def test_log_in_filter_logs_and_read_adecision_of(browser, live: LiveGateway, portal: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = browser
    driver.get(f"{live.base_url}/portal/logs/")
    assert "/portal/login/" in driver.current_url
    driver.find_element(By.NAME, "username").send_keys(portal["username"])
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    _screenshot(driver, "login")
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]"))
    _arrive(driver, "/portal/logs/")
    assert driver.find_element(By.CSS_SELECTOR, ".crumbs").text == "Observability › Logs"
    rows = driver.find_elements(By.CSS_SELECTOR, "#log-rows tr[data-request-id]")
    assert len(rows) >= 3
    _screenshot(driver, "logs")

    Select(driver.find_element(By.NAME, "task")).select_by_value("coding")
    Select(driver.find_element(By.NAME, "streamed")).select_by_value("false")
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "#filters button[type=submit]"))
    _arrive(driver, "/portal/logs/?")
    assert "task=coding" in driver.current_url and "streamed=false" in driver.current_url
    shown = [row.get_attribute("data-request-id") for row in
             driver.find_elements(By.CSS_SELECTOR, "#log-rows tr[data-request-id]")]
    assert portal["coding_id"] in shown
    assert all("coding" in row.text for row in driver.find_elements(By.CSS_SELECTOR, "#log-rows tr[data-request-id]"))
    _screenshot(driver, "logs-filtered")

    _follow(driver, driver.find_element(By.LINK_TEXT, portal["coding_id"]))
    _arrive(driver, f"/portal/logs/{portal['coding_id']}/")
    sentences = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#filter-trail li .sentence")]
    assert sentences == portal["decision"]["filter_trail_text"]
    pick_name = portal["decision"]["route_displays"][portal["decision"]["chain_attempted"][0]]
    assert pick_name in driver.find_element(By.CSS_SELECTOR, "table.standings").text
    _screenshot(driver, "log-detail", whole=True)


def test_another_organizations_request_is_not_found(browser, live: LiveGateway, portal: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    driver = browser
    driver.get(f"{live.base_url}/portal/logs/{portal['other_id']}/")
    if "/portal/login/" in driver.current_url:  # run alone: log in first
        driver.find_element(By.NAME, "username").send_keys(portal["username"])
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]"))
        _arrive(driver, f"/portal/logs/{portal['other_id']}/")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Not found"
    assert f"No request {portal['other_id']} in your organization's logs." in driver.page_source.replace("&#x27;", "'")
    cookies = {c["name"]: c["value"] for c in driver.get_cookies()}
    with httpx.Client(base_url=live.base_url, timeout=10, cookies=cookies) as client:  # the browser hides the status
        assert client.get(f"/portal/logs/{portal['other_id']}/").status_code == 404
        assert client.get(f"/portal/logs/{portal['coding_id']}/").status_code == 200


def _log_in_as(driver, live: LiveGateway, username: str, path: str) -> None:  # type: ignore[no-untyped-def]
    """Open the path as this user, logging out whoever the browser is logged in as."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{live.base_url}{path}")
    driver.find_element(By.NAME, "username").send_keys(username)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]"))
    _arrive(driver, path)


def _wait(driver, condition, timeout: float = 20):  # type: ignore[no-untyped-def]
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def test_the_live_tail_shows_a_new_request(browser, live: LiveGateway, portal: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    driver = browser
    _log_in_as(driver, live, portal["username"], "/portal/logs/")
    _wait(driver, lambda d: d.find_element(By.ID, "live-status").get_attribute("data-state") == "open")
    driver.execute_script("window.notReloaded = true;")
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {live.api_key}"}, timeout=30) as client:
        response = client.post("/chat/completions", json={
            "model": "auto", "messages": [{"role": "user", "content": "Say hello to the live tail"}]})
    assert response.status_code == 200, response.text
    request_id = response.json()["id"]
    row = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#log-rows tr[data-request-id="{request_id}"]'))
    first = driver.find_element(By.CSS_SELECTOR, "#log-rows tr[data-request-id]")
    assert first.get_attribute("data-request-id") == request_id and "fresh" in row[0].get_attribute("class")
    assert driver.execute_script("return window.notReloaded === true;")  # it came without a reload
    _screenshot(driver, "logs-live-tail")


def test_usage_budgets_and_a_models_evidence(browser, live: LiveGateway, portal: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    driver = browser
    admin = f"admin-{uuid.uuid4().hex[:6]}"
    live.manage("create_portal_user", "--org", "demo", "--role", "admin", "--username", admin, "--password", PASSWORD)
    project = f"budgeted-{uuid.uuid4().hex[:6]}"
    key = live.create_key(org="demo", project=project)
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        spent = client.post("/chat/completions", json={"model": "auto", "max_tokens": 200, "messages": [
            {"role": "user", "content": "Write a haiku about budgets"}]})
    assert spent.status_code == 200, spent.text

    _log_in_as(driver, live, admin, "/portal/usage/")
    assert driver.find_element(By.CSS_SELECTOR, ".crumbs").text == "Billing › Usage"
    bars = driver.find_elements(By.CSS_SELECTOR, "#spend-chart g.day")
    assert len(bars) == 30
    by_project = _wait(driver, lambda d: d.find_element(By.ID, "by-project"))
    assert project in by_project.text
    _screenshot(driver, "usage", whole=True)

    _follow(driver, driver.find_element(By.LINK_TEXT, "Budgets and limits"))
    _arrive(driver, "/portal/budgets/")
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "tr[data-scope=project]") if project in r.text)
    _follow(driver, row.find_element(By.LINK_TEXT, "Edit"))
    _wait(driver, lambda d: d.find_elements(By.NAME, "monthly_budget"))
    budget = driver.find_element(By.NAME, "monthly_budget")
    budget.send_keys("-3")
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.settings button[type=submit]"))
    error = _wait(driver, lambda d: d.find_elements(By.ID, "monthly_budget-error"))
    assert error[0].text == "A budget cannot be negative."
    budget = driver.find_element(By.NAME, "monthly_budget")
    budget.clear()
    budget.send_keys("0.000100")
    driver.find_element(By.NAME, "requests_per_minute").send_keys("600")
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.settings button[type=submit]"))
    _arrive(driver, "/portal/budgets/?saved=project-")
    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "tr[data-scope=project]") if project in r.text)
    assert "of $0.000100" in row.text and "600" in row.text
    assert row.find_elements(By.CSS_SELECTOR, ".meter .threshold")
    driver.execute_script("window.scrollTo(0, 0);")  # the redirect's anchor scrolled to the row
    _screenshot(driver, "budgets", whole=True)

    driver.get(f"{live.base_url}/portal/logs/{portal['coding_id']}/")
    link = driver.find_element(By.CSS_SELECTOR, "a.model-link")
    name = link.text
    _follow(driver, link)
    _wait(driver, lambda d: "/portal/models/" in d.current_url)
    assert driver.find_element(By.TAG_NAME, "h1").text == name
    assert driver.find_elements(By.CSS_SELECTOR, "#routes tr[data-route]")
    _screenshot(driver, "model", whole=True)
