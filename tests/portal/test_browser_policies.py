"""Routing › Policies and Access › Keys in a real headless Chromium against the live gateway: an admin edits a
policy, dry-runs the edit over the organization's logged requests and saves it, then a new request with a key
attached to the policy is routed by it; an analyst cannot edit. Screenshots go to docs/screenshots/."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.live import LiveGateway, poll

from . import test_browser as shared
from .test_browser import PASSWORD, _arrive, _follow, _screenshot
from .test_browser import _log_in_as as _log_in

browser = shared.browser  # the module's Chromium, and the same skip where none is installed
pytestmark = shared.pytestmark

CHEAP, DEAR = "meta-llama-3.1-8b", "anthropic-claude-sonnet-4.5"
CHEAP_NAME = "Llama 3.1 8B Instruct"


@pytest.fixture(scope="module")
def org(live: LiveGateway) -> dict[str, str]:
    """An organization of its own with a key under a policy (the defaults), an admin, an analyst, and three
    logged requests made with the key."""
    slug = f"pol-{uuid.uuid4().hex[:6]}"
    key = live.create_key(org=slug, policy=f"Policy {slug}")
    users = {}
    for role in ("admin", "analyst"):
        users[role] = f"{role}-{slug}"
        live.manage("create_portal_user", "--org", slug, "--role", role, "--username", users[role],
                    "--password", PASSWORD)
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        for prompt in ("Say hello to the team", "What is the capital of France?", "Tell me a short joke"):
            response = client.post("/chat/completions", json={
                "model": "auto", "max_tokens": 200, "messages": [{"role": "user", "content": prompt}]})
            assert response.status_code == 200, response.text
            request_id = response.json()["id"]
            poll(lambda rid=request_id: client.get(f"/routing-decisions/{rid}").status_code == 200, timeout=20)
    return {"slug": slug, "key": key, "policy": f"Policy {slug}", **users}


def _arrive_at_policy(driver) -> str:  # type: ignore[no-untyped-def]
    """Wait (polling, 10 s at most) for a policy's page to load; return its path."""
    from selenium.webdriver.support.ui import WebDriverWait

    pattern = re.compile(r"https?://[^/]+(/portal/policies/\d+/)$")
    WebDriverWait(driver, 10, poll_frequency=0.05).until(
        lambda d: pattern.match(d.current_url) and d.execute_script("return document.readyState") == "complete")
    return pattern.match(driver.current_url).group(1)


def _routed(live: LiveGateway, key: str) -> dict | None:
    """Make a request with the key; return its routing object once it runs under the saved edit."""
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
        response = client.post("/chat/completions", json={
            "model": "auto", "max_tokens": 200, "messages": [{"role": "user", "content": "Say hello again"}]})
    assert response.status_code == 200, response.text
    routing = response.json()["routing"]
    return routing if routing["optimize_mode"] == "cost" else None


def test_edit_dry_run_and_save_a_policy_then_a_new_request_is_routed_by_it(browser, live: LiveGateway,
                                                                             org: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = browser
    _log_in(driver, live, org["admin"], "/portal/policies/")
    assert driver.find_element(By.CSS_SELECTOR, ".crumbs").text == "Routing › Policies"
    _follow(driver, driver.find_element(By.LINK_TEXT, org["policy"]))
    detail_path = _arrive_at_policy(driver)
    _follow(driver, driver.find_element(By.ID, "edit-policy"))
    _arrive(driver, f"{detail_path}edit/")

    pool = Select(driver.find_element(By.NAME, "pool"))
    pool.deselect_all()
    pool.select_by_value(CHEAP)
    pool.select_by_value(DEAR)
    Select(driver.find_element(By.NAME, "objective")).select_by_value("cost")
    Select(driver.find_element(By.NAME, "quality_floor")).select_by_value("none")
    # A guardrail check, chosen in the table (no JSON): flag e-mails in the answers at 10 micro-dollars a check.
    Select(driver.find_element(By.NAME, "guardrails_output_pii_action")).select_by_value("flag")
    driver.find_element(By.NAME, "guardrails_output_pii_price").send_keys("10")
    driver.find_element(By.CSS_SELECTOR, "#field-guardrails_output_pii_kinds summary").click()
    driver.find_element(By.CSS_SELECTOR, '#field-guardrails_output_pii_kinds input[value="email"]').click()
    _follow(driver, driver.find_element(By.ID, "dry-run"))
    _arrive(driver, f"{detail_path}edit/")
    result = driver.find_element(By.ID, "dry-run-result")
    assert "Dry-run: 3 logged requests" in result.text
    nows = [row.find_elements(By.TAG_NAME, "td")[5].text
            for row in driver.find_elements(By.CSS_SELECTOR, "#dry-run-rows tbody tr")]
    assert nows == [CHEAP_NAME] * 3
    # The dry-run kept the edit in the form, unsaved.
    assert sorted(o.get_attribute("value") for o in Select(driver.find_element(By.NAME, "pool")).all_selected_options) \
        == sorted([CHEAP, DEAR])
    assert Select(driver.find_element(By.NAME, "guardrails_output_pii_action")).first_selected_option.text == "flag"
    _screenshot(driver, "policy-dry-run", whole=True)

    _follow(driver, driver.find_element(By.ID, "save-policy"))
    # The save redirects from {detail_path}edit/, which also starts with detail_path: wait for the exact page.
    assert _arrive_at_policy(driver) == detail_path
    assert "Saved" in driver.find_element(By.CSS_SELECTOR, ".messages").text
    newest = driver.find_element(By.CSS_SELECTOR, "#policy-history > li")
    assert newest.get_attribute("data-version") == "2"
    assert "objective: balanced → cost" in newest.text
    assert "guardrails · output pii: off → flag, 10 µ$ (email)" in newest.text
    _screenshot(driver, "policy", whole=True)

    routing = poll(lambda: _routed(live, org["key"]), timeout=10)
    assert routing["model"] == CHEAP and routing["policy"]["name"] == org["policy"]

    driver.get(f"{live.base_url}/portal/keys/")
    _arrive(driver, "/portal/keys/")
    assert org["key"][:12] in driver.find_element(By.ID, "keys").text
    assert org["key"] not in driver.page_source  # only the prefix, ever
    _screenshot(driver, "keys", whole=True)


def test_an_analyst_reads_the_policy_but_cannot_edit_it(browser, live: LiveGateway, org: dict) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    driver = browser
    _log_in(driver, live, org["analyst"], "/portal/policies/")
    _follow(driver, driver.find_element(By.LINK_TEXT, org["policy"]))
    detail_path = _arrive_at_policy(driver)
    assert driver.find_element(By.ID, "policy-history").is_displayed()
    assert not driver.find_elements(By.ID, "edit-policy")
    driver.get(f"{live.base_url}{detail_path}edit/")
    _arrive(driver, f"{detail_path}edit/")
    assert "This page is for your organization's admins." in driver.page_source.replace("&#x27;", "'")
    assert not driver.find_elements(By.ID, "policy-form")
    cookies = {c["name"]: c["value"] for c in driver.get_cookies()}
    with httpx.Client(base_url=live.base_url, timeout=10, cookies=cookies) as client:  # the browser hides the status
        assert client.get(f"{detail_path}edit/").status_code == 403
        assert client.get("/portal/policies/new/").status_code == 403
