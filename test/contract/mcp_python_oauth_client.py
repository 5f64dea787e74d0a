"""The official MCP Python SDK (`mcp`) with an OAuth access token, as a hosted client holds one.

Usage: python mcp_python_oauth_client.py <MCP URL> <access token>

Over streamable HTTP with `Authorization: Bearer <token>` (the token was obtained through the
service's authorization server by the test): initializes, lists the tools, calls listFinancialDocs.
Prints one JSON line of findings.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


async def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    out: dict = {}
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.server_info.name
                out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
                result = await session.call_tool("listFinancialDocs", {"limit": 10})
                content = result.structured_content or {}
                out["isError"] = bool(result.is_error)
                out["companies"] = sorted({str(d.get("company")) for d in content.get("data", [])})
                out["ids"] = sorted(str(d.get("id")) for d in content.get("data", []))
    print(json.dumps(out))


asyncio.run(main())
