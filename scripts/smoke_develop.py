"""Check a fresh `scripts/develop` instance the way a newcomer would use it.

Onboards Home Assistant (a user "dev" / "devdevdev"), adds "OpenNVR Workflows" with the demo
NVR's URL and token through the same config flow the UI drives (events websocket, AI skipped),
then lists the entities it created and fetches one camera picture through Home Assistant.
Exits non-zero when any of that fails. Only for a Home Assistant that was never onboarded.

    scripts/develop &            # wait until it prints that Home Assistant started
    .venv/bin/python scripts/smoke_develop.py
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import aiohttp

USER = {"name": "Dev", "username": "dev", "password": "devdevdev", "language": "en"}


async def _json(response: aiohttp.ClientResponse, what: str) -> Any:
    if response.status != 200:
        raise SystemExit(f"{what}: HTTP {response.status}: {await response.text()}")
    return await response.json()


async def smoke(ha: str, nvr: str, token: str) -> None:
    client_id = f"{ha}/"
    async with aiohttp.ClientSession() as session:
        body = await _json(
            await session.post(f"{ha}/api/onboarding/users", json={"client_id": client_id, **USER}),
            "onboarding (was this Home Assistant onboarded already?)",
        )
        tokens = await _json(
            await session.post(
                f"{ha}/auth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": body["auth_code"],
                    "client_id": client_id,
                },
            ),
            "token",
        )
        auth = {"Authorization": f"Bearer {tokens['access_token']}"}
        for step in ("core_config", "analytics"):
            await _json(await session.post(f"{ha}/api/onboarding/{step}", headers=auth), step)

        flow = await _json(
            await session.post(
                f"{ha}/api/config/config_entries/flow",
                headers=auth,
                json={"handler": "opennvr_workflows"},
            ),
            "start the config flow",
        )
        answers: list[dict[str, Any]] = [
            {"url": nvr, "token": token, "verify_ssl": True},
            {"transport": "websocket"},
            {"ollama_url": "http://127.0.0.1:11434", "skip_ai": True},
        ]
        for answer in answers:
            flow = await _json(
                await session.post(
                    f"{ha}/api/config/config_entries/flow/{flow['flow_id']}",
                    headers=auth,
                    json=answer,
                ),
                f"config flow step {flow.get('step_id')}",
            )
            if flow.get("errors"):
                raise SystemExit(f"config flow step {flow['step_id']}: {flow['errors']}")
        if flow["type"] != "create_entry":
            raise SystemExit(f"config flow ended with {flow['type']}")
        print(f"added: {flow['title']}")

        await asyncio.sleep(3)
        listing = await session.post(
            f"{ha}/api/template",
            headers=auth,
            json={"template": "{{ integration_entities('opennvr_workflows') | join(',') }}"},
        )
        ours = sorted(filter(None, (await listing.text()).split(",")))
        for entity_id in ours:
            state = await _json(
                await session.get(f"{ha}/api/states/{entity_id}", headers=auth), entity_id
            )
            print(f"  {entity_id:55} {state['state']}")
        cameras = [e for e in ours if e.startswith("camera.")]
        if not cameras:
            raise SystemExit("no camera entities were created")
        picture = await session.get(f"{ha}/api/camera_proxy/{cameras[0]}", headers=auth)
        data = await picture.read()
        if picture.status != 200 or picture.content_type != "image/jpeg" or not data:
            raise SystemExit(f"no picture from {cameras[0]}: HTTP {picture.status}")
        print(f"picture from {cameras[0]}: {len(data)} bytes of JPEG")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ha", default="http://127.0.0.1:8123")
    parser.add_argument("--nvr", default="http://127.0.0.1:8765")
    parser.add_argument("--token", default="onvr_demo0001_simulatorsecret")
    args = parser.parse_args()
    try:
        asyncio.run(smoke(args.ha, args.nvr, args.token))
    except aiohttp.ClientError as err:
        sys.exit(f"cannot reach Home Assistant at {args.ha}: {err}")


if __name__ == "__main__":
    main()
