"""The official MCP Python SDK (`mcp`) as an agent's client would use it, against the service.

Usage: python mcp_python_client.py <base URL> <API key> <sessions>

Over streamable HTTP with the x-api-key header: initializes, lists the tools, calls three
(the session validates each structured result against the tool's outputSchema; checked
again explicitly here), closes the session (DELETE /mcp), then opens and closes
`sessions` - 1 more sessions, which only works if every close ended its session on the
server (the per-key session cap is below `sessions`). Prints one JSON line of findings.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

CALLS = [
    ("listFinancialDocs", {"limit": 2, "paymentStatus": "unpaid"}),
    ("getTaxSummary", {"targetMonth": "2026-03"}),
    ("listShipments", {"limit": 2}),
]


async def one_session(url: str, key: str, calls: bool) -> dict:
    out: dict = {}
    async with create_mcp_http_client(headers={"x-api-key": key}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.server_info.name
                if not calls:
                    return out
                tools = (await session.list_tools()).tools
                out["tools"] = len(tools)
                out["withOutputSchema"] = sum(1 for t in tools if t.output_schema)
                out["calls"] = {}
                for name, args in CALLS:
                    result = await session.call_tool(name, args)  # validates against outputSchema
                    await session.validate_tool_result(name, result)  # and once more, explicitly
                    content = result.structured_content or {}
                    out["calls"][name] = {"isError": bool(result.is_error), "keys": sorted(content.keys())}
                prompts = (await session.list_prompts()).prompts
                out["prompts"] = sorted(p.name for p in prompts)
    return out


async def main() -> None:
    base, key, sessions = sys.argv[1], sys.argv[2], int(sys.argv[3])
    url = f"{base}/mcp"
    report = await one_session(url, key, True)
    report["closedSessions"] = 1
    for _ in range(sessions - 1):
        await one_session(url, key, False)
        report["closedSessions"] += 1
    print(json.dumps(report))


asyncio.run(main())
