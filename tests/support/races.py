"""Racing a maintenance call: another writer commits while the call's files are being written."""

from __future__ import annotations


def commit_meanwhile(monkeypatch, module, function: str, other_commit):
    """After `module.function` (a step that writes files) returns, run `other_commit()` before the caller goes on
    to commit, as a concurrent writer would. Returns the original function (to put back)."""
    original = getattr(module, function)

    def racing(*args, **kwargs):
        out = original(*args, **kwargs)
        other_commit()
        return out

    monkeypatch.setattr(module, function, racing)
    return original
