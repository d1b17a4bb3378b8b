"""A task kind: yes-or-no questions from the conf, each answered by `annotators` workers."""

from dataclasses import dataclass, field

from collection_and_annotations.blueprints.base import AssignmentPlan, TaskBlueprint
from collection_and_annotations.config.schema import BlueprintConf


@dataclass
class QuestionsConf(BlueprintConf):
    questions: list[str] = field(default_factory=list)
    annotators: int = 1


class Questions(TaskBlueprint):
    conf = QuestionsConf

    def __init__(self, blueprint_cfg, task_name):
        self.questions, self.annotators = list(blueprint_cfg.questions), blueprint_cfg.annotators

    def plan(self):
        return [AssignmentPlan(key=f"q{i}", annotators=self.annotators, groups=[],
                               excluded_workers=[], data={"question": question})
                for i, question in enumerate(self.questions)]

    def unit_content(self, data, layout):
        return {"question": data["question"]}

    def check_submission(self, data, layout, answers):
        answer = answers.get("answer") if isinstance(answers, dict) else None
        return [] if answer in ("yes", "no") else [{"message": "say yes or no"}]
