# Copyright (c) 2026, torch_npu API-consistency kit contributors.
# SPDX-License-Identifier: BSD-3-Clause
"""``torch.npu`` of the simulated NPU: what tests, torch itself and torch_npu's TestCase ask of it.

Devices ``npu:0`` and ``npu:1`` (host memory, CPU kernels; the C++ is in ``_device/``). Each device has its
own generator: ``torch.manual_seed`` reaches it (through ``manual_seed_all``), and so do
``get_rng_state``/``set_rng_state`` and ``torch.random.fork_rng(device_type="npu")``. The device is
synchronous: streams and events are complete as soon as they are used.
"""
import atexit
import contextlib
import time
import types

DEVICES = 2
NAME = "simulated NPU (host memory, CPU kernels)"

module = types.ModuleType("torch_npu.npu")
module.__doc__ = __doc__
module._SIMULATED = True
_loaded = []


def _ops():
    import torch
    return torch.ops.simnpu


def _index(device=None):
    """The device index of ``device`` (int, "npu", "npu:1", torch.device, None: the current one)."""
    import torch
    if device is None:
        return _ops().current_device()
    if isinstance(device, int):
        index = device
    else:
        device = torch.device(device)
        if device.type != "npu":
            raise ValueError(f"simulated NPU: expected an npu device, got {device}")
        index = _ops().current_device() if device.index is None else device.index
    if not 0 <= index < DEVICES:
        raise RuntimeError(f"simulated NPU: invalid device index {index} (devices: npu:0, npu:1)")
    return index


def set_device(device):
    _ops().set_device(_index(device))


def manual_seed(seed):
    _ops().manual_seed(_index(), int(seed))


def manual_seed_all(seed):
    for index in range(DEVICES):
        _ops().manual_seed(index, int(seed))


def seed():
    return _ops().seed(_index())


def seed_all():
    value = _ops().seed(0)
    for index in range(1, DEVICES):
        _ops().manual_seed(index, value)
    return value


def get_rng_state(device="npu"):
    return _ops().get_rng_state(_index(device))


def set_rng_state(new_state, device="npu"):
    _ops().set_rng_state(_index(device), new_state)


class Stream:
    """The device's one stream: work is done when it is queued."""

    def __init__(self, device=None, priority=0, **kwargs):
        import torch
        self.device = torch.device("npu", _index(device))
        self.priority = priority

    def synchronize(self):
        pass

    def query(self):
        return True

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash(self.device)


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing, self._at = enable_timing, None

    def record(self, stream=None):
        self._at = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        return 1000.0 * ((end_event._at or 0.0) - (self._at or 0.0))


@contextlib.contextmanager
def stream(value=None):
    yield value


class device:
    """``with torch.npu.device(1):`` makes npu:1 current inside the block."""

    def __init__(self, device):
        self.index, self.previous = _index(device), None

    def __enter__(self):
        self.previous = _ops().current_device()
        _ops().set_device(self.index)

    def __exit__(self, *exc):
        _ops().set_device(self.previous)
        return False


def get_amp_supported_dtype():
    import torch
    return [torch.float16, torch.bfloat16, torch.float32]


_FUNCTIONS = {
    "is_available": lambda: True, "device_count": lambda: DEVICES, "is_initialized": lambda: True,
    "current_device": lambda: _ops().current_device(), "set_device": set_device,
    "synchronize": lambda device=None: None, "_lazy_init": lambda: None, "init": lambda: None,
    "_is_in_bad_fork": lambda: False, "is_bf16_supported": lambda *args: True,
    "get_device_name": lambda device=None: NAME, "get_device_capability": lambda device=None: (0, 0),
    "manual_seed": manual_seed, "manual_seed_all": manual_seed_all, "seed": seed, "seed_all": seed_all,
    "initial_seed": lambda: _ops().initial_seed(_index()),
    "get_rng_state": get_rng_state, "set_rng_state": set_rng_state,
    "get_rng_state_all": lambda: [get_rng_state(i) for i in range(DEVICES)],
    "set_rng_state_all": lambda states: [set_rng_state(s, i) for i, s in enumerate(states)] and None,
    "Stream": Stream, "Event": Event, "stream": stream, "device": device,
    "current_stream": lambda device=None: Stream(device), "default_stream": lambda device=None: Stream(device),
    "set_stream": lambda stream: None, "get_amp_supported_dtype": get_amp_supported_dtype,
    "empty_cache": lambda: None, "memory_allocated": lambda device=None: 0,
    "max_memory_allocated": lambda device=None: 0, "reset_peak_memory_stats": lambda device=None: None,
}
for _name, _value in _FUNCTIONS.items():
    setattr(module, _name, _value)
module._sleep = lambda cycles: None
# torch_npu.npu.utils: no CANN behind the simulated NPU, so no CANN version is at least any version
module.utils = types.SimpleNamespace(_is_gte_cann_version=lambda version, module="CANN": False)


def _let_autograd_threads_finish():
    """torch's autograd worker of a device can still be dropping its last graph task (a Python decref)
    when the interpreter finalizes; a worker that wants the GIL then is killed and aborts the process.
    Giving up the GIL briefly at exit lets it finish first."""
    time.sleep(0.05)


def install(torch):
    """Load the device into this torch once (build it first when the cache has none)."""
    if _loaded:
        return
    from . import _device
    torch.utils.rename_privateuse1_backend("npu")
    _device.load()
    torch._register_device_module("npu", module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    atexit.register(_let_autograd_threads_finish)
    _loaded.append(True)
