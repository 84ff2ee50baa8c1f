"""The ACP door runs as a relay (`SCHED_BATCH`: a wake-up never preempts the client or the agent)
and starts its agent under the policy it was itself started with (bridge.scheduling).

The proxy is the real `symposium-tui acp` subprocess driven by the SDK's client, the agent behind
it the suite's surface agent; the kernel's own answer (`sched_getscheduler` of each process) is
the oracle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import acp
import pytest

from bridge.scheduling import ENV
from tests.bridge.test_acp_proxy import SURFACE_PROXY, RecordingClient, initialized
from tests.support.processes import child_pids

pytestmark = pytest.mark.skipif(
    not hasattr(os, "SCHED_BATCH"), reason="scheduling policies are Linux's"
)

REPO = Path(__file__).resolve().parents[2]


async def policies(argv: list[str], setting: str | None) -> tuple[int, list[int]]:
    """The proxy's scheduling policy and its children's, once the client initialized (the agent
    is running then)."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if setting is not None:
        env[ENV] = setting
    async with acp.spawn_agent_process(RecordingClient(), argv[0], *argv[1:], env=env) as (
        conn,
        proc,
    ):
        await initialized(conn)
        agents = child_pids(proc.pid)
        return os.sched_getscheduler(proc.pid), [os.sched_getscheduler(p) for p in agents]


async def test_the_acp_door_never_preempts_on_wakeup_and_its_agent_is_scheduled_as_usual():
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # what the proxy inherits from this test
    proxy, agents = await policies(SURFACE_PROXY, None)
    assert proxy == os.SCHED_BATCH
    assert agents == [os.SCHED_OTHER]


async def test_symposium_relay_scheduling_normal_leaves_the_default_policy():
    proxy, agents = await policies(SURFACE_PROXY, "normal")
    assert proxy == os.SCHED_OTHER
    assert agents == [os.SCHED_OTHER]


async def test_a_door_started_under_another_policy_keeps_it_and_so_does_its_agent():
    """Someone who ran it under `chrt --idle` meant the whole tree."""
    idle = [
        sys.executable,
        "-c",
        "import os, sys; os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)); "
        "os.execv(sys.argv[1], sys.argv[1:])",
        *SURFACE_PROXY,
    ]
    proxy, agents = await policies(idle, None)
    assert proxy == os.SCHED_IDLE
    assert agents == [os.SCHED_IDLE]


OVERLAP = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from bridge import scheduling

    async def spawn():
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import os; print(os.sched_getscheduler(0))",
            stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        return int(out)

    async def main():
        seen = {"relay": scheduling.schedule_as_relay()}
        a, b = scheduling.spawning(), scheduling.spawning()
        a.__enter__()
        b.__enter__()
        a.__exit__(None, None, None)  # the first spawn ends while the second still runs
        seen["during"] = os.sched_getscheduler(0)
        seen["child"] = await spawn()
        b.__exit__(None, None, None)
        seen["after"] = os.sched_getscheduler(0)
        print(json.dumps(seen))

    asyncio.run(main())
    """
)


def test_overlapping_spawns_all_start_their_children_under_the_usual_policy():
    env = {k: v for k, v in os.environ.items() if k != ENV}
    out = subprocess.run(
        [sys.executable, "-c", OVERLAP],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    seen = json.loads(out)
    assert seen == {
        "relay": True,
        "during": os.SCHED_OTHER,
        "child": os.SCHED_OTHER,
        "after": os.SCHED_BATCH,
    }


NOTIFY = textwrap.dedent(
    """
    import asyncio, os, sys
    from bridge import scheduling
    from bridge.settings import NotifyConfig
    from symposium_tui.hosting.notify import Notifier

    out = sys.argv[1]
    record = (  # written whole, then named: seen at `out` only once complete
        f"import os; open({out!r} + '.new', 'w').write(str(os.sched_getscheduler(0))); "
        f"os.rename({out!r} + '.new', {out!r})"
    )

    async def main():
        assert scheduling.schedule_as_relay()
        notifier = Notifier(NotifyConfig(command=(sys.executable, "-c", record)), "host")
        notifier.card("approval-1", "agent", "a tool call")
        while notifier.runs == 0 or not os.path.exists(out):
            await asyncio.sleep(0.01)
        await notifier.close()

    asyncio.run(main())
    """
)


def test_the_notify_command_of_a_relay_runs_under_the_usual_policy(tmp_path):
    """`[notify]` runs a person's command for each card; in the ACP door it is not a relay's."""
    out = tmp_path / "policy"
    env = {k: v for k, v in os.environ.items() if k != ENV}
    subprocess.run(
        [sys.executable, "-c", NOTIFY, str(out)], cwd=REPO, env=env, timeout=120, check=True
    )
    assert int(out.read_text()) == os.SCHED_OTHER
