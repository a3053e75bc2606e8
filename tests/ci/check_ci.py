"""Checks of the CI files that need a YAML parser, run by tests/ci_workflow.rs
with the Python of a virtual environment that has PyYAML.

    check_ci.py composite-workflow ACTION OUT   the composite action's steps as a
                                                workflow, for actionlint to check
    check_ci.py action ACTION DOC               what actionlint does not check of
                                                action.yml, and its documentation
    check_ci.py gitlab GITLAB_CI                the GitLab job keeps its report

Each check prints one line per problem and exits with 1 if there was any.
"""

import re
import sys

import yaml

# `inputs.NAME` inside a `${{ }}` expression.
INPUT_REFERENCE = re.compile(r"\binputs\.([A-Za-z0-9_-]+)")


def composite_workflow(action_path, out_path):
    """Writes a reusable workflow whose inputs are the action's and whose one
    job runs the action's steps: actionlint does not check the steps of a
    composite action (only its metadata, through `uses: ./`), but checks a
    workflow's steps, their expressions, the `inputs` they read and, with
    shellcheck, their scripts."""
    with open(action_path) as f:
        action = yaml.safe_load(f)
    inputs = {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in (action.get("inputs") or {}).items()
    }
    workflow = {
        "name": "steps of " + action["name"],
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"composite": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }
    with open(out_path, "w") as f:
        yaml.safe_dump(workflow, f, sort_keys=False, width=1000)
    return []


def action_problems(action_path, doc_path):
    """What GitHub needs of a composite action beyond actionlint's checks,
    and that every input is used and documented in the page at doc_path."""
    with open(action_path) as f:
        action = yaml.safe_load(f)
    with open(doc_path) as f:
        doc = f.read()
    problems = []
    for key in ("name", "description", "runs"):
        if not action.get(key):
            problems.append(f"no {key}")
    runs = action.get("runs") or {}
    if runs.get("using") != "composite":
        problems.append(f"runs.using is {runs.get('using')!r}, not 'composite'")
    steps = runs.get("steps") or []
    declared = action.get("inputs") or {}
    used = set(INPUT_REFERENCE.findall(yaml.safe_dump(steps)))
    for name in sorted(used - set(declared)):
        problems.append(f"the steps read inputs.{name}, which is not declared")
    for name, spec in declared.items():
        if name not in used:
            problems.append(f"input {name} is declared but no step reads it")
        if not (spec or {}).get("description"):
            problems.append(f"input {name} has no description")
        if f"`{name}`" not in doc:
            problems.append(f"input {name} is not in {doc_path}")
    ids = {step.get("id") for step in steps}
    for i, step in enumerate(steps):
        if "run" in step and "shell" not in step:
            problems.append(f"step {i + 1} ({step.get('name')}) runs a script without `shell`")
    for name, spec in (action.get("outputs") or {}).items():
        for step_id in re.findall(r"\bsteps\.([A-Za-z0-9_-]+)\.outputs", str((spec or {}).get("value"))):
            if step_id not in ids:
                problems.append(f"output {name} reads step {step_id}, which does not exist")
        if f"`{name}`" not in doc:
            problems.append(f"output {name} is not in {doc_path}")
    return problems


def gitlab_problems(path):
    """Every job that writes a Code Quality report declares it as its
    `codequality` artifact, kept when findings fail the job; a job that uses
    --diff-base clones the whole history."""
    with open(path) as f:
        config = yaml.safe_load(f)
    problems = []
    jobs = {name: job for name, job in config.items() if isinstance(job, dict) and "script" in job}
    if not jobs:
        problems.append("no job")
    for name, job in jobs.items():
        script = "\n".join(job["script"])
        reports = re.findall(r"--output-gitlab\s+(\S+)", script)
        artifacts = job.get("artifacts") or {}
        codequality = (artifacts.get("reports") or {}).get("codequality")
        if not reports:
            problems.append(f"{name}: writes no --output-gitlab report")
        for report in reports:
            if report != codequality:
                problems.append(f"{name}: writes {report} but declares {codequality!r} as codequality")
        if artifacts.get("when") != "always":
            problems.append(f"{name}: the report is not kept when findings fail the job (artifacts: when: always)")
        if "--diff-base" in script and str((job.get("variables") or {}).get("GIT_DEPTH")) != "0":
            problems.append(f"{name}: --diff-base needs the history (variables: GIT_DEPTH: 0)")
    return problems


def main():
    command, *args = sys.argv[1:]
    checks = {"composite-workflow": composite_workflow, "action": action_problems, "gitlab": gitlab_problems}
    problems = checks[command](*args)
    for problem in problems:
        print(problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
