"""The task registry: make("CartPole", num_envs=...) and register() for a user's own tasks."""

_TASKS = {}


def register(name, entry_point, **defaults):
    """Registers a task under `name`: entry_point(num_envs=..., **kwargs) returns a VectorEnv (a
    VectorEnv subclass or a factory); defaults are keyword arguments make() passes unless
    overridden. Raises ValueError when the name is taken."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"register: the name must be a non-empty string, got {name!r}")
    if name in _TASKS:
        raise ValueError(f"register: a task named {name!r} is registered already")
    if not callable(entry_point):
        raise ValueError(f"register: the entry point of {name!r} is not callable")
    _TASKS[name] = (entry_point, dict(defaults))


def make(name, num_envs=None, **kwargs):
    """A new vector environment of the registered task `name` (case-insensitive): num_envs
    environments (the task's default when None), kwargs for its constructor (threads, dtype,
    autoreset_mode, copy, and the task's own)."""
    entry_point, defaults = _TASKS[lookup(name)]
    arguments = {**defaults, **kwargs}
    if num_envs is not None:
        arguments["num_envs"] = num_envs
    return entry_point(**arguments)


def lookup(name):
    """The registered name that matches `name` case-insensitively. Raises KeyError listing the
    registered tasks when none does."""
    for registered_name in _TASKS:
        if registered_name.lower() == str(name).lower():
            return registered_name
    raise KeyError(f"no task named {name!r}; registered: {', '.join(registered())}")


def registered():
    """The registered task names, sorted."""
    return sorted(_TASKS)


def entry_point(name):
    """The callable and default arguments registered under `name`: (entry_point, defaults)."""
    return _TASKS[lookup(name)]
