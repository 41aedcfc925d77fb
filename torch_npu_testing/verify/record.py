# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""The record ``verify`` writes: ``OUT/verify-BRANCH[--KEY].json``, format :data:`FORMAT`, written atomically.

Keyed by branch and task (:mod:`..common.recordnames`): ``verify-v2.12.0--torch.nn.functional.pad.json``.

``torch_npu_testing.verify/1`` wraps one results-model document (``torch_npu_testing.results/2``, the
shape ``report`` renders and checks for staleness) per interpreter:

- ``branch``, ``api_names`` (the task; null: every API), ``task_from`` (--api or the last export),
  ``command``, ``cwd``, ``generated_at``, ``duration_s``;
- ``dest``: ``dir`` and ``head`` (DEST's HEAD commit);
- ``stand_in``: null, or ``mode`` (none / available), ``label`` ("stand-in torch_npu, not an NPU run"),
  ``files`` (what the stand-in was made of);
- ``files``: per exported test file ``path`` (relative to DEST), ``sha256`` (of the bytes run, as
  ``sha256sum`` prints it), ``at_head`` (committed at HEAD / modified in the work tree / not in HEAD),
  ``runner``, ``kit_tests``, ``their_tests`` (ids from the AST);
- ``patches_skipped``: ``[{"path", "why"}]``;
- ``envs``: ``[{"name", "python", "runner": {"starts", "why"}, "results"}]``; ``results`` is a results/2
  document with ``cwd`` DEST, ``probe`` (the env's probe), ``runs`` (per file: the whole-file run, and for
  a grad-mode file its two grad-mode runs) and ``grad_mode_isolation``. Each run carries ``verify``: the
  command as run, cwd, variables, how and why, exit status, JUnit files, output, ``needs`` (their test id ->
  device), ``not_run`` and ``problems``. Counts are of tests: JUnit XML has no passing subtests;
- ``problems`` (why verify exits 1) and ``verdict`` (pass / fail).

``torch_npu_testing.verify/2`` adds the device gaps the runs met (:mod:`..common.gaps`): per whole-file run
``verify.device_gaps`` (the simulated NPU's own rows, from ``$TORCH_NPU_TESTING_GAPS``, which verify points
at a file of its own per run), and ``gaps`` (:func:`gaps_summary`): ``on_device`` (an env's probe measured
``npu``, no stand-in but the simulated NPU), ``limits`` (the ``TORCH_NPU_TESTING_LIMITS`` tables the runs
saw), ``rows`` (each gap once, from the cases' skip reasons and failures and the device's rows) and
``files`` (per env, file and ``run``: ``ran``, ``device_limit``, ``other_skips``). :func:`load` reads both versions;
a ``/1`` record's gaps are derived from its cases by the same function.
"""
import datetime
import json
import os

from ..common import gaps, recordnames, results
from ..common.atomic import write_text_atomic
from ..common.documents import WrongFormat, read_document

FORMAT = "torch_npu_testing.verify/2"
READABLE_FORMATS = (FORMAT, "torch_npu_testing.verify/1")
DEFAULT_OUT = "reports"


def record_name(branch, api_names=None):
    """``verify-v2.12.0.json`` for every API of ``v2.12.0``, ``verify-v2.12.0--NAME.json`` for the task ``NAME``
    (:mod:`..common.recordnames`)."""
    return recordnames.name("verify", branch, api_names)


def default_path(branch, out=DEFAULT_OUT, api_names=None):
    return os.path.join(out, record_name(branch, api_names))


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def env_results(name, dest, command, probe, runs, isolation, started_at, seconds):
    """The results/2 document of one interpreter's runs."""
    return {"format": results.FORMAT, "env": name, "started_at": started_at, "duration_s": seconds,
            "command": command, "cwd": dest, "probe": probe, "runs": runs, "grad_mode_isolation": isolation,
            "totals": results.add_counts(run["counts"] for run in runs)}


def file_entry(target):
    return {"path": target.rel_path, "sha256": target.sha256, "at_head": target.at_head, "runner": target.runner,
            "kit_tests": list(target.kit_ids), "their_tests": list(target.their_ids)}


def problems_of(envs):
    """Every run's problems, prefixed with its env, once."""
    found = [f"{env['name']}: {run['path']}: {problem}" for env in envs for run in env["results"]["runs"]
             for problem in run["verify"]["problems"]]
    found += [f"{env['name']}: {problem}" for env in envs for problem in env.get("problems", [])]
    return list(dict.fromkeys(found))


WHOLE_FILE = "the whole file (its JUnit XML: a test with a skipped subtest shows only its failing and skipped ones)"
PROBE_RUN = "the grad-mode probe, grad enabled at start (the kit's recorder: every subtest)"


def gaps_summary(envs, stand_in=None):
    """The device gaps of ``envs`` (a record's, or pr's part of it): see the module docstring. Whole-file runs
    only for the rows (a grad-mode probe runs the file again: its counts, of every subtest, are a ``files``
entry of their own, ``run`` says which); a file not run is not counted. On a device: an env's probe
    measured ``npu`` and no stand-in but the simulated NPU was in place (one reporting an NPU has no device)."""
    runs = [(env, run) for env in envs for run in env["results"]["runs"] if run["verify"]["kind"] == "file"]
    rows = gaps.merged(*[gaps.from_cases(run["cases"]) for _, run in runs],
                       *[run["verify"].get("device_gaps") or [] for _, run in runs])
    files = [dict(env=env["name"], path=run["path"], run=WHOLE_FILE, **gaps.counts(run["cases"])) for env, run in runs
             if not run["verify"].get("not_run")]
    files += [dict(env=env["name"], path=run["path"], run=PROBE_RUN, **gaps.counts(run["cases"])) for env in envs
              for run in env["results"]["runs"] if run["verify"]["kind"] != "file" and run["initial_grad_mode"]]
    devices = {((env["results"].get("probe") or {}).get("device") or {}).get("type") for env in envs}
    limits = sorted({run["verify"].get("environment", {}).get("TORCH_NPU_TESTING_LIMITS") for _, run in runs}
                    - {None, ""})
    on_device = "npu" in devices and (stand_in or {}).get("mode") in (None, "simulated")
    return {"on_device": on_device, "limits": limits, "rows": rows, "files": files}


def document(plan, envs, stand_in, command, started_at, seconds):
    problems = problems_of(envs)
    return {"format": FORMAT, "results_format": results.FORMAT, "branch": plan.branch,
            "api_names": plan.api_names, "task_from": plan.chosen_by, "command": command,
            "cwd": os.getcwd(), "generated_at": started_at, "duration_s": seconds,
            "dest": {"dir": plan.dest, "head": plan.head}, "stand_in": stand_in,
            "files": [file_entry(target) for target in plan.files],
            "patches_skipped": [{"path": path, "why": "an upstream patch: its evidence is `upstream run`'s"}
                                for path in plan.patches],
            "envs": envs, "gaps": gaps_summary(envs, stand_in), "problems": problems,
            "verdict": "fail" if problems else "pass"}


def write(doc, out_dir):
    path = os.path.join(out_dir, record_name(doc["branch"], doc.get("api_names")))
    write_text_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def load(path):
    """``(document, None)`` or ``(None, why it cannot be used)``: what pr reads."""
    try:
        return read_document(path, READABLE_FORMATS), None
    except FileNotFoundError:
        return None, f"no verify results at {path}"
    except WrongFormat as exc:
        return None, f"{path} is not a {FORMAT} record (format {exc.found!r})"
    except (OSError, ValueError) as exc:
        return None, f"{path} cannot be read: {exc}"
