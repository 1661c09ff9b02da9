"""Task files: what to solve (scene + method + settings + keyframes + seeds + output fps).

A task names its scene either by built-in parts (`environment` with parameters, `character` with a
body-shape variant) or inline as a full SceneDesc (`desc`, what the Blender add-on sends). Method
settings and keyframes are checked by the method itself (see `methods`); its name is checked here
against the registry.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, fields
from typing import Any, Optional

from ..core import schema
from ..core.errors import InvalidInput
from ..core.limits import MAX_SEEDS
from ..core.registry import METHODS, check_name
from .perturbations import Perturbations
from .scene import SCHEMA_VERSION, Pose, SceneDesc, check_references, check_timestep, depth_first

TASK_SCHEMA_VERSION = 1


@dataclass
class SceneRef:
    """Built-in scene parts, or a full inline SceneDesc in `desc` alone (a field beside it is refused)."""
    environment: str = "floor"
    params: dict[str, float] = field(default_factory=dict)
    character: str = "humanoid"
    variant: str = "default"
    initial_pose: Optional[Pose] = None
    timestep: float = field(default=0.005, metadata={"positive": True})
    desc: Optional[SceneDesc] = None

    def check(self, path):
        check_timestep(self.timestep, f"{path}.timestep")


@dataclass
class Task:
    schema_version: int
    name: str
    method: str
    scene: SceneRef = field(default_factory=SceneRef)
    settings: dict[str, Any] = field(default_factory=dict)
    keyframes: list[Any] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [0], metadata={"min_length": 1, "nonneg": True})
    output_fps: float = field(default=30.0, metadata={"positive": True})
    # A note for people reading the file.
    about: str = field(default="", metadata={"nonempty": False, "multiline": True})
    # The motion a `track` task follows: {"times": [...], "qpos": [[...]]}, {"result": "…/result.npz"} or
    # {"sketch": "linear"} (its keyframes, linearly interpolated).
    reference: Optional[dict[str, Any]] = None
    # Pushes and thrown balls that strike while solving (`perturbations`), for methods that react.
    perturbations: Optional[Perturbations] = None

    def check(self, path):
        if self.schema_version != TASK_SCHEMA_VERSION:
            raise InvalidInput("schema_version", f"unknown schema_version {self.schema_version} "
                               f"(this PhysKey reads {TASK_SCHEMA_VERSION})")
        if self.output_fps > 1000:
            raise InvalidInput("output_fps", f"must be at most 1000, got {self.output_fps}")
        if len(self.seeds) > MAX_SEEDS:
            raise InvalidInput("seeds", f"at most {MAX_SEEDS} seeds, got {len(self.seeds)}")
        if len(set(self.seeds)) != len(self.seeds):
            raise InvalidInput("seeds", "seeds must be distinct")


def build_scene(ref: SceneRef) -> SceneDesc:
    """The SceneDesc a task's scene reference stands for."""
    from ..builders import characters, environments
    from ..builders.rest import rest_pose
    if ref.desc is not None:
        return depth_first(copy.deepcopy(ref.desc))
    env, pose = environments.build(ref.environment, ref.params)
    if ref.character != "humanoid":
        raise InvalidInput("scene.character", f"no built-in character '{ref.character}' (have: humanoid)")
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name=ref.environment, character=characters.humanoid(ref.variant),
                      environment=env, initial_pose=copy.deepcopy(ref.initial_pose or pose), timestep=ref.timestep)
    check_references(scene, "scene")
    if ref.initial_pose is None:
        # The furniture's pose was authored for its default size and the default body: rest it on
        # this variant instead of starting inside the seat or the floor. The task's own pose is its author's.
        scene.initial_pose = rest_pose(scene)
    return scene


_DESC_FIELDS = {f.name for f in fields(SceneDesc)}
_REF_DEFAULTS = schema.to_dict(SceneRef())


def task_from_dict(data) -> Task:
    if not isinstance(data, dict):
        raise InvalidInput("task", f"must be a JSON object {{...}}, got {schema.describe(data)}")
    scene = data.get("scene")
    if isinstance(scene, dict) and scene.get("desc") is not None:
        if isinstance(scene["desc"], dict) and "character" not in scene["desc"]:
            raise InvalidInput("scene.desc.character", "the scene has no character")
        # A full scene says everything itself: a field beside it set to other than its default would be
        # ignored without a word (tasks written whole carry the defaults, which mean nothing).
        beside = sorted(k for k, v in scene.items() if k != "desc" and k in _REF_DEFAULTS and v != _REF_DEFAULTS[k])
        if beside:
            where = " and ".join(f"scene.desc.{k}" for k in beside if k in _DESC_FIELDS)
            raise InvalidInput(f"scene.{beside[0]}", "not read with a full scene in scene.desc"
                               + (f"; set {where} instead" if where else ""))
    task = schema.from_dict(Task, data)
    check_name("method", METHODS, task.method, "method")
    return task


def load_task(path) -> Task:
    try:
        with open(path, encoding="utf-8-sig") as f:  # a byte order mark (Windows editors) is skipped
            text = f.read()
    except FileNotFoundError:
        raise InvalidInput(str(path), "task file not found") from None
    except IsADirectoryError:
        raise InvalidInput(str(path), "is a folder, not a task file") from None
    except UnicodeDecodeError:
        raise InvalidInput(str(path), "is not UTF-8 text") from None
    except OSError as e:  # permission denied, a device, …
        raise InvalidInput(str(path), f"cannot be read: {e.strerror or e}") from None
    task = task_from_dict(schema.load_json_text(text, str(path)))
    result = (task.reference or {}).get("result")
    if isinstance(result, str) and result and not os.path.isabs(result):  # relative to the task file
        task.reference = dict(task.reference, result=os.path.join(os.path.dirname(os.path.abspath(path)), result))
    return task


def with_seeds(task: Task, num_seeds: int | None) -> Task:
    """The task with `num_seeds` seeds (its own first seed counting up), or unchanged if None."""
    if num_seeds is None:
        return task
    if num_seeds < 1:
        raise InvalidInput("--num-seeds", f"must be at least 1, got {num_seeds}")
    if num_seeds > MAX_SEEDS:
        raise InvalidInput("--num-seeds", f"must be at most {MAX_SEEDS}, got {num_seeds}")
    if task.seeds[0] + num_seeds - 1 > schema.INT_LIMIT:
        raise InvalidInput("--num-seeds", f"seeds from {task.seeds[0]} on would pass {schema.INT_LIMIT}")
    task = copy.copy(task)
    task.seeds = [task.seeds[0] + i for i in range(num_seeds)]
    return task
