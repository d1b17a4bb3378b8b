"""The worker page driven like a worker does it, in Chromium.

`Server` runs `welcome.py` for one conf; `Worker` opens a link, clicks through every step by the
accessible names of docs/worker-ui.md and records, as it clicks, the answers it gave in the answer
format of docs/worker-api.md (`Worker.expected`), so that a test can compare them with what the
server stored.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from helpers import REPO, Running, free_port
from playwright.sync_api import Locator, Page, Response, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

SCREENSHOTS = REPO / "artifacts" / "screenshots"
TREE_CONFIGS = frozenset({"button_flow", "nondetails_button_flow",
                          "nondetails_nonhelp_button_flow"})
RESERVED = frozenset({"_type_", "_dep_"})
KEYBOARD_EVERY = 3  # every third 1-5 scale is answered with a number key instead of a click


class Server:
    """`python welcome.py conf=<conf>` on 127.0.0.1 at a free port, with its data in `folder`."""

    def __init__(self, folder: Path, conf: str | Path, *overrides: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.run = Running(folder, self.port, str(conf), "mephisto.architect.hostname=127.0.0.1",
                           *overrides)
        self.run.wait_for(r"press Ctrl-C to stop", timeout=60)
        printed = "".join(self.run.lines)
        self.links = re.findall(r"(http://127\.0\.0\.1:\d+/\?worker_id=\S+)", printed)
        self.token = re.search(r"token: ([0-9a-f]+)", printed).group(1)
        self.dashboard = re.search(r"dashboard: (\S+)", printed).group(1)
        assert self.links, printed

    def link(self, worker: str, assignment: str) -> str:
        return f"{self.base}/?worker_id={worker}&assignment_id={assignment}"

    def submissions(self, unit_id: str) -> list[dict[str, Any]]:
        """The submissions stored for one unit, read through the requester API."""
        reply = httpx.get(f"{self.base}/api/requester/submissions",
                          headers={"Authorization": f"Bearer {self.token}"}, timeout=10)
        assert reply.status_code == 200, reply.text
        return [s for s in reply.json()["submissions"] if s["unit_id"] == unit_id]

    def stored_answers(self, unit_id: str) -> dict[str, Any]:
        """The stored answers in the shape the page sent them: a comparison's stored
        `{option, side, dialogue}` is checked against the unit's layout (options[0] is the
        left dialogue, options[1] the right one) and read back as its option text."""
        found = self.submissions(unit_id)
        assert len(found) == 1, f"{len(found)} submissions for {unit_id}"
        record = found[0]
        lefts = {d["key"]: d.get("left") for d in record["dialogues"]}
        answers = record["answers"]
        for key, buckets in answers.items():
            for targets in buckets.values():
                for target, value in targets.items():
                    if isinstance(value, dict) and set(value) == {"option", "side", "dialogue"}:
                        left = lefts[key] or "turns"
                        right = "turns2" if left == "turns" else "turns"
                        side = value["side"]
                        assert value["dialogue"] == {"left": left, "right": right}.get(side), \
                            value
                        targets[target] = value["option"]
        return answers

    def stop(self) -> None:
        if self.run.process.poll() is None:
            self.run.process.send_signal(signal.SIGINT)
            try:
                self.run.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.run.process.kill()
                self.run.process.wait(timeout=10)


# --- question trees, as docs/worker-api.md describes them -------------------------------------

def questions(spec: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(spec, dict):
        return []
    return [(q, qs) for q, qs in spec.items() if q not in RESERVED and isinstance(qs, dict)]


def answers_of(question: dict[str, Any]) -> list[str]:
    return [a for a in question if a not in RESERVED]


def is_checkbox(question: dict[str, Any]) -> bool:
    return "checkbox" in (question.get("_type_") or {})


def dependency_holds(dep: dict[str, Any] | None, siblings: dict[str, Any], speaker: str) -> bool:
    for name, args in (dep or {}).items():
        if name == "speaker":
            holds = speaker == args
        else:
            chosen = siblings.get(args["question"])
            answered = isinstance(chosen, dict) and (
                args["answer"] in chosen if "answer" in args else bool(chosen))
            holds = answered if name == "answered" else not answered
        if not holds:
            return False
    return True


def tree_complete(spec: Any, value: dict[str, Any], speaker: str) -> bool:
    """Whether an opened turn's value is complete (shown checkbox questions count as `{}`)."""
    for q, qs in questions(spec):
        if not dependency_holds(qs.get("_dep_"), value, speaker):
            continue
        chosen = value.get(q, {})
        if not is_checkbox(qs) and not chosen:
            return False
        if not all(tree_complete(qs[a], sub, speaker) for a, sub in chosen.items()):
            return False
    return True


def checkboxes_seen(spec: Any, value: dict[str, Any], speaker: str, confirmed: set,
                    path: tuple[tuple[str, str], ...] = ()) -> bool:
    """Every shown checkbox question has a tick or a confirmed "None of these" (`confirmed`
    holds (path, question) pairs): only then does a click move the page on."""
    for q, qs in questions(spec):
        if not dependency_holds(qs.get("_dep_"), value, speaker):
            continue
        chosen = value.get(q, {})
        if is_checkbox(qs) and not chosen and (path, q) not in confirmed:
            return False
        if not all(checkboxes_seen(qs[a], sub, speaker, confirmed, (*path, (q, a)))
                   for a, sub in chosen.items()):
            return False
    return True


def normalized(spec: Any, value: dict[str, Any], speaker: str) -> dict[str, Any]:
    """A value as the page keeps it: shown checkbox questions hold at least `{}`."""
    out: dict[str, Any] = {}
    for q, qs in questions(spec):
        chosen = value.get(q)
        if dependency_holds(qs.get("_dep_"), value, speaker) and (chosen or is_checkbox(qs)):
            out[q] = {a: normalized(qs[a], sub, speaker) for a, sub in (chosen or {}).items()}
    return out


@dataclass(frozen=True)
class Click:
    """One click on a tree answer: `path` is the (question, answer) pairs above the question."""

    path: tuple[tuple[str, str], ...]
    question: str
    answer: str
    checkbox: bool
    none: bool = False  # the question's "None of these" (confirms that nothing applies)

    @property
    def moves_on(self) -> bool:
        """A radio answer or "None of these" may move the page on; a tick never does."""
        return not self.checkbox or self.none

    def apply(self, value: dict[str, Any]) -> None:
        level = value
        for q, a in self.path:
            level = level[q][a]
        if self.none:
            level[self.question] = {}
        elif self.checkbox:
            level.setdefault(self.question, {})[self.answer] = {}
        else:
            level[self.question] = {self.answer: {}}


class Choices:
    """Reproducible choices that cycle through the options, so that every answer gets clicked
    (not always the first), checkbox questions get none, one or all answers, and nested
    questions are reached."""

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()
        self.subsets = 0

    def pick(self, count: int) -> int:
        self.counts[count] += 1
        return self.counts[count] % count

    def subset(self, count: int) -> list[int]:
        self.subsets += 1
        mode = self.subsets % 3
        if mode == 0:
            return []
        if mode == 1 or count == 1:
            return [(self.subsets // 3) % count]
        return list(range(count))


def rating_options(bucket: dict[str, Any]) -> list[tuple[str, str]]:
    """(key in the value, legend on the page) of each 1-5 scale of a likert/foreach bucket."""
    if bucket["config"].startswith("likert"):
        return [(o["label"], o.get("question") or o["label"]) for o in bucket["options"]]
    return [(o["value"], o.get("label") or o["value"]) for o in bucket["options"]]


def question_label(question: str, show) -> str:
    """What the page shows as a tree question's legend (frontend/src/display.ts)."""
    if not re.fullmatch(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)+", question):
        return show(question)
    words = re.sub(r"_q$", "", question, flags=re.IGNORECASE).replace("_", " ").strip()
    return words[:1].upper() + words[1:]


# --- screening (training) units -----------------------------------------------------------------

def training_answers(cep_fixtures: Path, screening_file: str) -> list[dict[str, dict[str, Any]]]:
    """What a worker who answers exactly as the screening file expects gives, per training
    dialogue in file order: `{bucket: {target: value}}` for the scored turns, read from the
    fixture file (through the project's own translation), never from the page."""
    from collection_and_annotations.blueprints.static_annotation.buckets import load_buckets
    from collection_and_annotations.quality.files import scored_turns
    from collection_and_annotations.quality.translation import nest

    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    path = cep_fixtures / "task_config" / "onboarding_data" / screening_file
    source = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for dialogue in source.values():
        answers: dict[str, dict[str, Any]] = {}
        for turn in scored_turns(dialogue, buckets):
            for name in dialogue["annotation_tasks"]:
                bucket = buckets[name]
                if turn.index in bucket.target_turns(dialogue["turns"]):
                    answers.setdefault(name, {})[str(turn.index)] = nest(
                        bucket, turn.expected.alternatives[0])
        out.append(answers)
    return out


def wrong_value(bucket: dict[str, Any], value: Any, speaker: str) -> Any:
    """A multiselect value that differs from `value` (only multiselect is made wrong)."""
    offered = [o["value"] for o in bucket["options"] if o.get("speaker") in (None, speaker)]
    return [] if value else offered[:1]


class Training:
    """What a `Worker` does in a screening unit: each training dialogue answered with given
    values, checked by the server, corrected where it says so."""

    def set_multiselect(self, group: Locator, bucket: dict[str, Any], speaker: str,
                        value: list[str]) -> None:
        for option in bucket["options"]:
            if option.get("speaker") not in (None, speaker):
                continue
            box = group.get_by_role("checkbox", name=self.show(option.get("label")
                                                               or option["value"], speaker),
                                    exact=True)
            box.set_checked(option["value"] in value)

    def give(self, key: str, answers: dict[str, dict[str, Any]], name: str,
             wrong: dict[str, set[str]] | None = None) -> int:
        """Answer bucket `name` (the open step) of dialogue `key`: the expected `answers`,
        except the targets in `wrong[name]`, answered wrongly. Returns how many were wrong."""
        bucket = self.unit["buckets"][name]
        panel = self.page.locator(f'[data-dialogue-key="{key}"]')
        made_wrong = 0
        values = self.expected.setdefault(key, {}).setdefault(name, {})
        for target, value in answers.get(name, {}).items():
            speaker = self.speaker(key, int(target))
            group = self.turn(panel, int(target))
            if bucket["config"] == "multiselect":
                given = value
                if wrong and target in wrong.get(name, set()):
                    given, made_wrong = wrong_value(bucket, value, speaker), made_wrong + 1
                self.set_multiselect(group, bucket, speaker, given)
                values[target] = given
            elif bucket["config"] in TREE_CONFIGS:
                self.set_tree(group, bucket, speaker, value)
                values[target] = value
            else:
                raise NotImplementedError(bucket["config"])
        return made_wrong

    def set_tree(self, group: Locator, bucket: dict[str, Any], speaker: str,
                 value: dict[str, Any]) -> None:
        """Open a tree turn and choose `value` with the keyboard (Space), so that the page does
        not move on to the next turn between the clicks of one turn."""
        n = int(group.get_attribute("data-turn-index")) + 1
        opener = group.get_by_role("button", name=re.compile(rf"^(Answer|Change) turn {n}$"))
        if opener.count():
            opener.click()
        expect(group.locator("fieldset").first).to_be_visible()
        for click in clicks_for(bucket["options"], value):
            box = self.tree_input(group, click, speaker)
            if not box.is_checked():
                box.focus()
                self.page.keyboard.press("Space")
            expect(box).to_be_checked()

    def train(self, expected: list[dict[str, dict[str, Any]]],
              wrong_turns: dict[int, int] | None = None,
              explanations: list[dict[int, str]] | None = None) -> dict[str, Any]:
        """Go through the open screening unit. `expected[i]` are training dialogue i's
        expected answers; `wrong_turns[i]` scored turns of it are answered wrongly first, then
        corrected after the server's feedback (which must show `explanations[i][turn]`).
        Returns the submit's answer."""
        info = self.unit["screening"]
        assert self.unit["kind"] == "screening"
        intro = self.page.get_by_role("region", name="Training")
        expect(intro).to_contain_text(
            f"you label {info['dialogues']} training dialogues")
        for graded in info["graded"]:
            expect(intro).to_contain_text(f"training dialogue {graded['position']} of "
                                          f"{info['dialogues']} with at most "
                                          f"{graded['allowed_mistakes']} mistakes")
        self.screenshot("training-intro")
        self.start()
        outcome: dict[str, Any] = {}
        for position, dialogue in enumerate(self.unit["dialogues"]):
            key = dialogue["key"]
            answers = expected[position]
            count = (wrong_turns or {}).get(position, 0)
            wrong = {}
            for name, targets in answers.items():
                take = sorted(targets, key=int)[:count]
                wrong[name] = set(take)
                count -= len(take)
            tasks = dialogue["annotation_tasks"]
            for n, name in enumerate(tasks):
                self.give(key, answers, name, wrong)
                last_of_dialogue = n == len(tasks) - 1
                last = last_of_dialogue and position == len(self.unit["dialogues"]) - 1
                if not last_of_dialogue:
                    self.next()
                    continue
                made = sum(len(t) for t in wrong.values())
                check, outcome = self._check(key, self.button("Submit" if last else "Next"),
                                             last and not made)
                assert check["mistakes"] == made, check
                if made:
                    self._expect_feedback(key, check, made,
                                          explanations[position] if explanations else None)
                    self.give(key, answers, name)  # correct every turn
                    check, outcome = self._check(key, self.button("Check again"), last)
                    assert check["corrected"], check
                if not last:
                    following = self.unit["dialogues"][position + 1]
                    self.expect_step(self.steps.index(
                        (following["key"], following["annotation_tasks"][0])) + 1, False)
        return outcome

    def _check(self, key: str, button: Locator, submits: bool) -> tuple[dict, dict]:
        """Click Next / Submit / Check again on a dialogue's last step: the page checks the
        dialogue (and submits the unit when `submits`). Returns the check and submit answers."""
        with self.page.expect_response(lambda r: r.url.endswith(f"/{key}/check")) as check:
            if submits:
                with self.page.expect_response(lambda r: r.url.endswith("/submit")) as done:
                    button.click()
                assert done.value.status == 200, done.value.text()
                return check.value.json(), done.value.json()
            button.click()
        return check.value.json(), {}

    def _expect_feedback(self, key: str, check: dict, made: int,
                         explanations: dict[int, str] | None) -> None:
        """The page shows the server's feedback for each wrong turn, and announces it."""
        feedback = self.page.get_by_role(
            "region", name=f"{made} turn{'s' if made > 1 else ''} to correct")
        expect(feedback).to_be_visible()
        for item in check["wrong"]:
            card = feedback.get_by_role("listitem", name=f"Turn {item['turn'] + 1}")
            expect(card).to_contain_text("Your answer")
            expect(card).to_contain_text("Correct answer")
            if explanations is not None:
                text = self.show(explanations[item["turn"]], self.speaker(key, item["turn"]))
                expect(card).to_contain_text(" ".join(text.split()))
        expect(self.page.get_by_role("status").filter(has_text="correcting")).to_be_visible()
        if "feedback" not in self.shots:
            self.shots.add("feedback")
            self.screenshot("training-feedback")

    def continue_to_task(self) -> dict[str, Any]:
        """From "Training passed" to the real task on the same link, in the same visit."""
        heading = self.page.get_by_role("heading", name="Training passed")
        expect(heading).to_be_visible()
        expect(heading).to_be_focused()
        self.screenshot("training-passed")

        def is_unit(r: Response) -> bool:
            return "/api/units/" in r.url and r.request.method == "GET"

        with self.page.expect_response(lambda r: r.url.endswith("/api/claim")) as claim, \
                self.page.expect_response(is_unit) as unit:
            self.button("Continue to the task").click()
        assert claim.value.status == 200, claim.value.text()
        self.unit_id, self.token = claim.value.json()["unit_id"], claim.value.json()["token"]
        self.unit = unit.value.json()
        self.open_turn = None
        self.dialogues = {d["key"]: d for d in self.unit["dialogues"]}
        self.steps = [(d["key"], name) for d in self.unit["dialogues"]
                      for name in d["annotation_tasks"]]
        return self.unit


# --- the worker --------------------------------------------------------------------------------

class Worker(Training):
    """One worker's browser tab. `expected` holds every answer clicked so far, keyed like the
    submission: `{dialogue_key: {bucket: {target: value}}}`."""

    def __init__(self, page: Page, shot_prefix: str):
        self.page = page
        self.shot_prefix = shot_prefix
        self.choices = Choices()
        self.by_unit: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self.drafts: list[Response] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.keys_used = 0
        self.reopened = 0
        self.scales = 0
        self.shots: set[str] = set()
        self.open_turn: int | None = None  # the open turn of a tree step, once known
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("response", lambda r: r.url.endswith("/draft") and self.drafts.append(r))
        page.on("dialog", self._on_dialog)

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    # Opening a link -------------------------------------------------------------------------

    @property
    def expected(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The answers clicked so far in the open unit (kept across reloads)."""
        return self.by_unit.setdefault(self.unit_id, {})

    def open(self, url: str | None = None) -> dict[str, Any]:
        """Open a worker link (or reload the page); returns the unit as the page received it."""
        def is_unit(r: Response) -> bool:
            return "/api/units/" in r.url and r.request.method == "GET"

        with self.page.expect_response(lambda r: r.url.endswith("/api/claim")) as claim, \
                self.page.expect_response(is_unit) as unit:
            if url is None:
                self.page.reload()
            else:
                self.page.goto(url)
        assert claim.value.status == 200, claim.value.text()
        self.open_turn = None
        self.unit_id, self.token = claim.value.json()["unit_id"], claim.value.json()["token"]
        self.unit = unit.value.json()
        self.names = {"system": "Bot", "user": "User", **(self.unit.get("speaker_names") or {})}
        self.dialogues = {d["key"]: d for d in self.unit["dialogues"]}
        self.steps = [(d["key"], name) for d in self.unit["dialogues"]
                      for name in d["annotation_tasks"]]
        return self.unit

    def side_words(self, option: str) -> str:
        """A comparison's option as shown: stacked dialogues (760 px or narrower) are "above"
        and "below", not "left" and "right"."""
        if self.page.viewport_size["width"] > 760:
            return option
        return option.replace("(left)", "(above)").replace("(right)", "(below)")

    def show(self, text: str, speaker: str | None = None) -> str:
        """A bucket text as displayed for a turn of `speaker`: `SPEAKER_X` is that speaker's
        name, `SPEAKER_Y` the other's (texts about the whole dialogue: X is the bot)."""
        x = "user" if speaker == "user" else "system"
        names = {"SPEAKER_X": self.names[x],
                 "SPEAKER_Y": self.names["system" if x == "user" else "user"]}
        return re.sub("SPEAKER_[XY]", lambda m: names[m.group(0)], text)

    # Navigation -----------------------------------------------------------------------------

    def button(self, name: str) -> Locator:
        return self.page.get_by_role("button", name=name, exact=True)

    def next(self) -> None:
        expect(self.button("Next")).to_be_enabled()
        self.button("Next").click()
        self.open_turn = None

    def back(self) -> None:
        self.button("Back").click()
        self.open_turn = None

    def expect_step(self, number: int, focused: bool = True) -> None:
        expect(self.page.get_by_text(f"Step {number} of {len(self.steps)}", exact=True)) \
            .to_be_visible()
        if focused:  # after Next/Back, focus moves to the new step's heading
            expect(self.page.get_by_role("heading", level=2)).to_be_focused()

    def wait_saved(self) -> None:
        """Wait until a draft with every answer clicked so far is saved and the page says so."""
        def holds_all(r: Response) -> bool:
            if r.request.method != "PUT" or r.status != 200:
                return False
            answers = r.request.post_data_json["answers"]
            return {k: {b: {t: v for t, v in values.items() if v != {}}
                        for b, values in buckets.items()}
                    for k, buckets in answers.items()} == self.expected

        if not any(holds_all(r) for r in self.drafts):
            self.page.wait_for_event("response", lambda r: r.url.endswith("/draft")
                                     and holds_all(r))
        expect(self.page.get_by_text("Saved", exact=True)).to_be_visible()

    def start(self) -> None:
        """From the "Before you start" screen to step 1."""
        expect(self.page.get_by_role("heading", name="Before you start")).to_be_visible()
        self.next()
        self.expect_step(1)

    def submit(self) -> None:
        submit = self.button("Submit")
        expect(submit).to_be_enabled()
        with self.page.expect_response(lambda r: r.url.endswith("/submit")) as reply:
            submit.click()
        assert reply.value.status == 200, reply.value.text()
        expect(self.page.get_by_role("heading", name="Thank you!")).to_be_visible()

    def complete(self) -> None:
        """Answer every step of the opened unit and submit it."""
        self.start()
        for number in range(1, len(self.steps) + 1):
            self.expect_step(number)
            self.answer_step(number)
            if number < len(self.steps):
                self.next()
        self.submit()
        self.check_clean()

    def check_clean(self) -> None:
        """No script errors, no dialogs, and no request left the test server."""
        assert not self.errors, self.errors
        assert not self.dialogs, self.dialogs
        base = self.page.url.split("/?")[0]
        assert all(u.startswith(base + "/") for u in self.requests), self.requests

    def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"{self.shot_prefix}-{name}.png")

    # Steps ----------------------------------------------------------------------------------

    def bucket_of(self, number: int) -> tuple[str, str, dict[str, Any]]:
        key, name = self.steps[number - 1]
        return key, name, self.unit["buckets"][name]

    def answer_step(self, number: int, targets: list[int] | None = None) -> None:
        """Answer step `number` (1-based) of the unit: every target turn, or only `targets`."""
        key, name, bucket = self.bucket_of(number)
        config = bucket["config"]
        values = self.expected.setdefault(key, {}).setdefault(name, {})
        if bucket.get("require") and not values:
            gate = self.button("Submit" if number == len(self.steps) else "Next")
            expect(gate).to_be_disabled()
        panel = self.page.locator(f'[data-dialogue-key="{key}"]')
        if config == "comparative":
            values["dialogue"] = self._comparative(key, bucket)
        elif bucket["level"] == "dialogue":
            region = self.page.get_by_role("region", name="Questions about the dialogue")
            values["dialogue"] = self._ratings(region, bucket)
        else:
            todo = bucket["targets"][key] if targets is None else targets
            if config in TREE_CONFIGS:
                self._tree_step(panel, key, bucket, values, todo)
            else:
                if config == "multiselect":  # shown turns start as [] ("none apply")
                    for index in bucket["targets"][key]:
                        values.setdefault(str(index), [])
                for index in todo:
                    values[str(index)] = self._turn_value(self.turn(panel, index), key, index,
                                                          bucket)
        if config not in self.shots:
            self.shots.add(config)
            self.screenshot(config)

    def turn(self, panel: Locator, index: int) -> Locator:
        """The answer area of a target turn (role=group "Turn N", data-turn-index)."""
        group = panel.locator(f'[data-turn-index="{index}"]')
        expect(group).to_have_accessible_name(f"Turn {index + 1}")
        return group

    def speaker(self, key: str, index: int) -> str:
        return self.dialogues[key]["turns"][index]["speaker"]

    def _turn_value(self, group: Locator, key: str, index: int, bucket: dict[str, Any]) -> Any:
        if bucket["config"] == "multiselect":
            return self._multiselect(group, bucket, self.speaker(key, index))
        return self._ratings(group, bucket, self.speaker(key, index))

    def _multiselect(self, group: Locator, bucket: dict[str, Any], speaker: str) -> list[str]:
        legend = self.show(bucket.get("question") or "Which labels fit this turn?", speaker)
        field = group.get_by_role("group", name=legend, exact=True)
        offered = [o for o in bucket["options"] if o.get("speaker") in (None, speaker)]
        labels = [self.show(o.get("label") or o["value"], speaker) for o in offered]
        expect(field.get_by_role("checkbox")).to_have_count(len(offered))
        expect(field.locator("label")).to_have_text(labels)
        chosen = self.choices.subset(len(offered))
        for i in chosen:
            box = field.get_by_role("checkbox", name=labels[i], exact=True)
            box.click()
            expect(box).to_be_checked()
        return [offered[i]["value"] for i in sorted(chosen)]

    def _ratings(self, scope: Locator, bucket: dict[str, Any],
                 speaker: str | None = None) -> dict[str, int]:
        return {key: self.rate(scope.get_by_role("group", name=self.show(legend, speaker),
                                                 exact=True))
                for key, legend in rating_options(bucket)}

    def rate(self, scale: Locator) -> int:
        """Choose a rating on one 1-5 scale: a click, or for every third scale a number key."""
        rating = self.choices.pick(5) + 1
        point = scale.get_by_role("radio", name=str(rating), exact=True)
        self.scales += 1
        if self.scales % KEYBOARD_EVERY == 0:
            scale.get_by_role("radio", name=str(rating % 5 + 1), exact=True).focus()
            self.page.keyboard.press(str(rating))
            expect(point).to_be_focused()
            self.keys_used += 1
        else:
            point.click()
        expect(point).to_be_checked()
        return rating

    def _comparative(self, key: str, bucket: dict[str, Any]) -> str:
        expect(self.page.locator(f'[data-dialogue-key="{key}"]')).to_have_count(2)
        for side, title in ((1, "Dialogue 1"), (2, "Dialogue 2")):
            expect(self.page.get_by_role("region", name=title)).to_have_attribute(
                "data-side", str(side))
        region = self.page.get_by_role("region", name="Comparison question")
        legend = self.show(bucket.get("question") or "Which dialogue is better?")
        field = region.get_by_role("group", name=legend, exact=True)
        option = bucket["options"][self.choices.pick(len(bucket["options"]))]
        radio = field.get_by_role("radio", name=self.side_words(self.show(option)), exact=True)
        radio.click()
        expect(radio).to_be_checked()
        return option

    # Question trees (button_flow family): an accordion of target turns -----------------------

    def _tree_step(self, panel: Locator, key: str, bucket: dict[str, Any],
                   values: dict[str, Any], todo: list[int]) -> None:
        targets = bucket["targets"][key]
        is_open = self.open_turn
        if is_open is None:  # a step opens at its first unfinished target turn
            is_open = next((t for t in targets if str(t) not in values), targets[0])
        for index in todo:
            group = self.turn(panel, index)
            if index != is_open:
                self._open(panel, targets, is_open, index)
            expect(group.locator("fieldset").first).to_be_visible()
            values[str(index)], moved_to = self._tree_turn(group, key, index, bucket, values)
            is_open = index
            if moved_to is not None:  # a mouse click completed the turn: the page moved on
                opened = self.turn(panel, moved_to)
                expect(opened.locator("fieldset").first).to_be_visible()
                self.expect_in_clear_view(opened)
                expect(group.get_by_role("button", name=f"Change turn {index + 1}")) \
                    .to_be_visible()
                expect(group).to_contain_text("Answered")
                is_open = moved_to
            self.open_turn = is_open

    def expect_in_clear_view(self, group: Locator) -> None:
        """Once scrolling settles, the turn the page moved to is visible and its answers are not
        hidden under the sticky top bar or footer (when it fits between them at all)."""
        try:
            self._wait_in_clear_view(group)
        except PlaywrightTimeoutError:
            raise AssertionError(f"{group}: answers stay hidden under the sticky top bar or "
                                 "footer after the page moved to this turn") from None

    def _wait_in_clear_view(self, group: Locator) -> None:
        self.page.wait_for_function("""group => {
            const box = group.getBoundingClientRect();
            const top = document.querySelector('.topbar').getBoundingClientRect().bottom;
            const bottom = document.querySelector('.footer').getBoundingClientRect().top;
            if (box.height > bottom - top) return true;
            return [...group.querySelectorAll('input')].every(input => {
                const r = input.getBoundingClientRect();
                const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                return hit !== null && group.contains(hit);
            });
        }""", arg=group.element_handle(), timeout=3000)

    def _open(self, panel: Locator, targets: list[int], is_open: int, index: int) -> None:
        """Open target turn `index` with "Go to turn N" under the open turn when that is the
        next one, else with the collapsed turn's own "Answer/Change turn N" button."""
        position = targets.index(is_open)
        if position + 1 < len(targets) and targets[position + 1] == index:
            self.turn(panel, is_open).get_by_role(
                "button", name=f"Go to turn {index + 1}", exact=True).click()
        else:
            self.turn(panel, index).get_by_role(
                "button", name=re.compile(rf"^(Answer|Change) turn {index + 1}$")).click()

    def plan_tree(self, spec: Any, speaker: str,
                  path: tuple[tuple[str, str], ...] = ()) -> tuple[dict[str, Any], list[Click]]:
        """The answers to give at one level of a tree and the clicks, top to bottom."""
        value: dict[str, Any] = {}
        clicks: list[Click] = []
        for q, qs in questions(spec):
            if not dependency_holds(qs.get("_dep_"), value, speaker):
                continue
            options = answers_of(qs)
            if is_checkbox(qs):
                chosen = [options[i] for i in self.choices.subset(len(options))]
            else:
                chosen = [options[self.choices.pick(len(options))]]
            value[q] = {}
            if is_checkbox(qs) and not chosen:
                clicks.append(Click(path, q, "None of these", True, none=True))
            for a in chosen:
                clicks.append(Click(path, q, a, is_checkbox(qs)))
                value[q][a], below = self.plan_tree(qs[a], speaker, (*path, (q, a)))
                clicks += below
        return value, clicks

    def _tree_turn(self, group: Locator, key: str, index: int, bucket: dict[str, Any],
                   values: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
        """Answer one open tree turn; returns its value and the turn the page moved on to."""
        spec, speaker = bucket["options"], self.speaker(key, index)
        value, clicks = self.plan_tree(spec, speaker)
        targets = bucket["targets"][key]
        position = targets.index(index)
        rest = targets[position + 1:] + targets[:position]
        following = next((t for t in rest if str(t) not in values), None)
        state: dict[str, Any] = {}
        confirmed: set = set()  # checkbox questions whose "None of these" was clicked

        def done() -> bool:
            return tree_complete(spec, state, speaker) and checkboxes_seen(
                spec, state, speaker, confirmed)

        moved_to = None
        for number, click in enumerate(clicks, 1):
            before = done()
            click.apply(state)
            if click.none:
                confirmed.add((click.path, click.question))
            moves = not before and click.moves_on and done() and following is not None
            self._click_tree(group, click, speaker, moves)
            if not moves:
                continue
            if number == len(clicks):
                moved_to = following
            else:  # completed before the worker is done: the page moved on; come back
                reopen = group.get_by_role("button", name=f"Change turn {index + 1}")
                reopen.click()
                expect(group.locator("fieldset").first).to_be_visible()
                self.reopened += 1
        assert normalized(spec, state, speaker) == value
        return value, moved_to

    def tree_input(self, group: Locator, click: Click, speaker: str) -> Locator:
        """The radio or checkbox of one tree answer, found by question legends and its label
        (texts as shown for a turn of `speaker`)."""
        def show(text: str) -> str:
            return self.show(text, speaker)

        scope = group
        for q, _ in click.path:
            scope = scope.get_by_role("group", name=question_label(q, show), exact=True)
        field = scope.get_by_role("group", name=question_label(click.question, show),
                                  exact=True)
        return field.get_by_role("checkbox" if click.checkbox else "radio",
                                 name=click.answer if click.none else show(click.answer),
                                 exact=True)

    def _click_tree(self, group: Locator, click: Click, speaker: str, moves: bool) -> None:
        """Click one tree answer; it must show as chosen unless the click completes the turn
        and the page moves on (the turn folds after a short delay, which a slow machine may
        outlast: the caller then checks the turn reads "Answered", the export its value)."""
        box = self.tree_input(group, click, speaker)
        box.click()
        if not moves:
            expect(box).to_be_checked()

    # Checking what the page shows -------------------------------------------------------------

    def expect_shown(self, number: int) -> None:
        """The page shows the answers recorded for step `number` as chosen (after a reload)."""
        key, name, bucket = self.bucket_of(number)
        config = bucket["config"]
        panel = self.page.locator(f'[data-dialogue-key="{key}"]')
        for target, value in self.expected[key][name].items():
            if config == "comparative":
                region = self.page.get_by_role("region", name="Comparison question")
                expect(region.get_by_role(
                    "radio", name=self.side_words(self.show(value)), exact=True)).to_be_checked()
            elif target == "dialogue":
                self._expect_ratings(
                    self.page.get_by_role("region", name="Questions about the dialogue"),
                    bucket, value)
            elif config in TREE_CONFIGS:
                group = self.turn(panel, int(target))
                if group.get_by_role("button", name=f"Change turn {int(target) + 1}").count():
                    expect(group).to_contain_text("Answered")  # collapsed
                else:
                    speaker = self.speaker(key, int(target))
                    for click in clicks_for(bucket["options"], value):
                        expect(self.tree_input(group, click, speaker)).to_be_checked()
            elif config == "multiselect":
                boxes = self.turn(panel, int(target)).get_by_role("checkbox")
                speaker = self.speaker(key, int(target))
                labels = {o["value"]: self.show(o.get("label") or o["value"], speaker)
                          for o in bucket["options"]}
                expect(boxes.and_(self.page.locator(":checked"))).to_have_count(len(value))
                for chosen in value:
                    expect(boxes.and_(self.page.get_by_label(labels[chosen], exact=True))) \
                        .to_be_checked()
            else:
                self._expect_ratings(self.turn(panel, int(target)), bucket, value,
                                     self.speaker(key, int(target)))

    def _expect_ratings(self, scope: Locator, bucket: dict[str, Any], value: dict,
                        speaker: str | None = None) -> None:
        for key, legend in rating_options(bucket):
            scale = scope.get_by_role("group", name=self.show(legend, speaker), exact=True)
            expect(scale.get_by_role("radio", name=str(value[key]), exact=True)).to_be_checked()


def clicks_for(spec: Any, value: dict[str, Any],
               path: tuple[tuple[str, str], ...] = ()) -> list[Click]:
    """The clicks that give a tree value, top to bottom."""
    clicks = []
    for q, chosen in value.items():
        for a, sub in chosen.items():
            clicks.append(Click(path, q, a, is_checkbox(spec[q])))
            clicks += clicks_for(spec[q][a], sub, (*path, (q, a)))
    return clicks


def tree_depth(value: Any) -> int:
    """How many levels of questions a tree value answers (`{}` = 0)."""
    return max((1 + tree_depth(sub) for chosen in value.values() for sub in chosen.values()),
               default=0)


def tree_choices(values: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Every answer chosen for each question, over several tree values."""
    found: dict[str, set[str]] = {}

    def walk(value: dict[str, Any]) -> None:
        for q, chosen in value.items():
            found.setdefault(q, set()).update(chosen)
            for sub in chosen.values():
                walk(sub)

    for value in values:
        walk(value)
    return found

